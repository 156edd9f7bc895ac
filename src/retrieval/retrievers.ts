/** The embedded retrievers: BM25 and dense search over an index folder, each behind `Retriever`. */
import type { DocStore } from './docstore.js';
import type { Bm25Index } from './bm25/index.js';
import type { DenseIndex } from './dense/index.js';
import type { Embedder } from './embedders/embedder.js';
import type { Hit, Retriever, ScoredDoc } from './types.js';

function toHits(store: DocStore, docs: ScoredDoc[]): Hit[] {
  return docs.map(({ doc, score }) => {
    const p = store.get(doc);
    return { passageId: p.id, title: p.title, text: p.text, score };
  });
}

/** BM25 over an index folder's inverted index, with passages read from its document store. */
export class Bm25Retriever implements Retriever {
  readonly name: string;

  constructor(
    readonly index: Bm25Index,
    private readonly store: DocStore,
  ) {
    this.name = `bm25(k1=${index.params.k1},b=${index.params.b})`;
  }

  /** Synchronous search, for callers in tight loops (benchmarks, MCTS). */
  searchSync(query: string, k: number): Hit[] {
    return toHits(this.store, this.index.searchDocs(query, k));
  }

  /** {@link Bm25Retriever.searchSync}, as a promise; scores are BM25 scores. */
  async search(query: string, k: number): Promise<Hit[]> {
    return this.searchSync(query, k);
  }

  async searchBatch(queries: readonly string[], k: number): Promise<Hit[][]> {
    return queries.map((q) => this.searchSync(q, k));
  }
}

/**
 * Dense search over an index folder: embeds queries (with the index's query prefix) and searches the
 * vectors exactly (flat) or approximately (HNSW); scores are inner products of unit vectors.
 */
export class DenseRetriever implements Retriever {
  readonly name: string;

  constructor(
    readonly index: DenseIndex,
    private readonly embedder: Embedder,
    private readonly store: DocStore,
  ) {
    this.name = `dense(${embedder.spec}${embedder.lexical ? ', lexical' : ''}, ${index.mode}${index.quantizationName === 'none' ? '' : ' ' + index.quantizationName})`;
  }

  /** One-query {@link DenseRetriever.searchBatch}. */
  async search(query: string, k: number): Promise<Hit[]> {
    return (await this.searchBatch([query], k))[0]!;
  }

  async searchBatch(queries: readonly string[], k: number): Promise<Hit[][]> {
    const prefix = this.index.meta.prefixes.query ?? '';
    const vectors = await this.embedder.embed(queries.map((q) => prefix + q), 'query');
    return (await this.index.searchBatch(vectors, k)).map((docs) => toHits(this.store, docs));
  }

  /** Closes the embedder and the vector index. */
  async close(): Promise<void> {
    await this.embedder.close?.();
    this.index.close();
  }
}
