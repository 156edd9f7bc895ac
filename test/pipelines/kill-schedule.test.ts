/**
 * Exact resume (issue 49): `ragtrail demo` and `ragtrail pipeline`, killed with -9 at a seeded
 * schedule of points across every stage and re-run in the same folder after each kill, end with
 * results.json and results.md equal byte for byte to an uninterrupted run's, once the seconds, the
 * dates and the output folder's path are masked.
 *
 * The trained models (every policy.json and prm.json) must be equal byte for byte as well: on a
 * small test split a model trained on records in another order can still score the same.
 *
 * A kill point waits for the start of a stage (its progress line on stderr) or for records of a
 * resumable stage to appear (annotation trees, evaluation trajectories: more than the file held when
 * that process started), then a seeded delay, then SIGKILL. Each point runs in a fresh process on
 * the folder the previous kill left. The world is small so that the whole schedule stays fast.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Rng } from '../../src/core/rng.js';
import { cliRunner, ROOT, tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);
// Asynchronous, so that the two tests, which run side by side, keep polling while the other one's command runs.
const { runAsync: ragtrail } = cliRunner(tmp.dir);
const CLI = ['--import', import.meta.resolve('tsx'), join(ROOT, 'src', 'cli', 'main.ts')];

interface KillPoint {
  /** Where the kill is aimed (for the messages). */
  at: string;
  /** Fires once stderr has a line matching this (the stage's start line)… */
  line?: RegExp;
  /** …or once this file (relative to the output folder) has at least this many lines, and more than at the start. */
  file?: string;
  records?: number;
  /** Then waits this long before SIGKILL. */
  delayMs: number;
}

type Outcome = 'killed' | 'finished';

const countLines = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean).length : 0);

/** Runs the command until the point fires, then kills it with SIGKILL; 'finished' if it ended first (it must then have succeeded). */
function runUntil(args: string[], out: string, p: KillPoint): Promise<Outcome> {
  const file = p.file ? join(out, p.file) : undefined;
  const before = file ? countLines(file) : 0;
  const child = spawn(process.execPath, [...CLI, ...args], { cwd: tmp.dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    let fired = false;
    const timer = setInterval(() => {
      if (fired) return;
      const ready = p.line ? p.line.test(stderr) : countLines(file!) >= Math.max(p.records ?? 1, before + 1);
      if (!ready) return;
      fired = true;
      setTimeout(() => child.kill('SIGKILL'), p.delayMs);
    }, 5);
    child.on('close', (code, signal) => {
      clearInterval(timer);
      if (signal === 'SIGKILL') resolve('killed');
      else if (code === 0) resolve('finished');
      else reject(new Error(`${args.join(' ')} (kill aimed at ${p.at}) exited ${code}:\n${stderr}`));
    });
  });
}

/** A file's text with what legitimately differs between two runs masked: seconds, dates and the output folder. */
function masked(out: string, name: string): string {
  return readFileSync(join(out, name), 'utf8')
    .split(out)
    .join('OUT')
    .replace(/"seconds": [0-9.e+-]+/g, '"seconds": 0')
    .replace(/"timings": \{[^}]*\}/g, '"timings": {}')
    // Seconds per question, with the model's and the searches' share (each cell's latency): a timing too.
    .replace(/"latency": \{[^}]*\}/g, '"latency": {}')
    .replace(/\b\d[\d.e+-]* \(\d[\d.e+-]*, \d[\d.e+-]*\)/g, 'S (S, S)')
    .replace(/^(\d+ seed\(s\)), \d+ s\.$/gm, '$1, N s.')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z/g, 'DATE');
}

/**
 * Kills, then re-runs to completion, `args` in `out` at each point in turn; returns what happened at
 * each point. A point may find the run already finished (a late point on a fast machine): then the
 * rest are not tried.
 */
async function killAndResume(args: string[], out: string, points: KillPoint[]): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (const p of points) {
    outcomes.push(await runUntil([...args, '--out', out], out, p));
    if (outcomes.at(-1) === 'finished') break;
  }
  const last = await ragtrail(...args, '--out', out);
  assert.equal(last.status, 0, last.stderr);
  return outcomes;
}

/** The trained models of a run (policies, PRMs): they hold no timings, so they must be equal as they are. */
const models = (dir: string) => readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((p) => /(^|[\\/])(policy|prm)\.json$/.test(p)).sort();

function assertSameResults(reference: string, out: string, outcomes: Outcome[], points: KillPoint[]): void {
  const what = `after kills at ${points.slice(0, outcomes.length).map((p, i) => `${p.at} (${outcomes[i]})`).join(', ')}`;
  // The models first: a model trained on records in another order can still score the same on a few test questions.
  assert.deepEqual(models(out), models(reference));
  for (const m of models(reference)) assert.equal(readFileSync(join(out, m), 'utf8'), readFileSync(join(reference, m), 'utf8'), `${m} differs ${what}`);
  assert.equal(masked(out, 'results.json'), masked(reference, 'results.json'), `results.json differs ${what}`);
  assert.equal(masked(out, 'results.md'), masked(reference, 'results.md'), `results.md differs ${what}`);
}

/** Seeded delays, and record counts within (lo, hi], increasing along the schedule. */
function draws(seed: number) {
  const rng = new Rng(`kill-schedule/${seed}`);
  return { delay: (max: number) => rng.int(max + 1), count: (lo: number, hi: number) => lo + 1 + rng.int(hi - lo) };
}

const stageStart = (id: string) => new RegExp(`\\] ${id}: .*…$`, 'm');

describe('kill -9 at a seeded schedule of points, re-run each time: results equal an uninterrupted run', { concurrency: true }, () => {
  it('ragtrail demo: world, annotation, step-DPO, GRPO, PRM, evaluation and the claims', async () => {
    const train = 16;
    const args = ['demo', '--entities', '400', '--train-questions', String(train), '--simulations', '16', '--grpo-epochs', '1', '--n', '2', '--test-questions', '8'];
    const reference = join(tmp.dir, 'demo-ref');
    const whole = await ragtrail(...args, '--out', reference);
    assert.equal(whole.status, 0, whole.stderr);

    const d = draws(49);
    const a1 = d.count(0, 7);
    const a2 = d.count(a1, train - 1);
    const run = (system: string) => join('seed-0', 'eval', 'runs', `${system}__world-test`, 'trajectories.jsonl');
    const points: KillPoint[] = [
      { at: 'world', line: stageStart('world'), delayMs: d.delay(40) },
      { at: `annotation, ${a1} trees`, file: join('seed-0', 'annotate', 'trees.jsonl'), records: a1, delayMs: 0 },
      { at: `annotation, ${a2} trees`, file: join('seed-0', 'annotate', 'trees.jsonl'), records: a2, delayMs: d.delay(30) },
      { at: 'step-DPO', line: stageStart('step-dpo'), delayMs: d.delay(20) },
      { at: 'GRPO', line: stageStart('grpo'), delayMs: d.delay(60) },
      { at: 'PRM', line: stageStart('prm'), delayMs: d.delay(20) },
      { at: 'evaluation, base', file: run('base'), records: d.count(0, 6), delayMs: 0 },
      { at: 'evaluation, step-DPO + PRM best-of-2', file: run('step-DPO_PRM_best-of-2'), records: d.count(0, 6), delayMs: d.delay(10) },
      { at: 'the claims', line: /\] evaluate: [0-9.]+ s \{/, delayMs: 0 },
    ];
    const out = join(tmp.dir, 'demo-killed');
    const outcomes = await killAndResume(args, out, points);
    assert.ok(outcomes.filter((o) => o === 'killed').length >= 7, `only ${outcomes.filter((o) => o === 'killed').length} of ${points.length} points killed the run`);
    assertSameResults(reference, out, outcomes, points);
  });

  it('ragtrail pipeline: demonstrations, annotation, SFT and DPO on the trees, PRM-guided evaluation', async () => {
    const recipe = join(tmp.dir, 'kill.yaml');
    writeFileSync(
      recipe,
      `name: kill
paper: Test
description: every reader of another stage's records
agent: reasonrag
world: { entities: 400 }
seeds: [1]
trainQuestions: 14
testQuestions: 8
stages:
  - { id: demos, kind: demonstrate, teacher: sim, competence: 0.8 }
  - { id: warm, kind: train, algo: sft, data: demos, settings: { epochs: 2 } }
  - { id: annotate, kind: annotate, method: mcts-spre, policy: warm, mcts: { simulations: 16 } }
  - { id: tree-sft, kind: train, algo: sft, from: warm, data: annotate, settings: { epochs: 2 } }
  - { id: dpo, kind: train, algo: dpo, from: tree-sft, data: annotate, settings: { epochs: 3 } }
  - { id: prm, kind: prm, data: annotate }
evaluate:
  systems:
    - { name: warm, policy: warm }
    - { name: DPO, policy: dpo }
    - { name: DPO + PRM, policy: dpo, select: prm, prm: prm, n: 2 }
claims:
  - { claim: DPO beats the warm start, metric: em, treatment: DPO, control: warm, expect: higher }
`,
    );
    const args = ['pipeline', '--recipe', recipe];
    const reference = join(tmp.dir, 'pipeline-ref');
    const whole = await ragtrail(...args, '--out', reference);
    assert.equal(whole.status, 0, whole.stderr);

    const d = draws(7);
    const a1 = d.count(0, 6);
    const trees = join('seed-1', 'annotate', 'trees.jsonl');
    const points: KillPoint[] = [
      { at: 'demonstrations', line: stageStart('demos'), delayMs: d.delay(30) },
      { at: `annotation, ${a1} trees`, file: trees, records: a1, delayMs: 0 },
      { at: 'SFT on the trees', line: stageStart('tree-sft'), delayMs: d.delay(20) },
      { at: 'evaluation, DPO + PRM', file: join('seed-1', 'eval', 'runs', 'DPO_PRM__world-test', 'trajectories.jsonl'), records: d.count(0, 6), delayMs: 0 },
    ];
    const out = join(tmp.dir, 'pipeline-killed');
    const outcomes = await killAndResume(args, out, points);
    assert.ok(outcomes.filter((o) => o === 'killed').length >= 3, `only ${outcomes.filter((o) => o === 'killed').length} of ${points.length} points killed the run`);
    assertSameResults(reference, out, outcomes, points);
  });
});
