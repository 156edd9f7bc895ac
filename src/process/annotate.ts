/**
 * The annotation pipeline (`ragtrail annotate`): one tree per question — MCTS (ReasonRAG UCT with
 * SPRE or judge values, ProRAG PUCT) or RAG-Gym ranking — checkpointed to `trees.jsonl` as each
 * question finishes; a re-run skips finished questions and, every sample being seeded and every
 * deterministic call cached, rebuilds the rest identically. Then the derived files, written in dataset
 * order so that they do not depend on which question finished first: pairs.jsonl, trl_preference.jsonl,
 * trl_sft.jsonl, trl_stepwise.jsonl, prm_pairs.jsonl, stats.json — and judge_log.jsonl when a judge
 * compared the siblings (`pairs: 'judge'`, ProRAG's default; sibling-judge.ts).
 */
import { checkRunConfig } from '../core/run-config.js';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppendLog } from '../core/append-log.js';
import { writeJsonl } from '../core/io.js';
import { drainPriority, withPriority } from '../core/limiter.js';
import { DirLock } from '../core/lock.js';
import { InterruptedError, interrupted, whileInterruptible } from '../core/interrupt.js';
import { Progress } from '../core/progress.js';
import type { Question } from '../core/types.js';
import type { Action } from '../core/trajectory.js';
import { OraclePolicy } from '../agents/oracle.js';
import { type Policy, PolicyWrapper, type ProposeOptions } from '../agents/policy.js';
import type { Move, RagEnv, State } from '../env/env.js';
import type { UsageTotals } from '../llm/middleware.js';
import { preferenceExample, prmPair, sftExamples, stepwiseExamples } from './export.js';
import { Mcts, type MctsOptions, PUCT_DEFAULTS, UCT_DEFAULTS } from './mcts.js';
import { minePairs, type Pair } from './mine.js';
import { annotateByRanking, RANK_DEFAULTS, type RankOptions } from './rank.js';
import { annotationStats, type AnnotationStats } from './stats.js';
import { judgePairs, type JudgeCounts, type PairSource, QRuleJudge, type SiblingJobOptions, type SiblingJudge } from './sibling-judge.js';
import { readTrees, saveTree, type SavedTree } from './tree.js';
import { bottomUpTreeValues, type ValueLabel } from './values.js';

/**
 * Annotation methods: MCTS valued by SPRE rollouts or a judge (ReasonRAG), MCTS with PUCT (ProRAG), or
 * per-step candidate ranking (RAG-Gym).
 */
export const ANNOTATE_METHODS = ['mcts-spre', 'mcts-judge', 'mcts-puct', 'rank'] as const;
/** One of {@link ANNOTATE_METHODS}. */
export type AnnotateMethod = (typeof ANNOTATE_METHODS)[number];

export const OUTPUT_FILES = ['trees.jsonl', 'pairs.jsonl', 'trl_preference.jsonl', 'trl_sft.jsonl', 'trl_stepwise.jsonl', 'prm_pairs.jsonl', 'stats.json'] as const;
/** Written beside them when a judge made the pairs: one line per judged node (its verdict, raw text of unreadable replies). */
export const JUDGE_LOG_FILE = 'judge_log.jsonl';

/** Options of {@link annotate}. */
export interface AnnotateOptions {
  method: AnnotateMethod;
  outDir: string;
  env: RagEnv;
  policy: Policy;
  questions: readonly Question[];
  mcts?: Partial<MctsOptions>;
  rank?: Partial<RankOptions>;
  /** Questions annotated at once (default 8). */
  concurrency?: number;
  /** Pair filter: smallest |ΔQ| (0.01). */
  minGap?: number;
  /** How search-tree pairs are labelled (default: bottom-up for mcts-spre, running-mean otherwise). */
  values?: ValueLabel;
  /** Search trees: pairs by the Q gap of siblings, or by a judge comparing them (default: judge for mcts-puct). */
  pairs?: PairSource;
  /** The judge of `pairs: 'judge'` (default: the offline rule QRuleJudge). */
  pairJudge?: SiblingJudge;
  /** Which sibling sets go before the judge. */
  siblings?: Partial<SiblingJobOptions>;
  /** Q at or above which a step is labelled good (stepwise) or kept for SFT (0.5). */
  labelThreshold?: number;
  /** Settings recorded in annotate.json and checked on resume. */
  config: Record<string, unknown>;
  /** Current LLM usage totals (e.g. a MeteredLLM's `totals`), shown on the progress line. */
  usage?: () => UsageTotals;
  quiet?: boolean;
}

/** Counts calls and nodes for the progress line without touching the policy. */
class CountingPolicy extends PolicyWrapper {
  calls = 0;
  override propose(state: State, opts?: ProposeOptions): Promise<Move[]> {
    this.calls++;
    return this.inner.propose(state, opts);
  }
}

/**
 * Annotates one question with the chosen method and returns its tree, ready for `trees.jsonl`. Writes
 * nothing; the same seed and cached model calls give the same tree.
 */
export async function annotateQuestion(opts: Pick<AnnotateOptions, 'method' | 'env' | 'policy' | 'mcts' | 'rank'>, question: Question, seed: number): Promise<SavedTree> {
  const root = opts.env.reset(question);
  const info = { id: question.id, question, method: opts.method, agent: opts.policy.protocol.name, policy: opts.policy.name, seed };
  if (opts.method === 'rank') {
    const r = await annotateByRanking(opts.env, opts.policy, root, { ...RANK_DEFAULTS, ...opts.rank, seed });
    return saveTree(r.tree, { ...info, iterations: r.steps, kept: r.kept, meta: { policyCalls: r.policyCalls, malformedRankings: r.malformedRankings } });
  }
  const base = opts.method === 'mcts-puct' ? PUCT_DEFAULTS : UCT_DEFAULTS;
  const mcts = new Mcts(opts.env, opts.policy, root, { ...base, ...opts.mcts, value: opts.method === 'mcts-judge' ? 'judge' : 'spre', seed });
  const tree = await mcts.run();
  return saveTree(tree, { ...info, iterations: mcts.stats.iterations, kept: tree.root.answered, meta: { expansions: mcts.stats.expansions, policyCalls: mcts.stats.policyCalls } });
}

/** What {@link annotate} did: questions annotated now, questions already in `trees.jsonl`, and the statistics of the whole annotation. */
export interface AnnotateResult {
  annotated: number;
  skipped: number;
  stats: AnnotationStats;
}

/**
 * `ragtrail annotate` as a function: annotates every question not yet in `OUTDIR/trees.jsonl`
 * (`concurrency` at a time, each appended as it finishes), then rewrites the derived files (pairs, TRL
 * preference/SFT/stepwise data, PRM pairs, stats.json) in dataset order. Locks `outDir` while it runs
 * and refuses to resume with settings that differ from `annotate.json`.
 */
export async function annotate(opts: AnnotateOptions): Promise<AnnotateResult> {
  mkdirSync(opts.outDir, { recursive: true });
  const lock = DirLock.acquire(join(opts.outDir, '.lock'), `annotation folder ${opts.outDir}`);
  try {
    checkRunConfig(join(opts.outDir, 'annotate.json'), opts.config, 'annotation');
    const log = AppendLog.open<SavedTree>(join(opts.outDir, 'trees.jsonl'), { total: opts.questions.length });
    const todo = opts.questions.filter((q) => !log.has(q.id));
    const skipped = opts.questions.length - todo.length;
    const policy = new CountingPolicy(opts.policy);
    const progress = new Progress('annotate', { unit: 'questions', total: todo.length, quiet: opts.quiet });
    const seed = Number(opts.config['seed'] ?? 0);
    let nodes = 0;
    let failure: unknown;
    let next = 0;
    const note = () => {
      const u = opts.usage?.();
      return `${nodes} nodes, ${policy.calls} policy calls${u ? `, ${u.requests} LLM calls (${u.cachedRequests} cached)` : ''}`;
    };
    const workers = Math.max(1, opts.concurrency ?? 8);
    const worker = async () => {
      // After Ctrl-C no new question starts; those in flight finish and are kept.
      while (failure === undefined && !interrupted() && next < todo.length) {
        const index = next++;
        const q = todo[index]!;
        try {
          // Earlier questions' model calls go first, so questions finish in turn rather than all at the end;
          // the last `workers` questions go together, so that their trees' rounds overlap instead of the
          // last trees running alone at the end (an idle server: bench/annotate.ts).
          const tree = await withPriority(drainPriority(index, todo.length, workers), () => annotateQuestion({ ...opts, policy }, q, seed));
          log.append(tree);
          nodes += tree.nodes.length;
          progress.tick(1, note());
        } catch (e) {
          failure ??= e;
        }
      }
    };
    await whileInterruptible(() => Promise.all(Array.from({ length: workers }, worker)));
    log.close();
    progress.finish(note());
    if (failure !== undefined) throw failure;
    if (interrupted()) throw new InterruptedError();
    const stats = await deriveOutputs(opts.outDir, opts.questions, deriveSettings(opts));
    return { annotated: todo.length, skipped, stats };
  } finally {
    lock.release();
  }
}

/** How {@link annotate} turns its trees into pairs and trainer files, from its options. */
function deriveSettings(opts: AnnotateOptions): DeriveOptions {
  const pairs = opts.pairs ?? defaultPairSource(opts.method);
  return {
    minGap: opts.minGap ?? 0.01,
    labelThreshold: opts.labelThreshold ?? 0.5,
    gold: goldFor(opts.policy),
    values: opts.values ?? defaultValueLabel(opts.method),
    alpha: opts.mcts?.alpha ?? UCT_DEFAULTS.alpha,
    pairs,
    ...(pairs === 'judge' && { judge: opts.pairJudge ?? new QRuleJudge(), siblings: opts.siblings, concurrency: opts.concurrency }),
  };
}

/**
 * An annotation made of another's trees: copies `fromDir`/trees.jsonl into `opts.outDir` and derives the
 * pairs and trainer files with `opts`' pair settings (minGap, values, pairs) — the files {@link annotate}
 * would write had it searched those same trees itself, without searching again. For two pair filters on
 * one search (a recipe's annotate stage with `trees`).
 */
export async function annotateFromTrees(opts: AnnotateOptions, fromDir: string): Promise<AnnotateResult> {
  mkdirSync(opts.outDir, { recursive: true });
  copyFileSync(join(fromDir, 'trees.jsonl'), join(opts.outDir, 'trees.jsonl'));
  const stats = await deriveOutputs(opts.outDir, opts.questions, deriveSettings(opts));
  return { annotated: 0, skipped: stats.questions, stats };
}

/** The oracle's action, as the gold step, where the data has a plan (for the gold-preferred share). */
export function goldFor(policy: Pick<Policy, 'protocol'>): (state: State) => Action | undefined {
  const oracle = new OraclePolicy(policy.protocol);
  return (state) => (state.question.decomposition?.length || state.question.supporting?.length ? oracle.act(state) : undefined);
}

/** ProRAG's trees (mcts-puct) get judge-compared sibling pairs, as ProRAG builds its PRM data; the others the Q gap. */
export function defaultPairSource(method: AnnotateMethod): PairSource {
  return method === 'mcts-puct' ? 'judge' : 'q-gap';
}

/** SPRE trees are labelled bottom-up as ReasonRAG's labeller does; judge and PUCT trees by their search's Q. */
export function defaultValueLabel(method: AnnotateMethod): ValueLabel {
  return method === 'mcts-spre' ? 'bottom-up' : 'running-mean';
}

/**
 * The labels pairs of a tree are mined by: bottom-up re-scored values, or undefined for the search's
 * running-mean Q (and for ranking trees, labelled by rank). The default follows the tree's method.
 */
export function pairLabels(tree: SavedTree, values: ValueLabel = defaultValueLabel(tree.method as AnnotateMethod), alpha: number = UCT_DEFAULTS.alpha): Map<number, number | null> | undefined {
  return values === 'bottom-up' && tree.method !== 'rank' ? bottomUpTreeValues(tree, alpha) : undefined;
}

export interface DeriveOptions {
  minGap: number;
  labelThreshold: number;
  gold?: (state: State) => Action | undefined;
  values?: ValueLabel;
  alpha?: number;
  /** Search trees: the Q gap (default) or a judge comparing siblings (`judge` required). */
  pairs?: PairSource;
  judge?: SiblingJudge;
  siblings?: Partial<SiblingJobOptions>;
  /** Judge calls at once (default 8). */
  concurrency?: number;
}

/**
 * Writes the pair and trainer files from trees.jsonl, in dataset order. With `pairs: 'judge'` the
 * search trees' pairs come from the judge (ranking trees keep their rank pairs) and judge_log.jsonl
 * records every judged node.
 */
export async function deriveOutputs(outDir: string, questions: readonly Question[] | undefined, opts: DeriveOptions): Promise<AnnotationStats> {
  const order = new Map((questions ?? []).map((q, i) => [q.id, i]));
  const trees = (await readTrees(outDir)).sort((a, b) => (order.get(a.id) ?? Infinity) - (order.get(b.id) ?? Infinity) || a.id.localeCompare(b.id));
  if (opts.pairs === 'judge' && !opts.judge) throw new Error('deriveOutputs: pairs "judge" needs a judge');
  let judged: { byTree: Map<string, Pair[]>; counts: JudgeCounts } | undefined;
  if (opts.pairs === 'judge') {
    const r = await judgePairs(trees, opts.judge!, { ...opts.siblings, concurrency: opts.concurrency });
    const byTree = new Map<string, Pair[]>();
    for (const p of r.pairs) byTree.set(p.questionId, [...(byTree.get(p.questionId) ?? []), p]);
    await writeJsonl(join(outDir, JUDGE_LOG_FILE), r.records);
    judged = { byTree, counts: r.counts };
  } else rmSync(join(outDir, JUDGE_LOG_FILE), { force: true });
  const pairs: Pair[] = [];
  const perTree = trees.map((t) => {
    const p = judged && t.method !== 'rank' ? (judged.byTree.get(t.id) ?? []) : minePairs(t, { minGap: opts.minGap, values: pairLabels(t, opts.values ?? 'running-mean', opts.alpha ?? UCT_DEFAULTS.alpha) });
    pairs.push(...p);
    return { tree: t, pairs: p };
  });
  await writeJsonl(join(outDir, 'pairs.jsonl'), pairs);
  await writeJsonl(join(outDir, 'trl_preference.jsonl'), perTree.flatMap(({ tree, pairs: p }) => p.map((x) => preferenceExample(tree, x))));
  await writeJsonl(join(outDir, 'trl_sft.jsonl'), trees.flatMap((t) => sftExamples(t, opts.labelThreshold)));
  await writeJsonl(join(outDir, 'trl_stepwise.jsonl'), trees.filter((t) => t.method !== 'rank' || t.kept).flatMap((t) => stepwiseExamples(t, opts.labelThreshold)));
  await writeJsonl(join(outDir, 'prm_pairs.jsonl'), perTree.flatMap(({ tree, pairs: p }) => p.map((x) => prmPair(tree, x))));
  const stats = annotationStats(trees, pairs, opts.gold);
  if (judged) {
    stats.pairSource = 'judge';
    stats.judge = judged.counts;
  } else if (trees.some((t) => t.method !== 'rank')) {
    stats.values = opts.values ?? 'running-mean';
    stats.minGap = opts.minGap;
  }
  writeFileSync(join(outDir, 'stats.json'), JSON.stringify(stats, null, 2) + '\n');
  return stats;
}
