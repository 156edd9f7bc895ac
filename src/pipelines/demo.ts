/**
 * `ragtrail demo`: the comparison recipe (recipes/comparison.yaml) on one seed, offline, in about a
 * minute — process supervision against outcome rewards at an equal number of training questions:
 *
 *   world → BM25 index → MCTS + SPRE annotation (ReasonRAG) of N training questions with the untrained
 *   gym policy → (a) step-level DPO on the mined pairs, (b) GRPO on EM over the same N questions
 *   → a PRM on the pairs → PRM-guided best-of-N (RAG-Gym) → evaluation on the held-out questions.
 *
 * The demo's flags patch the recipe (simulations, GRPO epochs, N, sizes, the seed); the run itself is
 * `ragtrail pipeline`'s, so its output has the pipeline's layout (OUT/seed-S/<stage>/, results.json
 * with the claims, report.html). With an LLM the policy is the model and training goes to TRL
 * (configs written and printed; pipelines/pipeline-llm.ts).
 */
import type { LLMOptions } from '../llm/create.js';
import { type PipelineResult, runPipeline } from './pipeline.js';
import { withRunSettings } from './claims.js';
import { loadRecipe, type Recipe } from './recipe.js';

export interface DemoOptions {
  out: string;
  /** Entities of the synthetic world (default 10,000: 2,000 questions, 200 in the test split). */
  entities: number;
  /** Training questions: the budget both learners get (default 200). */
  trainQuestions: number;
  /** Test questions evaluated (default: the whole test split). */
  testQuestions?: number;
  /** MCTS simulations per question (default 64, as the comparison recipe). */
  simulations: number;
  /** GRPO passes over the training questions (default 3). */
  grpoEpochs: number;
  /** Candidates per step for PRM best-of-N (default 10). */
  n: number;
  seed: number;
  agent: string;
  /** An LLM spec: the policy becomes the model, and its training goes to TRL. */
  llm?: string;
  llmOptions?: LLMOptions;
  log?: (line: string) => void;
}

export const DEMO_DEFAULTS: Omit<DemoOptions, 'out'> = { entities: 10_000, trainQuestions: 200, simulations: 64, grpoEpochs: 3, n: 10, seed: 0, agent: 'reasonrag' };

/** The comparison recipe with the demo's settings. */
export function demoRecipe(o: DemoOptions): Recipe {
  const r = structuredClone(loadRecipe('comparison').recipe);
  r.agent = o.agent as Recipe['agent'];
  for (const s of r.stages) {
    // A stage that mines another's trees (`trees`) does not search: its search settings are that stage's.
    if (s.kind === 'annotate' && !s.trees) s.mcts = { ...s.mcts, simulations: o.simulations };
    if (s.kind === 'train' && s.algo === 'grpo') s.settings = { ...s.settings, epochs: o.grpoEpochs };
  }
  for (const s of r.evaluate.systems) if (s.select === 'prm') s.n = o.n;
  // The systems' names, the claims and the description say best-of-N with the N set here (`--n`), not the YAML's.
  return withRunSettings(r);
}

export async function runDemo(options: Partial<DemoOptions> & { out: string }): Promise<PipelineResult> {
  const o: DemoOptions = { ...DEMO_DEFAULTS, ...options };
  return runPipeline({
    recipe: demoRecipe(o), recipePath: 'recipes/comparison.yaml (ragtrail demo)', out: o.out, seeds: [o.seed], entities: o.entities, trainQuestions: o.trainQuestions,
    ...(o.testQuestions !== undefined && { testQuestions: o.testQuestions }),
    ...(o.llm && { llm: { llm: o.llm, llmOptions: o.llmOptions } }),
    ...(o.log && { log: o.log }),
  });
}
