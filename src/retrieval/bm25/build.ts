/**
 * Builds the on-disk BM25 index in one streaming pass with bounded memory (single-pass in-memory
 * indexing, SPIMI): postings of the current block of documents collect in flat typed arrays; when
 * the block is full they are sorted by term with a counting sort and written as a sorted run; at the
 * end the runs are merged term by term into the final postings file. Memory is the block (12 bytes a
 * posting) plus the vocabulary, whatever the corpus size. Document ids grow monotonically, so each
 * term's postings from run r all precede those from run r + 1 and the merge is a concatenation.
 *
 * Files (in `dir`): meta.json; postings.bin (per term: varint doc-gap, varint tf, …, in term-id order);
 * postings.off (Float64, byte offset of each term, V + 1); df.bin (Uint32, V); doclen.bin (Uint32, N);
 * skips.bin (per term with more than SKIP_BLOCK postings, one Uint32 pair per block boundary: last
 * document before it and its byte offset from the term's start); maximpact.bin (Float32, V: the
 * largest tf / (tf + k1·(1 − b + b·|d|/avgdl)) of each term, a MaxScore upper bound);
 * blockmax.bin (Float32, ⌈df/SKIP_BLOCK⌉ per term in term-id order: the same maximum over each skip
 * block, the last, partial block included, for block-max pruning; term t's first entry is at
 * (skip entries of the terms before t) + t, so no offset table is needed. Added after version 1
 * without a version bump: readers of version 1 ignore the file, and this reader falls back to plain
 * MaxScore on indexes built without it);
 * terms.bin (UTF-8 terms in byte order, concatenated), terms.idx (Uint32 start offsets, V + 1) and
 * terms.ids (Uint32 term id of each sorted term), for binary-search lookup without a heap dictionary.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Analyzer } from '../analyzer.js';
import { VarintReader, VarintWriter } from './bytes.js';

export const BM25_FORMAT_VERSION = 1;

/** Postings per skip block: a query can jump to any block start without decoding the blocks before it. */
export const SKIP_BLOCK = 32;

/**
 * Buffered writer of 32-bit words: skip entries (last document of a block, byte offset of the next
 * block from the term's start) as Uint32 pairs, or block maxima as Float32 bit patterns.
 */
class WordWriter {
  private readonly buf = new Uint32Array(1 << 16);
  private readonly asFloat = new Float32Array(this.buf.buffer);
  private n = 0;
  private readonly out: VarintWriter;

  constructor(path: string) {
    this.out = new VarintWriter(path);
  }

  add(lastDoc: number, nextBlockOffset: number): void {
    if (this.n + 2 > this.buf.length) this.flush();
    this.buf[this.n++] = lastDoc;
    this.buf[this.n++] = nextBlockOffset;
  }

  float(x: number): void {
    if (this.n === this.buf.length) this.flush();
    this.asFloat[this.n++] = x;
  }

  private flush(): void {
    this.out.bytes(new Uint8Array(this.buf.buffer, 0, this.n * 4));
    this.n = 0;
  }

  close(): void {
    this.flush();
    this.out.close();
  }
}

/** BM25's two free parameters. */
export interface Bm25Params {
  /** Term-frequency saturation (Pyserini's Wikipedia indexes: 0.9). */
  k1: number;
  /** Length normalisation (Pyserini's Wikipedia indexes: 0.4). */
  b: number;
}

export const DEFAULT_BM25: Bm25Params = { k1: 0.9, b: 0.4 };

/**
 * A document's length normalisation in Lucene's BM25, k1·(1 − b + b·|d|/avgdl). The builder's bounds
 * and the reader's scores both come from this one expression, so they agree to the bit.
 */
export function lengthNorm(len: number, k1: number, b: number, avgdl: number): number {
  return k1 * (1 - b + (b * len) / avgdl);
}

/** The manifest of a BM25 index: its format, analyzer, parameters and collection statistics. */
export interface Bm25Meta extends Bm25Params {
  format: 'ragtrail-bm25';
  version: number;
  analyzer: ReturnType<Analyzer['describe']>;
  /** Documents. */
  n: number;
  /** Average document length in analysed tokens. */
  avgdl: number;
  vocabulary: number;
  postings: number;
  runs: number;
}

/** Settings of a BM25 index build. */
export interface Bm25BuildOptions extends Partial<Bm25Params> {
  analyzer?: Analyzer;
  /** Postings held in memory before a sorted run is written (default 24M, about 290 MB). */
  runPostings?: number;
}

/**
 * A float32 at or above x, with a relative margin of 2^-20 (≈1e-6): query-time bounds are sums
 * computed in another order than the scores they bound, and the margin keeps them above those
 * scores whatever the rounding, so pruning never drops a document that exhaustive scoring keeps.
 */
export function boundAbove(x: number): number {
  const f = Math.fround(x * (1 + 2 ** -20));
  return f >= x ? f : Math.fround(x * (1 + 2 ** -19));
}

function grow<T extends Uint32Array | Int32Array>(a: T, need: number): T {
  if (need <= a.length) return a;
  const b = new (a.constructor as new (n: number) => T)(Math.max(need, a.length * 2));
  b.set(a);
  return b;
}

export class Bm25Builder {
  private readonly analyzer: Analyzer;
  private readonly params: Bm25Params;
  private readonly cap: number;
  private readonly vocab = new Map<string, number>();
  private terms: string[] = [];
  private df = new Uint32Array(1 << 16);
  private docLen = new Uint32Array(1 << 16);
  private nDocs = 0;
  private totalLen = 0;
  private totalPostings = 0;
  // Current block, one posting per slot.
  private runTerm: Uint32Array;
  private runDoc: Uint32Array;
  private runTf: Uint32Array;
  private runLen = 0;
  private runs: string[] = [];
  // Per-document term counting without a Map: last document seen per term, and its slot.
  private lastDoc = new Int32Array(1 << 16).fill(-1);
  private slot = new Int32Array(1 << 16);
  private docTerms = new Uint32Array(4096);
  private docTfs = new Uint32Array(4096);

  constructor(
    private readonly dir: string,
    opts: Bm25BuildOptions = {},
  ) {
    this.analyzer = opts.analyzer ?? new Analyzer();
    this.params = { k1: opts.k1 ?? DEFAULT_BM25.k1, b: opts.b ?? DEFAULT_BM25.b };
    this.cap = opts.runPostings ?? 24_000_000;
    this.runTerm = new Uint32Array(this.cap);
    this.runDoc = new Uint32Array(this.cap);
    this.runTf = new Uint32Array(this.cap);
    mkdirSync(dir, { recursive: true });
  }

  private termId(t: string): number {
    let id = this.vocab.get(t);
    if (id === undefined) {
      id = this.terms.length;
      this.vocab.set(t, id);
      this.terms.push(t);
      if (id >= this.df.length) {
        this.df = grow(this.df, id + 1);
        const n = this.df.length;
        const last = new Int32Array(n).fill(-1);
        last.set(this.lastDoc);
        this.lastDoc = last;
        this.slot = grow(this.slot, n);
      }
    }
    return id;
  }

  /** Adds the next document (its number is the count of documents added before it). */
  add(text: string): void {
    const doc = this.nDocs++;
    const tokens = this.analyzer.analyze(text);
    this.docLen = grow(this.docLen, doc + 1);
    this.docLen[doc] = tokens.length;
    this.totalLen += tokens.length;
    let unique = 0;
    for (const tok of tokens) {
      const id = this.termId(tok);
      if (this.lastDoc[id] !== doc) {
        this.lastDoc[id] = doc;
        this.slot[id] = unique;
        if (unique >= this.docTerms.length) {
          this.docTerms = grow(this.docTerms, unique + 1);
          this.docTfs = grow(this.docTfs, unique + 1);
        }
        this.docTerms[unique] = id;
        this.docTfs[unique] = 1;
        unique++;
      } else {
        this.docTfs[this.slot[id]!]!++;
      }
    }
    if (this.runLen + unique > this.cap) this.flushRun();
    if (unique > this.runTerm.length) {
      // A single document with more distinct terms than a whole block: the block grows to hold it.
      this.runTerm = grow(this.runTerm, unique);
      this.runDoc = grow(this.runDoc, unique);
      this.runTf = grow(this.runTf, unique);
    }
    for (let i = 0; i < unique; i++) {
      const id = this.docTerms[i] as number;
      this.runTerm[this.runLen] = id;
      this.runDoc[this.runLen] = doc;
      this.runTf[this.runLen] = this.docTfs[i] as number;
      this.runLen++;
      this.df[id]!++;
    }
    this.totalPostings += unique;
  }

  get documents(): number {
    return this.nDocs;
  }

  /** Sorts the block by term (counting sort keeps document order within a term) and writes it as a run. */
  private flushRun(): void {
    if (this.runLen === 0) return;
    const v = this.terms.length;
    const start = new Uint32Array(v + 1);
    for (let i = 0; i < this.runLen; i++) start[this.runTerm[i]! + 1]!++;
    for (let t = 0; t < v; t++) start[t + 1]! += start[t]!;
    const order = new Uint32Array(this.runLen);
    const fill = start.slice(0, v);
    for (let i = 0; i < this.runLen; i++) {
      const t = this.runTerm[i] as number;
      order[fill[t]!++] = i;
    }
    const path = join(this.dir, `run-${this.runs.length}.tmp`);
    const w = new VarintWriter(path);
    let prevTerm = 0;
    for (let t = 0; t < v; t++) {
      const from = start[t] as number;
      const to = start[t + 1] as number;
      if (from === to) continue;
      w.uint(t - prevTerm);
      prevTerm = t;
      w.uint(to - from);
      let prevDoc = 0;
      for (let j = from; j < to; j++) {
        const i = order[j] as number;
        const d = this.runDoc[i] as number;
        w.uint(d - prevDoc);
        prevDoc = d;
        w.uint(this.runTf[i] as number);
      }
    }
    w.close();
    this.runs.push(path);
    this.runLen = 0;
  }

  /** Merges the runs and writes every index file. Returns the metadata written to meta.json. */
  finish(): Bm25Meta {
    this.flushRun();
    const v = this.terms.length;
    const { k1, b } = this.params;
    const avgdl = this.nDocs > 0 ? this.totalLen / this.nDocs : 1;
    const norms = new Float64Array(this.nDocs);
    for (let d = 0; d < this.nDocs; d++) norms[d] = lengthNorm(this.docLen[d]!, k1, b, avgdl);
    const offsets = new Float64Array(v + 1);
    // Upper bound of tf / (tf + norm) over each term's postings, for MaxScore pruning at query time.
    const maxImpact = new Float32Array(v);
    const out = new VarintWriter(join(this.dir, 'postings.bin'));
    const skips = new WordWriter(join(this.dir, 'skips.bin'));
    const blockMax = new WordWriter(join(this.dir, 'blockmax.bin'));
    const readers = this.runs.map((p) => new VarintReader(p));
    // Next term id of each run (or Infinity when exhausted).
    const next = readers.map((r) => (r.atEnd() ? Infinity : r.uint()));
    for (let t = 0; t < v; t++) {
      const termStart = out.written;
      offsets[t] = termStart;
      let last = 0;
      let written = 0;
      let best = 0;
      let blockBest = 0;
      for (let r = 0; r < readers.length; r++) {
        if (next[r] !== t) continue;
        const rd = readers[r]!;
        const count = rd.uint();
        let doc = 0;
        for (let j = 0; j < count; j++) {
          doc += rd.uint();
          const tf = rd.uint();
          // Every SKIP_BLOCK postings: where the next block starts, and the last document before it.
          if (written > 0 && written % SKIP_BLOCK === 0) {
            skips.add(last, out.written - termStart);
            blockMax.float(boundAbove(blockBest));
            blockBest = 0;
          }
          out.uint(doc - last);
          out.uint(tf);
          last = doc;
          written++;
          const impact = tf / (tf + norms[doc]!);
          if (impact > best) best = impact;
          if (impact > blockBest) blockBest = impact;
        }
        next[r] = rd.atEnd() ? Infinity : t + rd.uint();
      }
      // The last block, full or not (every term has at least one posting).
      blockMax.float(boundAbove(blockBest));
      maxImpact[t] = boundAbove(best);
    }
    offsets[v] = out.written;
    out.close();
    skips.close();
    blockMax.close();
    for (const r of readers) r.close();
    for (const p of this.runs) rmSync(p, { force: true });
    writeFileSync(join(this.dir, 'maximpact.bin'), new Uint8Array(maxImpact.buffer));

    writeFileSync(join(this.dir, 'postings.off'), new Uint8Array(offsets.buffer));
    writeFileSync(join(this.dir, 'df.bin'), new Uint8Array(this.df.buffer, 0, v * 4));
    writeFileSync(join(this.dir, 'doclen.bin'), new Uint8Array(this.docLen.buffer, 0, this.nDocs * 4));
    this.writeDictionary();
    const meta: Bm25Meta = {
      format: 'ragtrail-bm25',
      version: BM25_FORMAT_VERSION,
      ...this.params,
      analyzer: this.analyzer.describe(),
      n: this.nDocs,
      avgdl: this.nDocs > 0 ? this.totalLen / this.nDocs : 0,
      vocabulary: v,
      postings: this.totalPostings,
      runs: this.runs.length,
    };
    writeFileSync(join(this.dir, 'meta.json'), JSON.stringify(meta, null, 2) + '\n');
    return meta;
  }

  /** Terms sorted by UTF-8 bytes, so that lookups can binary-search the raw blob. */
  private writeDictionary(): void {
    const encoded = this.terms.map((t) => Buffer.from(t, 'utf8'));
    const order = Array.from({ length: encoded.length }, (_, i) => i);
    order.sort((a, b) => Buffer.compare(encoded[a] as Buffer, encoded[b] as Buffer));
    const idx = new Uint32Array(encoded.length + 1);
    const ids = new Uint32Array(encoded.length);
    let bytes = 0;
    order.forEach((id, i) => {
      idx[i] = bytes;
      ids[i] = id;
      bytes += (encoded[id] as Buffer).length;
    });
    idx[encoded.length] = bytes;
    const blob = Buffer.allocUnsafe(bytes);
    order.forEach((id, i) => (encoded[id] as Buffer).copy(blob, idx[i] as number));
    writeFileSync(join(this.dir, 'terms.bin'), blob);
    writeFileSync(join(this.dir, 'terms.idx'), new Uint8Array(idx.buffer));
    writeFileSync(join(this.dir, 'terms.ids'), new Uint8Array(ids.buffer));
    this.terms = [];
    this.vocab.clear();
  }
}
