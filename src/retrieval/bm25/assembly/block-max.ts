/**
 * Block-max MaxScore over postings held in WebAssembly memory: the evaluation of `blockMaxScore` in
 * ../index.ts (see that file's header for the algorithm, its bounds and why it is exact), compiled by
 * AssemblyScript (`npm run build:wasm`). The two are kept step for step the same: same cursor moves,
 * same bound checks, same summation order, same tie-breaking, so the top k, scores to the bit, is
 * that of the TypeScript evaluation (test/retrieval/bm25-blockmax.test.ts checks it). The TypeScript one
 * still serves postings read from disk in windows, `maxscore` and `none`.
 *
 * Why compiled: the TypeScript loop spends its time on byte-wise varint decoding and small branchy
 * steps per candidate; compiled, the same steps take ~0.6× the time (bench:retrieval times the two in
 * alternation on the same index: 1.70× the queries/s at 1M).
 *
 * Memory: the host (../wasm-kernel.ts) provides the memory; this module's scratch areas come first,
 * and from `hostArea()` on the host lays out the postings, skip entries, block maxima, document
 * lengths and the length-norm table (the runtime's allocator caps blocks at 1 GiB, and postings reach
 * 2.65 GiB at 21M passages), then calls `layout`. Each
 * query writes its terms (sorted by upper bound, ascending) at `input()` and reads the top k at
 * `output()`. Nothing is allocated after module start, so the host's views of the memory stay valid.
 */

const NO_MORE_DOCS: i32 = 0x7fffffff;
/** Postings per skip block; the host checks it against the index format's SKIP_BLOCK. */
const SKIP_BLOCK: i32 = 32;
const SKIP_SHIFT: i32 = 5;
/** Capacities of the scratch areas: queries beyond them are answered by the TypeScript evaluation. */
const MAX_TERMS: i32 = 1024;
const MAX_K: i32 = 1 << 16;
/** Bytes per query term at input(): termStart u32, df u32, skipFirst u32, blockFirst u32, w f64, ub f64. */
const TERM_BYTES: usize = 32;

let postings: usize = 0;
let skipDocs: usize = 0;
let skipOffs: usize = 0;
let blockMax: usize = 0;
let lens: usize = 0;
let lenWidth: i32 = 1;
let norms: usize = 0;

export function skipBlock(): i32 {
  return SKIP_BLOCK;
}
export function maxTerms(): i32 {
  return MAX_TERMS;
}
export function maxK(): i32 {
  return MAX_K;
}

/** Where the host placed the index's arrays (document lengths 1 or 2 bytes wide). */
export function layout(p: usize, sd: usize, so: usize, bm: usize, ln: usize, width: i32, nm: usize): void {
  postings = p;
  skipDocs = sd;
  skipOffs = so;
  blockMax = bm;
  lens = ln;
  lenWidth = width;
  norms = nm;
}

/** One term's position in its postings, as the Cursor class of ../index.ts (memory mode). */
@unmanaged
class Cursor {
  doc: i32;
  tf: i32;
  /** Index of the current posting within the term (−1 before the first). */
  index: i32;
  /** Block found by the last shallow move. */
  blk: i32;
  /** Address of the next byte to decode. */
  pos: usize;
  /** Address of the term's first posting. */
  start: usize;
  df: i32;
  nSkips: i32;
  skipFirst: i32;
  blockFirst: i32;
  /** qtf · idf */
  w: f64;
  ub: f64;

  @inline next(): void {
    this.walk(this.doc + 1);
  }

  /** Decodes postings (varint gap, varint tf) until one has doc ≥ target or the list ends. */
  walk(target: i32): void {
    const df = this.df;
    let p = this.pos;
    let index = this.index;
    let doc = this.doc;
    let tf = this.tf;
    for (;;) {
      if (++index >= df) {
        doc = NO_MORE_DOCS;
        break;
      }
      let byte = <i32>load<u8>(p++);
      let gap = byte & 0x7f;
      for (let shift = 7; byte & 0x80; shift += 7) {
        byte = <i32>load<u8>(p++);
        gap |= (byte & 0x7f) << shift;
      }
      byte = <i32>load<u8>(p++);
      tf = byte & 0x7f;
      for (let shift = 7; byte & 0x80; shift += 7) {
        byte = <i32>load<u8>(p++);
        tf |= (byte & 0x7f) << shift;
      }
      doc = (index == 0 ? 0 : doc) + gap;
      if (doc >= target) break;
    }
    this.pos = p;
    this.index = index;
    this.doc = doc;
    this.tf = tf;
  }

  /** Block of the current posting (the last block once the list is exhausted). */
  @inline get block(): i32 {
    const b = this.index >> SKIP_SHIFT;
    return b < this.nSkips ? b : this.nSkips;
  }

  @inline skipDoc(j: i32): i32 {
    return load<i32>(skipDocs + (<usize>(this.skipFirst + j) << 2));
  }

  /** Last document of block j (the last block reaches to the end of the collection). */
  @inline blockEnd(j: i32): i32 {
    return j < this.nSkips ? this.skipDoc(j) : NO_MORE_DOCS - 1;
  }

  /** Most this term can add to a document of block j. */
  @inline blockBound(j: i32): f64 {
    return this.w * <f64>load<f32>(blockMax + (<usize>(this.blockFirst + j) << 2));
  }

  /** The block that would hold target, from the skip entries alone (gallop, then binary search). */
  shallow(target: i32): i32 {
    let j = max(this.blk, this.block);
    const n = this.nSkips;
    if (j < n && this.skipDoc(j) < target) {
      let step = 1;
      while (j + step < n && this.skipDoc(j + step) < target) {
        j += step;
        step *= 2;
      }
      let lo = j;
      let hi = min(j + step, n - 1);
      while (lo < hi) {
        const mid = (lo + hi + 1) >>> 1;
        if (this.skipDoc(mid) < target) lo = mid;
        else hi = mid - 1;
      }
      j = lo + 1;
    }
    this.blk = j;
    return j;
  }

  /** Moves to the first posting with doc ≥ target, jumping whole blocks through the skip entries. */
  advance(target: i32): void {
    if (this.doc >= target) return;
    const j = this.shallow(target);
    if (j > (this.index < 0 ? 0 : this.index >> SKIP_SHIFT)) {
      const e = <usize>(this.skipFirst + j - 1);
      this.pos = this.start + <usize>load<u32>(skipOffs + (e << 2));
      this.doc = load<i32>(skipDocs + (e << 2));
      this.index = j * SKIP_BLOCK - 1;
    }
    this.walk(target);
  }
}

const CURSOR_BYTES = offsetof<Cursor>();
const cursors = heap.alloc(<usize>MAX_TERMS * CURSOR_BYTES);
const input = heap.alloc(<usize>MAX_TERMS * TERM_BYTES);
/** bound[i] = Σ_{j < i} ub_j */
const bound = heap.alloc(<usize>(MAX_TERMS + 1) << 3);
const contrib = heap.alloc(<usize>MAX_TERMS << 3);
const contribDoc = heap.alloc(<usize>MAX_TERMS << 2);
/** Top k as a min-heap (documents, then scores): the order of ../topk.ts. */
const topDocs = heap.alloc(<usize>MAX_K << 2);
const topScores = heap.alloc(<usize>MAX_K << 3);
/** Results in heap order: documents (i32) at output(), their scores (f64) at output() + 4·maxK(). */
const output = heap.alloc(<usize>MAX_K * 12);
let topSize = 0;
let topK = 0;
/** Everything from here up belongs to the host. */
const hostStart = heap.alloc(16);

export function hostArea(): usize {
  return hostStart;
}

export function inputArea(): usize {
  return input;
}
export function outputArea(): usize {
  return output;
}

@inline function cursor(i: i32): Cursor {
  return changetype<Cursor>(cursors + <usize>i * CURSOR_BYTES);
}
@inline function boundAt(i: i32): f64 {
  return load<f64>(bound + (<usize>i << 3));
}
@inline function record(i: i32, doc: i32, x: f64): void {
  store<f64>(contrib + (<usize>i << 3), x);
  store<i32>(contribDoc + (<usize>i << 2), doc);
}
@inline function normOf(doc: i32): f64 {
  const len = lenWidth == 1 ? <usize>load<u8>(lens + <usize>doc) : <usize>load<u16>(lens + (<usize>doc << 1));
  return load<f64>(norms + (len << 3));
}

@inline function topScore(i: i32): f64 {
  return load<f64>(topScores + (<usize>i << 3));
}
@inline function topDoc(i: i32): i32 {
  return load<i32>(topDocs + (<usize>i << 2));
}
@inline function topSet(i: i32, doc: i32, score: f64): void {
  store<i32>(topDocs + (<usize>i << 2), doc);
  store<f64>(topScores + (<usize>i << 3), score);
}
/** Heap order: lower score first; on equal scores the larger document is lower (ties go to the smaller). */
@inline function lower(i: i32, j: i32): bool {
  const si = topScore(i);
  const sj = topScore(j);
  return si < sj || (si == sj && topDoc(i) > topDoc(j));
}
@inline function swap(i: i32, j: i32): void {
  const d = topDoc(i);
  const s = topScore(i);
  topSet(i, topDoc(j), topScore(j));
  topSet(j, d, s);
}
function push(doc: i32, score: f64): void {
  if (topSize < topK) {
    let i = topSize++;
    topSet(i, doc, score);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!lower(i, parent)) break;
      swap(i, parent);
      i = parent;
    }
    return;
  }
  const s0 = topScore(0);
  if (score < s0 || (score == s0 && doc > topDoc(0))) return;
  topSet(0, doc, score);
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let m = i;
    if (l < topSize && lower(l, m)) m = l;
    if (r < topSize && lower(r, m)) m = r;
    if (m == i) break;
    swap(i, m);
    i = m;
  }
}

/**
 * The top k for the n terms at input() (1 ≤ n ≤ maxTerms(), 1 ≤ k ≤ maxK()); returns how many
 * results it wrote at output().
 */
export function search(n: i32, k: i32): i32 {
  topSize = 0;
  topK = k;
  store<f64>(bound, 0);
  for (let i = 0; i < n; i++) {
    const t = input + <usize>i * TERM_BYTES;
    const c = cursor(i);
    c.start = postings + <usize>load<u32>(t);
    c.pos = c.start;
    c.df = load<i32>(t, 4);
    c.skipFirst = load<i32>(t, 8);
    c.blockFirst = load<i32>(t, 12);
    c.w = load<f64>(t, 16);
    c.ub = load<f64>(t, 24);
    c.nSkips = c.df > 0 ? ((c.df + SKIP_BLOCK - 1) >>> SKIP_SHIFT) - 1 : 0;
    c.doc = -1;
    c.tf = 0;
    c.index = -1;
    c.blk = 0;
    store<i32>(contribDoc + (<usize>i << 2), -1);
    store<f64>(bound + (<usize>(i + 1) << 3), boundAt(i) + c.ub);
    c.next();
  }
  let theta = -Infinity;
  let firstEssential = 0;
  let checkedTo = -1;
  for (;;) {
    let doc = NO_MORE_DOCS;
    for (let i = firstEssential; i < n; i++) {
      const d = cursor(i).doc;
      if (d < doc) doc = d;
    }
    if (doc == NO_MORE_DOCS) break;
    if (doc > checkedTo && theta > -Infinity) {
      // Region check: up to the first end of the essential cursors' blocks, can any document beat θ?
      let end = NO_MORE_DOCS - 1;
      for (let i = firstEssential; i < n; i++) {
        const c = cursor(i);
        if (c.doc != NO_MORE_DOCS) {
          const e = c.blockEnd(c.block);
          if (e < end) end = e;
        }
      }
      let regionBound: f64 = 0;
      for (let i = firstEssential; i < n; i++) {
        const c = cursor(i);
        if (c.doc <= end) regionBound += c.blockBound(c.block);
      }
      if (regionBound + boundAt(firstEssential) <= theta) {
        for (let i = firstEssential; i < n; i++) {
          const c = cursor(i);
          if (c.doc <= end) c.advance(end + 1);
        }
        continue;
      }
      checkedTo = end;
    }
    const norm = normOf(doc);
    let score: f64 = 0;
    for (let i = firstEssential; i < n; i++) {
      const c = cursor(i);
      if (c.doc == doc) {
        const x = (c.w * <f64>c.tf) / (<f64>c.tf + norm);
        record(i, doc, x);
        score += x;
        c.next();
      }
    }
    // Non-essential terms, strongest first, each bounded by its block before it is probed.
    let alive = true;
    for (let i = firstEssential - 1; i >= 0; i--) {
      if (score + boundAt(i + 1) <= theta) {
        alive = false;
        break;
      }
      const c = cursor(i);
      if (c.doc > doc) continue;
      if (score + boundAt(i) + c.blockBound(c.shallow(doc)) <= theta) {
        alive = false;
        break;
      }
      c.advance(doc);
      if (c.doc == doc) {
        const x = (c.w * <f64>c.tf) / (<f64>c.tf + norm);
        record(i, doc, x);
        score += x;
      }
    }
    if (!alive) continue;
    // The score in the fixed order (terms by ascending bound), whatever was probed first.
    let s: f64 = 0;
    for (let i = 0; i < n; i++) if (load<i32>(contribDoc + (<usize>i << 2)) == doc) s += load<f64>(contrib + (<usize>i << 3));
    if (s <= theta) continue;
    push(doc, s);
    const t = topSize < topK ? -Infinity : topScore(0);
    if (t > theta) {
      theta = t;
      while (firstEssential < n && boundAt(firstEssential + 1) <= theta) firstEssential++;
    }
  }
  for (let i = 0; i < topSize; i++) {
    store<i32>(output + (<usize>i << 2), topDoc(i));
    store<f64>(output + (<usize>MAX_K << 2) + (<usize>i << 3), topScore(i));
  }
  return topSize;
}
