/**
 * The English analyzer of the BM25 index, modelled on Lucene's EnglishAnalyzer (what Pyserini's
 * Wikipedia indexes use):
 *   1. split into maximal runs of Unicode letters and digits (Lucene uses UAX #29 word breaks, which
 *      keeps "U.S.A" or "1,000" together; here they split — a documented difference);
 *   2. drop the possessive "'s" / "’s";
 *   3. lowercase;
 *   4. drop Lucene's 33 English stop words;
 *   5. Porter stemming (the `stemmer` package, the original Porter algorithm as Lucene's PorterStemFilter).
 * Results are memoised per surface token: stemming dominates otherwise.
 */
import { stemmer } from 'stemmer';

/** Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET. */
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set([
  'a', 'an', 'and', 'are', 'as', 'at', 'be', 'but', 'by', 'for', 'if', 'in', 'into', 'is', 'it', 'no', 'not', 'of', 'on', 'or',
  'such', 'that', 'the', 'their', 'then', 'there', 'these', 'they', 'this', 'to', 'was', 'will', 'with',
]);

/** Options of an {@link Analyzer}. */
export interface AnalyzerOptions {
  /** Lowercase words dropped from the terms (default: Lucene's 33 English stop words, `ENGLISH_STOP_WORDS`). */
  stopWords?: ReadonlySet<string>;
  /** Porter stemming (default true). */
  stem?: boolean;
}

const NON_ASCII_WORD = /[\p{L}\p{N}\p{M}]/u;

function isWordCode(c: number): boolean {
  if (c < 128) return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57);
  if (c >= 0xd800 && c <= 0xdfff) return true; // astral letters arrive as surrogate pairs
  return NON_ASCII_WORD.test(String.fromCharCode(c));
}

/**
 * Text → index terms as Lucene's EnglishAnalyzer makes them (word runs, possessives dropped,
 * lowercase,
 * stop words removed, Porter stems), so BM25 scores match Pyserini's English indexes closely. Memoises
 * terms.
 */
export class Analyzer {
  private readonly stopWords: ReadonlySet<string>;
  private readonly stem: boolean;
  private readonly memo = new Map<string, string | null>();

  constructor(opts: AnalyzerOptions = {}) {
    this.stopWords = opts.stopWords ?? ENGLISH_STOP_WORDS;
    this.stem = opts.stem ?? true;
  }

  /** Options as stored in an index manifest, so the index re-creates the same analyzer at query time. */
  describe(): { name: string; stem: boolean; stopWords: string[] } {
    return { name: 'english', stem: this.stem, stopWords: [...this.stopWords] };
  }

  /** Term for one surface token, or null for a stop word. */
  private term(raw: string): string | null {
    let t = this.memo.get(raw);
    if (t !== undefined) return t;
    const lower = raw.toLowerCase();
    t = this.stopWords.has(lower) ? null : this.stem ? stemmer(lower) : lower;
    if (this.memo.size > 2_000_000) this.memo.clear(); // bounded memory on huge vocabularies
    this.memo.set(raw, t);
    return t;
  }

  /** The terms of a text, in order, stop words removed. */
  analyze(text: string): string[] {
    const out: string[] = [];
    const n = text.length;
    let i = 0;
    while (i < n) {
      while (i < n && !isWordCode(text.charCodeAt(i))) i++;
      if (i >= n) break;
      const start = i;
      while (i < n && isWordCode(text.charCodeAt(i))) i++;
      const t = this.term(text.slice(start, i));
      if (t !== null) out.push(t);
      // Possessive: skip the "s" of "'s" / "’s" when it ends the word.
      const c = text.charCodeAt(i);
      if ((c === 39 || c === 0x2019) && (text.charCodeAt(i + 1) | 32) === 115 && !isWordCode(text.charCodeAt(i + 2))) i += 2;
    }
    return out;
  }
}
