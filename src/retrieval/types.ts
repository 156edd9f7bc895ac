/**
 * The one retrieval contract everything downstream (agents, MCTS, evaluation, the HTTP server) sees.
 * Backends: embedded BM25, dense (flat or HNSW), reciprocal-rank fusion of any of them, and a client
 * for Search-R1-style retrieval servers.
 */

export interface Hit {
  passageId: string;
  title: string;
  text: string;
  score: number;
}

/**
 * A ranked search over passages: what agents, MCTS, evaluation and the retrieval server call.
 * Implement it (and register it with `registerRetriever`) to plug in your own search.
 */
export interface Retriever {
  /** Human-readable description, e.g. "bm25(k1=0.9,b=0.4)". */
  readonly name: string;
  /** The `k` best passages for `query`, best first (fewer when the collection has fewer matches). */
  search(query: string, k: number): Promise<Hit[]>;
  /** One ranked list per query, in query order. */
  searchBatch(queries: readonly string[], k: number): Promise<Hit[][]>;
  /** Releases files, threads or connections the retriever holds. */
  close?(): Promise<void> | void;
}

/** A ranked internal document number with its score, before the passage is fetched. */
export interface ScoredDoc {
  doc: number;
  score: number;
}
