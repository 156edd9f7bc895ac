/**
 * Citation metrics of protocols whose answers cite numbered references (ARENA). The gold references
 * are the question's supporting passages among the references the episode was shown (rewards/arena.ts
 * `goldReferenceNumbers`); the cited ones are the final answer's `citations` (its <relevance> list).
 *
 *   relevance           ARENA's relevance score: 1 when cited = gold, 0.5 on partial overlap, 0 on none
 *   citationPrecision   |cited ∩ gold| / |cited|, over distinct cited numbers
 *
 * Choice: an answer that cites nothing — an empty list, or no <relevance> list at all — has precision 0,
 * not undefined. A mean over questions then cannot be raised by declining to cite, and every question
 * counts in it (a mean that skipped them would describe a different set of questions per system).
 * Numbers outside 1..n are cited references that are not gold: they lower the precision.
 */
import type { Trajectory } from '../core/trajectory.js';
import { goldReferenceNumbers, referenceIds, relevanceReward } from '../rewards/arena.js';

/** |cited ∩ gold| / |cited| over distinct numbers; 0 when nothing is cited (undefined or empty). */
export function citationPrecision(cited: readonly number[] | undefined, gold: readonly number[]): number {
  const c = new Set(cited ?? []);
  if (c.size === 0) return 0;
  const g = new Set(gold);
  let hit = 0;
  for (const k of c) if (g.has(k)) hit++;
  return hit / c.size;
}

/** The final answer's cited reference numbers (undefined without one) and the gold numbers, from a trajectory. */
export function citedAndGold(t: Pick<Trajectory, 'steps' | 'meta'>): { cited: number[] | undefined; gold: number[] } {
  const meta = t.meta ?? {};
  const supporting = Array.isArray(meta['supporting']) ? (meta['supporting'] as string[]) : [];
  const contextIds = Array.isArray(meta['contextIds']) ? (meta['contextIds'] as string[]) : undefined;
  const answer = [...t.steps].reverse().find((s) => s.action.type === 'answer');
  const cited = answer?.action.type === 'answer' ? answer.action.citations : undefined;
  return { cited, gold: goldReferenceNumbers(referenceIds(t, contextIds), supporting) };
}

/** ARENA's relevance score of a trajectory's final answer. */
export function arenaRelevance(t: Pick<Trajectory, 'steps' | 'meta'>): number {
  const { cited, gold } = citedAndGold(t);
  return relevanceReward(cited, gold);
}

/** Citation precision of a trajectory's final answer (0 when it cites nothing). */
export function trajectoryCitationPrecision(t: Pick<Trajectory, 'steps' | 'meta'>): number {
  const { cited, gold } = citedAndGold(t);
  return citationPrecision(cited, gold);
}
