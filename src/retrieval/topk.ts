/** Top-k selection with a bounded binary min-heap: O(n log k) over n candidates. */
import type { ScoredDoc } from './types.js';

/** Ranking order: higher score first, then the smaller document number. */
export function rankOrder(a: ScoredDoc, b: ScoredDoc): number {
  return b.score - a.score || a.doc - b.doc;
}

export class TopK {
  private readonly docs: Int32Array;
  private readonly scores: Float64Array;
  private size = 0;

  constructor(private readonly k: number) {
    this.docs = new Int32Array(Math.max(1, k));
    this.scores = new Float64Array(Math.max(1, k));
  }

  /** Lowest score currently kept (−Infinity until full). */
  get threshold(): number {
    return this.size < this.k ? -Infinity : this.scores[0]!;
  }

  // Heap order: lower score first; on equal scores the larger doc number is "lower", so that ties
  // resolve to the smaller document number (corpus order) in the final ranking.
  private less(i: number, j: number): boolean {
    const si = this.scores[i]!;
    const sj = this.scores[j]!;
    return si < sj || (si === sj && this.docs[i]! > this.docs[j]!);
  }

  push(doc: number, score: number): void {
    if (this.k <= 0) return;
    if (this.size < this.k) {
      let i = this.size++;
      this.docs[i] = doc;
      this.scores[i] = score;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!this.less(i, parent)) break;
        this.swap(i, parent);
        i = parent;
      }
      return;
    }
    const s0 = this.scores[0]!;
    if (score < s0 || (score === s0 && doc > this.docs[0]!)) return;
    this.docs[0] = doc;
    this.scores[0] = score;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < this.size && this.less(l, m)) m = l;
      if (r < this.size && this.less(r, m)) m = r;
      if (m === i) break;
      this.swap(i, m);
      i = m;
    }
  }

  private swap(i: number, j: number): void {
    const d = this.docs[i]!;
    this.docs[i] = this.docs[j]!;
    this.docs[j] = d;
    const s = this.scores[i]!;
    this.scores[i] = this.scores[j]!;
    this.scores[j] = s;
  }

  /** Best first; equal scores in ascending document order. */
  sorted(): ScoredDoc[] {
    const out: ScoredDoc[] = [];
    for (let i = 0; i < this.size; i++) out.push({ doc: this.docs[i]!, score: this.scores[i]! });
    return out.sort(rankOrder);
  }
}
