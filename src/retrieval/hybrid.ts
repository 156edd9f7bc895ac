/**
 * Reciprocal rank fusion (Cormack et al. 2009), RAG-Gym's BM25 + dense setup:
 *   score(d) = Σ_r 1 / (k + rank_r(d)),  rank 1-based, k = 60,
 * over the top `depth` of each retriever. Ties keep the order of first appearance.
 */
import type { Hit, Retriever } from './types.js';

export const RRF_K = 60;

/** Fuses ranked lists of hits (best first) by reciprocal rank. */
export function reciprocalRankFusion(rankings: readonly Hit[][], k = RRF_K): Hit[] {
  const fused = new Map<string, { hit: Hit; score: number; first: number }>();
  let order = 0;
  for (const ranking of rankings) {
    ranking.forEach((hit, i) => {
      const add = 1 / (k + i + 1);
      const seen = fused.get(hit.passageId);
      if (seen) seen.score += add;
      else fused.set(hit.passageId, { hit, score: add, first: order++ });
    });
  }
  return [...fused.values()].sort((a, b) => b.score - a.score || a.first - b.first).map(({ hit, score }) => ({ ...hit, score }));
}

/**
 * Hybrid search: fuses the rankings of several retrievers by reciprocal rank (`opts.k`, default 60),
 * taking the top `opts.depth` (default 100, at least k) of each. RAG-Gym's BM25 + dense setup.
 */
export class RrfRetriever implements Retriever {
  readonly name: string;

  constructor(
    private readonly retrievers: readonly Retriever[],
    private readonly opts: { k?: number; depth?: number } = {},
  ) {
    this.name = `rrf(k=${opts.k ?? RRF_K}; ${retrievers.map((r) => r.name).join(' + ')})`;
  }

  /** One-query {@link RrfRetriever.searchBatch}; scores are the fused RRF scores. */
  async search(query: string, k: number): Promise<Hit[]> {
    return (await this.searchBatch([query], k))[0]!;
  }

  async searchBatch(queries: readonly string[], k: number): Promise<Hit[][]> {
    const depth = Math.max(k, this.opts.depth ?? 100);
    const lists = await Promise.all(this.retrievers.map((r) => r.searchBatch(queries, depth)));
    return queries.map((_, qi) => reciprocalRankFusion(lists.map((l) => l[qi]!), this.opts.k).slice(0, k));
  }

  /** Closes every fused retriever. */
  async close(): Promise<void> {
    for (const r of this.retrievers) await r.close?.();
  }
}
