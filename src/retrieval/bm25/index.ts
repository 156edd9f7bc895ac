/**
 * Querying the on-disk BM25 index. Scoring is Lucene's BM25 (BM25Similarity since Lucene 8, which
 * dropped the constant (k1 + 1) factor):
 *
 *   score(q, d) = Σ_{t ∈ q} qtf(t) · idf(t) · tf(t,d) / (tf(t,d) + k1 · (1 − b + b · |d| / avgdl))
 *   idf(t)      = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))
 *
 * with |d| the exact analysed length (Lucene stores it lossily in one byte; scores here are exact)
 * and qtf the number of times the term occurs in the query (Anserini's bag-of-words query).
 * Evaluation is term-at-a-time into a dense score accumulator, touched documents listed so that
 * only they are reset, then a bounded heap picks the top k.
 *
 * Postings are read into memory when they fit under `maxPostingsInMemory`, else read per term with
 * positioned reads (the OS page cache then plays the role of mmap), so a Wikipedia-size index needs
 * only its dictionary, document lengths and accumulators in the heap.
 */
import { closeSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../../core/errors.js';
import { Analyzer, ENGLISH_STOP_WORDS } from '../analyzer.js';
import { TopK } from '../topk.js';
import type { ScoredDoc } from '../types.js';
import { BM25_FORMAT_VERSION, type Bm25Meta, type Bm25Params } from './build.js';

export interface Bm25OpenOptions {
  /** Load postings into memory when the file is at most this many bytes (default 2 GiB). */
  maxPostingsInMemory?: number;
  /** Override the k1 / b stored in the index (they apply at query time only). */
  params?: Partial<Bm25Params>;
}

function typed<T>(dir: string, file: string, make: (b: ArrayBuffer, off: number, len: number) => T, bytesPer: number): T {
  const raw = readFileSync(join(dir, file));
  // Copy into a fresh, aligned buffer: Buffer pools may hand out unaligned slices.
  const copy = new Uint8Array(raw.length);
  copy.set(raw);
  return make(copy.buffer, 0, raw.length / bytesPer);
}

export class Bm25Index {
  readonly meta: Bm25Meta;
  readonly params: Bm25Params;
  readonly analyzer: Analyzer;
  private readonly df: Uint32Array;
  private readonly offsets: Float64Array;
  private readonly norms: Float64Array;
  private readonly termBlob: Buffer;
  private readonly termIdx: Uint32Array;
  private readonly termIds: Uint32Array;
  private readonly postings?: Uint8Array;
  private readonly postingsFd?: number;
  private scratch = new Uint8Array(1 << 16);
  private readonly acc: Float64Array;
  private readonly touched: Int32Array;
  readonly postingsInMemory: boolean;

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
    const { k1, b } = this.params;
    const avgdl = meta.avgdl > 0 ? meta.avgdl : 1;
    this.norms = new Float64Array(docLen.length);
    for (let d = 0; d < docLen.length; d++) this.norms[d] = k1 * (1 - b + (b * docLen[d]!) / avgdl);
    const postingsPath = join(dir, 'postings.bin');
    this.postingsInMemory = statSync(postingsPath).size <= (opts.maxPostingsInMemory ?? 2 ** 31);
    if (this.postingsInMemory) this.postings = readFileSync(postingsPath);
    else this.postingsFd = openSync(postingsPath, 'r');
    this.acc = new Float64Array(meta.n);
    this.touched = new Int32Array(meta.n);
  }

  static open(dir: string, opts: Bm25OpenOptions = {}): Bm25Index {
    return new Bm25Index(dir, opts);
  }

  get size(): number {
    return this.meta.n;
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

  idf(df: number): number {
    const n = this.meta.n;
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  }

  private postingBytes(id: number): { bytes: Uint8Array; start: number; end: number } {
    const start = this.offsets[id]!;
    const end = this.offsets[id + 1]!;
    if (this.postings) return { bytes: this.postings, start, end };
    const len = end - start;
    if (len > this.scratch.length) this.scratch = new Uint8Array(len * 2);
    readSync(this.postingsFd!, this.scratch, 0, len, start);
    return { bytes: this.scratch, start: 0, end: len };
  }

  /** The top k documents for a text query. */
  searchDocs(query: string, k: number): ScoredDoc[] {
    return this.searchTerms(this.analyzer.analyze(query), k);
  }

  /** The top k documents for analysed query terms (repeats weigh the term by its count). */
  searchTerms(terms: readonly string[], k: number): ScoredDoc[] {
    const qtf = new Map<string, number>();
    for (const t of terms) qtf.set(t, (qtf.get(t) ?? 0) + 1);
    const acc = this.acc;
    const touched = this.touched;
    const norms = this.norms;
    let nTouched = 0;
    for (const [term, count] of qtf) {
      const id = this.termId(term);
      if (id < 0) continue;
      const w = count * this.idf(this.df[id]!);
      const { bytes, start, end } = this.postingBytes(id);
      let p = start;
      let doc = 0;
      while (p < end) {
        // Inlined varint decoding: doc gap, then tf.
        let byte = bytes[p++]!;
        let gap = byte & 0x7f;
        for (let shift = 7; byte & 0x80; shift += 7) {
          byte = bytes[p++]!;
          gap |= (byte & 0x7f) << shift;
        }
        doc += gap;
        byte = bytes[p++]!;
        let tf = byte & 0x7f;
        for (let shift = 7; byte & 0x80; shift += 7) {
          byte = bytes[p++]!;
          tf |= (byte & 0x7f) << shift;
        }
        if (acc[doc] === 0) touched[nTouched++] = doc;
        acc[doc]! += (w * tf) / (tf + norms[doc]!);
      }
    }
    const top = new TopK(k);
    for (let i = 0; i < nTouched; i++) {
      const d = touched[i]!;
      top.push(d, acc[d]!);
      acc[d] = 0;
    }
    return top.sorted();
  }

  close(): void {
    if (this.postingsFd !== undefined) closeSync(this.postingsFd);
  }
}
