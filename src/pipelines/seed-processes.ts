/**
 * `ragtrail pipeline --jobs N`: the seeds of a recipe in parallel, one child process per seed (at most
 * N at once, taken in the recipe's order), each running the same seed code as the in-process path
 * (pipelines/seed-worker.ts). Seeds are independent (each its own OUT/seed-S folder, world, annotation
 * and training), so the results equal a sequential run's; the parent keeps the folder lock and merges
 * the seeds' results in seed order, as the sequential path does.
 *
 * Processes, not worker threads: the stages are synchronous numeric loops and a seed's memory (world,
 * index, trees) is its own, so a process per seed uses every core with nothing shared, and a crash or
 * an out-of-memory in one seed is that seed's error, reported with its seed.
 *
 * Signals: the children run in their own process groups, so a terminal's Ctrl-C reaches only this
 * process, which forwards it once to each child (they finish the records in flight, as the in-process
 * path does) and starts no new seed; a second Ctrl-C, or SIGTERM, stops them at once. The first seed to
 * fail stops the others the same way (what they finished is kept for a re-run), then fails the run.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { extname } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { InputError, RagtrailError } from '../core/errors.js';
import { InterruptedError, onAbandon, whileInterruptible } from '../core/interrupt.js';
import type { PipelineOptions, SeedJobMessage, SeedResult, SeedWorkerMessage } from './pipeline-types.js';

// The worker beside this file: seed-worker.ts under tsx (tests, `npm run`), seed-worker.js in dist.
const WORKER = fileURLToPath(new URL(`./seed-worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url));

/**
 * The flags this process was started with that a child needs too (a loader such as tsx, memory
 * limits), without those that belong to this process alone (the test runner, an inspector's port).
 */
function childExecArgv(): string[] {
  return process.execArgv.filter((a) => !/^--(test|inspect|debug|watch)/.test(a));
}

interface Outcome {
  seed: number;
  result?: SeedResult;
  error?: Error;
  interrupted?: boolean;
}

/**
 * Runs `seeds` in child processes, at most `jobs` at once; resolves with their results in the order of
 * `seeds`. Progress lines come through `log` as the children print them (each already names its seed).
 */
export async function runSeedsInProcesses(o: PipelineOptions, seeds: readonly number[], jobs: number, log: (line: string) => void): Promise<SeedResult[]> {
  const { log: _ownLog, ...options } = o;
  const running = new Map<number, ChildProcess>();
  const outcomes: Outcome[] = [];
  let stopping = false;
  let next = 0;

  const stopAll = (signal: NodeJS.Signals) => {
    for (const child of running.values()) if (child.exitCode === null && child.signalCode === null) child.kill(signal);
  };
  // Ctrl-C (the first: core/interrupt.ts lets a record loop, here this pool, finish): pass it on once, start nothing new.
  const onSigint = () => {
    stopping = true;
    stopAll('SIGINT');
  };
  // An abrupt stop of this process (a second Ctrl-C, SIGTERM) takes the children with it.
  const forget = onAbandon(() => stopAll('SIGTERM'));
  process.on('SIGINT', onSigint);

  const runOne = (seed: number): Promise<Outcome> =>
    new Promise((done) => {
      const child = fork(WORKER, [], { execArgv: childExecArgv(), serialization: 'advanced', stdio: ['ignore', 'pipe', 'pipe', 'ipc'], detached: true });
      running.set(seed, child);
      const outcome: Outcome = { seed };
      // Anything a child prints itself (a warning, a lock note) goes to the log with its seed; its
      // interruption line is left out: this process prints the one line that says how to resume.
      for (const stream of [child.stdout!, child.stderr!]) {
        createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
          if (line.trim() && !line.startsWith('ragtrail: interrupted;')) log(`[seed ${seed}] ${line}`);
        });
      }
      child.on('message', (m: SeedWorkerMessage) => {
        if (m.type === 'log') log(m.line);
        else if (m.type === 'result') outcome.result = m.result;
        else if (m.type === 'interrupted') outcome.interrupted = true;
        else {
          const message = `seed ${seed}: ${m.kind === 'unexpected' ? 'unexpected error: ' : ''}${m.message}`;
          outcome.error = m.kind === 'input' ? new InputError(message) : new RagtrailError(message);
          if (m.stack && process.env['RAGTRAIL_DEBUG']) log(`[seed ${seed}] ${m.stack}`);
        }
      });
      child.on('error', (e) => (outcome.error ??= new RagtrailError(`seed ${seed}: its process could not run: ${e.message}`)));
      child.on('close', (code, signal) => {
        running.delete(seed);
        if (outcome.result && code === 0) return done(outcome);
        // Stopped by a signal or by Ctrl-C (130, 143 for SIGTERM) with no error of its own: an interruption.
        if (!outcome.error && (outcome.interrupted || code === 130 || code === 143 || ((signal === 'SIGINT' || signal === 'SIGTERM') && stopping))) outcome.interrupted = true;
        else outcome.error ??= new RagtrailError(`seed ${seed}: its process ended with ${signal ? `signal ${signal}` : `exit code ${code}`} and no result (its last lines are above)`);
        done(outcome);
      });
      child.send({ type: 'run', options, seed } satisfies SeedJobMessage);
    });

  try {
    await whileInterruptible(async () => {
      const lane = async () => {
        while (!stopping && next < seeds.length) {
          const outcome = await runOne(seeds[next++]!);
          outcomes.push(outcome);
          if (outcome.error || outcome.interrupted) {
            // One seed failed or was stopped: the others stop after their records in flight.
            if (outcome.error) log(`[seed ${outcome.seed}] failed: ${outcome.error.message.replace(/^seed \d+: /, '')}`);
            if (!stopping) onSigint();
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(jobs, seeds.length) }, lane));
    });
  } finally {
    process.off('SIGINT', onSigint);
    forget();
    stopAll('SIGTERM');
  }
  const failed = outcomes.find((x) => x.error);
  if (failed) throw failed.error;
  if (stopping || outcomes.some((x) => x.interrupted)) throw new InterruptedError();
  const bySeed = new Map(outcomes.map((x) => [x.seed, x.result!]));
  return seeds.map((s) => bySeed.get(s)!);
}
