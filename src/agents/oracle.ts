/**
 * The oracle policy (non-LLM): follows the gold plan — each sub-question of the decomposition in
 * turn (HotpotQA: each supporting title), grounds each search on the sentence holding the hop's
 * answer, and answers with the gold answer. An upper reference and a source of demonstrations;
 * every trajectory it writes is labelled "oracle [non-LLM]".
 */
import type { Action } from '../core/trajectory.js';
import type { Move, State } from '../env/env.js';
import { arenaReferences } from './arena.js';
import { answerAction, citationsOf, evidenceFrom, goldPlan, searchesSoFar } from './gold.js';
import type { Policy, ProposeOptions } from './policy.js';
import type { Protocol } from './protocol.js';

/**
 * Non-LLM policy that follows the gold decomposition (HotpotQA: the supporting titles) and answers
 * with
 * the gold answer: an upper reference and a source of demonstrations. Needs questions with gold data.
 */
export class OraclePolicy implements Policy {
  readonly kind = 'oracle';
  readonly name = 'oracle [non-LLM]';

  constructor(readonly protocol: Protocol) {}

  /**
   * The gold next action: the protocol's fixed step, an extraction of the last hop's evidence, the next
   * hop's query, or the first gold answer (with its citations under ARENA). Deterministic.
   */
  act(state: State): Action {
    const p = this.protocol;
    const fixed = state.mustAnswer ? undefined : p.fixedAction?.(state);
    if (fixed) return fixed;
    const allowed = p.allowed(state);
    const plan = goldPlan(state.question);
    const done = searchesSoFar(state).length;
    if (allowed.includes('extract') && allowed.length === 1) return { type: 'extract', evidence: evidenceFrom(state, plan[done - 1]?.answer) };
    if (allowed.includes('search') && done < plan.length) return { type: 'search', query: plan[done]!.query };
    const gold = state.question.answers[0] ?? '';
    return answerAction(gold, p.name === 'arena' ? citationsOf(state.question, arenaReferences(state)) : undefined);
  }

  /** `opts.n` copies of the gold move, written in the protocol's format (sampling options are ignored). */
  async propose(state: State, opts: ProposeOptions = {}): Promise<Move[]> {
    const action = this.act(state);
    const move: Move = { action, raw: this.protocol.format(action, state) };
    return Array.from({ length: opts.n ?? 1 }, () => move);
  }
}
