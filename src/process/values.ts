/**
 * Node values for search trees:
 *  - rollouts: complete the episode from a state with the policy and score the answer;
 *  - SPRE (ReasonRAG eq. 1): Q = (1/k) Σ_i F1(rollout_i) · α^{steps(rollout_i)};
 *  - judge value (ReasonRAG eq. 6): a harsh judge grades the partial process against the gold answer
 *    from 0 to 100 ("So the score is X"), rescaled to [0, 1].
 */
import type { State } from '../env/env.js';
import type { RagEnv } from '../env/env.js';
import type { Policy } from '../agents/policy.js';
import { f1Score } from '../core/metrics.js';
import { spreValue } from '../rewards/outcome.js';
import type { LLM } from '../llm/types.js';
import { Rng } from '../core/rng.js';
import type { SavedTree } from './tree.js';

/** A simulated completion of an episode from some state (SPRE values, rollout ranking, PUCT simulation). */
export interface Rollout {
  prediction: string;
  /** Total steps of the completed trajectory (from the root). */
  steps: number;
  /** The outcome score of the finished episode: F1 of the answer against the gold answers, or the
   * `outcome` function's value when one is given. */
  score: number;
  /** An answer was produced (not an empty forced answer). */
  answered: boolean;
}

export function seedFor(...parts: (string | number)[]): number {
  return new Rng(parts.join('/')).nextUint32() & 0x7fffffff;
}

/**
 * Scores a finished episode in [0, 1] for rollouts and terminal nodes. The papers use the answer's F1
 * (`answerF1`); any reward scheme can stand in (rewards/apply `stateOutcome`).
 */
export type OutcomeScore = (final: State) => number | Promise<number>;

/** F1 of the episode's answer against the gold answers (ReasonRAG's and ProRAG's rollout score). */
export function answerF1(state: State): number {
  const last = state.steps[state.steps.length - 1];
  return f1Score(last?.action.type === 'answer' ? last.action.answer : '', state.question.answers).f1;
}

/** Completes the episode from `state` with the policy (one action per step, seeded). */
export async function rollout(env: RagEnv, policy: Policy, state: State, opts: { temperature: number; seed: number; outcome?: OutcomeScore }): Promise<Rollout> {
  let s = state;
  const limit = s.steps.length + env.config.maxTurns + 2;
  while (!s.done && s.steps.length < limit) {
    const [move] = await policy.propose(s, { n: 1, temperature: opts.temperature, seed: seedFor(opts.seed, s.steps.length) });
    if (!move) break;
    s = (await env.step(s, move)).state;
  }
  const last = s.steps[s.steps.length - 1];
  const prediction = last?.action.type === 'answer' ? last.action.answer : '';
  const score = opts.outcome ? await opts.outcome(s) : f1Score(prediction, s.question.answers).f1;
  return { prediction, steps: s.steps.length, score, answered: prediction.trim() !== '' };
}

/** SPRE value of a state from k rollouts run concurrently (ReasonRAG eq. 1). */
export async function spre(env: RagEnv, policy: Policy, state: State, opts: { k: number; alpha: number; temperature: number; seed: number; outcome?: OutcomeScore }): Promise<{ value: number; rollouts: Rollout[] }> {
  if (state.done) {
    // A finished state is its own (only) rollout.
    const last = state.steps[state.steps.length - 1]!;
    const prediction = last.action.type === 'answer' ? last.action.answer : '';
    const score = opts.outcome ? await opts.outcome(state) : f1Score(prediction, state.question.answers).f1;
    const r: Rollout = { prediction, steps: state.steps.length, score, answered: prediction.trim() !== '' };
    return { value: spreValue([r], opts.alpha), rollouts: [r] };
  }
  const rollouts = await Promise.all(Array.from({ length: opts.k }, (_, i) => rollout(env, policy, state, { temperature: opts.temperature, seed: seedFor(opts.seed, 'rollout', i), outcome: opts.outcome })));
  return { value: spreValue(rollouts, opts.alpha), rollouts };
}

/** The partial process as plain text, for the judge. */
export function describeProcess(state: State): string {
  if (state.steps.length === 0) return '(no steps yet)';
  return state.steps
    .map((s, i) => {
      const a = s.action;
      const head = `Step ${i + 1}: `;
      if (a.type === 'search') return `${head}searched for "${a.query}" and found: ${(s.docs ?? []).map((d) => d.title).join('; ') || 'nothing'}`;
      if (a.type === 'extract') return `${head}noted the evidence "${a.evidence}"`;
      if (a.type === 'answer') return `${head}answered "${a.answer}"`;
      return `${head}produced text that did not follow the format`;
    })
    .join('\n');
}

export function judgeValuePrompt(state: State): string {
  return `You are a strict grader of partial reasoning. An agent is answering a question by searching a knowledge base; below is what it has done so far, and the correct answer.\n\nQuestion: ${state.question.question}\nCorrect answer: ${state.question.answers.join(' / ')}\n\nSteps so far:\n${describeProcess(state)}\n\nPoint out every flaw: searches that cannot lead to the answer, wrong entities, repeated or wasted steps, conclusions the evidence does not support. Then grade how likely this process is to end in the correct answer, from 0 (hopeless) to 100 (certain), and be harsh. Finish with the sentence "So the score is X", where X is the grade.`;
}

/** "So the score is X" → X / 100, clamped; undefined when the reply has no grade. */
export function parseJudgeValue(text: string): number | undefined {
  const m = [...text.matchAll(/score is\s*[:=]?\s*(\d+(?:\.\d+)?)/gi)].pop();
  if (!m) return undefined;
  return Math.min(1, Math.max(0, Number(m[1]) / 100));
}

export async function judgeValue(llm: LLM, state: State): Promise<{ value: number; malformed: boolean }> {
  const res = await llm.generate({ messages: [{ role: 'user', content: judgeValuePrompt(state) }], temperature: 0, maxTokens: 512 });
  const v = parseJudgeValue(res.choices[0]?.text ?? '');
  return v === undefined ? { value: 0, malformed: true } : { value: v, malformed: false };
}

/** Σ value·N / Σ N over the entries that have a value, summed left to right as Python's `sum`; null when none has one or their N sum to 0. */
export function nWeightedMean(entries: readonly { value: number | null | undefined; n: number }[]): number | null {
  let totalN = 0;
  let sum = 0;
  for (const e of entries) {
    if (e.value === null || e.value === undefined) continue;
    totalN += e.n;
    sum += e.value * e.n;
  }
  return totalN > 0 ? sum / totalN : null;
}

/** How pairs are labelled: bottom-up re-scoring of the finished tree, or the search's running-mean Q. */
export const VALUE_LABELS = ['bottom-up', 'running-mean'] as const;
export type ValueLabel = (typeof VALUE_LABELS)[number];

/**
 * Bottom-up re-scoring of a finished search tree, as ReasonRAG's labeller does before mining pairs
 * (`calculate_mcts_reward_bottom_up`): an answer leaf is worth its F1 · α^depth (depth = steps taken), an
 * inner node the N-weighted mean of its valued children, an unexpanded leaf its own evaluation (SPRE: the
 * mean F1 · α^steps of its rollouts), and a node from which no answer was reached has no value (null) —
 * the paper prunes branches that do not yield a final answer (§2.2.3). F1 is
 * ragtrail's (SQuAD normalisation); process/reasonrag-tree.ts has the authors' exact variant for their trees.
 */
export function bottomUpTreeValues(tree: SavedTree, alpha: number): Map<number, number | null> {
  const children = new Map<number, number[]>();
  for (const n of tree.nodes) if (n.parent >= 0) children.set(n.parent, [...(children.get(n.parent) ?? []), n.id]);
  const byId = new Map(tree.nodes.map((n) => [n.id, n]));
  const values = new Map<number, number | null>();
  const value = (id: number): number | null => {
    if (values.has(id)) return values.get(id)!;
    const node = byId.get(id)!;
    const kids = children.get(id) ?? [];
    let v: number | null = null;
    if (kids.length === 0) {
      const a = node.step?.action;
      if (node.terminal && a?.type === 'answer') v = (node.score ?? f1Score(a.answer, tree.question.answers).f1) * alpha ** node.depth;
      // An unexpanded leaf: its SPRE rollouts are complete trajectories through it (eq. 1), so their mean
      // F1 · α^steps is its value, where one of them answered.
      else if (!node.terminal && node.answered && node.N > 0) v = node.value;
    } else v = nWeightedMean(kids.map((k) => ({ value: value(k), n: byId.get(k)!.N })));
    values.set(id, v);
    return v;
  };
  for (const n of tree.nodes) value(n.id);
  return values;
}
