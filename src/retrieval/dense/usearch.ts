/** usearch (HNSW and SIMD exact search, native binaries shipped in the npm package) is an optional dependency, loaded on demand. */
import { importOptional } from '../../core/optional.js';

type Vectors = Float32Array | Int8Array;

/** One query's matches, or a batch's (`counts[i]` results for query i at `keys[i·k …]`). */
export interface UsearchMatches {
  keys: BigUint64Array;
  distances: Float32Array;
  counts?: BigUint64Array;
  k?: number;
}

export interface UsearchIndex {
  add(keys: BigUint64Array, vectors: Float32Array, threads?: number): void;
  search(vectors: Float32Array | Float32Array[], k: number, threads: number): UsearchMatches;
  save(path: string): void;
  view(path: string): void;
  load(path: string): void;
  size(): number;
}

export interface UsearchConfig {
  dimensions: number;
  metric: 'ip' | 'hamming';
  quantization: 'f32' | 'i8' | 'b1';
  connectivity: number;
  expansion_add: number;
  expansion_search: number;
  multi: boolean;
}

export interface UsearchModule {
  Index: new (config: UsearchConfig) => UsearchIndex;
  /** Exact k-NN by the native SIMD kernels; for `ip` the distance is 1 − dot (an integer dot for Int8Array). */
  exactSearch(dataset: Vectors, queries: Vectors, dimensions: number, count: number, metric: 'ip', threads: number): UsearchMatches;
}

export async function loadUsearch(why = 'HNSW search'): Promise<UsearchModule> {
  const mod = await importOptional<{ default?: UsearchModule } & UsearchModule>('usearch', why);
  return mod.default ?? mod;
}

/** usearch returns a single query's matches without `counts`: one shape for both. */
export function matchesOf(m: UsearchMatches, query: number, nq: number): { keys: BigUint64Array; distances: Float32Array } {
  if (nq === 1 && m.counts === undefined) return m;
  const k = m.k!;
  const n = Number(m.counts![query]);
  return { keys: m.keys.subarray(query * k, query * k + n), distances: m.distances.subarray(query * k, query * k + n) };
}

/** usearch pads missing results with this key. */
export const NO_KEY = 0xffffffffffffffffn;
