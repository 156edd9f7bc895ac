/**
 * RAG-Gym's process annotation by ranking (§3, App. F): at each step the policy proposes N candidate
 * actions (T = 1.0, N = 10); they are ranked — by a judge model weighing sufficiency, utility and
 * redundancy, by rollouts from each candidate (Math-Shepherd style), by the question's gold plan (the
 * offline stand-in for the judge: agents/gold.ts judgedPlanScores — sufficiency, an answer right only
 * once its evidence is in; utility and redundancy, a search by whether it fetched the fact the question
 * depends on next), or at random (the baseline);
 * the best is executed, and the episode goes on until an answer. Only trajectories whose final answer
 * is correct are kept. Each candidate's reward is 1 / (1 + rank): the best gets 1 (> 0.75, a positive),
 * ranks ≥ 2 get < 0.5 (negatives), rank 1 is unused — as in the authors' code.
 */
import { Rng } from '../core/rng.js';
import type { Policy } from '../agents/policy.js';
import type { Move, RagEnv, State } from '../env/env.js';
import { exactMatch, f1Score } from '../core/metrics.js';
import type { LLM } from '../llm/types.js';
import { sameAction, Tree, type TreeNode } from './tree.js';
import { describeProcess, rollout, seedFor } from './values.js';
import { judgedPlanScores } from '../agents/gold.js';

/**
 * How {@link annotateByRanking} orders the candidates of a step: an LLM judge's ranking, rollout values,
 * the question's gold plan (no model), or at random (a baseline).
 */
export type RankSource = 'judge' | 'rollout' | 'plan' | 'random';

/** Rank source plan: candidates whose plan score is within this of the best's share rank 1 — neither positive nor negative. */
export const PLAN_RANK_MARGIN = 0.5;

/** Settings of {@link annotateByRanking}; defaults in `RANK_DEFAULTS` (10 candidates at T = 1, judge ranking, EM correctness). */
export interface RankOptions {
  /** Candidates per step (10). */
  candidates: number;
  temperature: number;
  source: RankSource;
  judge?: LLM;
  /** Rollouts per candidate for the rollout source. */
  rollouts: number;
  seed: number;
  /** What counts as a correct final answer: EM (default) or F1 ≥ 0.5. */
  correct: 'em' | 'f1';
  /**
   * Rollout source: a candidate's value is the share of its rollouts that end correct (Math-Shepherd's
   * hard estimate, default) or their mean F1 (a soft variant).
   */
  rolloutValue: 'correct' | 'f1';
}

export const RANK_DEFAULTS: RankOptions = { candidates: 10, temperature: 1, source: 'judge', rollouts: 4, seed: 0, correct: 'em', rolloutValue: 'correct' };

function describeAction(m: Move, i: number): string {
  const a = m.action;
  const what = a.type === 'search' ? `Search: ${a.query}` : a.type === 'answer' ? `Answer: ${a.answer}` : a.type === 'extract' ? `Note evidence: ${a.evidence}` : 'Invalid output';
  return `${i}. ${what}`;
}

export function rankingPrompt(state: State, moves: readonly Move[]): string {
  return `You compare candidate next steps of an agent that answers a question by searching a knowledge base. The agent knows nothing beyond what its search history shows.\n\nQuestion: ${state.question.question}\n\nSearch history so far:\n${describeProcess(state)}\n\nCandidate next steps:\n${moves.map(describeAction).join('\n')}\n\nRank the candidates from most to least appropriate, judging:\n- Sufficiency: answering is right only if the history already holds what the answer needs; otherwise prefer searches for the missing facts, and among answers prefer the correct one.\n- Utility: a query should be precise and should fetch the fact the question depends on next; prefer foundational queries over ones that assume facts not yet found; irrelevant queries rank low.\n- Redundancy: queries that repeat earlier ones or fetch what the history already has rank low.\n\nReply with JSON only: {"ranked_indices": [the candidate numbers, best first]}`;
}

/**
 * Reads a ranking robustly: the "ranked_indices" list, else the numbers in the reply, keeping valid,
 * first-seen indices; candidates the reply leaves out follow in their original order.
 */
export function parseRanking(text: string, count: number): { order: number[]; malformed: boolean } {
  let listed: unknown[] | undefined;
  const m = /"ranked_indices"\s*:\s*(\[[^\]]*\])/.exec(text);
  if (m) {
    try {
      listed = JSON.parse(m[1]!) as unknown[];
    } catch {
      listed = undefined;
    }
  }
  const raw = listed ?? [...text.matchAll(/\d+/g)].map((x) => Number(x[0]));
  const order: number[] = [];
  for (const v of raw) {
    const i = typeof v === 'number' ? v : Number(v);
    if (Number.isInteger(i) && i >= 0 && i < count && !order.includes(i)) order.push(i);
  }
  const malformed = order.length === 0;
  for (let i = 0; i < count; i++) if (!order.includes(i)) order.push(i);
  return { order, malformed };
}

/** One question annotated by ranking: the tree of every step's candidates and whether the trajectory is kept. */
export interface RankResult {
  tree: Tree;
  /** The final answer is correct, so the trajectory is kept. */
  kept: boolean;
  steps: number;
  policyCalls: number;
  malformedRankings: number;
}

/**
 * RAG-Gym's process annotation by ranking (§3, App. F): at each step sample `candidates` actions, rank
 * the distinct ones (judge, rollouts, the gold plan or random), execute the best, until an answer or
 * maxTurns + 2 steps.
 * Each candidate's rank is stored in the tree; `kept` says whether the final answer is correct.
 */
export async function annotateByRanking(env: RagEnv, policy: Policy, root: State, opts: RankOptions): Promise<RankResult> {
  const tree = new Tree(root);
  let node: TreeNode = tree.root;
  let policyCalls = 0;
  let malformed = 0;
  const qid = root.question.id;
  const limit = env.config.maxTurns + 2;
  for (let step = 0; !node.terminal && step < limit; step++) {
    policyCalls++;
    const proposed = await policy.propose(node.state, { n: opts.candidates, temperature: opts.temperature, seed: seedFor(opts.seed, qid, 'step', step) });
    const moves: Move[] = [];
    for (const m of proposed) if (!moves.some((x) => x.raw.trim() === m.raw.trim() || sameAction(x.action, m.action))) moves.push(m);
    if (moves.length === 0) break;
    const children: TreeNode[] = [];
    for (const m of moves) children.push(tree.add(node, (await env.step(node.state, m)).state));
    let order: number[];
    let tiedWithBest = new Set<number>();
    if (moves.length === 1) order = [0];
    else if (opts.source === 'random') order = new Rng(seedFor(opts.seed, qid, 'random', step)).shuffle(moves.map((_, i) => i));
    else if (opts.source === 'plan') {
      // Each candidate as executed: a search is judged by the documents it fetched.
      const scores = judgedPlanScores(node.state, children.map((ch) => ch.state.steps[ch.state.steps.length - 1]!));
      order = scores.map((v, i) => ({ v, i })).sort((a, b) => b.v - a.v || a.i - b.i).map((x) => x.i);
      // A candidate as good as the best by the plan is no negative: rank 1, which the reward scheme leaves unused.
      tiedWithBest = new Set(order.slice(1).filter((i) => scores[order[0]!]! - scores[i]! <= PLAN_RANK_MARGIN));
    } else if (opts.source === 'rollout') {
      // Math-Shepherd: a candidate is as good as the share of rollouts from it that end correctly.
      const values = await Promise.all(
        children.map(async (ch, i) => {
          const rs = await Promise.all(Array.from({ length: opts.rollouts }, (_, r) => rollout(env, policy, ch.state, { temperature: opts.temperature, seed: seedFor(opts.seed, qid, 'rank-rollout', step, i, r) })));
          const answers = node.state.question.answers;
          const isRight = (r: (typeof rs)[number]) => (opts.correct === 'em' ? exactMatch(r.prediction, answers) === 1 : r.score >= 0.5);
          const value = (r: (typeof rs)[number]) => (opts.rolloutValue === 'f1' ? r.score : isRight(r) ? 1 : 0);
          return rs.reduce((s, r) => s + value(r), 0) / rs.length;
        }),
      );
      order = values.map((v, i) => ({ v, i })).sort((a, b) => b.v - a.v || a.i - b.i).map((x) => x.i);
      children.forEach((ch, i) => (ch.value = values[i]!));
    } else {
      if (!opts.judge) throw new Error('ranking with a judge needs --judge SPEC');
      const res = await opts.judge.generate({ messages: [{ role: 'user', content: rankingPrompt(node.state, moves) }], temperature: 0, maxTokens: 128 });
      const parsed = parseRanking(res.choices[0]?.text ?? '', moves.length);
      if (parsed.malformed) malformed++;
      order = parsed.order;
    }
    order.forEach((candidate, rank) => {
      const ch = children[candidate]!;
      ch.rank = tiedWithBest.has(candidate) ? 1 : rank;
      if (opts.source !== 'rollout') ch.value = 1 / (1 + ch.rank);
      // Q of a candidate is its ranking reward (or rollout value).
      ch.N = 1;
      ch.W = ch.value;
    });
    node = children[order[0]!]!;
  }
  const last = node.state.steps[node.state.steps.length - 1];
  const prediction = last?.action.type === 'answer' ? last.action.answer : '';
  const answers = root.question.answers;
  const kept = prediction !== '' && (opts.correct === 'em' ? exactMatch(prediction, answers) === 1 : f1Score(prediction, answers).f1 >= 0.5);
  if (node.terminal) {
    node.score = f1Score(prediction, answers).f1;
    tree.markAnswered(node);
  }
  return { tree, kept, steps: node.depth, policyCalls, malformedRankings: malformed };
}
