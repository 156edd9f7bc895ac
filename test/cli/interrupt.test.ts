/**
 * Ctrl-C in a resumable command (issue 46): the records in flight finish, stderr gets one line with
 * the command that resumes, the folder's lock is released, the exit status is 130, and re-running
 * that command ends with the same output as a run that was never interrupted. A second Ctrl-C (or
 * SIGTERM) stops at once, still without a lock left behind or a torn record.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cliRunner, ROOT, tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);
const { run: ragtrail } = cliRunner(tmp.dir);
const world = join(tmp.dir, 'world');
const index = join(tmp.dir, 'index');
const plugin = join(tmp.dir, 'slow.mjs');

// slow:MS is the sim policy waiting MS ms before each step, so that a run lasts long enough to be
// interrupted part-way; its choices (and so the output) are the sim policy's.
const PLUGIN = `
export default function (api) {
  api.registerPolicy('slow', (arg, protocol, o) => {
    const sim = api.registries.policies.get('sim')('', protocol, o);
    return Object.assign(Object.create(sim), { propose: async (...a) => { await new Promise((r) => setTimeout(r, Number(arg))); return sim.propose(...a); } });
  });
}
`;

before(() => {
  assert.equal(ragtrail('world', '--seed', '3', '--entities', '400', '--out', world).status, 0);
  assert.equal(ragtrail('index', 'build', '--corpus', join(world, 'corpus.jsonl'), '--out', index).status, 0);
  writeFileSync(plugin, PLUGIN);
});

function start(args: string[]): { child: ChildProcess; exited: Promise<{ code: number | null; stderr: string }> } {
  const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), join(ROOT, 'src', 'cli', 'main.ts'), ...args], { cwd: tmp.dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  child.stdout!.resume();
  return { child, exited: new Promise((r) => child.on('close', (code) => r({ code, stderr }))) };
}

const countLines = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean).length : 0);

/** Resolves once `path` has at least `n` lines; fails if the process ends first. */
async function waitForLines(path: string, n: number, child: ChildProcess): Promise<void> {
  while (countLines(path) < n) {
    assert.equal(child.exitCode, null, `the command ended before ${path} had ${n} lines`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Every lock file under `dir`. */
function locks(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((p) => p.endsWith('.lock'));
}

/** The records of a run, by id, without their timings (which differ from run to run). */
function records(dir: string): Map<string, unknown> {
  const strip = (_k: string, v: unknown) => (_k.endsWith('Ms') ? undefined : v);
  const rows = readFileSync(join(dir, 'trajectories.jsonl'), 'utf8').split('\n').filter(Boolean);
  return new Map(rows.map((l) => JSON.parse(l, strip) as { id: string }).map((t) => [t.id, t]));
}

const resumeLine = (args: string[]) => `ragtrail: interrupted; what finished is kept (resume with: ragtrail ${args.map((a) => (a === '' ? "''" : a)).join(' ')})`;

describe('Ctrl-C in ragtrail run', () => {
  const common = ['--plugin', plugin, '--policy', 'slow:20', '--index', index, '--dataset', join(world, 'questions.jsonl'), '--split', '', '--concurrency', '2', '--quiet'];

  it('finishes the records in flight, says how to resume, drops the lock, exits 130; the resumed run equals an uninterrupted one', async () => {
    const reference = join(tmp.dir, 'run-ref');
    const whole = ragtrail('run', ...common, '--out', reference);
    assert.equal(whole.status, 0, whole.stderr);

    const out = join(tmp.dir, 'run-int');
    const args = ['run', ...common, '--out', out];
    const { child, exited } = start(args);
    await waitForLines(join(out, 'trajectories.jsonl'), 10, child);
    child.kill('SIGINT');
    const { code, stderr } = await exited;
    assert.equal(code, 130, stderr);
    const lines = stderr.trim().split('\n');
    assert.equal(lines.at(-1), resumeLine(args));
    assert.equal(lines.filter((l) => /interrupted/.test(l)).length, 1, stderr);
    assert.deepEqual(locks(out), []);
    const kept = records(out).size; // every line parses: none torn
    assert.ok(kept >= 10 && kept < records(reference).size, `${kept} records kept`);
    assert.ok(!existsSync(join(out, 'summary.json')));

    const resumed = ragtrail(...args);
    assert.equal(resumed.status, 0, resumed.stderr);
    assert.match(resumed.stdout, new RegExp(`: ${records(reference).size - kept} questions run, ${kept} already done`));
    assert.deepEqual(records(out), records(reference));
    const summary = (dir: string) => {
      const { em, f1, acc, questions, retrievalCount } = JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'));
      return { em, f1, acc, questions, retrievalCount };
    };
    assert.deepEqual(summary(out), summary(reference));
  });

  it('a second Ctrl-C stops at once, and SIGTERM does too (143): no lock, no torn record', async () => {
    for (const signals of [['SIGINT', 'SIGINT'], ['SIGTERM']] as const) {
      const out = join(tmp.dir, `run-${signals.join('-')}`);
      // Slow steps, many in flight: the first Ctrl-C alone would wait for them.
      const args = ['run', ...common.map((a) => (a === 'slow:20' ? 'slow:1000' : a === '2' ? '8' : a)), '--out', out];
      const { child, exited } = start(args);
      await waitForLines(join(out, 'trajectories.jsonl'), 1, child);
      let t0 = 0;
      for (const s of signals) {
        // Two signals sent together arrive as one: the second is sent once the first was handled.
        await new Promise((r) => setTimeout(r, 200));
        t0 = performance.now();
        child.kill(s);
      }
      const { code, stderr } = await exited;
      assert.equal(code, signals[0] === 'SIGTERM' ? 143 : 130, stderr);
      assert.ok(performance.now() - t0 < 800, 'it waited for the records in flight (each step takes 1 s)');
      assert.equal(stderr.trim().split('\n').at(-1), resumeLine(args));
      assert.deepEqual(locks(out), []);
      assert.ok(records(out).size >= 1);
    }
  });
});

describe('Ctrl-C in ragtrail demo', () => {
  it('stops in the annotation stage with the resume line and no lock; the rerun keeps what finished and ends as an uninterrupted demo', async () => {
    const settings = ['--entities', '400', '--train-questions', '16', '--simulations', '48', '--grpo-epochs', '1', '--n', '2', '--test-questions', '20'];
    const reference = join(tmp.dir, 'demo-ref');
    const whole = ragtrail('demo', ...settings, '--out', reference);
    assert.equal(whole.status, 0, whole.stderr);

    const out = join(tmp.dir, 'demo-int');
    const args = ['demo', ...settings, '--out', out];
    const { child, exited } = start(args);
    await waitForLines(join(out, 'seed-0', 'annotate', 'trees.jsonl'), 2, child);
    child.kill('SIGINT');
    const { code, stderr } = await exited;
    assert.equal(code, 130, stderr);
    assert.equal(stderr.trim().split('\n').at(-1), resumeLine(args));
    assert.deepEqual(locks(out), []);
    assert.ok(!existsSync(join(out, 'results.json')));

    const resumed = ragtrail(...args);
    assert.equal(resumed.status, 0, resumed.stderr);
    assert.match(resumed.stderr, /world: .* done before .*, kept/);
    assert.match(resumed.stderr, /annotate: .* \(resuming\)/);
    const results = (dir: string) => {
      const r = JSON.parse(readFileSync(join(dir, 'results.json'), 'utf8'));
      // Seconds per question (each cell's latency) differ from run to run; the measurements must not.
      const cells = r.seeds.map((s: { cells: Record<string, unknown>[] }) => s.cells.map(({ latency: _, ...c }) => c));
      return { claims: r.claims, cells };
    };
    assert.deepEqual(results(out), results(reference));
  });
});
