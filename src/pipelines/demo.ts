/**
 * `ragtrail demo`: the whole loop of the papers on the synthetic world, offline, in minutes:
 *
 *   world → BM25 index → base gym policy → MCTS + SPRE annotation (ReasonRAG) of N training questions
 *   → (a) step-level DPO on the mined pairs and (b) GRPO on outcome rewards over the same N questions
 *   → a PRM on the pairs → PRM-guided best-of-N (RAG-Gym) → evaluation of every system on the
 *   held-out test questions → results.json, results.md, report.html and a printed table.
 *
 * With an LLM (`llm`), the policy is the model: annotation, the PRM, and best-of-N run with it, and
 * the policy training goes to TRL — the demo writes the TRL configs and prints their commands
 * (serving the trained weights for evaluation is a step for vLLM or similar, outside this process).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadDatasetAll } from '../corpus/dataset.js';
import { generateWorld, writeWorld } from '../corpus/world/index.js';
import { LlmPolicy, type Policy } from '../agents/policy.js';
import { getProtocol } from '../agents/registry.js';
import { RagEnv } from '../env/env.js';
import { type EvalResults, runEval } from '../eval/harness.js';
import { writeReport } from '../eval/report.js';
import type { SystemSpec } from '../eval/systems.js';
import { createLLM, type LLMOptions } from '../llm/create.js';
import { readPrmPairs, trainPrm } from '../prm/trained.js';
import { annotate } from '../process/annotate.js';
import { UCT_DEFAULTS } from '../process/mcts.js';
import { buildIndex, openRetriever } from '../retrieval/index-dir.js';
import { InputError } from '../core/errors.js';
import { writeJsonl } from '../core/io.js';
import { preferencePairs } from '../learn/gym/data.js';
import { readTrees } from '../process/tree.js';
import { GymPolicy } from '../learn/gym/policy.js';
import { type LogEntry, trainDpo, trainRl } from '../learn/gym/train.js';
import { defaultVenv, type TrlConfig, trlCommand, writeTrlConfig } from '../learn/trl.js';

export interface DemoOptions {
  out: string;
  /** Entities of the synthetic world (default 10,000: 2,000 questions, 200 in the test split). */
  entities: number;
  /** Training questions: the budget both learners get (default 200). */
  trainQuestions: number;
  /** Test questions evaluated (default: the whole test split). */
  testQuestions?: number;
  /** MCTS simulations per question (default 16). */
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

export const DEMO_DEFAULTS: Omit<DemoOptions, 'out'> = { entities: 10_000, trainQuestions: 200, simulations: 16, grpoEpochs: 3, n: 10, seed: 0, agent: 'reasonrag' };

export interface DemoResult {
  results: EvalResults;
  seconds: number;
  timings: Record<string, number>;
  files: Record<string, string>;
}

/** The parts of the output folder the demo owns (cleared on each run so that nothing stale is reused). */
const OWNED = ['world', 'index', 'annotate', 'policies', 'prm.json', 'prm_heldout.jsonl', 'eval', 'trl', 'results.json', 'results.md', 'report.html'];

export async function runDemo(options: Partial<DemoOptions> & { out: string }): Promise<DemoResult> {
  const o: DemoOptions = { ...DEMO_DEFAULTS, ...options };
  const log = o.log ?? ((l: string) => console.error(l));
  const out = resolve(o.out);
  mkdirSync(out, { recursive: true });
  for (const part of OWNED) rmSync(join(out, part), { recursive: true, force: true });
  const t0 = performance.now();
  const timings: Record<string, number> = {};
  const stage = async <T>(name: string, f: () => Promise<T>): Promise<T> => {
    const s = performance.now();
    const r = await f();
    timings[name] = (performance.now() - s) / 1000;
    log(`  ${name}: ${timings[name].toFixed(1)} s`);
    return r;
  };
  const protocol = getProtocol(o.agent);
  const files = { world: join(out, 'world'), index: join(out, 'index'), annotate: join(out, 'annotate'), policies: join(out, 'policies'), prm: join(out, 'prm.json'), eval: join(out, 'eval') };

  // 1. World and index.
  log(`[1/6] synthetic world (${o.entities} entities, seed ${o.seed}) and its BM25 index`);
  await stage('world + index', async () => {
    await writeWorld(files.world, generateWorld({ seed: o.seed, entities: o.entities }));
    await buildIndex(join(files.world, 'corpus.jsonl'), files.index, { quiet: true });
  });
  const questionsPath = join(files.world, 'questions.jsonl');
  const all = (await loadDatasetAll(questionsPath)).questions;
  const train = all.filter((q) => q.metadata?.['split'] === 'train').slice(0, o.trainQuestions);
  const test = all.filter((q) => q.metadata?.['split'] === 'test').slice(0, o.testQuestions ?? Infinity);
  const retriever = await openRetriever(files.index);
  const d = protocol.defaults;
  const env = new RagEnv({ retriever, topK: d.topK, maxTurns: d.maxTurns, maxSearches: d.maxSearches });

  // 2. The base policy.
  mkdirSync(files.policies, { recursive: true });
  let base: Policy;
  const basePath = join(files.policies, 'base.json');
  if (o.llm) {
    base = new LlmPolicy(protocol, await createLLM(o.llm, { cacheDir: join(out, '.cache'), ...o.llmOptions }));
    log(`[2/6] base policy: ${base.name}`);
  } else {
    const g = GymPolicy.fresh(protocol);
    g.save(basePath, [{ algo: 'none', note: 'untrained: all weights zero, uniform over the candidate actions' }]);
    base = g;
    log(`[2/6] base policy: the untrained gym policy (uniform over generated candidate actions) — a non-LLM stand-in`);
  }

  // 3. Process supervision: MCTS + SPRE (ReasonRAG).
  log(`[3/6] MCTS + SPRE annotation of ${train.length} training questions (${o.simulations} simulations each)`);
  await stage('annotate', () =>
    annotate({
      method: 'mcts-spre', outDir: files.annotate, env, policy: base, questions: train, mcts: { ...UCT_DEFAULTS, simulations: o.simulations, seed: o.seed },
      config: { method: 'mcts-spre', agent: o.agent, policy: base.name, simulations: o.simulations, seed: o.seed }, quiet: true,
    }),
  );
  const trees = await readTrees(files.annotate);
  const pairs = preferencePairs(trees);
  log(`  ${trees.length} trees, ${pairs.length} step preference pairs`);

  // 4. Learning: step-DPO vs GRPO on the same questions (gym), or TRL configs (LLM).
  const curves: EvalResults['curves'] = [];
  const systems: (SystemSpec & { name: string })[] = [];
  const trlCommands: string[] = [];
  const baseSpec = o.llm ? { llm: o.llm } : { policy: `gym:${basePath}` };
  if (o.llm) {
    log('[4/6] policy training goes to TRL: writing configs (run the printed commands, then serve the weights)');
    for (const algo of ['sft', 'dpo'] as const) {
      const dir = join(out, 'trl', algo);
      mkdirSync(dir, { recursive: true });
      const config: TrlConfig = { algo, model: 'Qwen/Qwen2.5-7B-Instruct', data: join(files.annotate, algo === 'sft' ? 'trl_sft.jsonl' : 'trl_preference.jsonl'), output_dir: dir, lora: { r: 16, alpha: 32, dropout: 0.05, target_modules: 'all-linear' }, trainer: algo === 'dpo' ? { beta: 0.3, learning_rate: 1e-6, num_train_epochs: 1, bf16: true } : { learning_rate: 1e-5, num_train_epochs: 1, bf16: true } };
      writeTrlConfig(config, join(dir, 'trl-config.json'));
      trlCommands.push(trlCommand(join(defaultVenv(), 'bin', 'python'), join(dir, 'trl-config.json')).line);
    }
    for (const c of trlCommands) log(`  ${c}`);
  } else {
    log(`[4/6] training the gym policy: step-level DPO on the pairs, GRPO on outcome rewards — the same ${train.length} questions`);
    if (pairs.length === 0) throw new InputError(`the annotation of ${train.length} questions gave no preference pairs`, 'raise --train-questions or --simulations');
    const dpo = GymPolicy.fresh(protocol);
    const dpoLog = await stage('step-DPO', async () => trainDpo(dpo, pairs, { seed: o.seed }));
    dpo.save(join(files.policies, 'dpo.json'), [{ algo: 'dpo', pairs: pairs.length, log: dpoLog }]);
    const grpo = GymPolicy.fresh(protocol);
    const grpoLog = await stage('GRPO', () => trainRl(grpo, { env, questions: train }, { algo: 'grpo', epochs: o.grpoEpochs, seed: o.seed }));
    grpo.save(join(files.policies, 'grpo.json'), [{ algo: 'grpo', questions: train.length, log: grpoLog }]);
    const pts = (l: LogEntry[], k: string) => l.map((e) => ({ x: e.step, y: e[k]! }));
    curves.push({ title: 'Step-level DPO: loss on the pairs by epoch', xLabel: 'epoch', yLabel: 'DPO loss', series: [{ name: 'loss', points: pts(dpoLog, 'loss') }, { name: 'pair accuracy', points: pts(dpoLog, 'pairAccuracy') }], yMin: 0 });
    curves.push({ title: 'GRPO: mean outcome reward (EM) of the sampled episodes by batch', xLabel: 'batch', yLabel: 'mean reward', series: [{ name: 'reward', points: pts(grpoLog, 'reward') }], yMin: 0 });
  }

  // 5. The PRM and PRM-guided best-of-N (skipped when the annotation mined too few pairs to hold some out).
  const prmPairs = await readPrmPairs(join(files.annotate, 'prm_pairs.jsonl'));
  const heldOutPath = join(out, 'prm_heldout.jsonl');
  const withPrm = new Set(prmPairs.map((p) => p.id.split(':')[0])).size >= 2;
  if (withPrm) {
    log('[5/6] PRM on the pairs (Bradley–Terry, 20% of questions held out)');
    const { prm, heldOut } = await stage('PRM', () => trainPrm(prmPairs, { seed: o.seed }));
    prm.save(files.prm);
    await writeJsonl(heldOutPath, heldOut);
    log(`  held-out pair accuracy ${(prm.saved.training.heldOutAccuracy ?? NaN).toFixed(3)} on ${heldOut.length} pairs`);
  } else {
    log(`[5/6] no PRM: the annotation gave ${prmPairs.length} pairs (too few to train and hold out); PRM best-of-N is skipped`);
  }

  // 6. Evaluation on the held-out test questions.
  systems.push({ name: 'base', agent: o.agent, ...baseSpec });
  if (!o.llm) {
    systems.push({ name: 'step-DPO (process)', agent: o.agent, policy: `gym:${join(files.policies, 'dpo.json')}` });
    systems.push({ name: 'GRPO (outcome)', agent: o.agent, policy: `gym:${join(files.policies, 'grpo.json')}` });
  }
  if (withPrm) systems.push({ name: `base + PRM best-of-${o.n}`, agent: o.agent, ...baseSpec, select: 'prm', prm: files.prm, n: o.n });
  if (withPrm && !o.llm) systems.push({ name: `step-DPO + PRM best-of-${o.n}`, agent: o.agent, policy: `gym:${join(files.policies, 'dpo.json')}`, select: 'prm', prm: files.prm, n: o.n });
  log(`[6/6] evaluating ${systems.length} systems on ${test.length} held-out test questions`);
  const results = await stage('evaluate', () =>
    runEval(
      { index: files.index, out: files.eval, datasets: [{ name: 'world-test', path: questionsPath, split: 'test', limit: o.testQuestions }], systems, baseline: 'base', ...(withPrm ? { prm: { model: files.prm, pairs: heldOutPath } } : {}), annotation: files.annotate, seed: o.seed },
      () => {},
    ),
  );
  const seconds = (performance.now() - t0) / 1000;
  results.curves = curves;
  results.notes = [
    o.llm
      ? `The ragtrail demo with the LLM ${o.llm}: MCTS + SPRE annotation of ${train.length} training questions of the synthetic world, a PRM trained on the pairs, and PRM-guided best-of-${o.n} against the model alone. Policy training goes to TRL: ${trlCommands.join(' ; ')}`
      : `The ragtrail demo on the synthetic world (${o.entities} entities, seed ${o.seed}). All policies are the gym policy — a small linear model over generated candidate actions, not an LLM. Base: untrained (uniform). Step-DPO: trained on ${pairs.length} step preference pairs mined from MCTS + SPRE trees of ${train.length} training questions (${o.simulations} simulations each). GRPO: trained on outcome rewards (EM) over the same ${train.length} questions (${o.grpoEpochs} epochs, 8 episodes per question). The PRM is trained on the same pairs; best-of-${o.n} samples ${o.n} candidate steps at temperature 1 and executes the PRM's choice.`,
    `Wall time ${seconds.toFixed(0)} s: ${Object.entries(timings).map(([k, v]) => `${k} ${v.toFixed(1)} s`).join(', ')}.`,
  ];
  // The harness wrote the report already; rewrite it with the curves and notes, beside results.json.
  writeFileSync(join(files.eval, 'results.json'), JSON.stringify(results, null, 2) + '\n');
  writeReport(files.eval, results);
  writeFileSync(join(out, 'results.json'), JSON.stringify({ seconds, timings, ...results }, null, 2) + '\n');
  writeReport(out, results);
  return { results, seconds, timings, files: { ...files, report: join(out, 'report.html'), results: join(out, 'results.json') } };
}
