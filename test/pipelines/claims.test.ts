/**
 * Claim texts built from the run's settings: `ragtrail demo --n 4` must not print "best-of-10" in its
 * claims, system names or description (issue 47: the report said best-of-10 for a run with --n 4).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withRunSettings } from '../../src/pipelines/claims.js';
import { DEMO_DEFAULTS, demoRecipe } from '../../src/pipelines/demo.js';
import { loadRecipe, RECIPE_NAMES } from '../../src/pipelines/recipe.js';

describe('claim texts from the run settings', () => {
  it('demo --n 4: systems, claims and description say best-of-4, nothing says best-of-10', () => {
    const r = demoRecipe({ ...DEMO_DEFAULTS, out: 'unused', n: 4 });
    assert.deepEqual(r.evaluate.systems.map((s) => [s.name, s.n]), [['base', undefined], ['step-DPO (process)', undefined], ['GRPO (outcome)', undefined], ['base + PRM best-of-4', 4], ['step-DPO + PRM best-of-4', 4], ['step-DPO (gap ≥ 0.3)', undefined], ['base + PRM (gap ≥ 0.3) best-of-4', 4]]);
    assert.deepEqual(r.claims.map((c) => [c.claim, c.treatment, c.control]), [
      ['step-level process preferences beat outcome-reward RL at equal training questions', 'step-DPO (process)', 'GRPO (outcome)'],
      ["PRM best-of-4 beats the base policy's own sampling", 'base + PRM best-of-4', 'base'],
      ['diagnostic: step-DPO on the pairs with a value gap of 0.3 or more beats GRPO', 'step-DPO (gap ≥ 0.3)', 'GRPO (outcome)'],
      ['diagnostic: best-of-4 with a PRM on the pairs with a value gap of 0.3 or more beats the base', 'base + PRM (gap ≥ 0.3) best-of-4', 'base'],
    ]);
    // The stage that mines annotate's trees keeps no search settings of its own for --simulations to patch.
    assert.deepEqual(r.stages.filter((s) => s.kind === 'annotate').map((s) => [s.id, s.kind === 'annotate' && s.mcts['simulations']]), [['annotate', 64], ['annotate-gap', undefined], ['annotate-judge', undefined]]);
    assert.match(r.description, /and PRM best-of-4 on top of each;/);
    assert.ok(!JSON.stringify(r).includes('best-of-10'), 'best-of-10 left somewhere');
    // The rows' descriptions too: "the base sampling 4 candidates per step, …".
    assert.deepEqual(r.evaluate.systems.filter((s) => s.about?.includes('sampling')).map((s) => s.about!.split(',')[0]), ['the base sampling 4 candidates per step', 'diagnostic: the base sampling 4 candidates per step']);
    assert.ok(!JSON.stringify(r).includes('sampling 10'), 'sampling 10 left somewhere');
  });

  it('the shipped recipes, whose texts agree with their settings, come back unchanged', () => {
    for (const name of RECIPE_NAMES) {
      const r = loadRecipe(name).recipe;
      assert.deepEqual(withRunSettings(r), r, name);
    }
    assert.deepEqual(demoRecipe({ ...DEMO_DEFAULTS, out: 'unused' }), loadRecipe('comparison').recipe, 'the demo at its default n (10) is the recipe');
  });

  it('a YAML whose best-of-N system says 10 but runs n 3: name, claim and description follow n', () => {
    const r = structuredClone(loadRecipe('rag-gym').recipe);
    for (const s of r.evaluate.systems) if (s.select === 'prm') s.n = 3;
    const settled = withRunSettings(r);
    const claims = settled.claims.map((c) => `${c.claim} | ${c.treatment} vs ${c.control}`);
    assert.ok(claims.every((c) => !c.includes('best-of-10')), claims.join('\n'));
    assert.ok(claims.some((c) => c.startsWith('best-of-3 with a PRM trained on the improved policy') && c.includes('| DPO + PRM best-of-3 vs')), claims.join('\n'));
    assert.ok(!settled.description.includes('best-of-10'));
    // Systems of different N: each claim takes its own systems' N; the description, naming no one N, stays.
    const mixed = structuredClone(loadRecipe('comparison').recipe);
    mixed.evaluate.systems.find((s) => s.name === 'step-DPO + PRM best-of-10')!.n = 6;
    const m = withRunSettings(mixed);
    assert.deepEqual(m.evaluate.systems.filter((s) => s.select === 'prm').map((s) => s.name), ['base + PRM best-of-10', 'step-DPO + PRM best-of-6', 'base + PRM (gap ≥ 0.3) best-of-10']);
    assert.equal(m.claims[1]!.claim, "PRM best-of-10 beats the base policy's own sampling");
    assert.equal(m.description, mixed.description);
  });
});
