/**
 * `ragtrail pipeline --recipe NAME|FILE --out DIR`: runs a paper's recipe (pipelines/recipe.ts) end to end
 * for each seed — synthetic world and index, then the recipe's stages in order (demonstrations,
 * annotation, PRM, each training stage), then the evaluation of its systems on the held-out questions —
 * and tests the paper's claims over the pooled seeds (pipelines/claims.ts) into results.json `claims`.
 *
 *   OUT/recipe.json            the resolved recipe and the run's settings
 *   OUT/seed-S/world, index    the seed's world (the seed also seeds annotation and training)
 *   OUT/seed-S/<stage id>/     each stage's output and stage.json (its settings and timing)
 *   OUT/seed-S/eval/           the seed's evaluation (runs/, results.json, report.html)
 *   OUT/results.json, results.md, report.html   the claims, every seed's table, the timings
 *
 * Seeds are independent: one after another in this process, or with `jobs` at once, each in its own
 * process (pipelines/seed-processes.ts), with the same results.
 *
 * Resumable per stage: a stage whose stage.json records the same settings is skipped; one with other
 * settings (or none: interrupted) is run again from scratch. Evaluation resumes per question.
 *
 * Offline the policy is the gym policy (a small non-LLM model over generated candidate actions). With
 * an LLM, annotation runs with the model and the training stages go to TRL (pipelines/pipeline-llm.ts).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { InputError } from '../core/errors.js';
import { DirLock } from '../core/lock.js';
import { makeDir, readJsonlValues, writeJsonAtomicSync } from '../core/io.js';
import { inDatasetOrder } from '../core/order.js';
import type { Action } from '../core/trajectory.js';
import { type Curve, type EvalResults, runDir, runEval } from '../eval/harness.js';
import { writeReport } from '../eval/report.js';
import type { LabelCheckSummary } from '../eval/results.js';
import { trendWindow } from '../eval/svg.js';
import type { SystemSpec } from '../eval/systems.js';
import { readTrajectories } from '../eval/trajectories.js';
import { answerInQuestion } from '../eval/question-types.js';
import { loadDatasetAll } from '../corpus/dataset.js';
import { createPrm } from '../prm/select.js';
import { annotationPairs, demonstrations, type StateAction } from '../learn/gym/data.js';
import { RFT_DEFAULTS, trainRft } from '../learn/gym/rft.js';
import { GymPolicy, type SavedGymPolicy } from '../learn/gym/policy.js';
import { type LogEntry, OFFLINE_DEFAULTS, rlDefaults, type RlAlgo, trainDpo, trainRl, trainSft } from '../learn/gym/train.js';
import { readTrees } from '../process/tree.js';
import { trajectoryCitationPrecision } from '../eval/citations.js';
import { claimLine, type ClaimRow, testClaim, withRunSettings } from './claims.js';
import { LlmEngine, type LlmEngineOptions } from './pipeline-llm.js';
import type { ClaimMetric, Recipe, Stage } from './recipe.js';
import type { PipelineOptions, PipelineResult, SeedResult } from './pipeline-types.js';
import { runSeedsInProcesses } from './seed-processes.js';
import { annotateStage, demonstrate, describeStage, noPreferencePairs, openSeed, prmSpec, prmStage, type Seed, stageQuestions } from './stages.js';

export type { PipelineOptions, PipelineResult, SeedResult } from './pipeline-types.js';

/** A policy's file: a train stage's, or the base's (base.json untrained; base/policy.json warm-started, recipe.base). */
const policyPath = (ctx: Seed, id: string) => (id === 'base' && !ctx.recipe.base ? join(ctx.dir, 'base.json') : join(ctx.dir, id, 'policy.json'));

function loadGym(ctx: Seed, id: string): GymPolicy {
  return id === 'base' && !ctx.recipe.base ? GymPolicy.fresh(ctx.protocol) : GymPolicy.load(policyPath(ctx, id), ctx.protocol);
}

/**
 * The warm-started base (recipe.base): the teacher's correct episodes on the warm-up questions, then
 * SFT of the untrained policy on them, as the papers start from an instruction-tuned or warmed-up model.
 */
async function warmStartBase(ctx: Seed, dir: string): Promise<Record<string, unknown>> {
  const b = ctx.recipe.base!;
  const shown = await demonstrate(ctx, { teacher: b.teacher, competence: b.competence }, dir, ctx.warmup, { forGym: true });
  const episodes = await readJsonlValues<{ questionId: string; actions: Action[] }>(join(dir, 'demonstrations.jsonl'));
  const demos = await replay(ctx, inDatasetOrder(episodes.map((e) => ({ ...e, id: e.questionId })), ctx.warmup), ctx.warmup);
  if (demos.length === 0) throw new InputError(`base: the ${b.teacher} teacher answered none of the ${ctx.warmup.length} warm-up questions right`, 'raise base.competence or base.questions');
  const policy = GymPolicy.fresh(ctx.protocol, b.model, b.hidden, ctx.seed);
  const cfg = { seed: ctx.seed, ...b.settings };
  for (const k of Object.keys(b.settings)) if (!Object.hasOwn(OFFLINE_DEFAULTS, k)) throw new InputError(`base: "${k}" is not a setting of sft`, `its settings: ${Object.keys(OFFLINE_DEFAULTS).join(', ')}`);
  const log = trainSft(policy, demos, cfg);
  policy.clone('base').save(join(dir, 'policy.json'), [{ algo: 'sft', stage: 'base', teacher: shown['teacher'], warmupQuestions: ctx.warmup.length, episodes: episodes.length, demonstrations: demos.length, log }]);
  return { ...shown, demonstrations: demos.length, finalLoss: log[log.length - 1]?.loss ?? null };
}

/** Trainer settings a recipe may set: the fields of the trainer's config, nothing else. */
function trainerConfig(stage: Extract<Stage, { kind: 'train' }>, seed: number): Record<string, unknown> {
  const allowed = stage.algo === 'rft' ? RFT_DEFAULTS : stage.algo === 'sft' || stage.algo === 'dpo' ? OFFLINE_DEFAULTS : rlDefaults(stage.algo);
  for (const k of Object.keys(stage.settings)) {
    if (!Object.hasOwn(allowed, k)) throw new InputError(`stage ${stage.id}: "${k}" is not a setting of ${stage.algo}`, `its settings: ${Object.keys(allowed).filter((x) => x !== 'algo').join(', ')}`);
  }
  return { seed, ...stage.settings };
}

/** Replays stored action sequences into (state, action) demonstrations (the environment is deterministic). */
async function replay(ctx: Seed, episodes: readonly { questionId: string; actions: Action[] }[], questions = ctx.train): Promise<StateAction[]> {
  const byId = new Map(questions.map((q) => [q.id, q]));
  const out: StateAction[] = [];
  for (const e of episodes) {
    let state = ctx.env.reset(byId.get(e.questionId)!);
    for (const action of e.actions) {
      out.push({ state, action, questionId: e.questionId });
      state = (await ctx.env.step(state, { action, raw: ctx.protocol.format(action, state) })).state;
    }
  }
  return out;
}

/** An annotation stage's trees in dataset order: the file has them in completion order, which a resume changes. */
const stageTrees = async (ctx: Seed, id: string) => inDatasetOrder(await readTrees(join(ctx.dir, id)), ctx.train);

async function readDemonstrations(ctx: Seed, id: string): Promise<StateAction[]> {
  const stage = ctx.recipe.stages.find((s) => s.id === id)!;
  if (stage.kind === 'demonstrate') {
    const episodes = await readJsonlValues<{ questionId: string; actions: Action[] }>(join(ctx.dir, id, 'demonstrations.jsonl'));
    return replay(ctx, inDatasetOrder(episodes.map((e) => ({ ...e, id: e.questionId })), ctx.train));
  }
  return demonstrations(await stageTrees(ctx, id));
}

async function runGymStage(ctx: Seed, stage: Stage, dir: string): Promise<Record<string, unknown>> {
  switch (stage.kind) {
    case 'demonstrate':
      return demonstrate(ctx, stage, dir, undefined, { forGym: true });
    case 'annotate':
      return annotateStage(ctx, stage, dir, loadGym(ctx, stage.policy));
    case 'prm':
      return prmStage(ctx, stage, dir);
    case 'train': {
      const policy = loadGym(ctx, stage.from);
      const cfg = trainerConfig(stage, ctx.seed);
      let log: LogEntry[];
      let data: Record<string, unknown> = {};
      // The policy after each epoch, for a sweep over training checkpoints (`ragtrail sweep --vary checkpoint`).
      const checkpoint = (epoch: number) => policy.clone(stage.id).save(join(dir, 'checkpoints', `epoch-${epoch}.json`), [{ algo: stage.algo, stage: stage.id, from: stage.from, epoch }]);
      if (stage.algo === 'sft') {
        const demos = await readDemonstrations(ctx, stage.data!);
        if (demos.length === 0) throw new InputError(`stage ${stage.id}: ${stage.data} gave no demonstrations`, 'raise its questions');
        log = trainSft(policy, demos, cfg, undefined, checkpoint);
        data = { demonstrations: demos.length };
      } else if (stage.algo === 'dpo') {
        const pairs = await annotationPairs(join(ctx.dir, stage.data!), await stageTrees(ctx, stage.data!));
        // As on the LLM path: the stage, and the systems built on it, are skipped with the reason.
        if (pairs.length === 0) return { skipped: noPreferencePairs(stage.data!) };
        log = trainDpo(policy, pairs, cfg, undefined, checkpoint);
        data = { pairs: pairs.length };
      } else if (stage.algo === 'rft') {
        const questions = stageQuestions(ctx, stage.questions);
        const prm = await createPrm(prmSpec(ctx, stage.prm!));
        const r = await trainRft(policy, { env: ctx.env, questions, prm }, cfg);
        if (r.log.length === 0) throw new InputError(`stage ${stage.id}: no sampled episode passed the PRM filter`, 'lower its threshold or raise its samples');
        log = r.log;
        data = { ...r.counts };
      } else {
        const questions = stageQuestions(ctx, stage.questions);
        const prm = stage.prm ? await createPrm(prmSpec(ctx, stage.prm)) : undefined;
        log = await trainRl(policy, { env: ctx.env, questions, prm }, { ...cfg, algo: stage.algo as RlAlgo }, checkpoint);
        data = { questions: questions.length };
      }
      policy.clone(stage.id).save(join(dir, 'policy.json'), [{ algo: stage.algo, stage: stage.id, from: stage.from, ...data, log }]);
      const last = log[log.length - 1];
      return { ...data, ...(last ? { finalLoss: last.loss, ...(last['reward'] !== undefined ? { finalReward: last['reward'] } : {}) } : {}) };
    }
  }
}

/** Training curves of a seed's gym stages, from the logs their policy files keep. */
function trainingCurves(ctx: Seed): Curve[] {
  const curves: Curve[] = [];
  for (const st of ctx.recipe.stages) {
    const path = join(ctx.dir, st.id, 'policy.json');
    if (st.kind !== 'train' || !existsSync(path)) continue;
    const saved = JSON.parse(readFileSync(path, 'utf8')) as SavedGymPolicy;
    const log = (saved.training[saved.training.length - 1]?.['log'] ?? []) as LogEntry[];
    const pts = (k: string) => log.filter((e) => typeof e[k] === 'number').map((e) => ({ x: e.step, y: e[k]! }));
    if (st.algo === 'sft' || st.algo === 'dpo' || st.algo === 'rft') {
      const what = st.algo === 'dpo' ? 'step-level DPO' : st.algo.toUpperCase();
      curves.push({ title: `${st.id}: ${what} loss by epoch`, xLabel: 'epoch', yLabel: 'loss', series: [{ name: 'loss', points: pts('loss') }], yMin: 0 });
      if (st.algo === 'dpo') curves.push({ title: `${st.id}: pair accuracy by epoch (share of pairs the policy ranks as labelled, a tie 0.5)`, xLabel: 'epoch', yLabel: 'pair accuracy', series: [{ name: 'pair accuracy', points: pts('pairAccuracy') }], yMin: 0, yMax: 1, refLine: { y: 0.5, label: 'chance' } });
    } else {
      // One batch's mean reward is noisy: a moving mean over the batches shows the trend.
      const reward = pts('reward');
      curves.push({ title: `${st.id}: mean reward of the sampled episodes by batch (${st.algo})`, xLabel: 'batch', yLabel: 'mean reward', series: [{ name: 'reward', points: reward }], ...(trendWindow(reward.length) && { trend: trendWindow(reward.length) }) });
    }
  }
  return curves;
}

/** One per-question value of a claim's metric. */
function metricOf(metric: ClaimMetric, t: Awaited<ReturnType<typeof readTrajectories>>[number]): number {
  switch (metric) {
    case 'em':
      return t.metrics?.em ?? 0;
    case 'f1':
      return t.metrics?.f1 ?? 0;
    case 'rc':
      return t.retrievalCount;
    case 'citation_precision':
      return trajectoryCitationPrecision(t);
  }
}

/** One seed of the recipe, start to end, in this process (also what each `--jobs` child runs). */
export async function runSeed(o: PipelineOptions, seed: number, log: (l: string) => void): Promise<SeedResult> {
  const recipe = o.recipe;
  const sizes = { entities: o.entities ?? recipe.world.entities, trainQuestions: o.trainQuestions ?? recipe.trainQuestions, ...((o.testQuestions ?? recipe.testQuestions) !== undefined && { testQuestions: o.testQuestions ?? recipe.testQuestions }) };
  const llm = o.llm ? new LlmEngine({ ...o.llm, out: o.out, log }) : undefined;
  const ctx = await openSeed(recipe, o.out, seed, sizes, llm ? llm.key() : { engine: 'gym' }, log);
  try {
    if (!llm && !recipe.base) GymPolicy.fresh(ctx.protocol).save(policyPath(ctx, 'base'), [{ algo: 'none', note: 'untrained: all weights zero, uniform over the candidate actions' }]);
    const first = !llm && recipe.base ? 3 : 2;
    if (first === 3) {
      const b = recipe.base!;
      await ctx.step(2, 'base', `warm-started base: SFT on the ${b.teacher.includes(':') ? b.teacher : `${b.teacher}(${b.competence})`} teacher's correct episodes on ${ctx.warmup.length} other training questions`, join(ctx.dir, 'base'), { base: b }, () => warmStartBase(ctx, join(ctx.dir, 'base')));
    }
    // A stage the LLM engine could not run here (no pairs, a checkpoint not trained here) says so in its summary.
    const skippedStages = new Set<string>();
    for (const [i, stage] of recipe.stages.entries()) {
      const dir = join(ctx.dir, stage.id);
      const run = () => (llm ? llm.runStage(ctx, stage, dir) : runGymStage(ctx, stage, dir));
      // With TRL, the stage's trainer fields and the model are part of what it depends on.
      const key = llm ? { stage, trl: recipe.trl ? { model: recipe.trl.model, lora: recipe.trl.lora, trainer: (Object.hasOwn(recipe.trl.stages, stage.id) ? recipe.trl.stages[stage.id] : undefined) ?? null } : null } : stage;
      const summary = await ctx.step(i + first, stage.id, describeStage(stage) + (llm && stage.kind === 'train' ? ' (TRL)' : ''), dir, key, run, stage.kind === 'annotate');
      if (summary['skipped']) {
        skippedStages.add(stage.id);
        log(`[seed ${seed}] ${stage.id} skipped: ${String(summary['skipped'])}`);
      }
    }

    const evalDir = join(ctx.dir, 'eval');
    const prmStage = recipe.stages.find((s) => s.kind === 'prm' && s.source === 'trained');
    const systems: (SystemSpec & { name: string })[] = [];
    const skipped: string[] = [];
    for (const s of recipe.evaluate.systems) {
      if (skippedStages.has(s.policy) || (s.prm && skippedStages.has(s.prm))) {
        skipped.push(s.name);
        continue;
      }
      // With --llm a PRM trained through TRL is served; its spec is the server's.
      const prm = s.select === 'prm' ? { select: 'prm' as const, prm: (llm ? await llm.prmSpecOf(ctx, s.prm!) : undefined) ?? prmSpec(ctx, s.prm!), n: s.n ?? 10 } : {};
      const temperature = s.temperature !== undefined ? { temperature: s.temperature } : {};
      const policy = llm ? await llm.systemPolicy(ctx, s.policy) : { policy: `gym:${policyPath(ctx, s.policy)}` };
      if (!policy) skipped.push(s.name);
      // The environment the policies were trained in (the recipe's env), not the protocol's defaults.
      else systems.push({ name: s.name, agent: recipe.agent, ...policy, ...prm, ...temperature, ...ctx.envSettings });
    }
    if (skipped.length) log(`[seed ${seed}] not evaluated (a stage they need was skipped or its checkpoint is not served here): ${skipped.join(', ')}`);
    let results!: EvalResults;
    // The tables' paired tests are against the untrained (base, greedy) system where there is one; the claims have their own.
    const baseline = (recipe.evaluate.systems.find((x) => x.policy === 'base' && x.select === 'greedy' && systems.some((y) => y.name === x.name)) ?? systems[0]!).name;
    await ctx.step(ctx.total, 'evaluate', `${systems.length} systems on the held-out test questions`, evalDir, { systems, baseline, testN: sizes.testQuestions ?? null }, async () => {
      results = await runEval({
        index: ctx.indexDir, out: evalDir, datasets: [{ name: 'world-test', path: ctx.questionsPath, split: 'test', limit: sizes.testQuestions }], systems,
        baseline, seed, cacheDir: join(resolve(o.out), '.cache'),
        ...(prmStage && !skippedStages.has(prmStage.id) && existsSync(join(ctx.dir, prmStage.id, 'prm.json')) ? { prm: { model: join(ctx.dir, prmStage.id, 'prm.json'), pairs: join(ctx.dir, prmStage.id, 'heldout.jsonl') } } : {}),
      });
      return { systems: results.cells.map((c) => ({ system: c.system, n: c.n, em: c.em.mean, f1: c.f1.mean, rc: c.retrievalCount })) };
    }, true);
    results ??= JSON.parse(readFileSync(join(evalDir, 'results.json'), 'utf8')) as EvalResults;
    if (!llm) results.curves = trainingCurves(ctx);
    if (results.prm && prmStage) results.prm.labels = prmLabels(join(ctx.dir, prmStage.id, 'stage.json'));
    return { seed, results, timings: ctx.timings };
  } finally {
    await llm?.close();
    await ctx.retriever.close?.();
  }
}

export async function runPipeline(options: PipelineOptions): Promise<PipelineResult> {
  // Names and claim texts from the run's settings (best-of-N with the systems' N), not the YAML's words.
  const o = { ...options, recipe: withRunSettings(options.recipe) };
  const log = o.log ?? ((l: string) => console.error(l));
  if ((o.jobs ?? 1) > 1 && o.llm && (o.seeds ?? o.recipe.seeds).length > 1) throw new InputError('--jobs runs the seeds of the gym engine in parallel; with --llm they share the served model and the GPU TRL trains on', 'drop --jobs (with --llm the seeds run one after another)');
  const out = resolve(o.out);
  makeDir(out);
  // One pipeline per folder: a second process would interleave its stages with this one's.
  const lock = DirLock.acquire(join(out, '.lock'), `pipeline folder ${o.out}`);
  try {
    return await runSeedsAndClaims(o, out, log);
  } finally {
    lock.release();
  }
}

async function runSeedsAndClaims(o: PipelineOptions, out: string, log: (line: string) => void): Promise<PipelineResult> {
  const seeds = o.seeds ?? o.recipe.seeds;
  const t0 = performance.now();
  writeJsonAtomicSync(join(out, 'recipe.json'), { recipe: o.recipe, path: o.recipePath, overrides: { seeds: o.seeds, entities: o.entities, trainQuestions: o.trainQuestions, testQuestions: o.testQuestions } });
  log(`${o.recipe.name} (${o.recipe.paper}): ${o.recipe.stages.length} stages × ${seeds.length} seed${seeds.length === 1 ? '' : 's'} on the synthetic world, ${o.llm ? `the LLM ${o.llm.llm}, training through TRL` : 'gym policy (a non-LLM stand-in)'}`);
  // Seeds are independent: with --jobs, each in its own process, merged below in seed order as here.
  const jobs = Math.min(o.jobs ?? 1, seeds.length);
  let perSeed: SeedResult[] = [];
  if (jobs > 1) {
    log(`seeds in parallel: ${jobs} processes (--jobs ${o.jobs})`);
    perSeed = await runSeedsInProcesses(o, seeds, jobs, log);
  } else for (const seed of seeds) perSeed.push(await runSeed(o, seed, log));

  const claims: ClaimRow[] = [];
  for (const c of o.recipe.claims) {
    const evaluated = (name: string) => perSeed.every((s) => s.results.cells.some((x) => x.system === name));
    if (!evaluated(c.treatment) || !evaluated(c.control)) {
      log(`claim not tested (${c.treatment} or ${c.control} was not evaluated): ${c.claim}`);
      continue;
    }
    const rows = [];
    for (const s of perSeed) {
      const evalDir = join(out, `seed-${s.seed}`, 'eval');
      const values = async (system: string) => new Map((await readTrajectories(runDir(evalDir, system, 'world-test'))).map((t) => [t.id, metricOf(c.metric, t)] as const));
      const questions = (await loadDatasetAll(join(out, `seed-${s.seed}`, 'world', 'questions.jsonl'))).questions;
      const needsRetrieval = new Set(questions.filter((q) => !answerInQuestion(q)).map((q) => q.id));
      rows.push({ seed: s.seed, treatment: await values(c.treatment), control: await values(c.control), needsRetrieval });
    }
    claims.push(testClaim(o.recipe.paper, c, rows));
  }
  const seconds = (performance.now() - t0) / 1000;
  for (const c of claims) log(claimLine(c));
  const result: PipelineResult = { recipe: o.recipe.name, paper: o.recipe.paper, claims, seeds: perSeed, seconds };
  writeJsonAtomicSync(join(out, 'results.json'), { recipe: o.recipe.name, paper: o.recipe.paper, seconds, claims, seeds: perSeed.map((s) => ({ seed: s.seed, timings: s.timings, cells: s.results.cells })) });
  // The report of the first seed, with the claims above its tables; results.md: the claims and every seed's table, then that report.
  const first = perSeed[0]!.results;
  const rows = o.recipe.evaluate.systems.filter((s) => s.about).map((s) => `${s.name}: ${s.about}`);
  writeReport(out, { ...first, notes: [...claims.map(claimLine), `${o.recipe.description} Tables below: seed ${perSeed[0]!.seed}; every seed's tables are in seed-S/eval/.`, ...rows, ...(first.notes ?? [])] });
  writeFileSync(join(out, 'results.md'), resultsMarkdown(result) + '\n' + readFileSync(join(out, 'results.md'), 'utf8'));
  return result;
}

export function resultsMarkdown(r: PipelineResult): string {
  const f = (x: number) => x.toFixed(3);
  const lines = [`# ${r.recipe}: ${r.paper}`, '', `${r.seeds.length} seed(s), ${r.seconds.toFixed(0)} s.`, '', '## Claims', '', '| claim | metric | treatment | control | Δ | 95% CI | p | n | holds |', '|---|---|---|---|---|---|---|---|---|'];
  for (const c of r.claims) lines.push(`| ${c.claim} | ${c.metric} | ${c.treatment} ${f(c.treatmentMean)} | ${c.control} ${f(c.controlMean)} | ${f(c.delta)} | [${f(c.ci[0])}, ${f(c.ci[1])}] | ${c.p < 0.001 ? '<.001' : f(c.p)} | ${c.n} | ${c.holds ? 'yes' : 'no'} |`);
  const sub = r.claims.filter((c) => c.needsRetrieval);
  if (sub.length) {
    lines.push('', 'On the questions that need retrieval (not yes/no, no gold answer named in the question):', '', '| claim | treatment | control | Δ | 95% CI | p | n | holds |', '|---|---|---|---|---|---|---|---|');
    for (const c of sub) {
      const x = c.needsRetrieval!;
      lines.push(`| ${c.claim} | ${f(x.treatmentMean)} | ${f(x.controlMean)} | ${f(x.delta)} | [${f(x.ci[0])}, ${f(x.ci[1])}] | ${x.p < 0.001 ? '<.001' : f(x.p)} | ${x.n} | ${x.holds ? 'yes' : 'no'} |`);
    }
  }
  for (const s of r.seeds) {
    // Over-search and ending early (eval/search-use.ts) where the world names each question's passages.
    const use = s.results.cells.some((c) => c.searchUse);
    lines.push('', `## Seed ${s.seed}`, '', `| system | n | EM | F1 | RC |${use ? ' over-search | ended early |' : ''}`, `|---|---|---|---|---|${use ? '---|---|' : ''}`);
    for (const c of s.results.cells) lines.push(`| ${c.system} | ${c.n} | ${f(c.em.mean)} | ${f(c.f1.mean)} | ${c.retrievalCount.toFixed(2)} |${use ? ` ${c.searchUse ? f(c.searchUse.overSearch) : '–'} | ${c.searchUse ? f(c.searchUse.answeredEarly) : '–'} |` : ''}`);
  }
  return lines.join('\n') + '\n';
}

/** The prm stage's check of its labels against the gold plan (prm/label-check.ts), when it made one. */
function prmLabels(stageJson: string): LabelCheckSummary | undefined {
  if (!existsSync(stageJson)) return undefined;
  const s = (JSON.parse(readFileSync(stageJson, 'utf8')) as { summary?: Record<string, number | null> & { labelsByKind?: LabelCheckSummary['byKind'] } }).summary ?? {};
  if (typeof s.labelsGoldAgreement !== 'number') return undefined;
  return { goldAgreement: s.labelsGoldAgreement, goldTies: s.labelsGoldTies ?? 0, featuresCeiling: s.featuresCeiling ?? null, ...(s.labelsByKind && { byKind: s.labelsByKind }) };
}
