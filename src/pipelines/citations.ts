/** TEMPORARY until the eval metric lands. */
import type { Trajectory } from '../core/trajectory.js';
import { referenceIds } from '../rewards/arena.js';

export function citationPrecision(t: Trajectory): number {
  const meta = t.meta ?? {};
  const supporting = new Set(Array.isArray(meta['supporting']) ? (meta['supporting'] as string[]) : []);
  const contextIds = Array.isArray(meta['contextIds']) ? (meta['contextIds'] as string[]) : undefined;
  const ids = referenceIds(t, contextIds);
  const answer = [...t.steps].reverse().find((s) => s.action.type === 'answer');
  const cited = answer?.action.type === 'answer' ? (answer.action.citations ?? []) : [];
  if (cited.length === 0) return 0;
  return cited.filter((n) => supporting.has(ids[n - 1] ?? '')).length / cited.length;
}
