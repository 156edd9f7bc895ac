/**
 * The gold PRM (non-LLM, reads the gold answers and decomposition): scores a step by the question's
 * gold plan (agents/gold.ts planScores: the scoring table), as the oracle policy follows it. A
 * diagnostic, not a model — an upper bound on what a PRM could tell a policy, used to ask whether a
 * method that consumes PRM scores (PRM best-of-N, ProRAG's dual advantages, RFT's filter) works when
 * the scores are informative. With `grounded`, a right answer given before every hop is retrieved (a
 * guess) scores as a wrong one.
 */
import { planScores } from '../agents/gold.js';
import type { State } from '../env/env.js';
import type { Candidate, PRM } from './types.js';

export { openHops } from '../agents/gold.js';

/**
 * A diagnostic PRM that reads the gold answers and decomposition (non-LLM): an upper bound on what a
 * PRM could tell a policy, for asking whether a method that consumes PRM scores works when the scores
 * are informative.
 */
export class GoldPRM implements PRM {
  readonly name: string;

  constructor(readonly opts: { grounded?: boolean } = {}) {
    this.name = `gold${opts.grounded ? ', grounded answers' : ''} [non-LLM: reads the gold plan]`;
  }

  /**
   * Answer: +2 if it matches a gold answer (EM) — and, `grounded`, every hop is retrieved — else −2.
   * Search: the best 4·F1(query, an open hop's sub-question) − 1, in [−1, 3], or −1 once every hop is
   * resolved. Extract: +1 if it holds a resolved hop's answer that no earlier evidence holds, else −1. Invalid: −2.
   */
  async score(state: State, candidates: readonly Candidate[]): Promise<number[]> {
    return planScores(state, candidates.map((c) => c.action), this.opts);
  }
}
