/**
 * One seed of `ragtrail pipeline --jobs N` in its own process (forked by pipelines/seed-processes.ts):
 * it receives the pipeline's options and a seed, runs the same seed code as the in-process path
 * (`runSeed`), and sends back its progress lines, then its result or its error.
 *
 * Signals: the parent forwards Ctrl-C as one SIGINT (the first lets the record loops finish the
 * records in flight, as in the parent; see core/interrupt.ts) and stops a child at once with SIGTERM.
 * If the parent dies (kill -9), the IPC channel closes and the child stops at once too, so no orphan
 * keeps writing into a folder that a re-run may already have taken over; the seed folder's own lock
 * (seed-S/.lock) makes a re-run's child wait until such an orphan has gone.
 */
import { join, resolve } from 'node:path';
import { diskFullError, isDiskFull } from '../core/disk.js';
import { InputError, RagtrailError } from '../core/errors.js';
import { handleInterrupts, InterruptedError } from '../core/interrupt.js';
import { DirLock } from '../core/lock.js';
import { makeDir } from '../core/io.js';
import { runSeed } from './pipeline.js';
import type { PipelineOptions, SeedJobMessage, SeedResult, SeedWorkerMessage } from './pipeline-types.js';

const send = (m: SeedWorkerMessage) => new Promise<void>((done) => process.send!(m, () => done()));

/** The seed folder's lock; an orphan of a killed run may hold it for the moment it takes to notice and stop. */
async function lockSeed(dir: string): Promise<DirLock> {
  const deadline = performance.now() + 30_000;
  for (;;) {
    try {
      return DirLock.acquire(join(dir, '.lock'), `seed folder ${dir}`, () => {});
    } catch (e) {
      if (!(e instanceof InputError) || performance.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function run(job: SeedJobMessage): Promise<void> {
  const dir = join(resolve(job.options.out), `seed-${job.seed}`);
  makeDir(dir);
  const lock = await lockSeed(dir);
  try {
    const result = await runSeed(job.options, job.seed, (line) => void send({ type: 'log', line }));
    await send({ type: 'result', result });
  } finally {
    lock.release();
  }
}

function errorMessage(e: unknown): SeedWorkerMessage {
  if (e instanceof InterruptedError) return { type: 'interrupted' };
  if (e instanceof InputError) return { type: 'error', kind: 'input', message: e.message };
  if (e instanceof RagtrailError) return { type: 'error', kind: 'ragtrail', message: e.message };
  if (isDiskFull(e)) return { type: 'error', kind: 'ragtrail', message: diskFullError((e as NodeJS.ErrnoException).path ?? '').message };
  const err = e as Error;
  return { type: 'error', kind: 'unexpected', message: err?.message ?? String(e), ...(err?.stack && { stack: err.stack }) };
}

if (process.send) {
  handleInterrupts([]);
  // The parent is gone (killed): stop at once, as on SIGTERM (the seed lock is released by that path).
  process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
  process.once('message', (job: SeedJobMessage) => {
    run(job).then(
      () => process.exit(0),
      async (e: unknown) => {
        const m = errorMessage(e);
        await send(m);
        process.exit(m.type === 'interrupted' ? 130 : 1);
      },
    );
  });
}
