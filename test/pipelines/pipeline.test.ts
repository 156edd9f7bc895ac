/** Recipes, claims and `ragtrail pipeline` as users run them. */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InputError } from '../../src/core/errors.js';
import { testClaim } from '../../src/pipelines/claims.js';
import { runPipeline } from '../../src/pipelines/pipeline.js';
import { loadRecipe, parseRecipe, RECIPE_NAMES } from '../../src/pipelines/recipe.js';
import { cliRunner, tempDir } from '../helpers.js';

describe('recipes', () => {
  it('every shipped recipe parses, and each paper recipe states a claim', () => {
    for (const name of RECIPE_NAMES) {
      const { recipe } = loadRecipe(name);
      assert.equal(recipe.name, name);
      assert.ok(recipe.claims.length >= 1, name);
      assert.ok(recipe.seeds.length >= 3, `${name}: claims need at least 3 seeds`);
    }
  });

  const base = `name: t\npaper: T\ndescription: d\nagent: reasonrag\n`;
  const bad = (text: string, pattern: RegExp) => assert.throws(() => parseRecipe(base + text, 'r.yaml'), (e: unknown) => e instanceof InputError && pattern.test(e.message));

  it('names the field and the fix for a bad recipe', () => {
    bad('stages:\n  - { id: a, kind: train, algo: dpo, data: nope }\nevaluate: { systems: [{ name: b }] }\n', /stages\.0 \(a\)\.data names "nope", which is not an earlier annotate stage/);
    bad('stages:\n  - { id: a, kind: train, algo: grpo, from: later }\nevaluate: { systems: [{ name: b }] }\n', /from names "later"/);
    bad('stages:\n  - { id: a, kind: train, algo: grpo }\nevaluate: { systems: [{ name: b }] }\nclaims: [{ claim: c, metric: em, treatment: b, control: z }]\n', /claims\.0 names the system "z"/);
    bad('stages:\n  - { id: a, kind: trian }\nevaluate: { systems: [{ name: b }] }\n', /r\.yaml: stages\.0\.kind/);
    bad('stages: [\n', /not valid YAML/);
    bad('stages:\n  - { id: a, kind: annotate, method: rank }\n  - { id: b, kind: annotate, method: mcts-spre, trees: a }\nevaluate: { systems: [{ name: c }] }\n', /stages\.1 \(b\)\.trees names "a", a rank annotation, not mcts-spre/);
    bad('stages:\n  - { id: b, kind: annotate, method: mcts-spre, trees: a }\nevaluate: { systems: [{ name: c }] }\n', /trees names "a", which is not an earlier annotate stage/);
    bad('stages:\n  - { id: a, kind: annotate, method: mcts-spre, judge: plan }\nevaluate: { systems: [{ name: c }] }\n', /stages\.0 \(a\)\.judge is set but pairs is the method's default/);
  });
});

describe('claims', () => {
  it('pools seeds into one paired test, with hand-computed numbers', () => {
    const m = (xs: number[]) => new Map(xs.map((x, i) => [`q${i}`, x]));
    // Differences 1, 0, 0, 1 (seed 0) and 1, 1, 0, 1 (seed 1): mean 5/8, sd² = (3·(5/8)² + 5·(3/8)²)/7 = 15/56.
    const row = testClaim('P', { claim: 'c', metric: 'em', treatment: 'a', control: 'b', expect: 'higher', margin: 0.02 }, [
      { seed: 0, treatment: m([1, 1, 0, 1]), control: m([0, 1, 0, 0]) },
      { seed: 1, treatment: m([1, 1, 1, 1]), control: m([0, 0, 1, 0]) },
    ]);
    assert.equal(row.n, 8);
    assert.equal(row.delta, 0.625);
    assert.deepEqual(row.seeds.map((s) => s.delta), [0.5, 0.75]);
    const t = 0.625 / Math.sqrt(15 / 56 / 8);
    assert.ok(Math.abs(t - 3.4157) < 1e-3);
    // Student t with 7 df at 3.4157: two-sided p = 0.01120 (scipy.stats.t.sf(3.4157, 7) * 2).
    assert.ok(Math.abs(row.p - 0.0112) < 2e-4, String(row.p));
    assert.equal(row.holds, true);
    const lower = testClaim('P', { claim: 'c', metric: 'rc', treatment: 'a', control: 'b', expect: 'lower', margin: 0.02 }, [{ seed: 0, treatment: m([1, 1, 0, 1]), control: m([0, 1, 0, 0]) }]);
    assert.equal(lower.holds, false);
    const same = testClaim('P', { claim: 'c', metric: 'em', treatment: 'a', control: 'b', expect: 'not-lower', margin: 0.02 }, [{ seed: 0, treatment: m([1, 0, 1, 0]), control: m([1, 0, 1, 0]) }]);
    assert.deepEqual([same.delta, same.ci, same.holds], [0, [0, 0], true]);
  });
});

describe('ragtrail pipeline', () => {
  const tmp = tempDir();
  const recipePath = join(tmp.dir, 'small.yaml');
  const out = join(tmp.dir, 'out');
  const lines: string[] = [];
  const recipeText = (dpoBeta: number) => `# a small recipe for the tests
name: small
paper: Test
description: a small end-to-end run
agent: reasonrag
world: { entities: 600 }
seeds: [0, 1]
trainQuestions: 12
testQuestions: 10
stages:
  - { id: annotate, kind: annotate, method: mcts-spre, mcts: { simulations: 6 } }
  - { id: dpo, kind: train, algo: dpo, data: annotate, settings: { beta: ${dpoBeta}, epochs: 5 } }
  - { id: grpo, kind: train, algo: grpo, settings: { epochs: 1, groupSize: 4, reward: em } }
  - { id: prm, kind: prm, data: annotate }
evaluate:
  systems:
    - { name: base }
    - { name: DPO, policy: dpo }
    - { name: GRPO, policy: grpo }
    - { name: base + PRM, select: prm, prm: prm, n: 3 }
claims:
  - { claim: dpo beats grpo, metric: em, treatment: DPO, control: GRPO }
  - { claim: fewer searches, metric: rc, treatment: DPO, control: GRPO, expect: lower }
`;
  before(() => writeFileSync(recipePath, recipeText(0.3)));
  after(() => tmp.cleanup());

  it('runs every stage per seed, writes the claims, and keeps finished stages on a rerun', async () => {
    const { recipe, path } = loadRecipe(recipePath);
    const r = await runPipeline({ recipe, recipePath: path, out, log: (l) => lines.push(l) });
    assert.equal(r.seeds.length, 2);
    for (const s of [0, 1]) for (const f of ['world/corpus.jsonl', 'annotate/stage.json', 'dpo/policy.json', 'grpo/policy.json', 'prm/prm.json', 'eval/results.json']) assert.ok(existsSync(join(out, `seed-${s}`, f)), `seed-${s}/${f}`);
    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8'));
    assert.equal(results.claims.length, 2);
    const c = results.claims[0];
    assert.deepEqual(Object.keys(c).filter((k) => ['paper', 'claim', 'metric', 'treatment', 'control', 'delta', 'ci', 'p', 'holds'].includes(k)).sort(), ['ci', 'claim', 'control', 'delta', 'holds', 'metric', 'p', 'paper', 'treatment']);
    assert.equal(c.n, 20);
    assert.ok(readFileSync(join(out, 'results.md'), 'utf8').includes('| dpo beats grpo | em |'));
    assert.ok(existsSync(join(out, 'report.html')));
    // The world's questions carry their gold plan: the prm stage checks its labels against it, and the report says so.
    const prmSummary = JSON.parse(readFileSync(join(out, 'seed-0', 'prm', 'stage.json'), 'utf8')).summary;
    for (const k of ['labelsGoldAgreement', 'labelsGoldTies']) assert.ok(typeof prmSummary[k] === 'number' && prmSummary[k] >= 0 && prmSummary[k] <= 1, `${k}: ${prmSummary[k]}`);
    assert.ok(readFileSync(join(out, 'results.md'), 'utf8').includes('Its training labels against the gold plan'));
    assert.ok(lines.some((l) => /\[seed 1\] \[3\/6\] dpo: [\d.]+ s/.test(l)), lines.join('\n'));

    // A rerun keeps every stage; a changed DPO setting re-runs DPO and what follows it, nothing before.
    lines.length = 0;
    const again = await runPipeline({ recipe, recipePath: path, out, log: (l) => lines.push(l) });
    assert.equal(lines.filter((l) => l.includes('done before')).length, 12);
    assert.deepEqual(again.claims.map((x) => x.delta), r.claims.map((x) => x.delta));
    writeFileSync(recipePath, recipeText(1));
    lines.length = 0;
    await runPipeline({ recipe: loadRecipe(recipePath).recipe, recipePath: path, out, seeds: [0], log: (l) => lines.push(l) });
    assert.ok(lines.some((l) => /annotate: .*done before/.test(l)));
    assert.ok(lines.some((l) => /dpo: dpo from base on annotate …/.test(l)));
    assert.ok(lines.some((l) => /grpo: grpo from base …/.test(l)), 'stages after a changed one run again');
  });

  it('a warm-started base (recipe.base): SFT on the gym teacher\'s episodes on questions after the training ones, evaluated as base', async () => {
    const warm = join(tmp.dir, 'warm.yaml');
    writeFileSync(warm, recipeText(0.3).replace('seeds: [0, 1]', 'seeds: [0]\nbase: { questions: 30 }').replace(/  - \{ id: (dpo|grpo|prm).*\n/g, '').replace(/    - \{ name: (DPO|GRPO|base \+ PRM).*\n/g, '').replace(/claims:\n(  - .*\n)+/, ''));
    const log: string[] = [];
    const r = await runPipeline({ recipe: loadRecipe(warm).recipe, recipePath: warm, out: join(tmp.dir, 'warm-out'), log: (l) => log.push(l) });
    const saved = JSON.parse(readFileSync(join(tmp.dir, 'warm-out', 'seed-0', 'base', 'policy.json'), 'utf8'));
    assert.equal(saved.training[0].algo, 'sft');
    assert.ok(saved.training[0].demonstrations > 10, `${saved.training[0].demonstrations} demonstrations`);
    assert.ok(saved.model.params.some((w: number) => w !== 0), 'trained weights');
    assert.ok(log.some((l) => /\[seed 0\] \[2\/4\] base: warm-started base: SFT on the gym-teacher\(0\.8\)/.test(l)), log.join('\n'));
    assert.ok(log.some((l) => /\[3\/4\] annotate: mcts-spre annotation with base/.test(l)));
    assert.equal(r.seeds[0]!.results.cells[0]!.system, 'base');
    // The base evaluated is the warm-started file, not the untrained policy.
    assert.ok(!existsSync(join(tmp.dir, 'warm-out', 'seed-0', 'base.json')));
    assert.ok(JSON.stringify(r.seeds[0]!.results.config.systems[0]).includes(join('seed-0', 'base', 'policy.json')));
  });

  it('an annotate stage with trees mines an earlier stage\'s trees with its own minGap, searching nothing', async () => {
    const two = join(tmp.dir, 'two.yaml');
    writeFileSync(two, recipeText(0.3).replace('seeds: [0, 1]', 'seeds: [0]').replace('  - { id: dpo,', '  - { id: clear, kind: annotate, method: mcts-spre, trees: annotate, minGap: 0.2 }\n  - { id: dpo,').replace('data: annotate, settings', 'data: clear, settings'));
    const log: string[] = [];
    await runPipeline({ recipe: loadRecipe(two).recipe, recipePath: two, out: join(tmp.dir, 'two-out'), log: (l) => log.push(l) });
    const dir = (id: string) => join(tmp.dir, 'two-out', 'seed-0', id);
    assert.equal(readFileSync(join(dir('clear'), 'trees.jsonl'), 'utf8'), readFileSync(join(dir('annotate'), 'trees.jsonl'), 'utf8'));
    const gaps = (id: string) => readFileSync(join(dir(id), 'pairs.jsonl'), 'utf8').trim().split('\n').filter(Boolean).map((l) => (JSON.parse(l) as { gap: number }).gap);
    assert.ok(gaps('clear').length > 0 && gaps('clear').length < gaps('annotate').length, `${gaps('clear').length} of ${gaps('annotate').length} pairs`);
    assert.deepEqual(gaps('clear'), gaps('annotate').filter((g) => g >= 0.2));
    assert.ok(log.some((l) => /clear: pairs mined from annotate's trees \(value gap ≥ 0\.2\) …/.test(l)), log.join('\n'));
    const dpo = JSON.parse(readFileSync(join(dir('dpo'), 'stage.json'), 'utf8')).summary;
    assert.equal(dpo.pairs, gaps('clear').length);
  });

  it('an annotation whose minGap keeps no pair skips the DPO and PRM built on it, and their systems and claims, as on the LLM path', async () => {
    const none = join(tmp.dir, 'none.yaml');
    // No two siblings' values differ by more than 1, so minGap 1 keeps (almost surely) nothing at this size.
    writeFileSync(none, recipeText(0.3).replace('seeds: [0, 1]', 'seeds: [0]').replace('mcts: { simulations: 6 } }', 'mcts: { simulations: 6 }, minGap: 1 }').replace(/  - \{ id: grpo.*\n/, '').replace(/    - \{ name: GRPO.*\n/, '').replace(/claims:\n(  - .*\n)+/, 'claims:\n  - { claim: dpo beats base, metric: em, treatment: DPO, control: base }\n'));
    const log: string[] = [];
    const r = await runPipeline({ recipe: loadRecipe(none).recipe, recipePath: none, out: join(tmp.dir, 'none-out'), log: (l) => log.push(l) });
    const stats = JSON.parse(readFileSync(join(tmp.dir, 'none-out', 'seed-0', 'annotate', 'stats.json'), 'utf8'));
    assert.equal(stats.minGap, 1);
    assert.equal(stats.pairs, 0, 'pairs with a gap of 1');
    assert.ok(log.some((l) => /dpo skipped: annotate mined no preference pairs \(raise its questions or simulations, or lower its minGap\)/.test(l)), log.join('\n'));
    assert.ok(log.some((l) => /prm skipped: annotate mined pairs on 0 question\(s\)/.test(l)), log.join('\n'));
    assert.deepEqual(r.seeds[0]!.results.cells.map((c) => c.system), ['base']);
    assert.deepEqual(r.claims, []);
  });

  it('the CLI names an unknown recipe and a bad setting with their fix', () => {
    const { run } = cliRunner(tmp.dir);
    const r = run('pipeline', '--recipe', 'nope');
    assert.equal(r.status, 2);
    assert.match(r.stderr, /no recipe "nope".*reasonrag, rag-gym, lws, prorag, arena/s);
    writeFileSync(join(tmp.dir, 'bad.yaml'), recipeText(0.3).replace('beta: 0.3', 'betta: 0.3'));
    const b = run('pipeline', '--recipe', join(tmp.dir, 'bad.yaml'), '--out', join(tmp.dir, 'bad-out'), '--seeds', '0');
    assert.equal(b.status, 2);
    assert.match(b.stderr, /stage dpo: "betta" is not a setting of dpo.*beta/s);
  });
});
