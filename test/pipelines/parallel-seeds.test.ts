/**
 * `ragtrail pipeline --jobs N` (issue 48): the seeds in child processes give results.json, results.md,
 * report.html and every trained model equal byte for byte to `--jobs 1` (one after another in one
 * process), once seconds, dates and the output folder are masked; an error in one seed's process fails
 * the run with a line naming the seed; Ctrl-C and kill -9 of the parent leave no child running, and a
 * re-run in the same folder ends with the same results.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InputError } from '../../src/core/errors.js';
import { runPipeline } from '../../src/pipelines/pipeline.js';
import { loadRecipe } from '../../src/pipelines/recipe.js';
import { cliRunner, ROOT, tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);
const { runAsync: ragtrail } = cliRunner(tmp.dir);
const CLI = ['--import', import.meta.resolve('tsx'), join(ROOT, 'src', 'cli', 'main.ts')];
const recipe = join(tmp.dir, 'seeds.yaml');

/** What legitimately differs between two runs: seconds, dates, the output folder's path and name. */
function masked(out: string, name: string): string {
  return readFileSync(join(out, name), 'utf8')
    .split(out)
    .join('OUT')
    .split(`ragtrail view ${basename(out)}`)
    .join('ragtrail view OUT')
    .split(`(${basename(out)}: `)
    .join('(OUT: ')
    .replace(/"seconds": [0-9.e+-]+/g, '"seconds": 0')
    .replace(/"timings": \{[^}]*\}/g, '"timings": {}')
    // Seconds per question, with the model's and the searches' share (each cell's latency): a timing too.
    .replace(/"latency": \{[^}]*\}/g, '"latency": {}')
    .replace(/\b\d[\d.e+-]* \(\d[\d.e+-]*, \d[\d.e+-]*\)/g, 'S (S, S)')
    .replace(/^(\d+ seed\(s\)), \d+ s\.$/gm, '$1, N s.')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z/g, 'DATE');
}

const models = (dir: string) => readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((p) => /(^|[\\/])(policy|prm)\.json$/.test(p)).sort();

function assertSame(reference: string, out: string, what: string): void {
  assert.deepEqual(models(out), models(reference), what);
  assert.ok(models(reference).length >= 9, 'every seed trained its models');
  for (const m of models(reference)) assert.equal(readFileSync(join(out, m), 'utf8'), readFileSync(join(reference, m), 'utf8'), `${m} differs ${what}`);
  for (const f of ['results.json', 'results.md', 'report.html']) assert.equal(masked(out, f), masked(reference, f), `${f} differs ${what}`);
}

/** Seed folders whose lock is still there: a child process that has not ended. */
const seedLocks = (out: string) => (existsSync(out) ? readdirSync(out).filter((d) => d.startsWith('seed-') && existsSync(join(out, d, '.lock'))) : []);

/** Starts the pipeline, waits until every seed has started `stage` (or kept it from before), sends `signal` to the parent; its exit code and stderr. */
function signalAt(args: string[], seeds: number, stage: string, signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const child = spawn(process.execPath, [...CLI, ...args], { cwd: tmp.dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let sent = false;
  child.stderr!.on('data', (d) => {
    stderr += d;
    // A seed may have finished the stage before an earlier interruption took effect: its line then says
    // "— done before …, kept" instead of starting it again, and it counts as there.
    const started = stderr.match(new RegExp(`\\] ${stage}: .*(…|kept)$`, 'gm'))?.length ?? 0;
    if (!sent && started >= seeds) {
      sent = true;
      child.kill(signal);
    }
  });
  return new Promise((resolve) => child.on('close', (code, sig) => resolve({ code, signal: sig, stderr })));
}

describe('ragtrail pipeline --jobs: seeds in parallel processes', () => {
  let reference = '';
  const args = ['pipeline', '--recipe', recipe];
  before(async () => {
    writeFileSync(
      recipe,
      `name: seeds
paper: Test
description: three small seeds
agent: reasonrag
world: { entities: 300 }
seeds: [0, 1, 2]
trainQuestions: 10
testQuestions: 6
stages:
  - { id: demos, kind: demonstrate, teacher: sim, competence: 0.8 }
  - { id: warm, kind: train, algo: sft, data: demos, settings: { epochs: 2 } }
  - { id: annotate, kind: annotate, method: mcts-spre, policy: warm, mcts: { simulations: 8 } }
  - { id: dpo, kind: train, algo: dpo, from: warm, data: annotate, settings: { epochs: 3 } }
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
    reference = join(tmp.dir, 'sequential');
    const r = await ragtrail(...args, '--out', reference, '--jobs', '1');
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /in parallel/);
  });

  const parallel = join(tmp.dir, 'parallel');
  it('three seeds on three processes equal one after another, byte for byte but for timings', async () => {
    const out = parallel;
    const r = await ragtrail(...args, '--out', out, '--jobs', '3');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /seeds in parallel: 3 processes/);
    // Every progress line names its seed, and each seed's stages come in order.
    for (const s of [0, 1, 2]) assert.deepEqual(r.stderr.match(new RegExp(`^\\[seed ${s}\\] \\[(\\d)/7\\] \\w+: .*…$`, 'gm'))!.map((l) => l.match(/\[(\d)\/7\]/)![1]), ['1', '2', '3', '4', '5', '6', '7']);
    assertSame(reference, out, 'with --jobs 3');
    assert.deepEqual(seedLocks(out), []);
    assert.ok(!existsSync(join(out, '.lock')));
  });

  it("an error in one seed's process fails the run with a line naming the seed; a re-run resumes", async () => {
    // The finished run of the test above (the tests in this suite run in order).
    const out = parallel;
    // Seed 1's evaluation is unreadable: its stage record says done, its results are not JSON.
    writeFileSync(join(out, 'seed-1', 'eval', 'results.json'), '{ torn');
    const r = await ragtrail(...args, '--out', out, '--jobs', '2');
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /^ragtrail: seed 1: unexpected error: .*JSON/m);
    assert.match(r.stderr, /^\[seed 1\] failed: /m);
    assert.deepEqual(seedLocks(out), []);
    assert.ok(!existsSync(join(out, '.lock')), 'the parent released the folder lock');
    rmSync(join(out, 'seed-1', 'eval'), { recursive: true });
    const again = await ragtrail(...args, '--out', out, '--jobs', '2');
    assert.equal(again.status, 0, again.stderr);
    assertSame(reference, out, 'after a failed seed and a re-run');
  });

  it('Ctrl-C stops every child after its records in flight; kill -9 of the parent stops them too; re-runs end the same', async () => {
    const out = join(tmp.dir, 'stopped');
    const int = await signalAt([...args, '--out', out, '--jobs', '3'], 3, 'annotate', 'SIGINT');
    assert.equal(int.code, 130, int.stderr);
    assert.equal(int.stderr.match(/^ragtrail: interrupted; what finished is kept \(resume with: ragtrail pipeline /gm)?.length, 1, int.stderr);
    assert.deepEqual(seedLocks(out), [], 'every child ended before the parent');
    assert.ok(!existsSync(join(out, 'results.json')));

    const killed = await signalAt([...args, '--out', out, '--jobs', '3'], 3, 'dpo', 'SIGKILL');
    assert.equal(killed.signal, 'SIGKILL', killed.stderr);
    // The children see their parent's channel close and stop, releasing their seed folders.
    for (let i = 0; i < 100 && seedLocks(out).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(seedLocks(out), [], 'no child outlived its killed parent');
    const again = await ragtrail(...args, '--out', out, '--jobs', '3');
    assert.equal(again.status, 0, again.stderr);
    assertSame(reference, out, 'after Ctrl-C, kill -9 and a re-run');
  });

  it('with --llm the seeds share one served model: --jobs above 1 is refused before anything runs', async () => {
    const out = join(tmp.dir, 'llm');
    await assert.rejects(
      runPipeline({ recipe: loadRecipe(recipe).recipe, recipePath: recipe, out, jobs: 2, llm: { llm: 'openai:http://127.0.0.1:9/v1#m' } }),
      (e: unknown) => e instanceof InputError && /with --llm they share the served model/.test(e.message),
    );
    assert.ok(!existsSync(out));
  });
});
