/**
 * The offline embedder: feature hashing ("the hashing trick") of analysed word unigrams, word
 * bigrams and character trigrams into a fixed-size signed vector, sublinear counts, L2-normalised.
 * It is LEXICAL — it matches surface forms, with some tolerance for spelling through the character
 * n-grams — and stands in for a neural encoder where none can be loaded. Results obtained with it
 * say nothing about dense retrieval with a real model.
 */
import { Analyzer } from '../analyzer.js';
import { type Embedder, l2normalize } from './base.js';

/** 32-bit FNV-1a over the UTF-16 code units of a string. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export const DEFAULT_HASH_DIM = 512;

/**
 * The offline embedder (`hash:DIM`, default 512 dimensions): word unigrams, bigrams and character
 * trigrams hashed into a signed vector. Lexical, not semantic: results with it say nothing about dense
 * retrieval with a neural encoder.
 */
export class HashedNgramEmbedder implements Embedder {
  readonly lexical = true;
  readonly dim: number;
  readonly spec: string;
  private readonly analyzer = new Analyzer();

  constructor(dim = DEFAULT_HASH_DIM) {
    this.dim = dim;
    this.spec = `hash:${dim}`;
  }

  private add(v: Float32Array, feature: string, weight: number): void {
    const h = fnv1a(feature);
    v[h % this.dim]! += h & 0x80000000 ? -weight : weight;
  }

  /** The unit-length vector of one text: hashed features weighted log(1 + count). Synchronous and deterministic. */
  embedOne(text: string): Float32Array {
    const v = new Float32Array(this.dim);
    const terms = this.analyzer.analyze(text);
    const counts = new Map<string, number>();
    const bump = (f: string, w: number) => counts.set(f, (counts.get(f) ?? 0) + w);
    for (let i = 0; i < terms.length; i++) {
      const t = terms[i]!;
      bump(`w:${t}`, 1);
      if (i > 0) bump(`b:${terms[i - 1]} ${t}`, 0.5);
      const padded = `<${t}>`;
      for (let j = 0; j + 3 <= padded.length; j++) bump(`c:${padded.slice(j, j + 3)}`, 0.25);
    }
    // Sublinear weighting, so that a repeated word does not dominate.
    for (const [f, c] of counts) this.add(v, f, Math.log1p(c));
    return l2normalize(v);
  }

  /** {@link HashedNgramEmbedder.embedOne} of each text; queries and passages are embedded alike. */
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedOne(t));
  }
}
