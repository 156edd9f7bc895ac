/**
 * Builds the dense side of an index:
 *   vectors.f32    every passage embedded (title + text, with the passage prefix), row-major float32,
 *                  N × dim: the exact vectors, read from disk to re-score shortlists;
 *   codes.i8 / codes.b1 + quant.json   the compressed codes searched in memory (see quantize.ts);
 *   hnsw.usearch   optionally an HNSW graph (usearch) over f32, i8 or b1 vectors.
 * Embedding is the slow part (days with a remote model on Wikipedia), so it keeps several batches in
 * flight (the server stays busy while a reply is parsed and written) and is resumable: vectors go to
 * `vectors.f32.partial` in passage order, and a re-run with the same embedder continues after the
 * last complete vector, also after `kill -9`. Codes and the graph are rebuilt from vectors.f32
 * without embedding again when only --quantize or --hnsw change.
 */
import { closeSync, existsSync, fstatSync, ftruncateSync, openSync, readFileSync, renameSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { writeAllSync } from '../../core/disk.js';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { InputError } from '../../core/errors.js';
import { Progress } from '../../core/progress.js';
import type { Passage } from '../../core/types.js';
import type { Embedder, Prefixes } from '../embedders/embedder.js';
import { codeBytes, dimStats, encodeBinary, encodeInt8, encodeUniformInt8, int8Params, type Quantization, uniformScale } from './quantize.js';
import { exactSearch, keyRows, loadUsearch, type UsearchBinding } from './usearch.js';
import { RowFile } from './vectors.js';

export const DENSE_FORMAT_VERSION = 1;

/** The manifest of a dense index: embedder, vector size and count, quantization, and the HNSW graph if any. */
export interface DenseMeta {
  format: 'ragtrail-dense';
  version: number;
  embedder: string;
  lexical: boolean;
  prefixes: Prefixes;
  dim: number;
  n: number;
  /** Codes searched in memory; absent (older indexes) means none: float32 in memory. */
  quantization?: Quantization;
  codes?: { file: string; bytesPerVector: number };
  /**
   * HNSW graph file, when built; `quantization` is usearch's scalar kind (absent: f32). The vectors an
   * i8 graph holds: `int8-uniform`, codes of one scale `scale` for every dimension (quantize.ts), searched
   * with uniform query codes; `int8-codes` (graphs built before 2026-11-26), the per-dimension codes of
   * codes.i8, searched with per-dimension query codes; absent, usearch's own cast of the float32 vectors
   * (graphs built before those). All three still open and search; a build rebuilds the older two.
   */
  hnsw?: { file: string; connectivity: number; quantization?: 'f32' | 'i8' | 'b1'; expansionAdd?: number; vectors?: 'int8-uniform' | 'int8-codes'; scale?: number; order?: HnswOrder };
}

/** The orders rows can be added to an HNSW graph in (`--hnsw-order`); clustered is the default. */
export const HNSW_ORDERS = ['clustered', 'natural'] as const;
/** The order rows are added to an HNSW graph (see insertionOrder); absent in meta.json: natural. */
export type HnswOrder = (typeof HNSW_ORDERS)[number];

/** Settings of a dense index build. */
export interface DenseBuildOptions {
  prefixes?: Prefixes;
  /** Passages per embedding call (default 256). */
  batchSize?: number;
  /** Embedding calls in flight at once (default 1). */
  concurrency?: number;
  /** Codes held in memory for search (default none: float32). */
  quantize?: Quantization;
  /** Also build an HNSW graph with usearch, over the same quantization. */
  hnsw?: boolean;
  connectivity?: number;
  /** HNSW construction width (usearch expansion_add, faiss efConstruction; default 40 as faiss). */
  expansionAdd?: number;
  /** Order the rows are added to the HNSW graph in (default clustered; see insertionOrder). */
  hnswOrder?: HnswOrder;
  /**
   * Threads building the HNSW graph: usearch adds the rows of each call concurrently, and the clustered
   * order's assignment runs on as many (default 0: every core this process may run on,
   * os.availableParallelism()). One thread builds the same graph file byte for byte on every run. With
   * more, which row joins first and which level a row draws depend on the threads' timing, so each run
   * builds another graph of the same parameters (every row held, recall as the one-thread graph's in
   * the tests; not byte-identical): use 1 where the file must be reproducible.
   */
  threads?: number;
  quiet?: boolean;
}

export function passageText(p: Passage): string {
  return p.title ? `${p.title}\n${p.text}` : p.text;
}

/** True when `meta` already has the codes and graph these options ask for. */
export function denseMatches(meta: DenseMeta, opts: DenseBuildOptions): boolean {
  const q = opts.quantize ?? 'none';
  const graphOk =
    !meta.hnsw ||
    (meta.hnsw.connectivity === (opts.connectivity ?? 16) &&
      (meta.hnsw.expansionAdd ?? 40) === (opts.expansionAdd ?? 40) &&
      (meta.hnsw.order ?? 'natural') === graphOrder(meta.hnsw.quantization ?? 'f32', opts.hnswOrder) &&
      (q !== 'int8' || meta.hnsw.vectors === 'int8-uniform'));
  return (meta.quantization ?? 'none') === q && (meta.hnsw !== undefined) === (opts.hnsw ?? false) && graphOk;
}

export async function buildDense(
  dir: string,
  passages: (from: number) => AsyncIterable<Passage>,
  total: number,
  embedder: Embedder,
  opts: DenseBuildOptions = {},
): Promise<DenseMeta> {
  const prefixes = opts.prefixes ?? {};
  const progressFile = join(dir, 'progress.json');
  const vectorsFile = join(dir, 'vectors.f32');
  let dim: number | undefined;
  const prev = existsSync(progressFile) ? (JSON.parse(readFileSync(progressFile, 'utf8')) as { embedder: string; prefixes: Prefixes; dim: number; complete?: boolean }) : undefined;
  const same = prev !== undefined && prev.embedder === embedder.spec && JSON.stringify(prev.prefixes) === JSON.stringify(prefixes);
  if (same && prev.complete && existsSync(vectorsFile) && statSync(vectorsFile).size === total * 4 * prev.dim) {
    dim = prev.dim; // embedded already: only codes and graph are (re)built
  } else {
    dim = await embedAll(dir, passages, total, embedder, prefixes, same ? prev : undefined, opts);
    renameSync(join(dir, 'vectors.f32.partial'), vectorsFile);
    writeFileSync(progressFile, JSON.stringify({ embedder: embedder.spec, prefixes, dim, complete: true }));
  }
  return indexVectors(dir, { embedder: embedder.spec, lexical: embedder.lexical, prefixes, dim, n: total }, opts);
}

/**
 * Builds codes and graph over an existing `dir/vectors.f32` and writes meta.json (also how the
 * benchmark indexes vectors it generated itself).
 */
export async function indexVectors(dir: string, base: Pick<DenseMeta, 'embedder' | 'lexical' | 'prefixes' | 'dim' | 'n'>, opts: DenseBuildOptions = {}): Promise<DenseMeta> {
  const meta: DenseMeta = { format: 'ragtrail-dense', version: DENSE_FORMAT_VERSION, ...base };
  await buildSearchStructures(dir, meta, opts);
  writeFileSync(join(dir, 'meta.json'), JSON.stringify(meta, null, 2) + '\n');
  return meta;
}

/** Embeds passages into vectors.f32.partial, `concurrency` calls in flight, written in passage order. */
async function embedAll(
  dir: string,
  passages: (from: number) => AsyncIterable<Passage>,
  total: number,
  embedder: Embedder,
  prefixes: Prefixes,
  resume: { dim: number } | undefined,
  opts: DenseBuildOptions,
): Promise<number> {
  const partial = join(dir, 'vectors.f32.partial');
  const progressFile = join(dir, 'progress.json');
  const batchSize = opts.batchSize ?? 256;
  const concurrency = opts.concurrency ?? 1;
  let done = 0;
  let dim = embedder.dim;
  if (resume && existsSync(partial)) {
    // Keep every complete vector already written (a kill can leave half a vector at the end).
    dim = resume.dim;
    done = Math.min(total, Math.floor(statSync(partial).size / (4 * dim)));
    truncateSync(partial, done * 4 * dim);
  } else {
    writeFileSync(partial, new Uint8Array(0));
  }
  const saveProgress = () => writeFileSync(progressFile, JSON.stringify({ embedder: embedder.spec, prefixes, dim }));
  if (dim !== undefined) saveProgress();
  const fd = openSync(partial, 'a');
  const progress = new Progress('embedding', { unit: 'passages', total, quiet: opts.quiet });
  if (done > 0) progress.tick(done);
  // In-flight calls in passage order; the oldest is written first, so the file is always a prefix.
  const inflight: Promise<Float32Array[]>[] = [];
  const write = (vectors: Float32Array[]) => {
    if (dim === undefined) {
      dim = vectors[0]!.length;
      saveProgress();
    }
    const buf = new Float32Array(vectors.length * dim);
    vectors.forEach((v, i) => {
      if (v.length !== dim) throw new InputError(`embedder ${embedder.spec} returned a vector of size ${v.length}, expected ${dim}`);
      buf.set(v, i * dim!);
    });
    const end = fstatSync(fd).size;
    try {
      writeAllSync(fd, new Uint8Array(buf.buffer));
    } catch (e) {
      ftruncateSync(fd, end); // no part of a vector is left (a full disk writes what fits, then fails)
      throw e;
    }
    progress.tick(vectors.length);
  };
  const send = (texts: string[]) => {
    const call = embedder.embed(texts, 'passage').then((vectors) => {
      if (vectors.length !== texts.length) throw new InputError(`embedder ${embedder.spec} returned ${vectors.length} vectors for ${texts.length} passages`);
      return vectors;
    });
    call.catch(() => {}); // awaited in order below; this only keeps a later call's failure from going unhandled meanwhile
    inflight.push(call);
  };
  try {
    let batch: string[] = [];
    for await (const p of passages(done)) {
      batch.push((prefixes.passage ?? '') + passageText(p));
      if (batch.length >= batchSize) {
        send(batch);
        batch = [];
        if (inflight.length >= concurrency) write(await inflight.shift()!);
      }
    }
    if (batch.length > 0) send(batch);
    while (inflight.length > 0) write(await inflight.shift()!);
  } finally {
    closeSync(fd);
  }
  progress.finish();
  if (dim === undefined) throw new InputError('no passages to embed', 'the corpus is empty');
  return dim;
}

/** Writes the codes (and quant.json) and the HNSW graph that `opts` ask for, from vectors.f32. */
async function buildSearchStructures(dir: string, meta: DenseMeta, opts: DenseBuildOptions): Promise<void> {
  const q = opts.quantize ?? 'none';
  const { dim, n } = meta;
  for (const f of ['codes.i8', 'codes.b1', 'quant.json', 'hnsw.usearch']) rmSync(join(dir, f), { force: true });
  meta.quantization = q;
  const file = new RowFile(join(dir, 'vectors.f32'), 4 * dim, n);
  try {
    const stats = q === 'none' ? undefined : dimStats(file, dim);
    let centre: Float32Array | undefined;
    if (stats && q === 'int8') {
      const { mid, scale } = int8Params(stats);
      writeFileSync(join(dir, 'quant.json'), JSON.stringify({ quantization: q, mid: [...mid], scale: [...scale] }));
      writeCodes(dir, 'codes.i8', file, dim, (v, rows) => {
        const out = new Int8Array(rows * dim);
        encodeInt8(v, rows, mid, scale, out);
        return new Uint8Array(out.buffer);
      });
    } else if (stats && q === 'binary') {
      centre = Float32Array.from(stats.mean);
      writeFileSync(join(dir, 'quant.json'), JSON.stringify({ quantization: q, mean: stats.mean }));
      const words = codeBytes('binary', dim) / 4;
      writeCodes(dir, 'codes.b1', file, dim, (v, rows) => {
        const out = new Uint32Array(rows * words);
        encodeBinary(v, rows, dim, centre, out);
        return new Uint8Array(out.buffer);
      });
    }
    if (q !== 'none') meta.codes = { file: q === 'int8' ? 'codes.i8' : 'codes.b1', bytesPerVector: codeBytes(q, dim) };
    if (opts.hnsw) {
      const connectivity = opts.connectivity ?? 16;
      const expansionAdd = opts.expansionAdd ?? 40;
      const quantization = q === 'int8' ? 'i8' : q === 'binary' ? 'b1' : 'f32';
      // int8 graphs get uniform codes of the float32 vectors (not codes.i8's: see quantize.ts).
      const scale = stats && q === 'int8' ? uniformScale(stats) : undefined;
      const order = graphOrder(quantization, opts.hnswOrder);
      await buildHnsw(dir, file, dim, { connectivity, expansionAdd, quantization, centre, uniformScale: scale, order, threads: buildThreads(opts.threads) }, opts.quiet);
      meta.hnsw = { file: 'hnsw.usearch', connectivity, quantization, expansionAdd, order, ...(scale !== undefined ? { vectors: 'int8-uniform' as const, scale } : {}) };
    }
  } finally {
    file.close();
  }
}

/**
 * The threads a graph is built on: `threads`, or for 0 / absent the cores this process may use. usearch
 * reads 0 as std::thread::hardware_concurrency(), every core of the machine even under `taskset` or a
 * container's CPU limit, where the extra threads would only take turns.
 */
function buildThreads(threads: number | undefined): number {
  return threads !== undefined && threads > 0 ? threads : availableParallelism();
}

function writeCodes(dir: string, name: string, file: RowFile, dim: number, encode: (v: Float32Array, rows: number) => Uint8Array): void {
  const partial = join(dir, `${name}.partial`);
  const fd = openSync(partial, 'w');
  try {
    for (const { rows, bytes } of file.windows()) writeAllSync(fd, encode(new Float32Array(bytes.buffer, bytes.byteOffset, rows * dim), rows));
  } catch (e) {
    closeSync(fd);
    rmSync(partial, { force: true });
    throw e;
  }
  closeSync(fd);
  renameSync(partial, join(dir, name));
}

/** Binary graphs (Hamming) keep the natural order: the clustering below scores by inner product. */
function graphOrder(quantization: 'f32' | 'i8' | 'b1', wanted: HnswOrder | undefined): HnswOrder {
  return quantization === 'b1' ? 'natural' : (wanted ?? 'clustered');
}

/** One in BACKBONE_EVERY rows is added first, in file order (insertionOrder says why). */
const BACKBONE_EVERY = 10;
/** Clusters for the clustered order: one per ROWS_PER_CLUSTER rows, at most MAX_CLUSTERS (the assignment costs N·C·dim). */
const ROWS_PER_CLUSTER = 256;
const MAX_CLUSTERS = 1024;

/**
 * The order in which rows join the graph. usearch lays nodes out in memory in the order they are
 * added, and a search reads a node's links and vector at every hop, so at 1M × 768 (a graph of
 * ~0.9 GiB, past the caches) its speed is the memory's. Rows added cluster by cluster put a node's
 * neighbours near it in memory (graph reordering, Coleman et al., NeurIPS 2022): at 1M one-query
 * search ran 1.47–1.55× as many queries/s at the same width, and the graph built ~1.3× faster. Added
 * cluster by cluster alone, the graph lost its long links (recall@10 0.930 against 0.959 at ef 768),
 * so one row in ten goes in first in file order, as a backbone spread over every cluster (then 0.956,
 * and 0.946 against 0.940 at ef 512). Clusters: C rows spread evenly through the file as centres,
 * each row assigned to its best centre by usearch's SIMD exact search: one assignment step, no k-means.
 */
function insertionOrder(
  source: RowFile,
  dim: number,
  encode: (v: Float32Array, rows: number) => Int8Array | Float32Array,
  usearch: UsearchBinding,
  threads: number,
  quiet?: boolean,
): Uint32Array {
  const n = source.rows;
  const clusters = Math.max(1, Math.min(MAX_CLUSTERS, Math.floor(n / ROWS_PER_CLUSTER)));
  const centreRows = new Float32Array(clusters * dim);
  const row = new Uint8Array(4 * dim);
  for (let c = 0; c < clusters; c++) centreRows.set(new Float32Array(source.read(Math.floor((c * n) / clusters), 1, row).buffer, 0, dim), c * dim);
  const centres = encode(centreRows, clusters);
  const cluster = new Uint32Array(n);
  const count = new Uint32Array(clusters + 1);
  // ~80 s per million rows of 768 on one core: long enough at 21M to show.
  const progress = new Progress('HNSW order', { unit: 'vectors', total: n, quiet });
  for (const { start, rows, bytes } of source.windows()) {
    const codes = encode(new Float32Array(bytes.buffer, bytes.byteOffset, rows * dim), rows);
    const best = keyRows(exactSearch(usearch, centres, codes, dim, 1, threads)[0]);
    for (let i = 0; i < rows; i++) {
      const key = (start + i) % BACKBONE_EVERY === 0 ? 0 : best[i]! + 1; // 0: the backbone
      cluster[start + i] = key;
      count[key]!++;
    }
    progress.tick(rows);
  }
  progress.finish();
  // A stable counting sort: the backbone (key 0) first, then cluster by cluster, rows in file order within each.
  const at = new Uint32Array(clusters + 1);
  for (let c = 1; c <= clusters; c++) at[c] = at[c - 1]! + count[c - 1]!;
  const order = new Uint32Array(n);
  for (let r = 0; r < n; r++) order[at[cluster[r]!]!++] = r;
  return order;
}

/**
 * Adds the float32 rows of `source` to a usearch HNSW graph window by window and saves it. int8
 * graphs get ragtrail's uniform codes (quantize.ts), passed as they are through usearch's native
 * binding (usearch.ts): usearch's own cast of float32 input to i8 (x · 127 / ‖x‖, one scale per
 * vector) keeps ~4 bits of a 768-dim unit vector, and at 200k × 768 its graph's top 10 reached
 * recall 0.82 at ef 512 where codes of a file-wide scale reach 0.94. The graph's metric is the
 * codes' inner product, proportional to the vectors' up to rounding, for the links chosen between
 * stored vectors and for the query's. f32 and b1 graphs let usearch convert float32 itself (to b1 by
 * sign, so binary vectors are centred first, as their codes are).
 */
async function buildHnsw(
  dir: string,
  source: RowFile,
  dim: number,
  o: { connectivity: number; expansionAdd: number; quantization: 'f32' | 'i8' | 'b1'; centre?: Float32Array; uniformScale?: number; order: HnswOrder; threads: number },
  quiet?: boolean,
): Promise<void> {
  const usearch = await loadUsearch('an HNSW graph');
  const index = new usearch.CompiledIndex(dim, o.quantization === 'b1' ? 'hamming' : 'ip', o.quantization, o.connectivity, o.expansionAdd, 0, false);
  // The vectors the graph holds, in a fresh array (usearch's exact search reads from the buffer's start).
  const encode = (v: Float32Array, rows: number): Int8Array | Float32Array => {
    if (o.quantization === 'i8') {
      const codes = new Int8Array(rows * dim);
      encodeUniformInt8(v, o.uniformScale!, codes);
      return codes;
    }
    const out = v.slice(0, rows * dim);
    if (o.centre) for (let i = 0; i < out.length; i++) out[i]! -= o.centre[i % dim]!;
    return out;
  };
  const order = o.order === 'clustered' ? insertionOrder(source, dim, encode, usearch, o.threads, quiet) : undefined;
  const progress = new Progress('HNSW graph', { unit: 'vectors', total: source.rows, quiet });
  // Rows per add call: as many as 64 MiB of float32 holds, for codes too. usearch's graph depends on
  // how the rows are split into calls (at 200k, four times the rows per call gave another graph and
  // recall 0.93 instead of 0.95 at ef 96), so the split stays what it was when the figures were taken.
  const perCall = Math.max(1, Math.floor((64 * 2 ** 20) / (4 * dim)));
  const buf = new Uint8Array(Math.min(perCall, Math.max(1, source.rows)) * source.rowBytes);
  for (let done = 0; done < source.rows; done += perCall) {
    const rows = Math.min(perCall, source.rows - done);
    const keys = new BigUint64Array(rows);
    if (order) {
      for (let i = 0; i < rows; i++) {
        keys[i] = BigInt(order[done + i]!);
        source.read(order[done + i]!, 1, buf.subarray(i * source.rowBytes));
      }
    } else {
      source.read(done, rows, buf);
      for (let i = 0; i < rows; i++) keys[i] = BigInt(done + i);
    }
    index.add(keys, encode(new Float32Array(buf.buffer, 0, rows * dim), rows), o.threads);
    progress.tick(rows);
  }
  progress.finish();
  const partial = join(dir, 'hnsw.usearch.partial');
  index.save(partial);
  renameSync(partial, join(dir, 'hnsw.usearch'));
}
