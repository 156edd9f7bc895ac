/**
 * LWS (Learning When to Search) rewards: r = r_a + r_s + r_f (eq. 12).
 *   r_f (eq. 6): +1 if the transcript has a valid shape, −1 otherwise (format.ts).
 *   r_s (eq. 9): RC ≤ 1 → 0 if the query is concise, −1 if not; RC > 1 → −avg_sim, the mean pairwise
 *        cosine similarity of the queries' embeddings (eq. 7–8). Eq. 8 divides the i < j sum by
 *        N(N−1), half the mean; both are offered, the mean by default (a choice made here).
 *   r_a stage 1 (eq. 10): correct → 1, wrong → −1 + β·RC.  Stage 2 (eq. 11): correct → 1 − β·RC,
 *        wrong → −1.  β = 0.3.
 */
import { ENGLISH_STOP_WORDS } from '../retrieval/analyzer.js';
import type { Embedder } from '../retrieval/embedders/embedder.js';
import type { Trajectory } from '../core/trajectory.js';
import { lwsFormat } from './format.js';

const QUESTION_WORDS = new Set(['who', 'what', 'when', 'where', 'which', 'why', 'how', 'whom', 'whose']);
const FUNCTION_WORDS = new Set([
  ...ENGLISH_STOP_WORDS,
  'about', 'above', 'after', 'against', 'among', 'around', 'before', 'behind', 'below', 'between', 'during', 'from', 'near', 'over',
  'through', 'toward', 'towards', 'under', 'upon', 'within', 'without', 'did', 'does', 'do', 'has', 'have', 'had', 'were', 'been',
]);

export interface ConcisenessRules {
  /** Most words a concise query may have (default 8). */
  maxWords: number;
  /** Most stop words and prepositions it may have (default 2). */
  maxFunctionWords: number;
}

export const DEFAULT_CONCISENESS: ConcisenessRules = { maxWords: 8, maxFunctionWords: 2 };

/** LWS's rule-based conciseness: keywords, not a question — no question words, few function words, few words. */
export function isConcise(query: string, rules: ConcisenessRules = DEFAULT_CONCISENESS): boolean {
  const words = query.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? [];
  if (words.length === 0 || words.length > rules.maxWords || query.trim().endsWith('?')) return false;
  if (words.some((w) => QUESTION_WORDS.has(w))) return false;
  return words.filter((w) => FUNCTION_WORDS.has(w)).length <= rules.maxFunctionWords;
}

export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0;
}

/** Pairwise cosine over i < j, divided by the number of pairs N(N−1)/2 ("mean") or by N(N−1) ("paper", eq. 8). */
export function averageSimilarity(vectors: readonly Float32Array[], variant: 'mean' | 'paper' = 'mean'): number {
  const n = vectors.length;
  if (n < 2) return 0;
  let sum = 0;
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) sum += cosine(vectors[i]!, vectors[j]!);
  return variant === 'paper' ? sum / (n * (n - 1)) : sum / ((n * (n - 1)) / 2);
}

/** The queries that were actually searched. */
export function executedQueries(t: Pick<Trajectory, 'steps'>): string[] {
  return t.steps.flatMap((s) => (s.action.type === 'search' && s.docs !== undefined ? [s.action.query] : []));
}

/** LWS eq. 9. */
export async function lwsSearchReward(t: Pick<Trajectory, 'steps'>, embedder: Embedder, opts: { rules?: ConcisenessRules; variant?: 'mean' | 'paper' } = {}): Promise<number> {
  const queries = executedQueries(t);
  if (queries.length <= 1) return queries.length === 0 || isConcise(queries[0]!, opts.rules) ? 0 : -1;
  return -averageSimilarity(await embedder.embed(queries, 'query'), opts.variant);
}

/** LWS eq. 10 (stage 1) and eq. 11 (stage 2). */
export function lwsAnswerReward(correct: boolean, retrievalCount: number, stage: 1 | 2, beta = 0.3): number {
  if (stage === 1) return correct ? 1 : -1 + beta * retrievalCount;
  return correct ? 1 - beta * retrievalCount : -1;
}

export { lwsFormat };
