/**
 * Accuracy by reasoning hops (ARENA, appendix K, Table 13): questions grouped by the hops they need —
 * the dataset's own count (the synthetic world's `metadata.hops`), else the length of the gold
 * decomposition (MuSiQue), else the number of supporting passages (HotpotQA's two pages, 2Wiki's
 * two or four) — each group's size, EM, and for protocols that cite (ARENA) the share whose cited
 * references are exactly the gold ones ("relevance") and the share right on both ("all correct").
 */
import type { Trajectory } from '../core/trajectory.js';
import type { Question } from '../core/types.js';
import { arenaRelevance } from './citations.js';

/** One hop count's row. */
export interface HopRow {
  hops: number;
  n: number;
  em: number;
  /** Citing protocols: share of questions whose cited references equal the gold ones. */
  relevance?: number;
  /** Citing protocols: share with both the answer (EM) and the references right. */
  allCorrect?: number;
}

/** The hops a question needs, by the first source that says (see the module comment); undefined when none does. */
export function hopsOf(q: Question): number | undefined {
  const h = q.metadata?.['hops'];
  if (typeof h === 'number' && Number.isInteger(h) && h > 0) return h;
  if (q.decomposition?.length) return q.decomposition.length;
  if (q.supporting?.length) return new Set(q.supporting).size;
  return undefined;
}

/** Rows by hop count, ascending; empty when no question's hops are known. `cites`: add ARENA's relevance columns. */
export function byHops(ts: readonly Trajectory[], questions: ReadonlyMap<string, Question>, cites = false): HopRow[] {
  const groups = new Map<number, Trajectory[]>();
  for (const t of ts) {
    const q = questions.get(t.id);
    const h = q && hopsOf(q);
    if (h !== undefined) (groups.get(h) ?? groups.set(h, []).get(h)!).push(t);
  }
  return [...groups.entries()].sort((a, b) => a[0] - b[0]).map(([hops, g]) => {
    const em = g.map((t) => t.metrics?.em ?? 0);
    const row: HopRow = { hops, n: g.length, em: em.reduce((a, b) => a + b, 0) / g.length };
    if (cites) {
      const right = g.map((t) => (arenaRelevance(t) === 1 ? 1 : 0));
      row.relevance = right.reduce((a: number, b) => a + b, 0) / g.length;
      row.allCorrect = g.filter((_, i) => right[i] === 1 && em[i] === 1).length / g.length;
    }
    return row;
  });
}
