/**
 * `ragtrail sweep`: the values list, recipe paths, the points of a recipe sweep (mean over seeds, the
 * seeds' range), an eval sweep end to end on a small world (each point what its own eval folder holds),
 * and a recipe sweep through the CLI that keeps the stages before the varied one.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateWorld, writeWorld } from '../../src/corpus/world/index.js';
import { InputError } from '../../src/core/errors.js';
import { readEvalConfig } from '../../src/eval/harness.js';
import type { Cell } from '../../src/eval/results.js';
import { parseValues, pointDir, recipePoints, setRecipePath, sweepEval, writeSweep } from '../../src/eval/sweep.js';
import { buildIndex } from '../../src/retrieval/index-dir.js';
// --policy gym:FILE registers itself from learn/ (as the CLI and the ragtrail/eval entry point load it).
import '../../src/learn/gym/policy.js';
import { ROOT, tempDir } from '../helpers.js';

const tmp = tempDir();
before(async () => {
  await writeWorld(join(tmp.dir, 'world'), generateWorld({ seed: 4, entities: 1000, questions: 60 }));
  await buildIndex(join(tmp.dir, 'world', 'corpus.jsonl'), join(tmp.dir, 'index'), { quiet: true });
});
after(tmp.cleanup);

const message = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof InputError);
    return e.message;
  }
  return 'accepted';
};

describe('sweep settings', () => {
  it('values: two or more distinct numbers', () => {
    assert.deepEqual(parseValues('1, 3,5'), [1, 3, 5]);
    assert.match(message(() => parseValues('4')), /needs two or more numbers/);
    assert.match(message(() => parseValues('1,x')), /needs two or more numbers/);
    assert.match(message(() => parseValues('2,2')), /a value repeats/);
  });

  it('a recipe path picks a stage by id, creates missing groups, and refuses what is not a number', () => {
    const recipe = { trainQuestions: 200, stages: [{ id: 'annotate', kind: 'annotate', mcts: { simulations: 16 } }, { id: 'prm', kind: 'prm', settings: {} }] };
    assert.deepEqual(setRecipePath(recipe, 'stages.annotate.mcts.simulations', 64).stages[0], { id: 'annotate', kind: 'annotate', mcts: { simulations: 64 } });
    assert.deepEqual(setRecipePath(recipe, 'stages.prm.settings.trainPairs', 50).stages[1], { id: 'prm', kind: 'prm', settings: { trainPairs: 50 } });
    assert.equal(setRecipePath(recipe, 'trainQuestions', 100).trainQuestions, 100);
    assert.equal((recipe.stages[0] as { mcts: { simulations: number } }).mcts.simulations, 16, 'the original is unchanged');
    assert.equal(message(() => setRecipePath(recipe, 'stages.grpo.settings.epochs', 2)), '--vary stages.grpo.settings.epochs: the recipe has no stage "grpo" (its stages: annotate, prm)');
    assert.match(message(() => setRecipePath(recipe, 'stages.prm.kind', 2)), /the recipe's value there is "prm", not a number/);
  });

  it('a recipe point is the mean over seeds with their range; one seed keeps its CI', () => {
    const cell = (em: number, low: number, high: number): Cell => ({ system: 'A', dataset: 'd', n: 10, em: { mean: em, low, high }, f1: { mean: em, low, high }, acc: { mean: em, low, high }, retrievalCount: 2, format: 1, f1ByRetrievals: [], tokensPerQuestion: 0 });
    const [p] = recipePoints(3, [{ cells: [cell(0.2, 0.1, 0.3)] }, { cells: [cell(0.4, 0.3, 0.5)] }, { cells: [cell(0.3, 0.2, 0.4)] }]);
    assert.deepEqual({ ...p!, em: { mean: Number(p!.em.mean.toFixed(12)), low: p!.em.low, high: p!.em.high } }, { value: 3, system: 'A', dataset: 'd', em: { mean: 0.3, low: 0.2, high: 0.4 }, f1: p!.f1, rc: 2, seeds: 3 });
    assert.deepEqual(recipePoints(3, [{ cells: [cell(0.2, 0.1, 0.3)] }])[0]!.em, { mean: 0.2, low: 0.1, high: 0.3 });
  });
});

describe('eval sweep', () => {
  it('runs the config once per value on the chosen systems; each point is its own folder\'s cell; writes the table and the curve', async () => {
    const configPath = join(tmp.dir, 'eval.json');
    writeFileSync(configPath, JSON.stringify({
      index: 'index', out: 'unused',
      datasets: [{ name: 'w', path: 'world/questions.jsonl', limit: 30 }],
      systems: [{ name: 'greedy', agent: 'reasonrag', policy: 'sim', competence: 0.5 }, { name: 'gold best-of-N', agent: 'reasonrag', policy: 'sim', competence: 0.5, select: 'prm', prm: 'gold', n: 2 }],
    }));
    const out = join(tmp.dir, 'sweep-n');
    const r = await sweepEval(readEvalConfig(configPath), 'n', [1, 4], { out, systems: ['gold best-of-N'] });
    assert.deepEqual(r.points.map((p) => [p.value, p.system]), [[1, 'gold best-of-N'], [4, 'gold best-of-N']]);
    for (const p of r.points) {
      const cell = JSON.parse(readFileSync(join(pointDir(out, 'n', p.value), 'results.json'), 'utf8')).cells[0] as Cell;
      assert.deepEqual(p.em, { mean: cell.em.mean, low: cell.em.low, high: cell.em.high });
      assert.ok(p.em.low <= p.em.mean && p.em.mean <= p.em.high);
    }
    writeSweep(out, r);
    const md = readFileSync(join(out, 'sweep.md'), 'utf8');
    assert.match(md, /\| system, by n \| 1 \| 4 \|/);
    assert.match(md, /\| gold best-of-N \| \d\.\d{3} \[\d\.\d{3}, \d\.\d{3}\] \| \d\.\d{3} \[/);
    const html = readFileSync(join(out, 'sweep.html'), 'utf8');
    assert.equal((html.match(/<circle /g) ?? []).length, 2);
    assert.match(html, /N \(candidates per step, or episodes voted\)/);
    await assert.rejects(sweepEval(readEvalConfig(configPath), 'n', [1, 2], { out }), /--vary n: a greedy system has no N/);
  });
});

describe('ragtrail sweep --recipe', () => {
  it('runs the pipeline per value, keeping the stages before the varied one from the previous value; checkpoints per epoch', async () => {
    const recipe = join(tmp.dir, 'tiny.yaml');
    writeFileSync(recipe, `name: tiny
paper: Test
description: a tiny recipe
agent: reasonrag
world: { entities: 500 }
seeds: [0]
trainQuestions: 10
testQuestions: 10
stages:
  - { id: annotate, kind: annotate, method: mcts-spre, mcts: { simulations: 4 } }
  - { id: dpo, kind: train, algo: dpo, data: annotate, settings: { epochs: 2 } }
  - { id: prm, kind: prm, data: annotate }
evaluate:
  systems:
    - { name: base }
    - { name: base + PRM, select: prm, prm: prm, n: 3 }
claims:
  - { claim: prm helps, metric: em, treatment: base + PRM, control: base }
`);
    const out = join(tmp.dir, 'sweep-pairs');
    const r = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), join(ROOT, 'src', 'cli', 'main.ts'), 'sweep', '--recipe', recipe, '--vary', 'stages.prm.settings.trainPairs', '--values', '2,50', '--jobs', '1', '--out', out], { encoding: 'utf8', timeout: 300_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /stages\.prm\.settings\.trainPairs = 50: the pipeline \(the stages before the varied one kept from stages\.prm\.settings\.trainPairs = 2\)/);
    assert.match(r.stderr, /\[seed 0\] \[\d\/\d\] annotate: .*done before/);
    const sweep = JSON.parse(readFileSync(join(out, 'sweep.json'), 'utf8'));
    assert.deepEqual(sweep.values, [2, 50]);
    assert.equal(sweep.points.length, 4);
    const prmSummary = (v: number) => JSON.parse(readFileSync(join(pointDir(out, 'stages.prm.settings.trainPairs', v), 'seed-0', 'prm', 'prm.json'), 'utf8')).training.pairs;
    assert.equal(prmSummary(2), 2);
    assert.ok(prmSummary(50) > 2);

    // The trainers keep a policy per epoch; a checkpoint sweep evaluates them, the last one being the stage's policy.
    const seedDir = join(pointDir(out, 'stages.prm.settings.trainPairs', 50), 'seed-0');
    const weights = (f: string) => JSON.parse(readFileSync(f, 'utf8')).model;
    assert.deepEqual(weights(join(seedDir, 'dpo', 'checkpoints', 'epoch-2.json')), weights(join(seedDir, 'dpo', 'policy.json')));
    assert.notDeepEqual(weights(join(seedDir, 'dpo', 'checkpoints', 'epoch-1.json')), weights(join(seedDir, 'dpo', 'policy.json')));
    const configPath = join(tmp.dir, 'checkpoints.json');
    writeFileSync(configPath, JSON.stringify({
      index: join(seedDir, 'index'), out: 'unused', datasets: [{ name: 'w', path: join(seedDir, 'world', 'questions.jsonl'), split: 'test', limit: 10 }],
      systems: [{ name: 'dpo', agent: 'reasonrag', policy: `gym:${join(seedDir, 'dpo', 'checkpoints', 'epoch-{checkpoint}.json')}` }],
    }));
    const swept = await sweepEval(readEvalConfig(configPath), 'checkpoint', [1, 2], { out: join(tmp.dir, 'sweep-checkpoints') });
    assert.deepEqual(swept.points.map((p) => p.value), [1, 2]);
    await assert.rejects(sweepEval({ ...readEvalConfig(configPath), systems: [{ name: 'x', agent: 'reasonrag', policy: 'sim' }] }, 'checkpoint', [1, 2], { out: join(tmp.dir, 'nope') }), /system "x" names no \{checkpoint\}/);
  });
});
