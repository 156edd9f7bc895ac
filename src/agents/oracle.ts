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

export class OraclePolicy implements Policy {
  readonly kind = 'oracle';
  readonly name = 'oracle [non-LLM]';

  constructor(readonly protocol: Protocol) {}

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

  async propose(state: State, opts: ProposeOptions = {}): Promise<Move[]> {
    const action = this.act(state);
    const move: Move = { action, raw: this.protocol.format(action, state) };
    return Array.from({ length: opts.n ?? 1 }, () => move);
  }
}
