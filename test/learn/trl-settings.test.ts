/**
 * The TRL engine's rule: every setting of a recipe train stage, and every field of its trl block,
 * reaches the TRL config (or the environment server's reward), or is refused with a line naming it.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadRecipe, RECIPES_DIR } from '../../src/pipelines/recipe.js';
import { trlStageSettings } from '../../src/learn/trl-settings.js';

const recipeFiles = readdirSync(RECIPES_DIR).filter((f) => f.endsWith('.yaml'));

test('every setting of every recipe train stage reaches the TRL config, or is refused', () => {
  assert.ok(recipeFiles.length >= 6);
  let checked = 0;
  for (const file of recipeFiles) {
    const { recipe } = loadRecipe(join(RECIPES_DIR, file));
    for (const stage of recipe.stages) {
      if (stage.kind !== 'train' || stage.algo === 'rft') continue; // rft on LLMs is not this part's (it is skipped with a note)
      const paper = recipe.trl?.stages[stage.id] ?? {};
      const out = trlStageSettings(stage, paper);
      const written = { ...out.trainer, ...out.top } as Record<string, unknown>;
      for (const [key, value] of Object.entries(stage.settings)) {
        checked++;
        const where: string = `${file} ${stage.id}.${key}`;
        if (key === 'reward') assert.equal(out.reward, value, where);
        else if (key === 'rewardOptions') assert.deepEqual(out.rewardOptions, value, where);
        else {
          // Either the field holds the gym value (mapped), or the trl block's value with a note naming the gym setting.
          const field = Object.entries(written).find(([, v]) => JSON.stringify(v) === JSON.stringify(value) || JSON.stringify(v) === JSON.stringify({ share: value }));
          const noted = out.notes.some((n) => n.includes(` ${key} `) && n.includes(stage.id));
          assert.ok(field || noted, `${where} = ${JSON.stringify(value)} is neither in the TRL config ${JSON.stringify(written)} nor noted`);
        }
      }
      for (const [field, value] of Object.entries(paper)) {
        checked++;
        assert.deepEqual(written[field], value, `${file} trl.stages.${stage.id}.${field}`);
      }
    }
  }
  assert.ok(checked > 60, `only ${checked} settings walked`);
});

test("ARENA's k2 KL reaches the TRL config of both its GRPO stages", () => {
  const { recipe } = loadRecipe('arena');
  for (const id of ['arena-grpo', 'no-relevance-grpo']) {
    const stage = recipe.stages.find((s) => s.id === id)!;
    assert.equal(stage.kind, 'train');
    const out = trlStageSettings(stage as { id: string; algo: string; settings: Record<string, unknown> }, recipe.trl!.stages[id]);
    assert.equal(out.top.kl_estimator, 'k2');
    assert.equal(out.trainer['beta'], 0.04);
    assert.equal(out.trainer['num_generations'], 7);
    assert.equal(out.reward, 'arena');
  }
});

test("LWS's stages: the switch share, the KL coefficient, and the trl block's 16 generations over the gym's 8 (with a note)", () => {
  const { recipe } = loadRecipe('lws');
  const stage = recipe.stages.find((s) => s.id === 'lws-dapo') as { id: string; algo: string; settings: Record<string, unknown> };
  const out = trlStageSettings(stage, recipe.trl!.stages['lws-dapo']);
  assert.deepEqual(out.top.stage_switch, { share: 0.5 });
  assert.equal(out.trainer['beta'], 0.0001);
  assert.equal(out.trainer['num_generations'], 16);
  assert.equal(out.trainer['loss_type'], 'dapo');
  assert.equal(out.trainer['epsilon_high'], 0.28);
  assert.deepEqual(out.notes, ['stage lws-dapo: groupSize 8 (gym) gives way to trl.stages.lws-dapo.num_generations 16']);
});

test('a setting the TRL engine cannot honour is refused with one line naming it', () => {
  const grpo = { id: 'x', algo: 'grpo', settings: { epochs: 1, lr: 0.05 } };
  assert.throws(() => trlStageSettings(grpo), /stage x: setting "lr" is refused on the TRL engine: lr \(the gym learning rate\) belongs to the gym policy/);
  assert.throws(() => trlStageSettings({ id: 'y', algo: 'dapo', settings: { frobnicate: 1 } }), /stage y: setting "frobnicate" has no TRL counterpart for dapo/);
  assert.throws(() => trlStageSettings({ id: 'z', algo: 'dpo', settings: { referenceFree: true } }), /setting "referenceFree" is refused/);
  // mapped: the gym names become TRL's
  const ok = trlStageSettings({ id: 'g', algo: 'grpo', settings: { epsLow: 0.2, epsHigh: 0.28, updatesPerBatch: 2, aggregate: 'token', kl: 'k1', dynamicSampling: false } });
  assert.deepEqual(ok.trainer, { epsilon: 0.2, epsilon_high: 0.28, num_iterations: 2, loss_type: 'dapo' });
  assert.deepEqual(ok.top, { kl_estimator: 'k1', dynamic_sampling: false });
  const sft = trlStageSettings({ id: 'w', algo: 'sft', settings: { controlWeight: 2, epochs: 1 } }, { learning_rate: 1e-5 });
  assert.deepEqual(sft, { trainer: { num_train_epochs: 1, learning_rate: 1e-5 }, top: { control_token_weight: 2 }, rft: {}, notes: [] });
});

test("an rft stage's sampling settings go to the sampler, its SFT settings to TRL", () => {
  const rft = trlStageSettings({ id: 'rft', algo: 'rft', settings: { samples: 8, temperature: 0.7, threshold: 0.6, filter: 'episode', correct: 'f1', f1Threshold: 0.8, epochs: 2, controlWeight: 2 } }, { learning_rate: 1e-5 });
  assert.deepEqual(rft.rft, { samples: 8, temperature: 0.7, threshold: 0.6, filter: 'episode', correct: 'f1', f1Threshold: 0.8 });
  assert.deepEqual(rft.trainer, { num_train_epochs: 2, learning_rate: 1e-5 });
  assert.deepEqual(rft.top, { control_token_weight: 2 });
  assert.throws(() => trlStageSettings({ id: 'rft', algo: 'rft', settings: { groupSize: 8 } }), /stage rft: setting "groupSize" has no TRL counterpart for rft/);
});
