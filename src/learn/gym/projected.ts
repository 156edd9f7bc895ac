/**
 * A teacher in the gym's own action space. The gym policy chooses among generated candidates
 * (candidates.ts); a teacher that writes its own queries ("Who published Painted Letter?") takes
 * actions the gym can never propose, and SFT on those teaches only that a given action is good, not
 * which candidate to choose. Projected, each of the teacher's actions becomes the candidate of the same
 * type nearest to it — the same answer or the answer with most words in common; the query or evidence
 * sharing the most content words (Jaccard) — and the episode goes on from that candidate, so the
 * demonstrations are episodes the gym policy could have taken itself.
 */
import { normalizeAnswer } from '../../core/text.js';
import type { Action } from '../../core/trajectory.js';
import { PolicyWrapper } from '../../agents/policy.js';
import type { ProposeOptions } from '../../agents/policy.js';
import type { Move, State } from '../../env/env.js';
import { ENGLISH_STOP_WORDS } from '../../retrieval/analyzer.js';
import { generateCandidates } from './candidates.js';

const words = (t: string) => new Set(normalizeAnswer(t).split(' ').filter((w) => w && !ENGLISH_STOP_WORDS.has(w)));

function jaccard(a: Set<string>, b: Set<string>): number {
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  const union = a.size + b.size - inter;
  return union === 0 ? 0 : inter / union;
}

const textOf = (a: Action) => (a.type === 'search' ? a.query : a.type === 'answer' ? a.answer : a.type === 'extract' ? a.evidence : '');

/** The candidate of the state nearest to `action` (same type), or undefined when there is none of that type. */
export function nearestCandidate(state: State, protocol: Parameters<typeof generateCandidates>[1], action: Action): Action | undefined {
  const pool = generateCandidates(state, protocol).filter((c) => c.action.type === action.type);
  if (pool.length === 0) return undefined;
  if (action.type === 'answer') {
    const exact = pool.find((c) => normalizeAnswer(textOf(c.action)) === normalizeAnswer(action.answer));
    if (exact) return exact.action;
  }
  const w = words(textOf(action));
  let best = pool[0]!;
  let bestScore = -1;
  for (const c of pool) {
    const s = jaccard(w, words(textOf(c.action)));
    if (s > bestScore) [best, bestScore] = [c, s];
  }
  return best.action;
}

/** Wraps a teacher so that each move it proposes is its nearest gym candidate (an invalid step passes as it is). */
export class ProjectedPolicy extends PolicyWrapper {
  override get name(): string {
    return `${this.inner.name} projected onto the gym's candidates`;
  }

  override async propose(state: State, opts?: ProposeOptions): Promise<Move[]> {
    const moves = await this.inner.propose(state, opts);
    return moves.map((m) => {
      const action = m.action.type === 'invalid' ? undefined : nearestCandidate(state, this.protocol, m.action);
      return action ? { action, raw: this.protocol.format(action, state) } : m;
    });
  }
}
