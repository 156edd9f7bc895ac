/** usearch (HNSW and SIMD exact search, native binaries shipped in the npm package) is an optional dependency, loaded on demand. */
import { endianness } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InputError } from '../../core/errors.js';
import { importOptional } from '../../core/optional.js';

type Vectors = Float32Array | Int8Array;

/** Keys, distances and counts, `k` slots per query (usearch's native result, batch or not). */
export type UsearchResult = [keys: BigUint64Array, distances: Float32Array, counts: BigUint64Array];

/**
 * The installed usearch package's native binding (its prebuilt binary, loaded through the package's own
 * node-gyp-build), used below its JavaScript wrapper: the wrapper re-types Int8Array vectors (see
 * UsearchGraph) and reshapes results per call, which cost a few µs on every one-query search.
 */
export interface UsearchBinding {
  CompiledIndex: UsearchGraphCtor;
  /**
   * Exact k-NN by the native SIMD kernels (NumKong, dispatched to the CPU at run time); for `ip` the
   * distance is 1 − dot (an integer dot for Int8Array). The binding reads each array from the start of
   * its ArrayBuffer, whatever its byteOffset: call it through `exactSearch`, which checks.
   */
  exactSearch(dataset: Vectors, queries: Vectors, dimensions: number, count: number, metric: 'ip', threads: number): UsearchResult;
}

let binding: UsearchBinding | undefined;

export async function loadUsearch(why = 'usearch SIMD search'): Promise<UsearchBinding> {
  if (binding) return binding;
  await importOptional('usearch', why); // the clear "npm install usearch" error when it is missing
  try {
    // The package's entry is <root>/javascript/dist/esm/usearch.js; node-gyp-build is its dependency.
    const root = join(dirname(fileURLToPath(import.meta.resolve('usearch'))), '..', '..', '..');
    const b = createRequire(join(root, 'package.json'))('node-gyp-build')(root) as Partial<UsearchBinding>;
    if (typeof b.CompiledIndex !== 'function' || typeof b.exactSearch !== 'function') throw new Error('no CompiledIndex or exactSearch in the binding');
    binding = b as UsearchBinding;
    return binding;
  } catch (e) {
    throw new InputError(`${why}: cannot load usearch's native binding (${(e as Error).message})`, 'reinstall usearch (`npm install usearch@^2.25`)');
  }
}

/** usearch's exact search over `dataset`'s rows; both arrays must start their ArrayBuffer (the binding ignores byteOffset). */
export function exactSearch(usearch: UsearchBinding, dataset: Vectors, queries: Vectors, dimensions: number, count: number, threads: number): UsearchResult {
  if (dataset.byteOffset !== 0 || queries.byteOffset !== 0) throw new Error('usearch exactSearch: arrays must start at offset 0 of their buffer');
  return usearch.exactSearch(dataset, queries, dimensions, count, 'ip', threads);
}

/**
 * usearch's HNSW index, taken from its native binding below the JavaScript wrapper. The wrapper turns
 * every Int8Array into a Float32Array, which the native side then re-quantizes to i8 itself
 * (x · 127 / ‖x‖: ~4 of the 8 bits for a unit vector of 768 dimensions, whose coordinates are
 * ~0.04); the native `add` and `search` take Int8Array codes as they are, and Float32Array as the
 * wrapper passes it. ragtrail's int8 graphs hold its own per-dimension codes (quantize.ts), so every
 * graph is built and searched here, one path for all. Same constructor arguments as the wrapper's
 * Index; search returns [keys, distances, counts] with k slots per query.
 */
export interface UsearchGraph {
  add(keys: BigUint64Array, vectors: Int8Array | Float32Array, threads: number): void;
  search(vectors: Int8Array | Float32Array, k: number, threads: number): [BigUint64Array, Float32Array, BigUint64Array];
  save(path: string): void;
  view(path: string): void;
  size(): number;
}
export type UsearchGraphCtor = new (
  dimensions: number,
  metric: 'ip' | 'hamming',
  quantization: 'f32' | 'i8' | 'b1',
  connectivity: number,
  expansionAdd: number,
  expansionSearch: number,
  multi: boolean,
) => UsearchGraph;

const LOW_WORD = endianness() === 'LE' ? 0 : 1;

/**
 * usearch's result keys as row numbers, −1 for a padded slot. Read from the keys' 32-bit words, not as
 * one BigInt per key (that conversion was ~11% of an HNSW search at ef 64): ragtrail's keys are rows
 * below 2^32, so a real key has a zero high word and usearch's padding key (2^64 − 1) does not.
 */
export function keyRows(keys: BigUint64Array): Float64Array {
  const words = new Uint32Array(keys.buffer, keys.byteOffset, keys.length * 2);
  const rows = new Float64Array(keys.length);
  for (let i = 0; i < keys.length; i++) rows[i] = words[2 * i + 1 - LOW_WORD] === 0 ? words[2 * i + LOW_WORD]! : -1;
  return rows;
}
