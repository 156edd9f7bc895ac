/**
 * Querying dense vectors. Vectors are unit length, so the score is cosine similarity.
 *  flat  — every stored code is scored: float32 (exact), int8 or binary codes held in memory as
 *          chunks; quantized scores pick a shortlist that is re-scored exactly with the float32
 *          rows read from disk. Float32 scores are one matrix product per chunk in ONNX Runtime
 *          (onnx.ts: BLAS-speed GEMM) when the optional package `onnxruntime-node` is installed;
 *          otherwise, and for int8 codes, dot products run in usearch's native SIMD `exactSearch`
 *          (batched, multi-threaded) when that optional package is installed, else in plain JavaScript.
 *  hnsw  — approximate search through the usearch HNSW graph, memory-mapped with `view` (its
 *          vectors are paged in by the OS, not held in the heap), batched, with a search width;
 *          int8 graphs hold the per-dimension int8 codes and take int8 query codes (build.ts says
 *          why); quantized graphs are re-scored from float32 the same way.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../../core/errors.js';
import { TopK } from '../topk.js';
import type { ScoredDoc } from '../types.js';
import { DENSE_FORMAT_VERSION, type DenseMeta } from './build.js';
import { codeBytes, hammingScan, int8Query, type Quantization, uniformInt8Query } from './quantize.js';
import { loadOnnxRuntime, OnnxFlatKernel } from './onnx.js';
import { scoreRows } from './rescore.js';
import { exactSearch, keyRows, loadUsearch, type UsearchBinding, type UsearchGraph } from './usearch.js';
import { type Chunk, RowFile } from './vectors.js';

/** Flat (every stored code scored), HNSW graph search, or auto (HNSW when the index has a graph). */
export type DenseSearchMode = 'auto' | 'flat' | 'hnsw';

/** Settings for opening a dense index. */
export interface DenseOpenOptions {
  /** auto uses HNSW when the index has one. */
  mode?: DenseSearchMode;
  /** Shortlist re-scored with float32, as a multiple of k (default 2 for int8, 40 for binary). */
  rescore?: number;
  /** HNSW search width (usearch expansion_search, faiss efSearch); default max(64, shortlist). */
  expansion?: number;
  /**
   * Hold the float32 rows that re-score a quantized shortlist in memory (N × dim × 4 bytes, as faiss's
   * IndexHNSWFlat holds them) instead of reading each from disk per query. Default false: int8 and
   * binary indexes exist to serve collections whose float32 vectors do not fit in RAM.
   */
  floatsInMemory?: boolean;
  /** Threads for usearch and ONNX Runtime (0: all cores, their default). */
  threads?: number;
  /** Flat scoring: a GEMM in ONNX Runtime (float32 only; the default when installed), usearch's SIMD
   * dot products (the default for int8, and for float32 without onnxruntime-node), or plain JavaScript. */
  kernel?: 'onnx' | 'usearch' | 'js';
}

/**
 * int8: a 2·k shortlist found every exact top-10 passage that 4·k found (recall@10 1.000 for flat
 * search at 200k and 1M, and identical recall on HNSW graphs at 200k and 1M over nine widths), and
 * re-scoring reads each row from disk (~2.7 µs) and scores it (~2 µs): 4·k was a third of an HNSW
 * search at ef 64.
 */
const DEFAULT_RESCORE: Record<Quantization, number> = { none: 1, int8: 2, binary: 40 };

/** Dense vectors opened for search, flat or through an HNSW graph (see the module header). */
export class DenseIndex {
  private constructor(
    readonly meta: DenseMeta,
    readonly mode: 'flat' | 'hnsw',
    private readonly quantization: Quantization,
    private readonly chunks: Chunk[],
    private readonly floats: RowFile | undefined,
    private readonly params: { mid?: Float32Array; scale?: Float32Array },
    private readonly usearch: UsearchBinding | undefined,
    private readonly onnx: OnnxFlatKernel | undefined,
    private readonly hnsw: UsearchGraph | undefined,
    private readonly opts: DenseOpenOptions,
  ) {}

  /** A batch's per-query shortlist rows (rescore), kept between calls. */
  private rowScratch = new Float32Array(0);

  /** Opens the index in `dir`: loads the codes searched in memory (flat) or maps the graph (hnsw). */
  static async open(dir: string, modeOrOpts: DenseSearchMode | DenseOpenOptions = 'auto'): Promise<DenseIndex> {
    const opts = typeof modeOrOpts === 'string' ? { mode: modeOrOpts } : modeOrOpts;
    let meta: DenseMeta;
    try {
      meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as DenseMeta;
    } catch {
      throw new InputError(`${dir}: not a dense index (no readable meta.json)`, 'build one with `ragtrail index build --dense`');
    }
    if (meta.format !== 'ragtrail-dense' || meta.version !== DENSE_FORMAT_VERSION) {
      throw new InputError(`${dir}: dense index format ${meta.format} v${meta.version} is not supported`, 'rebuild the index');
    }
    const mode = opts.mode ?? 'auto';
    const quantization = meta.quantization ?? 'none';
    const useHnsw = mode === 'hnsw' || (mode === 'auto' && meta.hnsw !== undefined);
    const floats = quantization !== 'none' || !useHnsw ? new RowFile(join(dir, 'vectors.f32'), 4 * meta.dim, meta.n) : undefined;
    if (opts.floatsInMemory && quantization !== 'none') floats!.hold();
    const quant = existsSync(join(dir, 'quant.json')) ? (JSON.parse(readFileSync(join(dir, 'quant.json'), 'utf8')) as { mid?: number[]; scale?: number[] }) : {};
    const params = { mid: quant.mid && Float32Array.from(quant.mid), scale: quant.scale && Float32Array.from(quant.scale) };
    if (useHnsw) {
      if (!meta.hnsw) throw new InputError(`${dir}: this dense index has no HNSW graph`, 'rebuild with --hnsw, or search with the flat mode');
      const shortlist = (opts.rescore ?? DEFAULT_RESCORE[quantization]) * 10; // the width is fixed at open: sized for k = 10
      const q = meta.hnsw.quantization ?? 'f32';
      const usearch = await loadUsearch('HNSW search');
      const graph = new usearch.CompiledIndex(meta.dim, q === 'b1' ? 'hamming' : 'ip', q, meta.hnsw.connectivity, meta.hnsw.expansionAdd ?? 0, opts.expansion ?? Math.max(64, shortlist), false);
      graph.view(join(dir, meta.hnsw.file));
      // The graph needs usearch anyway: it also scores the re-scoring shortlist (rescore.ts), unless told to use JavaScript.
      return new DenseIndex(meta, 'hnsw', quantization, [], floats, params, opts.kernel === 'js' ? undefined : usearch, undefined, graph, opts);
    }
    if (opts.kernel === 'onnx' && quantization !== 'none') {
      throw new InputError(`the onnx kernel scores float32 vectors; this index holds ${quantization} codes`, 'leave the kernel at its default (usearch) for quantized indexes');
    }
    const wantOnnx = quantization === 'none' && (opts.kernel === 'onnx' || (opts.kernel === undefined && (await loadOnnxRuntime()) !== undefined));
    const onnx = wantOnnx ? await OnnxFlatKernel.create(meta.dim, opts.threads ?? 0) : undefined;
    // usearch scores int8 and float32 codes (binary codes are scanned in JavaScript) and any re-scoring shortlist.
    const usearch = onnx || opts.kernel === 'js' ? undefined : await loadUsearch().catch(() => undefined);
    const codes = quantization === 'none' ? floats! : new RowFile(join(dir, meta.codes!.file), codeBytes(quantization, meta.dim), meta.n);
    const chunks = codes.loadChunks();
    if (codes !== floats) codes.close();
    return new DenseIndex(meta, 'flat', quantization, chunks, floats, params, usearch, onnx, undefined, opts);
  }

  get size(): number {
    return this.meta.n;
  }

  get quantizationName(): Quantization {
    return this.quantization;
  }

  /** The kernel that scores a flat search (undefined for HNSW). */
  get kernel(): 'onnx' | 'usearch' | 'js' | undefined {
    if (this.mode === 'hnsw') return undefined;
    return this.onnx ? 'onnx' : this.usearch && this.quantization !== 'binary' ? 'usearch' : 'js';
  }

  /** The top k documents for one query vector, best first. */
  async search(query: Float32Array, k: number): Promise<ScoredDoc[]> {
    return (await this.searchBatch([query], k))[0]!;
  }

  /** Top k per query, best first, scores exact (float32) for every mode. */
  async searchBatch(queries: readonly Float32Array[], k: number): Promise<ScoredDoc[][]> {
    const dim = this.meta.dim;
    for (const q of queries) {
      if (q.length !== dim) throw new InputError(`query vector has size ${q.length}, the index holds size ${dim}`, 'use the embedder the index was built with');
    }
    if (queries.length === 0) return [];
    k = Math.min(k, this.meta.n);
    const exact = this.quantization === 'none';
    const shortlist = exact ? k : Math.min(this.meta.n, k * (this.opts.rescore ?? DEFAULT_RESCORE[this.quantization]));
    if (this.onnx) return this.scanOnnx(queries, shortlist);
    const candidates = this.hnsw ? this.searchHnsw(queries, shortlist) : this.scanFlat(queries, shortlist);
    return exact ? candidates : this.rescore(queries, candidates, k);
  }

  /**
   * The graph's best n per query. A graph of uniform int8 codes takes each query as its uniform code
   * and scores t·scale·dot; one of per-dimension codes (built before) takes the per-dimension query
   * code and scores t·dot + offset as the flat scan does (quantize.ts); the others take the float32
   * query (binary graphs rank by Hamming distance, the oldest i8 graphs by usearch's own cast).
   */
  private searchHnsw(queries: readonly Float32Array[], n: number): ScoredDoc[][] {
    const kind = this.meta.hnsw!.vectors;
    const { encoded, batch } = this.encodeQueries(queries, kind === 'int8-uniform' ? 'uniform' : kind === 'int8-codes' ? 'int8' : 'float');
    const [keys, distances, counts] = this.hnsw!.search(batch, n, this.opts.threads ?? 0);
    const rows = keyRows(keys);
    const binary = this.quantization === 'binary';
    return encoded.map(({ factor, offset }, qi) => {
      const out: ScoredDoc[] = [];
      for (let i = qi * n, end = qi * n + Number(counts[qi]); i < end; i++) {
        if (rows[i]! >= 0) out.push({ doc: rows[i]!, score: binary ? -distances[i]! : (1 - distances[i]!) * factor + offset });
      }
      return out;
    });
  }

  /** Exact float32 flat search in ONNX Runtime: per chunk, one GEMM of the whole batch and its top n. */
  private async scanOnnx(queries: readonly Float32Array[], n: number): Promise<ScoredDoc[][]> {
    const dim = this.meta.dim;
    const batch = new Float32Array(queries.length * dim);
    queries.forEach((q, i) => batch.set(q, i * dim));
    const tops = queries.map(() => new TopK(n));
    for (const c of this.chunks) {
      const rows = new Float32Array(c.bytes.buffer, c.bytes.byteOffset, c.rows * dim);
      const best = await this.onnx!.topK(batch, queries.length, rows, n);
      for (let qi = 0; qi < queries.length; qi++) {
        const top = tops[qi]!;
        for (let j = qi * best.k; j < (qi + 1) * best.k; j++) {
          const s = best.scores[j]!;
          if (s > top.threshold) top.push(c.start + Number(best.rows[j]!), s);
        }
      }
    }
    return tops.map((t) => t.sorted());
  }

  /** Scores every code of every chunk; keeps the best `n` per query (approximate for quantized codes). */
  private scanFlat(queries: readonly Float32Array[], n: number): ScoredDoc[][] {
    const dim = this.meta.dim;
    const nq = queries.length;
    const tops = queries.map(() => new TopK(n));
    if (this.quantization === 'binary') {
      const words = codeBytes('binary', dim) / 4;
      const qcodes = queries.map((q) => {
        const c = new Uint32Array(words);
        for (let j = 0; j < dim; j++) if (q[j]! > 0) c[j >> 5]! |= 1 << (j & 31);
        return c;
      });
      for (const c of this.chunks) {
        const codes = new Uint32Array(c.bytes.buffer, c.bytes.byteOffset, c.rows * words);
        hammingScan(codes, c.rows, words, qcodes, (qi, row, d) => {
          const top = tops[qi]!;
          if (-d > top.threshold) top.push(c.start + row, -d);
        });
      }
      return tops.map((t) => t.sorted());
    }
    // float32 or int8: one dot product per (query, row); int8 scores are t·dot + offset (quantize.ts).
    const int8 = this.quantization === 'int8';
    const { encoded, batch } = this.encodeQueries(queries, int8 ? 'int8' : 'float');
    const usearch = this.usearch;
    for (const c of this.chunks) {
      const data = int8 ? new Int8Array(c.bytes.buffer, c.bytes.byteOffset, c.rows * dim) : new Float32Array(c.bytes.buffer, c.bytes.byteOffset, c.rows * dim);
      if (usearch) {
        const m = Math.min(n, c.rows);
        const [keys, distances] = exactSearch(usearch, data, batch, dim, m, this.opts.threads ?? 0);
        const rows = keyRows(keys);
        for (let qi = 0; qi < nq; qi++) {
          const top = tops[qi]!;
          const { factor: f, offset: o } = encoded[qi]!;
          for (let i = qi * m; i < (qi + 1) * m; i++) {
            const s = (1 - distances[i]!) * f + o;
            if (rows[i]! >= 0 && s > top.threshold) top.push(c.start + rows[i]!, s);
          }
        }
        continue;
      }
      for (let qi = 0; qi < nq; qi++) {
        const { code: q, factor: f, offset: o } = encoded[qi]!;
        const top = tops[qi]!;
        for (let r = 0, off = 0; r < c.rows; r++, off += dim) {
          let s = 0;
          for (let j = 0; j < dim; j++) s += data[off + j]! * q[j]!;
          s = s * f + o;
          if (s > top.threshold) top.push(c.start + r, s);
        }
      }
    }
    return tops.map((t) => t.sorted());
  }

  /**
   * Each query as the scorers take it, and all of them in one array for usearch, with the factor and
   * offset that turn their dot products into scores (quantize.ts): per-dimension int8 codes (codes.i8),
   * uniform int8 codes (the graph's), or the float32 query itself (factor 1, offset 0).
   */
  private encodeQueries(queries: readonly Float32Array[], as: 'int8' | 'uniform' | 'float'): { encoded: { code: Int8Array | Float32Array; factor: number; offset: number }[]; batch: Int8Array | Float32Array } {
    const dim = this.meta.dim;
    if (as === 'int8') {
      const batch = new Int8Array(queries.length * dim);
      const encoded = queries.map((q, i) => int8Query(q, this.params.mid!, this.params.scale!, batch.subarray(i * dim, (i + 1) * dim)));
      return { encoded, batch };
    }
    if (as === 'uniform') {
      const batch = new Int8Array(queries.length * dim);
      const s = this.meta.hnsw!.scale!;
      const encoded = queries.map((q, i) => {
        const { code, factor } = uniformInt8Query(q, batch.subarray(i * dim, (i + 1) * dim));
        return { code, factor: factor * s, offset: 0 };
      });
      return { encoded, batch };
    }
    const batch = new Float32Array(queries.length * dim);
    queries.forEach((q, i) => batch.set(q, i * dim));
    return { encoded: queries.map((q) => ({ code: q, factor: 1, offset: 0 })), batch };
  }

  /**
   * Exact float32 scores for each query's shortlist, rows read from disk (or copied from memory,
   * floatsInMemory) into one block; the best k. One query scores the block as it is; a batch copies
   * each query's rows out of it, so that every query scores its own shortlist and nothing else.
   */
  private rescore(queries: readonly Float32Array[], candidates: ScoredDoc[][], k: number): ScoredDoc[][] {
    const dim = this.meta.dim;
    const block = this.floats!.gatherF32(candidates.flatMap((l) => l.map((c) => c.doc)), dim);
    const most = Math.max(...candidates.map((l) => l.length));
    const scores = new Float64Array(most);
    if (queries.length === 1 && block.ids.length === candidates[0]!.length) {
      scoreRows(this.usearch, queries[0]!, block.rows, block.ids.length, dim, scores);
      const top = new TopK(k);
      for (let i = 0; i < block.ids.length; i++) top.push(block.ids[i]!, scores[i]!);
      return [top.sorted()];
    }
    const at = new Map<number, number>();
    block.ids.forEach((id, i) => at.set(id, i));
    if (this.rowScratch.length < most * dim) this.rowScratch = new Float32Array(most * dim);
    const own = this.rowScratch;
    return queries.map((q, qi) => {
      const list = candidates[qi]!;
      list.forEach(({ doc }, r) => {
        const i = at.get(doc)!;
        own.set(block.rows.subarray(i * dim, (i + 1) * dim), r * dim);
      });
      scoreRows(this.usearch, q, own, list.length, dim, scores);
      const top = new TopK(k);
      list.forEach(({ doc }, r) => top.push(doc, scores[r]!));
      return top.sorted();
    });
  }

  /** Bytes this index holds in memory (codes or float32 chunks, float32 rows held for re-scoring; the HNSW file is mapped instead). */
  memoryBytes(): number {
    return this.chunks.reduce((s, c) => s + c.bytes.byteLength, 0) + (this.floats?.heldBytes ?? 0);
  }

  /** Releases the float32 rows file and the ONNX session. */
  close(): void {
    this.floats?.close();
    void this.onnx?.close();
  }
}

/** RAM flat search over a dense index needs: its codes (or float32 vectors), N × bytes per vector. */
export function denseFootprint(meta: DenseMeta): { bytesPerVector: number; ramBytes: number; where: string } {
  const q = meta.quantization ?? 'none';
  const bytesPerVector = codeBytes(q, meta.dim);
  return { bytesPerVector, ramBytes: bytesPerVector * meta.n, where: q === 'none' ? 'float32 vectors in memory' : `${q} codes in memory, float32 re-scoring from disk` };
}
