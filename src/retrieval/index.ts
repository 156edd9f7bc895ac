/**
 * `ragtrail/retrieval`: search a corpus. One `Retriever` interface (`search`, `searchBatch`) over an
 * on-disk BM25 or dense index folder, a Search-R1-style retrieval server, Elasticsearch / OpenSearch,
 * or a kind of your own (`registerRetriever`); embedders for dense search; the retrieval server.
 * @module
 */
export type { Hit, Retriever, ScoredDoc } from './types.js';
export {
  buildIndex,
  type IndexBuildOptions,
  type IndexManifest,
  openRetriever,
  type OpenRetrieverOptions,
  readManifest,
  registerRetriever,
  type RetrieverFactory,
  retrieverKinds,
  type SearchMethod,
} from './index-dir.js';
export { Bm25Retriever, DenseRetriever } from './retrievers.js';
export { RrfRetriever, reciprocalRankFusion } from './hybrid.js';
export { HttpRetriever } from './client.js';
export { createRetrievalServer, type RetrievalServerOptions } from './server.js';
export { Analyzer, type AnalyzerOptions } from './analyzer.js';
export { createEmbedder, EMBEDDER_SPEC_HELP, type Embedder, type EmbedderOptions } from './embedders/embedder.js';
export { HashedNgramEmbedder } from './embedders/hashed.js';
