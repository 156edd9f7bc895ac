/**
 * The gold PRM (non-LLM, reads the gold answers and decomposition): scores a step by the question's
 * gold plan (agents/gold.ts), as the oracle policy follows it. A diagnostic, not a model — an upper
 * bound on what a PRM could tell a policy, used to ask whether a method that consumes PRM scores
 * (PRM best-of-N, ProRAG's dual advantages, RFT's filter) works when the scores are informative:
 *
 *   answer   +2 when it matches a gold answer (EM), −2 otherwise
 *   search   4·F1(query, an open hop's sub-question) − 1, in [−1, 3], the best over the open hops;
 *            −1 once every hop's answer has been retrieved (time to answer)
 *   extract  +1 when the evidence holds the last resolved hop's answer, −1 otherwise
 *   invalid  −2
 *
 * The plan is a partial order, not a sequence: a hop is open when it is unresolved and every earlier
 * hop whose answer its sub-question names is resolved. A chain ("the spouse of the author of F") opens
 * one hop at a time; a comparison ("which film is older, A or B?") opens A's and B's lookups together,
 * and searching either first is equally good — the decomposition's order between them is arbitrary.
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
   * Answer: +2 if it matches a gold answer (EM), else −2. Search: the best 4·F1(query, an open hop's
   * sub-question) − 1 ({@link openHops}), in [−1, 3], or −1 once every hop is resolved. Extract: +1 if it holds the last
   * resolved hop's answer, else −1. Invalid: −2.
   */
  async score(state: State, candidates: readonly Candidate[]): Promise<number[]> {
    const plan = goldPlan(state.question);
    const resolved = plan.map((h) => retrieved(state, h.answer, h.passageId));
    const open = openHops(plan, resolved);
    const last = [...plan].reverse().find((_, i) => resolved[plan.length - 1 - i]);
    return candidates.map(({ action: a }) => {
      if (a.type === 'answer') return exactMatch(a.answer, state.question.answers) === 1 ? 2 : -2;
      if (a.type === 'search') return open.length ? Math.max(...open.map((h) => 4 * tokenF1(tokens(a.query), tokens(h.query)).f1 - 1)) : -1;
      if (a.type === 'extract') return last?.answer && normalizeAnswer(a.evidence).includes(normalizeAnswer(last.answer)) ? 1 : -1;
      return -2;
    });
  }
}

/**
 * The hops a search may take next: unresolved, with every earlier hop whose answer the sub-question
 * names (as whole words) resolved. The first unresolved hop is always open, so a plan with anything
 * left has an open hop.
 */
export function openHops<H extends { query: string; answer?: string }>(plan: readonly H[], resolved: readonly boolean[]): H[] {
  const words = (t: string) => ` ${normalizeAnswer(t)} `;
  return plan.filter((h, i) => !resolved[i] && plan.slice(0, i).every((e, j) => resolved[j] || !e.answer || normalizeAnswer(e.answer) === '' || !words(h.query).includes(words(e.answer))));
}
