/**
 * The GPU smoke check's plan (scripts/gpu/recipes.py): every TRL stage of every paper recipe, as the
 * paper runs it — the recipe's `trl` block (bf16, LoRA, trainer fields) over the stage's gym settings
 * (learn/trl-settings.ts) — for a few steps on a small random model.
 *
 *   node --import tsx scripts/gpu/plan.ts > gpu-plan.json
 */
import { loadRecipe } from '../../src/pipelines/recipe.js';
import { trlStageSettings } from '../../src/learn/trl-settings.js';

const plan: Record<string, unknown>[] = [];
for (const name of ['reasonrag', 'rag-gym', 'lws', 'prorag', 'arena']) {
  const { recipe } = loadRecipe(name);
  const blocks = recipe.trl?.stages ?? {};
  for (const stage of recipe.stages) {
    const paper = Object.hasOwn(blocks, stage.id) ? blocks[stage.id]! : undefined;
    if (stage.kind === 'prm') {
      // A PRM stage with a trl block: the paper's LLM PRM (TRL RewardTrainer, one-output head).
      if (paper) plan.push({ recipe: name, stage: stage.id, algo: 'prm', lora: recipe.trl?.lora ?? null, trainer: paper, top: {}, protocol: recipe.agent });
      continue;
    }
    if (stage.kind !== 'train') continue;
    const mapped = trlStageSettings(stage, paper ?? {});
    // RFT's training is TRL's SFT on the kept steps (pipelines/rft-llm.ts).
    const algo = stage.algo === 'rft' ? 'sft' : stage.algo;
    plan.push({ recipe: name, stage: stage.id, algo, lora: recipe.trl?.lora ?? null, trainer: mapped.trainer, top: mapped.top, protocol: recipe.agent, reward: mapped.reward ?? null });
  }
}
console.log(JSON.stringify(plan, null, 1));
