/**
 * Outcome rewards (RAG-Gym §2.1, eq. 3: the correctness of the final prediction): an answer metric of
 * it, and the binary-correctness rule the staged rewards use — EM (default), Acc, F1 ≥ threshold, or the
 * LLM judge (choice).
 */
import { InputError } from '../core/errors.js';
import { type Trajectory, trajectoryChoices } from '../core/trajectory.js';
import { scoreAnswer } from '../core/metrics.js';
import type { RewardContext } from './types.js';

/** How an answer counts as correct: exact match, cover match (Acc), F1 at a threshold, or an LLM judge. */
export type CorrectnessRule = 'em' | 'acc' | 'f1' | 'judge';
export const CORRECTNESS_RULES: readonly CorrectnessRule[] = ['em', 'acc', 'f1', 'judge'];

/**
 * One answer metric (SQuAD/HotpotQA-style EM, F1, or FlashRAG's cover-match Acc) of the prediction
 * against the gold answers, maximised over them; in [0, 1].
 */
export function metricOf(t: Pick<Trajectory, 'prediction' | 'answers'> & Partial<Pick<Trajectory, 'meta'>>, metric: 'em' | 'f1' | 'acc'): number {
  return scoreAnswer(t.prediction, t.answers, trajectoryChoices(t))[metric];
}

/** Is the prediction correct under the rule? `threshold` applies to the F1 rule (default 0.5). */
export async function isCorrect(ctx: RewardContext, rule: CorrectnessRule, threshold = 0.5): Promise<boolean> {
  const t = ctx.trajectory;
  switch (rule) {
    case 'em':
      return metricOf(t, 'em') === 1;
    case 'acc':
      return metricOf(t, 'acc') === 1;
    case 'f1':
      return metricOf(t, 'f1') >= threshold;
    case 'judge': {
      if (!ctx.judge) throw new InputError('the judge correctness rule needs a judge model', 'pass --judge-llm SPEC');
      return (await ctx.judge.verdict(t.question, t.answers, t.prediction)).correct;
    }
    default:
      throw new InputError(`unknown correctness rule "${String(rule)}"`, `use one of ${CORRECTNESS_RULES.join(', ')}`);
  }
}

/**
 * RAG-Gym eq. 4: the discounted return Σ_{t=1..T} γ^{t−1} R(s_t, a_t) of per-step rewards.
 * With only a terminal reward R this is γ^{T−1}·R: longer trajectories earn less.
 */
export function discountedReturn(rewards: readonly number[], gamma: number): number {
  let g = 1;
  let sum = 0;
  for (const r of rewards) {
    sum += g * r;
    g *= gamma;
  }
  return sum;
}

/**
 * ReasonRAG eq. 1 (SPRE): the value of a partial trajectory from k rollouts completed from it,
 *   Q_t = (1/k) Σ_i v(rollout_i) · α^{steps(rollout_i)},
 * v ∈ [0, 1] the rollout's answer score (F1 or judge), steps its total number of steps, α ∈ (0, 1].
 */
export function spreValue(rollouts: readonly { score: number; steps: number }[], alpha: number): number {
  if (rollouts.length === 0) return 0;
  if (!(alpha > 0 && alpha <= 1)) throw new RangeError(`SPRE needs α in (0, 1], got ${alpha}`);
  return rollouts.reduce((s, r) => s + r.score * alpha ** r.steps, 0) / rollouts.length;
}
