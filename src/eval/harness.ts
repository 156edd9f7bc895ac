/**
 * The evaluation harness (`ragtrail eval --config eval.json`): every system × dataset over one index,
 * as resumable runs (`OUT/runs/<system>__<dataset>/`, reused when re-run), then per cell EM / F1 / Acc
 * with 95% bootstrap CIs, the LLM judge when configured, retrieval count, format and (ARENA) relevance
 * and citation precision (eval/citations.ts), F1 by number of retrieval steps, and paired t-tests and paired bootstraps against a named
 * baseline on the same questions. Writes results.json, results.md and report.html.
 */
import { existsSync } from 'node:fs';
import { ensureOutDir, readJsonFileSync, writeJsonAtomicSync } from '../core/io.js';
import { join, resolve } from 'node:path';
import { checkConfig, intIn, numberIn, readJsonConfig, z } from '../core/config-schema.js';
import { InputError } from '../core/errors.js';
import { isShard, parseShard, selectShard } from '../core/shard.js';
import { protocolNames, protocols } from '../agents/registry.js';
import { simDataWarning } from '../agents/sim.js';
import { PRM_CANDIDATES, prmKinds } from '../prm/select.js';
import { PRM_INPUTS } from '../prm/remote.js';
import type { Question } from '../core/types.js';
import type { Trajectory } from '../core/trajectory.js';
import type { AnswerCategories } from './results.js';
import { byHops } from './hops.js';
import { describeSelection, needsAll, selectQuestions } from '../corpus/select.js';
import { loadDataset, missingSplitHint } from '../corpus/dataset.js';
import { createLLM } from '../llm/create.js';
import { TrainedPRM, readPrmPairs } from '../prm/trained.js';
import type { AnnotationStats } from '../process/stats.js';
import { openRetriever } from '../retrieval/index-dir.js';
import { Judge } from '../rewards/judge.js';
import { arenaRelevance, trajectoryCitationPrecision } from './citations.js';
import { emByType } from './question-types.js';
import { searchUse } from './search-use.js';
import { runQuestions } from './run.js';
import { bootstrapCI, pairedBootstrap, pairedTTest } from './stats.js';
import { buildSystem } from './systems.js';
import { readTrajectories } from './trajectories.js';
import { writeReport } from './report.js';

import type { Cell, DatasetSpec, EvalConfig, EvalResults } from './results.js';
export type { Cell, Curve, DatasetSpec, EvalConfig, EvalResults } from './results.js';

const systemSchema = z
  .object({
    name: z.string().min(1, 'must be a non-empty name'),
    agent: z.string().refine((a) => protocols.has(a), { error: () => `unknown agent; choose one of ${protocolNames().join(', ')}` }),
    llm: z.string().optional(),
    policy: z.string().optional(),
    competence: numberIn(0, 1).optional(),
    select: z.enum(['greedy', 'prm', 'vote', 'orm']).optional(),
    prm: z.string().optional(),
    prmCandidates: z.enum(PRM_CANDIDATES).optional(),
    prmInput: z.enum(PRM_INPUTS).optional(),
    // The same ranges as the `run` flags of the same names.
    n: intIn(1, 1000).optional(),
    temperature: numberIn(0, 10).optional(),
    maxTurns: intIn(1, 100).optional(),
    maxSearches: intIn(0, 100).optional(),
    topK: intIn(1, 100).optional(),
    maxTokens: intIn(1).optional(),
    tracePrompts: z.boolean().optional(),
    resumeKey: z.string().optional(),
    auxLlm: z.string().optional(),
  })
  .strict();

/** The schema of an eval config file (`ragtrail eval --config`). */
export const evalConfigSchema = z
  .object({
    index: z.string({ error: 'must name the index folder (a string)' }),
    out: z.string({ error: 'must name the output folder (a string)' }),
    datasets: z
      .array(
        z
          .object({
            name: z.string(), path: z.string(), split: z.string().optional(), limit: intIn(1).optional(), tail: intIn(1).optional(), sample: intIn(1).optional(), seed: intIn(0).optional(),
            valFraction: z.number().gt(0).lt(1).optional(), valPart: z.enum(['train', 'val']).optional(),
          })
          .strict(),
        { error: 'must be a list of {name, path, split?, limit? | tail? | sample?, seed?, valFraction?, valPart?}' },
      )
      .min(1, 'must be a non-empty list of {name, path, split?, limit? | tail? | sample?, seed?, valFraction?, valPart?}'),
    systems: z.array(systemSchema, { error: 'must be a list of {name, agent, llm | policy, select?, …}' }).min(1, 'must be a non-empty list of {name, agent, llm | policy, select?, …}'),
    baseline: z.string().optional(),
    answerCategories: z.array(z.object({ withRetrieval: z.string(), without: z.string() }).strict(), { error: 'must be a list of {withRetrieval, without} (system names)' }).optional(),
    judge: z.string().optional(),
    prm: z.object({ model: z.string(), pairs: z.string() }).strict().optional(),
    annotation: z.string().optional(),
    retrieval: z.enum(['bm25', 'dense', 'hybrid']).optional(),
    concurrency: intIn(1, 4096).optional(),
    seed: intIn(0).optional(),
    cacheDir: z.string().optional(),
    apiKey: z.string().optional(),
    shard: z.string().refine((v) => isShard(v), { error: 'expected "i/n" with 0 ≤ i < n' }).optional(),
  })
  .strict();

/** Reads and checks an eval config; paths are taken relative to the config file. */
export function readEvalConfig(path: string): EvalConfig {
  const hint = 'see the eval config example in docs/reference/eval.md';
  const c = checkConfig(evalConfigSchema, readJsonConfig(path, path, hint), path, hint);
  const base = resolve(path, '..');
  const need = (ok: boolean, field: string, what: string) => {
    if (!ok) throw new InputError(`${path}: "${field}" ${what}`, hint);
  };
  c.systems.forEach((s, i) => need(!s.llm !== !s.policy, `systems[${i}]`, `("${s.name}") needs exactly one of "llm" or "policy"`));
  const names = c.systems.map((s) => s.name);
  need(new Set(names).size === names.length, 'systems', 'must have distinct names');
  need(c.baseline === undefined || names.includes(c.baseline), 'baseline', `must be one of the systems (${names.join(', ')})`);
  (c.answerCategories ?? []).forEach((pair, i) => {
    for (const side of ['withRetrieval', 'without'] as const) need(names.includes(pair[side]), `answerCategories[${i}].${side}`, `must be one of the systems (${names.join(', ')})`);
  });
  const abs = (p: string) => resolve(base, p);
  return {
    ...c,
    index: /^https?:\/\//.test(c.index) ? c.index : abs(c.index),
    out: abs(c.out),
    datasets: c.datasets.map((d) => ({ ...d, path: abs(d.path) })),
    // A PRM file is relative to the config; a spec (gold, judge:…, remote:…, a registered kind) is not a path.
    systems: c.systems.map((s) => ({ ...s, ...(s.prm && !s.prm.includes(':') && !prmKinds.has(s.prm) ? { prm: abs(s.prm) } : {}) })),
    ...(c.prm ? { prm: { model: abs(c.prm.model), pairs: abs(c.prm.pairs) } } : {}),
    ...(c.annotation ? { annotation: abs(c.annotation) } : {}),
  };
}

/** Refuses an evaluation whose (system, dataset) pairs would share a run folder ("a b" and "a_b"). */
function checkRunDirs(config: EvalConfig): void {
  const seen = new Map<string, string>();
  for (const d of config.datasets) {
    for (const s of config.systems) {
      const dir = runDir(config.out, s.name, d.name);
      const who = `system "${s.name}" on dataset "${d.name}"`;
      const other = seen.get(dir);
      if (other) throw new InputError(`${other} and ${who} would share the run folder ${dir}`, 'rename one of them (names differing only in characters other than letters, digits, "_", "." and "-" map to the same folder)');
      seen.set(dir, who);
    }
  }
}

async function questionsOf(d: DatasetSpec, shard?: string): Promise<Question[]> {
  const out: Question[] = [];
  const splits = new Set<string>();
  let total = 0;
  for await (const q of loadDataset(d.path)) {
    total++;
    if (typeof q.metadata?.['split'] === 'string') splits.add(q.metadata['split']);
    if (d.split && q.metadata?.['split'] !== d.split) continue;
    out.push(q);
    if (d.limit && !needsAll(d) && out.length >= d.limit) break;
  }
  if (out.length === 0) {
    // Without --config the dataset's split is the --split flag; in a config file it is the dataset's "split".
    if (d.split) throw new InputError(`dataset "${d.name}" (${d.path}) has no questions in split "${d.split}"`, missingSplitHint(splits, total, '--split (or the config\'s datasets[].split)'));
    throw new InputError(`dataset "${d.name}" (${d.path}) has no questions`, 'the file is empty');
  }
  // The selection applies before the shard, so that the shards partition the unsharded evaluation.
  const chosen = selectQuestions(out, d);
  if (chosen.length === 0) throw new InputError(`dataset "${d.name}" (${d.path}): the selection left no questions (${describeSelection(d, 0, out.length)})`, 'choose a larger --val-fraction, or the other --val-part');
  return shard ? selectShard(chosen, parseShard(shard)) : chosen;
}

/** LWS's four answer categories (§4) of two systems' EM over the questions both answered. */
export function answerCategories(pair: { withRetrieval: string; without: string }, dataset: string, withR: ReadonlyMap<string, { em: number }>, without: ReadonlyMap<string, { em: number }>): AnswerCategories {
  const ids = [...withR.keys()].filter((id) => without.has(id));
  const count = (a: number, b: number) => ids.filter((id) => withR.get(id)!.em === a && without.get(id)!.em === b).length / Math.max(1, ids.length);
  return { ...pair, dataset, n: ids.length, both: count(1, 1), onlyWith: count(1, 0), onlyWithout: count(0, 1), neither: count(0, 0) };
}

/** Mean seconds per question: the episode, and the model calls and searches within it (eval's latency column). */
function latencyOf(ts: readonly Trajectory[]): NonNullable<Cell['latency']> {
  const n = Math.max(1, ts.length);
  const sum = (f: (t: Trajectory) => number) => ts.reduce((x, t) => x + f(t), 0) / n / 1000;
  const steps = (t: Trajectory, k: 'llmMs' | 'retrievalMs') => t.steps.reduce((x, s) => x + (s[k] ?? 0), 0);
  return { seconds: sum((t) => t.latencyMs), llmSeconds: sum((t) => steps(t, 'llmMs')), retrievalSeconds: sum((t) => steps(t, 'retrievalMs')) };
}

function f1ByRetrievals(ts: readonly Trajectory[]): Cell['f1ByRetrievals'] {
  const buckets = ['0', '1', '2', '3', '4', '5+'];
  return buckets.map((rc, i) => {
    const sel = ts.filter((t) => (i === 5 ? t.retrievalCount >= 5 : t.retrievalCount === i));
    return { rc, n: sel.length, f1: sel.length ? sel.reduce((s, t) => s + (t.metrics?.f1 ?? 0), 0) / sel.length : 0 };
  });
}

/** Receives the evaluation harness's progress, one line per cell started. */
export interface EvalProgress {
  /** One line of progress. */
  (message: string): void;
}

/** The folder of one system's run on one dataset inside an evaluation's output folder. */
export function runDir(out: string, system: string, dataset: string): string {
  return join(out, 'runs', `${system}__${dataset}`.replace(/[^A-Za-z0-9_.-]+/g, '_'));
}

/**
 * `ragtrail eval` as a function: runs every system on every dataset (resumable runs under
 * `OUT/runs/`), scores each cell with bootstrap CIs (and the judge, paired tests against the baseline,
 * PRM pair accuracy and annotation statistics when configured), and writes `results.json`,
 * `results.md` and `report.html` to `config.out`. `log` receives one line per cell started.
 */
export async function runEval(config: EvalConfig, log: EvalProgress = () => {}): Promise<EvalResults> {
  checkRunDirs(config);
  ensureOutDir(config.out, 'eval output folder');
  const retriever = await openRetriever(config.index, { method: config.retrieval, embedderOptions: { apiKey: config.apiKey } });
  const llmOptions = { apiKey: config.apiKey, cacheDir: config.cacheDir ?? join(config.out, '.cache'), concurrency: config.concurrency ?? 8 };
  const judge = config.judge ? new Judge(await createLLM(config.judge, llmOptions)) : undefined;
  const cells: Cell[] = [];
  const perQuestion = new Map<string, Map<string, { em: number; f1: number }>>();
  for (const d of config.datasets) {
    const questions = await questionsOf(d, config.shard);
    for (const s of config.systems) {
      const built = await buildSystem({ tracePrompts: false, ...s }, retriever, llmOptions);
      const dir = runDir(config.out, s.name, d.name);
      log(`${s.name} on ${d.name}: ${built.policy.name}`);
      const warning = built.policy.kind === 'sim' ? simDataWarning(questions) : undefined;
      if (warning) log(`warning: ${s.name} on ${d.name}: ${warning}`);
      await runQuestions({
        outDir: dir,
        env: built.env,
        policy: built.policy,
        questions,
        concurrency: config.concurrency ?? 8,
        temperature: built.temperature,
        seed: config.seed ?? 0,
        vote: built.vote,
        ...(built.outcome && { outcome: built.outcome }),
        // prm systems record which candidates the PRM chose among (the default changed once), so a run
        // folder never mixes the two; other systems' records are as before, so their folders resume.
        config: { system: { ...(s.resumeKey ? { ...s, llm: undefined, prm: undefined } : s), ...(s.select === 'prm' ? { prmCandidates: s.prmCandidates ?? 'well-formed' } : {}) }, dataset: d, index: config.index, seed: config.seed ?? 0, ...(config.shard && { shard: config.shard }) },
        usage: built.llm ? () => built.llm!.usage() : undefined,
        quiet: true,
      });
      await built.llm?.close();
      await built.aux?.close();
      // In dataset order: the file holds them in completion order, which concurrency makes vary from
      // run to run (and between one process and merged shards), and the bootstrap CIs depend on order.
      const rank = new Map(questions.map((q, i) => [q.id, i]));
      const ts = (await readTrajectories(dir)).filter((t) => rank.has(t.id)).sort((x, y) => rank.get(x.id)! - rank.get(y.id)!);
      const byId = new Map(questions.map((q) => [q.id, q]));
      const cell: Cell = {
        system: s.name,
        dataset: d.name,
        n: ts.length,
        em: bootstrapCI(ts.map((t) => t.metrics!.em), { seed: config.seed ?? 0 }),
        f1: bootstrapCI(ts.map((t) => t.metrics!.f1), { seed: config.seed ?? 0 }),
        acc: bootstrapCI(ts.map((t) => t.metrics!.acc), { seed: config.seed ?? 0 }),
        retrievalCount: ts.reduce((x, t) => x + t.retrievalCount, 0) / Math.max(1, ts.length),
        format: ts.filter((t) => t.formatFailures === 0).length / Math.max(1, ts.length),
        f1ByRetrievals: f1ByRetrievals(ts),
        tokensPerQuestion: ts.reduce((x, t) => x + t.usage.promptTokens + t.usage.completionTokens, 0) / Math.max(1, ts.length),
        emByType: emByType(ts, byId),
        latency: latencyOf(ts),
      };
      const use = searchUse(ts, byId);
      if (use) cell.searchUse = use;
      const hops = byHops(ts, byId, s.agent === 'arena');
      if (hops.length > 1) cell.byHops = hops;
      if (s.agent === 'arena') {
        cell.relevance = ts.reduce((x, t) => x + arenaRelevance(t), 0) / Math.max(1, ts.length);
        cell.citationPrecision = ts.reduce((x, t) => x + trajectoryCitationPrecision(t), 0) / Math.max(1, ts.length);
      }
      if (judge) {
        const v: number[] = [];
        for (const t of ts) v.push((await judge.verdict(t.question, t.answers, t.prediction)).correct ? 1 : 0);
        cell.judge = bootstrapCI(v, { seed: config.seed ?? 0 });
      }
      cells.push(cell);
      perQuestion.set(`${s.name}\u0000${d.name}`, new Map(ts.map((t) => [t.id, { em: t.metrics!.em, f1: t.metrics!.f1 }])));
    }
  }
  if (config.baseline) {
    for (const cell of cells) {
      if (cell.system === config.baseline) continue;
      const a = perQuestion.get(`${cell.system}\u0000${cell.dataset}`)!;
      const b = perQuestion.get(`${config.baseline}\u0000${cell.dataset}`)!;
      const ids = [...a.keys()].filter((id) => b.has(id));
      cell.vsBaseline = {} as NonNullable<Cell['vsBaseline']>;
      for (const m of ['em', 'f1'] as const) {
        const xa = ids.map((id) => a.get(id)![m]);
        const xb = ids.map((id) => b.get(id)![m]);
        const t = pairedTTest(xa, xb);
        const bs = pairedBootstrap(xa, xb, { seed: config.seed ?? 0 });
        cell.vsBaseline[m] = { diff: t.meanDiff, t: t.t, pT: t.p, low: bs.low, high: bs.high, pBoot: bs.p };
      }
    }
  }
  const results: EvalResults = { config, cells, createdAt: new Date().toISOString() };
  if (config.answerCategories?.length) {
    results.answerCategories = config.answerCategories.flatMap((pair) =>
      config.datasets.map((d) => answerCategories(pair, d.name, perQuestion.get(`${pair.withRetrieval}\u0000${d.name}`)!, perQuestion.get(`${pair.without}\u0000${d.name}`)!)),
    );
  }
  if (config.prm) {
    const prm = await TrainedPRM.load(config.prm.model);
    results.prm = { ...(await prm.evaluate(await readPrmPairs(config.prm.pairs))), model: config.prm.model, pairs: config.prm.pairs };
  }
  if (config.annotation) {
    const path = join(config.annotation, 'stats.json');
    if (!existsSync(path)) throw new InputError(`${config.annotation}: no stats.json`, 'point "annotation" at a finished `ragtrail annotate` folder');
    results.annotation = readJsonFileSync<AnnotationStats>(path, 're-run `ragtrail annotate` on that folder to rewrite it');
  }
  await retriever.close?.();
  writeJsonAtomicSync(join(config.out, 'results.json'), results);
  writeReport(config.out, results);
  return results;
}
