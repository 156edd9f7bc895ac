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
  manifestCorpus,
  openRetriever,
  type OpenRetrieverOptions,
  readManifest,
  registerRetriever,
  type RetrieverFactory,
  retrieverKinds,
  type SearchMethod,
} from './index-dir.js';
export type { FileSum } from '../core/checksum.js';
export { Bm25Retriever, DenseRetriever } from './retrievers.js';
export { RrfRetriever, reciprocalRankFusion } from './hybrid.js';
export { HttpRetriever } from './client.js';
export { createRetrievalServer, type RetrievalServerOptions } from './server.js';
export { Analyzer, type AnalyzerOptions } from './analyzer.js';
export { createEmbedder, EMBEDDER_SPEC_HELP, type EmbedKind, type Embedder, type EmbedderOptions, type Prefixes } from './embedders/embedder.js';
export { HashedNgramEmbedder } from './embedders/hashed.js';
export type { Bm25BuildOptions, Bm25Meta, Bm25Params } from './bm25/build.js';
export { Bm25Index, type Bm25Kernel, type Bm25OpenOptions, type Bm25Pruning } from './bm25/index.js';
export type { DenseBuildOptions, DenseMeta } from './dense/build.js';
export type { Quantization } from './dense/quantize.js';
export { DenseIndex, type DenseOpenOptions, type DenseSearchMode } from './dense/index.js';
export { DocStore } from './docstore.js';
export type { RetryOptions } from '../core/http.js';
