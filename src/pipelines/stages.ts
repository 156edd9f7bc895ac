/**
 * What every engine of `ragtrail pipeline` shares: a seed's folder with its world, index and
 * environment, and the stage runner that makes the pipeline resumable per stage.
 *
 * Each stage's key covers its own settings, the run's shared settings and the keys of the stages
 * before it, so changing one stage re-runs it and everything after it. A stage whose stage.json holds
 * its key is kept; resumable stages (annotation and evaluation, which resume per question) continue
 * an interrupted run of the same key in place; any other stage starts again from an empty folder.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { getProtocol } from '../agents/registry.js';
import type { Protocol } from '../agents/protocol.js';
import type { Question } from '../core/types.js';
import { loadDatasetAll } from '../corpus/dataset.js';
import { generateWorld, worldProfile, writeWorld } from '../corpus/world/index.js';
import { RagEnv } from '../env/env.js';
import { buildIndex, openRetriever } from '../retrieval/index-dir.js';
import { LlmPolicy, type Policy } from '../agents/policy.js';
import { splitSpec } from '../core/registry.js';
import { createLLM, llmBackends } from '../llm/create.js';
import { InputError } from '../core/errors.js';
import { exactMatch } from '../core/metrics.js';
import { writeJsonAtomicSync, writeJsonl } from '../core/io.js';
import type { Action, Step } from '../core/trajectory.js';
import { createPolicy } from '../agents/policies.js';
import { checkLabels } from '../prm/label-check.js';
import { readPrmPairs, trainPrm } from '../prm/trained.js';
import { annotate, annotateFromTrees, type AnnotateOptions } from '../process/annotate.js';
import { trajectorySftExample } from '../process/export.js';
import { PUCT_DEFAULTS, UCT_DEFAULTS } from '../process/mcts.js';
import { RANK_DEFAULTS } from '../process/rank.js';
import { PlanJudge, QRuleJudge } from '../process/sibling-judge.js';
import type { Retriever } from '../retrieval/types.js';
import type { Recipe, Stage } from './recipe.js';
import { ProjectedPolicy } from '../learn/gym/projected.js';
import { CandidateTeacher, GYM_TEACHER } from '../learn/gym/teacher.js';

export const hashJson = (v: unknown) => createHash('sha256').update(JSON.stringify(v)).digest('hex').slice(0, 16);

export interface StageRecord {
  key: string;
  stage: unknown;
  seconds: number;
  summary: Record<string, unknown>;
}

export interface RunSizes {
  entities: number;
  trainQuestions: number;
  testQuestions?: number;
}

export interface Seed {
  seed: number;
  dir: string;
  recipe: Recipe;
  protocol: Protocol;
  env: RagEnv;
  retriever: Retriever;
  train: Question[];
  /** The base's warm-start questions (recipe.base): training-split questions after `train`. */
  warmup: Question[];
  /** The environment's budgets (recipe, world profile, protocol defaults), which evaluation uses too. */
  envSettings: { topK: number; maxTurns: number; maxSearches?: number };
  questionsPath: string;
  indexDir: string;
  sizes: RunSizes;
  timings: Record<string, number>;
  log: (line: string) => void;
  /** Runs one stage through the resumable runner (numbered n of the seed's total). */
  step(n: number, name: string, what: string, stageDir: string, key: unknown, f: () => Promise<Record<string, unknown>>, resumable?: boolean): Promise<Record<string, unknown>>;
  total: number;
}

/** A seed's folder, its world and index (the first stage), the environment and the training questions. */
export async function openSeed(recipe: Recipe, out: string, seed: number, sizes: RunSizes, engine: Record<string, unknown>, log: (l: string) => void): Promise<Seed> {
  const dir = join(resolve(out), `seed-${seed}`);
  mkdirSync(dir, { recursive: true });
  const timings: Record<string, number> = {};
  const protocol = getProtocol(recipe.agent);
  const total = recipe.stages.length + 2 + (recipe.base && engine['engine'] === 'gym' ? 1 : 0);
  let chainKey = hashJson({ seed, sizes, worldQuestions: recipe.world.questions ?? null, profile: recipe.world.profile, agent: recipe.agent, env: recipe.env, engine });
  const step: Seed['step'] = async (n, name, what, stageDir, key, f, resumable = false) => {
    const k = hashJson({ chainKey, key });
    chainKey = k;
    const recordPath = join(stageDir, 'stage.json');
    const startedPath = join(stageDir, 'stage.started');
    if (existsSync(recordPath)) {
      const rec = JSON.parse(readFileSync(recordPath, 'utf8')) as StageRecord;
      if (rec.key === k) {
        timings[name] = 0;
        log(`[seed ${seed}] [${n}/${total}] ${name}: ${what} — done before (${rec.seconds.toFixed(1)} s), kept`);
        return rec.summary;
      }
    }
    const resume = resumable && existsSync(startedPath) && readFileSync(startedPath, 'utf8').trim() === k;
    if (!resume) rmSync(stageDir, { recursive: true, force: true });
    mkdirSync(stageDir, { recursive: true });
    writeFileSync(startedPath, k + '\n');
    log(`[seed ${seed}] [${n}/${total}] ${name}: ${what}${resume ? ' (resuming)' : ''} …`);
    const t0 = performance.now();
    const summary = await f();
    const seconds = (performance.now() - t0) / 1000;
    timings[name] = seconds;
    writeJsonAtomicSync(recordPath, { key: k, stage: key, seconds, summary } satisfies StageRecord);
    log(`[seed ${seed}] [${n}/${total}] ${name}: ${seconds.toFixed(1)} s ${JSON.stringify(summary)}`);
    return summary;
  };

  const worldDir = join(dir, 'world');
  const indexDir = join(dir, 'index');
  await step(1, 'world', `synthetic world (${sizes.entities} entities) and its BM25 index`, worldDir, { world: true }, async () => {
    rmSync(indexDir, { recursive: true, force: true });
    const world = generateWorld({ seed, entities: sizes.entities, profile: recipe.world.profile, ...(recipe.world.questions ? { questions: recipe.world.questions } : {}) });
    await writeWorld(worldDir, world);
    await buildIndex(join(worldDir, 'corpus.jsonl'), indexDir, { quiet: true });
    return { passages: world.stats.passages, questions: world.stats.questions };
  });
  const questionsPath = join(worldDir, 'questions.jsonl');
  const all = (await loadDatasetAll(questionsPath)).questions;
  const trainSplit = all.filter((q) => q.metadata?.['split'] === 'train');
  const train = trainSplit.slice(0, sizes.trainQuestions);
  // The warm start's questions come after the recipe's own, so the methods never train on them twice.
  const warmup = recipe.base ? trainSplit.slice(sizes.trainQuestions, sizes.trainQuestions + recipe.base.questions) : [];
  // A small world (tests, --entities) gives the warm start what its train split has left, and says so.
  if (recipe.base && warmup.length === 0) throw new InputError(`base: no warm-start questions left after the ${sizes.trainQuestions} training questions (the world's train split has ${trainSplit.length})`, 'lower trainQuestions, or raise the world\'s entities');
  if (recipe.base && warmup.length < recipe.base.questions) log(`[seed ${seed}] base: ${warmup.length} warm-start questions (of ${recipe.base.questions}): the world's train split has ${trainSplit.length}`);
  const retriever = await openRetriever(indexDir);
  const envSettings = seedEnv(recipe, protocol);
  const env = new RagEnv({ retriever, ...envSettings });
  return { seed, dir, recipe, protocol, env, envSettings, retriever, train, warmup, questionsPath, indexDir, sizes, timings, log, step, total };
}

/** The environment's budgets: the recipe's, else its world profile's, else the protocol's defaults. */
export function seedEnv(recipe: Recipe, protocol: Protocol): { topK: number; maxTurns: number; maxSearches?: number } {
  const d = protocol.defaults;
  const p = worldProfile(recipe.world.profile).env;
  const maxSearches = recipe.env.maxSearches ?? p.maxSearches ?? d.maxSearches;
  return { topK: recipe.env.topK ?? d.topK, maxTurns: recipe.env.maxTurns ?? p.maxTurns ?? d.maxTurns, ...(maxSearches !== undefined && { maxSearches }) };
}

export function describeStage(s: Stage): string {
  switch (s.kind) {
    case 'demonstrate':
      // An LLM teacher's spec can be a long URL: its model name is enough here.
      return `demonstrations from the ${s.teacher.includes('#') ? s.teacher.slice(s.teacher.lastIndexOf('#') + 1) : s.teacher} teacher`;
    case 'annotate':
      return s.trees ? `pairs ${s.judge ? `judged (${s.judge}) on` : 'mined from'} ${s.trees}'s trees${s.minGap !== undefined ? ` (value gap ≥ ${s.minGap})` : ''}` : `${s.method} annotation with ${s.policy}`;
    case 'prm':
      return s.source === 'gold' ? 'the gold PRM (scores steps by the gold plan; a diagnostic, not trained)' : `PRM on ${s.data}'s pairs`;
    case 'train':
      return `${s.algo} from ${s.from}${s.data ? ` on ${s.data}` : ''}${s.prm ? ` with PRM ${s.prm}` : ''}`;
  }
}

/** The training questions a stage uses: its own count or the recipe's. */
export const stageQuestions = (ctx: Seed, n?: number) => ctx.train.slice(0, n ?? ctx.train.length);

/**
 * A teacher policy's correct episodes on the training questions: the warm-up data. Written as action
 * sequences (demonstrations.jsonl, replayed into states for the gym) and as TRL SFT examples
 * (trl_sft.jsonl: the prompt of each step and the step's text).
 */
export async function demonstrate(ctx: Seed, stage: Pick<Extract<Stage, { kind: 'demonstrate' }>, 'teacher' | 'competence' | 'questions'>, dir: string, questions = stageQuestions(ctx, stage.questions), opts: { forGym?: boolean } = {}): Promise<Record<string, unknown>> {
  // An LLM spec (openai:URL#MODEL, llama:FILE) makes a served model the teacher, as ProRAG's warm-up
  // data comes from a stronger LLM; otherwise a registered policy (sim, oracle, gym:FILE).
  const llm = llmBackends.find(splitSpec(stage.teacher).kind) ? await createLLM(stage.teacher, { cacheDir: join(ctx.dir, '.cache') }) : undefined;
  // `gym-teacher`: the gold-plan teacher over the gym's own candidates (learn/gym/teacher.ts).
  const own = llm
    ? new LlmPolicy(ctx.protocol, llm)
    : stage.teacher === GYM_TEACHER
      ? new CandidateTeacher(ctx.protocol, ctx.retriever, ctx.envSettings.topK, stage.competence)
      : createPolicy(stage.teacher, ctx.protocol, stage.competence);
  // For the gym policy, another teacher acts through the gym's candidates (learn/gym/projected.ts).
  const teacher = opts.forGym && own.kind !== 'gym' && stage.teacher !== GYM_TEACHER ? new ProjectedPolicy(own) : own;
  try {
    return await demonstrateWith(ctx, questions, dir, teacher);
  } finally {
    await llm?.close();
  }
}

async function demonstrateWith(ctx: Seed, questions: readonly Question[], dir: string, teacher: Policy): Promise<Record<string, unknown>> {
  const kept: { questionId: string; actions: Action[] }[] = [];
  const sft: unknown[] = [];
  for (const q of questions) {
    let state = ctx.env.reset(q);
    while (!state.done && state.steps.length < ctx.env.config.maxTurns + 2) {
      const [move] = await teacher.propose(state, { n: 1, temperature: 1, seed: ctx.seed });
      if (!move) break;
      state = (await ctx.env.step(state, move)).state;
    }
    const answer = [...state.steps].reverse().find((s) => s.action.type === 'answer')?.action;
    if (answer?.type !== 'answer' || exactMatch(answer.answer, q.answers) !== 1) continue;
    kept.push({ questionId: q.id, actions: state.steps.map((s) => s.action) });
    const steps: readonly Step[] = state.steps;
    for (let i = 0; i < steps.length; i++) sft.push(trajectorySftExample(q, steps.slice(0, i + 1), ctx.recipe.agent));
  }
  await writeJsonl(join(dir, 'demonstrations.jsonl'), kept);
  await writeJsonl(join(dir, 'trl_sft.jsonl'), sft);
  return { teacher: teacher.name, questions: questions.length, kept: kept.length, steps: sft.length };
}

/** MCTS or ranking annotation of the training questions with a policy (the gym's or a served model). */
export async function annotateStage(ctx: Seed, stage: Extract<Stage, { kind: 'annotate' }>, dir: string, policy: Policy): Promise<Record<string, unknown>> {
  // With `trees`, the search is that stage's (its questions and settings), the pairs this stage's.
  const search = stage.trees ? (ctx.recipe.stages.find((s) => s.id === stage.trees) as Extract<Stage, { kind: 'annotate' }>) : stage;
  const questions = stageQuestions(ctx, search.questions);
  const base = stage.method === 'mcts-puct' ? PUCT_DEFAULTS : UCT_DEFAULTS;
  const opts: AnnotateOptions = {
    method: stage.method, outDir: dir, env: ctx.env, policy, questions,
    mcts: { ...base, ...search.mcts, seed: ctx.seed }, rank: { ...RANK_DEFAULTS, ...search.rank, seed: ctx.seed },
    ...(stage.values && { values: stage.values }),
    ...(stage.pairs && { pairs: stage.pairs }),
    ...(stage.judge && { pairJudge: stage.judge === 'plan' ? new PlanJudge() : new QRuleJudge() }),
    ...(stage.minGap !== undefined && { minGap: stage.minGap }),
    config: { stage, seed: ctx.seed, policy: policy.name }, quiet: true,
  };
  const r = stage.trees ? await annotateFromTrees(opts, join(ctx.dir, stage.trees)) : await annotate(opts);
  return { questions: questions.length, pairs: r.stats.pairs, trees: r.annotated + r.skipped, ...(stage.trees && { treesOf: stage.trees }) };
}

/** A prm stage's PRM as a `createPrm` spec: its trained file, or `gold` (the diagnostic PRM). */
export function prmSpec(ctx: Seed, id: string): string {
  const stage = ctx.recipe.stages.find((s) => s.id === id);
  return stage?.kind === 'prm' && stage.source === 'gold' ? 'gold' : join(ctx.dir, id, 'prm.json');
}

/** Why a DPO stage is skipped: its annotation mined no pair (the gym's and the LLM path's reason). */
export const noPreferencePairs = (data: string) => `${data} mined no preference pairs (raise its questions or simulations, or lower its minGap)`;

/** Why a PRM stage is skipped, or undefined: pairs on fewer than two questions leave none to hold out. */
export function tooFewForPrm(data: string, pairs: readonly { id: string }[]): string | undefined {
  const questions = new Set(pairs.map((p) => p.id.split(':')[0])).size;
  return questions < 2 ? `${data} mined pairs on ${questions} question(s): too few to train a PRM and hold some out (raise its questions or simulations)` : undefined;
}

/** The TypeScript PRM head on an annotation's pairs, a fifth of the questions held out (source gold: nothing to train). */
export async function prmStage(ctx: Seed, stage: Extract<Stage, { kind: 'prm' }>, dir: string): Promise<Record<string, unknown>> {
  if (stage.source === 'gold') return { source: 'gold: scores steps by the gold plan (a diagnostic upper bound, not a trained model)' };
  const pairs = await readPrmPairs(join(ctx.dir, stage.data!, 'prm_pairs.jsonl'));
  const tooFew = tooFewForPrm(stage.data!, pairs);
  if (tooFew) return { skipped: tooFew };
  const { prm, heldOut } = await trainPrm(pairs, { seed: ctx.seed, ...stage.settings });
  prm.save(join(dir, 'prm.json'));
  await writeJsonl(join(dir, 'heldout.jsonl'), heldOut);
  const calibration = heldOut.length ? (await prm.evaluate(heldOut)).calibration : undefined;
  // On questions with a gold plan (the world): are the labels or the features what holds the PRM back?
  const labels = await checkLabels(pairs, new Map(ctx.train.map((q) => [q.id, q])), { seed: ctx.seed, ...stage.settings });
  const round = (x: number | null) => (x === null ? null : Number(x.toFixed(4)));
  return {
    pairs: pairs.length, heldOut: heldOut.length, heldOutAccuracy: prm.saved.training.heldOutAccuracy ?? null, heldOutEce: calibration ? Number(calibration.ece.toFixed(4)) : null,
    ...(labels.checked > 0 && {
      labelsGoldAgreement: round(labels.goldAgreement), labelsGoldTies: round(labels.goldTies), featuresCeiling: round(labels.featuresCeiling),
      labelsByKind: Object.fromEntries(Object.entries(labels.byKind).map(([k, v]) => [k, { pairs: v.pairs, goldAgreement: round(v.goldAgreement), goldTies: round(v.goldTies) }])),
    }),
  };
}
