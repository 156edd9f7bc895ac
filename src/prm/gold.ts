/**
 * The gold PRM (non-LLM, reads the gold answers and decomposition): scores a step by the question's
 * gold plan (agents/gold.ts), as the oracle policy follows it. A diagnostic, not a model — an upper
 * bound on what a PRM could tell a policy, used to ask whether a method that consumes PRM scores
 * (PRM best-of-N, ProRAG's dual advantages, RFT's filter) works when the scores are informative:
 *
 *   answer   +2 when it matches a gold answer (EM), −2 otherwise
 *   search   4·F1(query, the first unresolved hop's sub-question) − 1, in [−1, 3];
 *            −1 once every hop's answer has been retrieved (time to answer)
 *   extract  +1 when the evidence holds the last resolved hop's answer, −1 otherwise
 *   invalid  −2
 */
import { goldPlan, retrieved } from '../agents/gold.js';
import { exactMatch, normalizeAnswer, tokenF1 } from '../core/metrics.js';
import type { State } from '../env/env.js';
import type { Candidate, PRM } from './types.js';

const tokens = (s: string) => normalizeAnswer(s).split(' ').filter(Boolean);

/**
 * A diagnostic PRM that reads the gold answers and decomposition (non-LLM): an upper bound on what a
 * PRM could tell a policy, for asking whether a method that consumes PRM scores works when the scores
 * are informative.
 */
export class GoldPRM implements PRM {
  readonly name = 'gold [non-LLM: reads the gold plan]';

  /**
   * Answer: +2 if it matches a gold answer (EM), else −2. Search: 4·F1(query, first unresolved hop's
   * sub-question) − 1, in [−1, 3], or −1 once every hop is resolved. Extract: +1 if it holds the last
   * resolved hop's answer, else −1. Invalid: −2.
   */
  async score(state: State, candidates: readonly Candidate[]): Promise<number[]> {
    const plan = goldPlan(state.question);
    const resolved = plan.map((h) => retrieved(state, h.answer, h.passageId));
    const next = plan.find((_, i) => !resolved[i]);
    const last = [...plan].reverse().find((_, i) => resolved[plan.length - 1 - i]);
    return candidates.map(({ action: a }) => {
      if (a.type === 'answer') return exactMatch(a.answer, state.question.answers) === 1 ? 2 : -2;
      if (a.type === 'search') return next ? 4 * tokenF1(tokens(a.query), tokens(next.query)).f1 - 1 : -1;
      if (a.type === 'extract') return last?.answer && normalizeAnswer(a.evidence).includes(normalizeAnswer(last.answer)) ? 1 : -1;
      return -2;
    });
  }
}
