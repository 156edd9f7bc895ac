/**
 * Querying the on-disk BM25 index. Scoring is Lucene's BM25 (BM25Similarity since Lucene 8, which
 * dropped the constant (k1 + 1) factor):
 *
 *   score(q, d) = Σ_{t ∈ q} qtf(t) · idf(t) · tf(t,d) / (tf(t,d) + k1 · (1 − b + b · |d| / avgdl))
 *   idf(t)      = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))
 *
 * with |d| the exact analysed length (Lucene stores it lossily in one byte; scores here are exact)
 * and qtf the number of times the term occurs in the query (Anserini's bag-of-words query).
 *
 * Evaluation is document-at-a-time with MaxScore pruning (Turtle & Flood 1995), exact for the top k:
 * each term has an upper bound ub(t) = qtf·idf·max_d tf/(tf + norm(d)) (stored at build time). With
 * terms sorted by ub and θ the k-th best score so far, the terms whose bounds sum to at most θ are
 * "non-essential": a document that appears only in them cannot enter the top k. So only the
 * essential terms' postings are walked; the others are probed for each candidate with skip pointers
 * (one per SKIP_BLOCK postings), and a candidate is dropped as soon as its score plus the remaining
 * bounds cannot beat θ. Frequent, low-idf terms thus cost a few probes instead of a full scan.
 *
 * Block-max MaxScore (Chakrabarti, Chaudhuri & Ganti, "Interval-based pruning for top-k processing
 * over compressed lists", ICDE 2011; as evaluated by Mallia, Siedlaczek & Suel, "An experimental
 * study of index compression and DAAT query processing methods", ECIR 2019) tightens those bounds
 * with the maximum impact of each skip block, stored at build time (blockmax.bin). Two checks use it:
 *  - region: the essential cursors each sit in a block; up to R, the first of those blocks' ends,
 *    no document can score more than the sum of their block maxima (times qtf·idf) plus the
 *    non-essential terms' global bounds. When that is ≤ θ, every essential cursor jumps past R
 *    through the skip entries, without decoding the postings in between;
 *  - candidate: before a non-essential term is probed for a candidate, a "shallow" move over its
 *    skip entries (no postings decoded) finds the block that would hold the candidate; the term is
 *    probed only if the score so far, that block's maximum and the weaker terms' global bounds can
 *    still beat θ, else the candidate is dropped. Checking one term at a time, just before its
 *    probe, costs a shallow move only where MaxScore would have decoded a block (bounding every
 *    term up front measured slower than plain MaxScore on the synthetic 1M corpus).
 * Both are exact. Every bound carries a relative margin of 2^-20 (see boundAbove in build.ts), and a
 * document's score is summed in one fixed order (the query's terms by ascending bound) whatever was
 * pruned, so the top k — ties, broken by document number, included — is bit for bit that of scoring
 * every document (`pruning: 'none'`). Indexes built without blockmax.bin, and scoring with k1 / b
 * other than those of the build, use MaxScore alone.
 *
 * Postings are read into memory when they fit under `maxPostingsInMemory`, else read from the file
 * in windows with positioned reads (the OS page cache then plays the role of mmap), so an index of
 * any size needs only its dictionary, norms and skip tables in the heap.
 *
 * With postings in memory, block-max evaluation runs compiled to WebAssembly (assembly/block-max.ts,
 * the same steps as `blockMaxScore` below, same results to the bit; ~1.7× faster): the index arrays
 * then live in the kernel's memory, and the evaluations here read them through views.
 */
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { InputError } from '../../core/errors.js';
import { Analyzer, ENGLISH_STOP_WORDS } from '../analyzer.js';
import { rankOrder, TopK } from '../topk.js';
import type { ScoredDoc } from '../types.js';
import { BM25_FORMAT_VERSION, type Bm25Meta, type Bm25Params, lengthNorm, SKIP_BLOCK } from './build.js';
import { BLOCK_MAX_WASM, type KernelTerm, WasmBlockMax } from './wasm-kernel.js';

const NO_MORE_DOCS = 0x7fffffff;
/** log2(SKIP_BLOCK): a posting's block is its index shifted right by this. */
const SKIP_SHIFT = 31 - Math.clz32(SKIP_BLOCK);
if (1 << SKIP_SHIFT !== SKIP_BLOCK) throw new Error('SKIP_BLOCK must be a power of two');

/** Where a cursor reads a term's postings: the whole file in memory, or a file read in windows. */
type PostingsSource =
  | { kind: 'memory'; bytes: Uint8Array; termStart: number; termEnd: number }
  | { kind: 'disk'; fd: number; termStart: number; termLength: number; window: number };

/** Skip entries of a term with df postings: one per block but the last, ⌈df / SKIP_BLOCK⌉ − 1 (0 for none). */
function skipCount(df: number): number {
  return df > 0 ? ((df + SKIP_BLOCK - 1) >>> SKIP_SHIFT) - 1 : 0;
}

const SEQUENTIAL_WINDOW = 1 << 16;
/** Enough for one skip block of worst-case varints; what a probe after a skip reads from disk. */
const PROBE_WINDOW = SKIP_BLOCK * 20;
/** Longest encoded posting: two 5-byte varints… with room to spare. */
const MAX_POSTING_BYTES = 20;

/**
 * A position in one term's postings: the current document and its tf, with skip-based advance.
 * On disk, postings are read in windows: large ones while scanning, one block's worth after a skip,
 * so probing a long list for a few candidates reads a few hundred bytes per probe.
 */
class Cursor {
  doc = -1;
  tf = 0;
  /** Index of the current posting within the term (−1 before the first). */
  private index = -1;
  /** Block found by the last shallow move (never behind the current posting's block once used). */
  private blk = 0;
  private bytes: Uint8Array;
  /** Position in `bytes`. */
  private pos: number;
  /** Term-relative offset of bytes[0] (0 in memory, where `bytes` is the term's own view). */
  private origin: number;
  private valid: number;
  private readonly fd: number;
  private readonly fileStart: number;
  private readonly termLength: number;
  private readonly window: number;
  private readonly nSkips: number;

  constructor(
    source: PostingsSource,
    private readonly df: number,
    private readonly skipDocs: Uint32Array,
    private readonly skipOffs: Uint32Array,
    private readonly skipFirst: number,
    /** qtf · idf */
    readonly w: number,
    /** Upper bound of this term's contribution to any document. */
    readonly ub: number,
    /** Maximum impact of each block of every term (undefined: no block-max pruning). */
    private readonly blockMax: Float32Array | undefined,
    /** Index of this term's first block in blockMax. */
    private readonly blockFirst: number,
  ) {
    this.nSkips = skipCount(df);
    if (source.kind === 'memory') {
      // A view of this term alone keeps positions small integers: the term's offset in the file comes
      // from a Float64Array, and a position held as a float64 made decoding a posting ~2× slower.
      this.bytes = source.bytes.subarray(source.termStart, source.termEnd);
      this.fd = -1;
      this.origin = 0;
      this.pos = 0;
      this.valid = this.bytes.length;
      this.fileStart = 0;
      this.termLength = 0;
      this.window = 0;
    } else {
      this.fd = source.fd;
      this.fileStart = source.termStart;
      this.termLength = source.termLength;
      this.window = source.window;
      this.bytes = new Uint8Array(Math.min(this.window, source.termLength));
      this.origin = 0;
      this.pos = 0;
      this.valid = 0;
      this.load(0, this.bytes.length);
    }
  }

  /** Reads `size` bytes of the term from term-relative offset `rel` into the window. */
  private load(rel: number, size: number): void {
    const n = Math.min(size, this.termLength - rel);
    if (n > this.bytes.length) this.bytes = new Uint8Array(n);
    this.valid = readSync(this.fd, this.bytes, 0, n, this.fileStart + rel);
    this.origin = rel;
    this.pos = 0;
  }

  /** The next posting (documents strictly increase within a term, so walking to doc + 1 decodes one). */
  next(): void {
    this.walk(this.doc + 1);
  }

  /**
   * Decodes postings from the current position until one has doc ≥ target (or the list ends). The
   * cursor's fields are held in locals and stored back once: a probe walks up to 32 postings of a
   * block this way, about half of all the postings a query decodes. On disk, the window is refilled
   * when the next posting could run past it.
   */
  private walk(target: number): void {
    const df = this.df;
    const disk = this.fd >= 0;
    let b = this.bytes;
    let p = this.pos;
    let index = this.index;
    let doc = this.doc;
    let tf = this.tf;
    for (;;) {
      if (++index >= df) {
        doc = NO_MORE_DOCS;
        break;
      }
      if (disk && p + MAX_POSTING_BYTES > this.valid && this.origin + this.valid < this.termLength) {
        this.load(this.origin + p, this.window);
        b = this.bytes;
        p = 0;
      }
      let byte = b[p++]!;
      let gap = byte & 0x7f;
      for (let shift = 7; byte & 0x80; shift += 7) {
        byte = b[p++]!;
        gap |= (byte & 0x7f) << shift;
      }
      byte = b[p++]!;
      tf = byte & 0x7f;
      for (let shift = 7; byte & 0x80; shift += 7) {
        byte = b[p++]!;
        tf |= (byte & 0x7f) << shift;
      }
      doc = (index === 0 ? 0 : doc) + gap;
      if (doc >= target) break;
    }
    this.pos = p;
    this.index = index;
    this.doc = doc;
    this.tf = tf;
  }

  /** Block of the current posting (the last block once the list is exhausted). */
  get block(): number {
    const b = this.index >> SKIP_SHIFT;
    return b < this.nSkips ? b : this.nSkips;
  }

  /** Last document of block j; the last block's end is not stored, so it reaches to the end of the collection. */
  blockEnd(j: number): number {
    return j < this.nSkips ? this.skipDocs[this.skipFirst + j]! : NO_MORE_DOCS - 1;
  }

  /** Most this term can add to a document of block j. */
  blockBound(j: number): number {
    return this.w * this.blockMax![this.blockFirst + j]!;
  }

  /**
   * Shallow advance: the block that holds target if the term has it — the first block whose last
   * document is ≥ target — found from the skip entries alone, without decoding postings. Targets
   * must not decrease between calls.
   */
  shallow(target: number): number {
    // Skip entry j holds the last document of block j (and where block j + 1 starts).
    let j = Math.max(this.blk, this.block);
    const first = this.skipFirst;
    if (j < this.nSkips && this.skipDocs[first + j]! < target) {
      // Gallop, then binary-search, for the last block that ends before target; the answer follows it.
      let step = 1;
      while (j + step < this.nSkips && this.skipDocs[first + j + step]! < target) {
        j += step;
        step *= 2;
      }
      let lo = j;
      let hi = Math.min(j + step, this.nSkips - 1);
      while (lo < hi) {
        const mid = (lo + hi + 1) >>> 1;
        if (this.skipDocs[first + mid]! < target) lo = mid;
        else hi = mid - 1;
      }
      j = lo + 1;
    }
    this.blk = j;
    return j;
  }

  /** Moves to the first posting with doc ≥ target, jumping over whole blocks with the skip entries. */
  advance(target: number): void {
    if (this.doc >= target) return;
    const j = this.shallow(target);
    if (j > (this.index < 0 ? 0 : this.index >> SKIP_SHIFT)) {
      // Start of block j: skip entry j − 1 holds its byte offset and the document before it.
      const e = this.skipFirst + j - 1;
      const rel = this.skipOffs[e]!;
      if (this.fd < 0 || (rel >= this.origin && rel + MAX_POSTING_BYTES <= this.origin + this.valid)) this.pos = rel - this.origin;
      else this.load(rel, Math.min(PROBE_WINDOW, this.window));
      this.doc = this.skipDocs[e]!;
      this.index = j * SKIP_BLOCK - 1;
    }
    this.walk(target);
  }
}

/**
 * Each document's length normalisation (lengthNorm), computed per candidate from its length held in
 * the narrowest integer array that fits (1–2 bytes per passage). A float64 per document (8 MiB at 1M
 * passages, 168 MiB at 21M) missed the cache on nearly every candidate: that load was ~40% of a
 * query's time at 1M. The builder's bounds come from the same function, so they hold to the bit.
 */
class DocNorms {
  private readonly lens: Uint8Array | Uint16Array | Uint32Array;
  /** lengthNorm of every length up to the longest, when that is below 2^16 (else computed per call). */
  private readonly table: Float64Array | undefined;

  /** `max`: the longest length; `into`: arrays of the right width and length (the WebAssembly kernel's) to fill instead of new ones. */
  constructor(
    docLen: Uint32Array,
    max: number,
    private readonly k1: number,
    private readonly b: number,
    private readonly avgdl: number,
    into?: { lens: Uint8Array | Uint16Array; table: Float64Array },
  ) {
    this.lens = into?.lens ?? (max < 2 ** 8 ? new Uint8Array(docLen.length) : max < 2 ** 16 ? new Uint16Array(docLen.length) : docLen);
    if (this.lens !== docLen) this.lens.set(docLen);
    // A lookup instead of a division per candidate; the same function fills it, so the values are the same to the bit.
    if (max < 2 ** 16) {
      const table = into?.table ?? new Float64Array(max + 1);
      for (let len = 0; len <= max; len++) table[len] = lengthNorm(len, k1, b, avgdl);
      this.table = table;
    }
  }

  of(doc: number): number {
    const len = this.lens[doc]!;
    return this.table ? this.table[len]! : lengthNorm(len, this.k1, this.b, this.avgdl);
  }

  get byteLength(): number {
    return this.lens.byteLength + (this.table?.byteLength ?? 0);
  }
}

function longest(docLen: Uint32Array): number {
  return docLen.reduce((m, x) => (x > m ? x : m), 0);
}

/** Postings load into memory up to a quarter of the machine's RAM (and Node's 4 GiB Buffer limit). */
export const DEFAULT_MAX_POSTINGS_IN_MEMORY = Math.min(2 ** 32 - 1, Math.floor(totalmem() / 4));

/** Reads a whole file into buf (readFileSync stops at 2 GiB; postings files of Wikipedia-size indexes are larger). */
function readInto(path: string, buf: Uint8Array): Uint8Array {
  const fd = openSync(path, 'r');
  try {
    for (let off = 0; off < buf.length; ) off += readSync(fd, buf, off, Math.min(1 << 30, buf.length - off), off);
  } finally {
    closeSync(fd);
  }
  return buf;
}

function bytesOf(a: ArrayBufferView): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** Settings for opening a BM25 index. */
export interface Bm25OpenOptions {
  /** Load postings into memory when the file is at most this many bytes (default: a quarter of RAM, at most 4 GiB). */
  maxPostingsInMemory?: number;
  /** Bytes read at a time from a term's postings when they stay on disk (default 64 KiB). */
  readWindow?: number;
  /** Override the k1 / b stored in the index (they apply at query time only). */
  params?: Partial<Bm25Params>;
  /**
   * Query evaluation, all exact: 'block-max' (default; MaxScore where the index has no block maxima
   * or k1 / b are overridden), 'maxscore', or 'none' (score every matching document: the reference).
   */
  pruning?: Bm25Pruning;
  /**
   * Where block-max evaluation runs: 'auto' (default: compiled to WebAssembly when the postings are in
   * memory and the module is built, else TypeScript), 'wasm' (an error when it cannot) or 'js'.
   * Both give the same results to the bit.
   */
  kernel?: Bm25Kernel | 'auto';
}

/** How a query skips documents that cannot reach the top k; all three give the same, exact results. */
export type Bm25Pruning = 'block-max' | 'maxscore' | 'none';
const PRUNINGS: readonly Bm25Pruning[] = ['block-max', 'maxscore', 'none'];
/** Where the block-max evaluation runs. */
export type Bm25Kernel = 'wasm' | 'js';
const KERNELS: readonly (Bm25Kernel | 'auto')[] = ['auto', 'wasm', 'js'];

function typed<T>(dir: string, file: string, make: (b: ArrayBuffer, off: number, len: number) => T, bytesPer: number): T {
  const raw = readFileSync(join(dir, file));
  // Copy into a fresh, aligned buffer: Buffer pools may hand out unaligned slices.
  const copy = new Uint8Array(raw.length);
  copy.set(raw);
  return make(copy.buffer, 0, raw.length / bytesPer);
}

/** An on-disk BM25 index opened for queries: exact top k with pruning (see the module header). */
export class Bm25Index {
  readonly meta: Bm25Meta;
  readonly params: Bm25Params;
  readonly analyzer: Analyzer;
  private readonly df: Uint32Array;
  private readonly offsets: Float64Array;
  private readonly termBlob: Buffer;
  private readonly termIdx: Uint32Array;
  private readonly termIds: Uint32Array;
  private readonly postings?: Uint8Array;
  private readonly postingsFd?: number;
  private readonly norms: DocNorms;
  private readonly maxImpact: Float32Array;
  private readonly skipDocs: Uint32Array;
  private readonly skipOffs: Uint32Array;
  /** Index of each term's first skip entry (prefix sums of ⌈df/SKIP_BLOCK⌉ − 1). */
  private readonly skipStart: Uint32Array;
  /** The stored bounds hold for the parameters in use (else the looser bound tf/(tf+norm) < 1 is used). */
  private readonly exactBounds: boolean;
  /** Per-block maximum impacts (blockmax.bin), when the index has them. */
  private readonly blockMax?: Float32Array;
  /** The evaluation in use: the one asked for, or MaxScore where block maxima are missing or do not hold. */
  readonly pruning: Bm25Pruning;
  readonly postingsInMemory: boolean;
  /** Where block-max evaluation runs ('js' also for every other pruning). */
  readonly kernel: Bm25Kernel;
  private readonly wasm?: WasmBlockMax;
  private readonly readWindow: number;

  private constructor(readonly dir: string, opts: Bm25OpenOptions) {
    let meta: Bm25Meta;
    try {
      meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as Bm25Meta;
    } catch {
      throw new InputError(`${dir}: not a BM25 index (no readable meta.json)`, 'build one with `ragtrail index build --bm25`');
    }
    if (meta.format !== 'ragtrail-bm25' || meta.version !== BM25_FORMAT_VERSION) {
      throw new InputError(`${dir}: BM25 index format ${meta.format} v${meta.version} is not supported (this ragtrail reads v${BM25_FORMAT_VERSION})`, 'rebuild the index');
    }
    this.meta = meta;
    this.params = { k1: opts.params?.k1 ?? meta.k1, b: opts.params?.b ?? meta.b };
    this.analyzer = new Analyzer({ stem: meta.analyzer.stem, stopWords: meta.analyzer.stopWords ? new Set(meta.analyzer.stopWords) : ENGLISH_STOP_WORDS });
    this.df = typed(dir, 'df.bin', (b, o, n) => new Uint32Array(b, o, n), 4);
    this.offsets = typed(dir, 'postings.off', (b, o, n) => new Float64Array(b, o, n), 8);
    this.termIdx = typed(dir, 'terms.idx', (b, o, n) => new Uint32Array(b, o, n), 4);
    this.termIds = typed(dir, 'terms.ids', (b, o, n) => new Uint32Array(b, o, n), 4);
    this.termBlob = readFileSync(join(dir, 'terms.bin'));
    const docLen = typed(dir, 'doclen.bin', (b, o, n) => new Uint32Array(b, o, n), 4);
    const postingsPath = join(dir, 'postings.bin');
    this.readWindow = Math.max(MAX_POSTING_BYTES * 2, opts.readWindow ?? SEQUENTIAL_WINDOW);
    const size = statSync(postingsPath).size;
    this.postingsInMemory = size <= (opts.maxPostingsInMemory ?? DEFAULT_MAX_POSTINGS_IN_MEMORY);
    this.maxImpact = typed(dir, 'maximpact.bin', (b, o, n) => new Float32Array(b, o, n), 4);
    // Integers (one skip entry each in skipDocs, so the sums fit 32 bits): a cursor seeded with a
    // float64 index pays for it on every skip lookup.
    this.skipStart = new Uint32Array(this.df.length + 1);
    for (let t = 0; t < this.df.length; t++) this.skipStart[t + 1] = this.skipStart[t]! + skipCount(this.df[t]!);
    const skipEntries = this.skipStart[this.df.length]!;
    const skipsPath = join(dir, 'skips.bin');
    if (statSync(skipsPath).size !== skipEntries * 8) {
      throw new InputError(`${skipsPath}: ${statSync(skipsPath).size} bytes where the postings need ${skipEntries * 8}`, 'rebuild the index (the file is truncated or from another build)');
    }
    this.exactBounds = this.params.k1 === meta.k1 && this.params.b === meta.b;
    const asked = opts.pruning ?? 'block-max';
    if (!PRUNINGS.includes(asked)) throw new InputError(`unknown BM25 pruning '${String(asked)}'`, `use one of ${PRUNINGS.join(', ')}`);
    // Indexes built before block maxima existed have no blockmax.bin and answer with MaxScore.
    const blockMaxPath = join(dir, 'blockmax.bin');
    const blocks = skipEntries + this.df.length;
    const hasBlockMax = existsSync(blockMaxPath);
    if (hasBlockMax && statSync(blockMaxPath).size !== blocks * 4) {
      throw new InputError(`${blockMaxPath}: ${statSync(blockMaxPath).size} bytes where the postings need ${blocks * 4} (one float32 per block)`, 'rebuild the index (the file is truncated or from another build)');
    }
    this.pruning = asked === 'block-max' && !(hasBlockMax && this.exactBounds) ? 'maxscore' : asked;
    const maxLen = longest(docLen);
    this.wasm = this.openKernel(opts.kernel ?? 'auto', { postingsBytes: size, skipEntries, blocks, docs: docLen.length, maxLen });
    this.kernel = this.wasm ? 'wasm' : 'js';
    // With the kernel, every array it reads lives in its memory and is filled in place.
    const arrays = this.wasm?.arrays;
    this.norms = new DocNorms(docLen, maxLen, this.params.k1, this.params.b, meta.avgdl > 0 ? meta.avgdl : 1, arrays && { lens: arrays.lens, table: arrays.norms });
    if (this.postingsInMemory) this.postings = readInto(postingsPath, arrays?.postings ?? new Uint8Array(size));
    else this.postingsFd = openSync(postingsPath, 'r');
    const skips = typed(dir, 'skips.bin', (b, o, n) => new Uint32Array(b, o, n), 4);
    this.skipDocs = arrays?.skipDocs ?? new Uint32Array(skipEntries);
    this.skipOffs = arrays?.skipOffs ?? new Uint32Array(skipEntries);
    for (let i = 0; i < skipEntries; i++) {
      this.skipDocs[i] = skips[2 * i]!;
      this.skipOffs[i] = skips[2 * i + 1]!;
    }
    if (hasBlockMax) {
      this.blockMax = arrays?.blockMax ?? new Float32Array(blocks);
      readInto(blockMaxPath, bytesOf(this.blockMax));
    }
  }

  /**
   * The WebAssembly kernel, where it can serve: block-max evaluation with the postings in memory,
   * lengths under 2^16 (its length-norm table) and every array within 32-bit WebAssembly memory.
   */
  private openKernel(asked: Bm25Kernel | 'auto', s: { postingsBytes: number; skipEntries: number; blocks: number; docs: number; maxLen: number }): WasmBlockMax | undefined {
    if (!KERNELS.includes(asked)) throw new InputError(`unknown BM25 kernel '${String(asked)}'`, `use one of ${KERNELS.join(', ')}`);
    if (asked === 'js') return undefined;
    const why = !this.postingsInMemory
      ? 'the postings stay on disk (raise maxPostingsInMemory)'
      : this.pruning !== 'block-max'
        ? `it runs block-max evaluation only, not '${this.pruning}'`
        : s.maxLen >= 2 ** 16
          ? 'a passage has 65,536 or more tokens'
          : !WasmBlockMax.available()
            ? `${BLOCK_MAX_WASM} is missing (run npm run build:wasm)`
            : undefined;
    const kernel = why === undefined ? WasmBlockMax.create({ ...s, lenWidth: s.maxLen < 2 ** 8 ? 1 : 2, normEntries: s.maxLen + 1 }, SKIP_BLOCK) : undefined;
    if (asked === 'wasm' && !kernel) {
      throw new InputError(`${this.dir}: the WebAssembly BM25 kernel cannot serve this index: ${why ?? 'its arrays exceed the 4 GiB of 32-bit WebAssembly memory'}`, "use kernel 'auto' or 'js'");
    }
    return kernel;
  }

  /** Opens the index in `dir`: postings in memory when they fit, else read from disk in windows. */
  static open(dir: string, opts: Bm25OpenOptions = {}): Bm25Index {
    return new Bm25Index(dir, opts);
  }

  get size(): number {
    return this.meta.n;
  }

  /** Bytes this index holds in memory (typed arrays and buffers; postings only when loaded). */
  memoryBytes(): number {
    const own = [this.df, this.offsets, this.termBlob, this.termIdx, this.termIds, this.maxImpact, this.skipStart].reduce((s, a) => s + a.byteLength, 0);
    // With the kernel, the postings, skips, block maxima and norms are its memory (which also holds its scratch).
    if (this.wasm) return own + this.wasm.memoryBytes;
    return own + this.norms.byteLength + this.skipDocs.byteLength + this.skipOffs.byteLength + (this.blockMax?.byteLength ?? 0) + (this.postings?.byteLength ?? 0);
  }

  /** Term id of an analysed term, or −1: binary search over the byte-sorted dictionary. */
  termId(term: string): number {
    const key = Buffer.from(term, 'utf8');
    let lo = 0;
    let hi = this.termIds.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const c = this.termBlob.compare(key, 0, key.length, this.termIdx[mid]!, this.termIdx[mid + 1]!);
      if (c === 0) return this.termIds[mid]!;
      if (c < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** Document frequency of an analysed term (0 when absent). */
  docFreq(term: string): number {
    const id = this.termId(term);
    return id < 0 ? 0 : this.df[id]!;
  }

  /** The idf of a term with document frequency `df`: ln(1 + (N − df + 0.5) / (df + 0.5)). */
  idf(df: number): number {
    const n = this.meta.n;
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  }

  private source(id: number): PostingsSource {
    const termStart = this.offsets[id]!;
    if (this.postings) return { kind: 'memory', bytes: this.postings, termStart, termEnd: this.offsets[id + 1]! };
    return { kind: 'disk', fd: this.postingsFd!, termStart, termLength: this.offsets[id + 1]! - termStart, window: this.readWindow };
  }

  /** The top k documents for a text query. */
  searchDocs(query: string, k: number): ScoredDoc[] {
    return this.searchTerms(this.analyzer.analyze(query), k);
  }

  /** The top k documents for analysed query terms (repeats weigh the term by its count). */
  searchTerms(terms: readonly string[], k: number): ScoredDoc[] {
    const qtf = new Map<string, number>();
    for (const t of terms) qtf.set(t, (qtf.get(t) ?? 0) + 1);
    const query: (KernelTerm & { id: number })[] = [];
    for (const [term, count] of qtf) {
      const id = this.termId(term);
      if (id < 0) continue;
      const w = count * this.idf(this.df[id]!);
      const skipFirst = this.skipStart[id]!;
      // A term's blocks follow those of the terms before it: their skip entries plus one last block each.
      query.push({ id, termStart: this.offsets[id]!, df: this.df[id]!, skipFirst, blockFirst: skipFirst + id, w, ub: w * (this.exactBounds ? this.maxImpact[id]! : 1) });
    }
    if (query.length === 0 || k <= 0) return [];
    // Stable: equal bounds keep the query's order, so each query has one summation order.
    query.sort((a, b) => a.ub - b.ub);
    if (this.wasm?.fits(query.length, k)) return this.wasm.search(query, k).sort(rankOrder);
    const blockMax = this.pruning === 'block-max' ? this.blockMax : undefined;
    const cursors = query.map((t) => new Cursor(this.source(t.id), t.df, this.skipDocs, this.skipOffs, t.skipFirst, t.w, t.ub, blockMax, t.blockFirst));
    const top = new TopK(k);
    for (const c of cursors) c.next();
    if (blockMax) blockMaxScore(cursors, this.norms, top);
    else maxScore(cursors, this.norms, top, this.pruning !== 'none');
    return top.sorted();
  }

  /** Closes the postings file when it was left on disk. */
  close(): void {
    if (this.postingsFd !== undefined) closeSync(this.postingsFd);
  }
}

/** bound[i] = Σ_{j < i} ub_j: the most that cursors 0..i−1 (sorted by ub) can add to any document. */
function prefixBounds(cursors: readonly Cursor[]): Float64Array {
  const bound = new Float64Array(cursors.length + 1);
  for (let i = 0; i < cursors.length; i++) bound[i + 1] = bound[i]! + cursors[i]!.ub;
  return bound;
}

/**
 * A candidate's score in a fixed order, cursor 0 to n − 1, from the contributions recorded for it:
 * whatever was pruned or probed first, a document's score has the same last bits as in exhaustive
 * scoring, so ties resolve the same way.
 */
function fixedOrderScore(contrib: Float64Array, contribDoc: Int32Array, doc: number): number {
  let s = 0;
  for (let i = 0; i < contrib.length; i++) if (contribDoc[i] === doc) s += contrib[i]!;
  return s;
}

/**
 * Scores `doc` on the essential cursors (from `firstEssential` on) that sit on it, records each
 * contribution for {@link fixedOrderScore} and moves those cursors on; returns the partial score.
 */
function scoreEssential(cursors: readonly Cursor[], firstEssential: number, doc: number, norm: number, contrib: Float64Array, contribDoc: Int32Array): number {
  let score = 0;
  for (let i = firstEssential; i < cursors.length; i++) {
    const c = cursors[i]!;
    if (c.doc === doc) {
      const x = (c.w * c.tf) / (c.tf + norm);
      contrib[i] = x;
      contribDoc[i] = doc;
      score += x;
      c.next();
    }
  }
  return score;
}

/** Moves non-essential cursor `i` to `doc` and records its contribution there (0 when the term is not in it). */
function probe(c: Cursor, i: number, doc: number, norm: number, contrib: Float64Array, contribDoc: Int32Array): number {
  c.advance(doc);
  if (c.doc !== doc) return 0;
  const x = (c.w * c.tf) / (c.tf + norm);
  contrib[i] = x;
  contribDoc[i] = doc;
  return x;
}

/** Offers a fully scored candidate to the top k; returns the k-th best score after it (θ). */
function offer(top: TopK, doc: number, score: number, theta: number): number {
  if (score <= theta) return theta;
  top.push(doc, score);
  return top.threshold;
}

/** MaxScore (or, with prune false, every matching document scored). Cursors sorted by ub, each on its first posting. */
function maxScore(cursors: Cursor[], norms: DocNorms, top: TopK, prune: boolean): void {
  const n = cursors.length;
  const bound = prefixBounds(cursors);
  const contrib = new Float64Array(n);
  const contribDoc = new Int32Array(n).fill(-1);
  let theta = -Infinity;
  let firstEssential = 0;
  for (;;) {
    // The next candidate: the smallest current document among essential cursors.
    let doc = NO_MORE_DOCS;
    for (let i = firstEssential; i < n; i++) if (cursors[i]!.doc < doc) doc = cursors[i]!.doc;
    if (doc === NO_MORE_DOCS) break;
    const norm = norms.of(doc);
    let score = scoreEssential(cursors, firstEssential, doc, norm, contrib, contribDoc);
    // Non-essential terms, strongest first, while the candidate can still beat θ.
    let alive = true;
    for (let i = firstEssential - 1; i >= 0; i--) {
      if (score + bound[i + 1]! <= theta) {
        alive = false;
        break;
      }
      const c = cursors[i]!;
      score += probe(c, i, doc, norm, contrib, contribDoc);
    }
    if (!alive) continue;
    const t = offer(top, doc, fixedOrderScore(contrib, contribDoc, doc), theta);
    if (t > theta) {
      theta = t;
      if (prune) while (firstEssential < n && bound[firstEssential + 1]! <= theta) firstEssential++;
    }
  }
}

/** Last document up to which every essential cursor stays in its current block. */
function regionEnd(cursors: readonly Cursor[], firstEssential: number): number {
  let end = NO_MORE_DOCS - 1;
  for (let i = firstEssential; i < cursors.length; i++) {
    const c = cursors[i]!;
    if (c.doc !== NO_MORE_DOCS) {
      const e = c.blockEnd(c.block);
      if (e < end) end = e;
    }
  }
  return end;
}

/** The most the essential cursors can add to a document up to `end`: their current blocks' maxima (0 past `end`). */
function regionBound(cursors: readonly Cursor[], firstEssential: number, end: number): number {
  let ub = 0;
  for (let i = firstEssential; i < cursors.length; i++) {
    const c = cursors[i]!;
    if (c.doc <= end) ub += c.blockBound(c.block);
  }
  return ub;
}

/** Block-max MaxScore (see the file's header). Cursors sorted by ub, each on its first posting. */
function blockMaxScore(cursors: Cursor[], norms: DocNorms, top: TopK): void {
  const n = cursors.length;
  const bound = prefixBounds(cursors);
  const contrib = new Float64Array(n);
  const contribDoc = new Int32Array(n).fill(-1);
  let theta = -Infinity;
  let firstEssential = 0;
  // Candidates up to here lie in a region whose block bound could beat θ: no need to check again.
  let checkedTo = -1;
  for (;;) {
    let doc = NO_MORE_DOCS;
    for (let i = firstEssential; i < n; i++) if (cursors[i]!.doc < doc) doc = cursors[i]!.doc;
    if (doc === NO_MORE_DOCS) break;
    if (doc > checkedTo && theta > -Infinity) {
      const end = regionEnd(cursors, firstEssential);
      if (regionBound(cursors, firstEssential, end) + bound[firstEssential]! <= theta) {
        // No document up to `end` can enter the top k: jump past it without decoding what lies between.
        for (let i = firstEssential; i < n; i++) if (cursors[i]!.doc <= end) cursors[i]!.advance(end + 1);
        continue;
      }
      checkedTo = end;
    }
    const norm = norms.of(doc);
    let score = scoreEssential(cursors, firstEssential, doc, norm, contrib, contribDoc);
    // Non-essential terms, strongest first, while the candidate can still beat θ: each is first
    // bounded by the block that would hold the candidate (a shallow move), and probed only if that
    // block could still lift it above θ.
    let alive = true;
    for (let i = firstEssential - 1; i >= 0; i--) {
      if (score + bound[i + 1]! <= theta) {
        alive = false;
        break;
      }
      const c = cursors[i]!;
      if (c.doc > doc) continue; // past the candidate: the term is not in it
      if (score + bound[i]! + c.blockBound(c.shallow(doc)) <= theta) {
        alive = false;
        break;
      }
      score += probe(c, i, doc, norm, contrib, contribDoc);
    }
    if (!alive) continue;
    const t = offer(top, doc, fixedOrderScore(contrib, contribDoc, doc), theta);
    if (t > theta) {
      theta = t;
      while (firstEssential < n && bound[firstEssential + 1]! <= theta) firstEssential++;
    }
  }
}
