/**
 * Answer normalisation of the SQuAD / HotpotQA / FlashRAG scripts (ReasonRAG App. D and ARENA App. D.1
 * score with it), shared by the metrics and by the agents that check what they have retrieved.
 */

export interface NormalizeOptions {
  /** ARENA's variant also maps "_" to a space before normalising. */
  underscoreToSpace?: boolean;
  /** Keep a/an/the (ReasonRAG's labeller normalises without removing articles). */
  keepArticles?: boolean;
}

// Python's string.punctuation: ASCII only, so unicode punctuation (–, “, ’) survives, as in the reference.
const PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g;
// Python's `\b(a|an|the)\b` with str patterns: word characters are unicode letters, digits and "_".
const ARTICLES = /(?<![\p{L}\p{N}_])(?:a|an|the)(?![\p{L}\p{N}_])/gu;
// Python's str.split() whitespace (str.isspace), which differs from JS \s (e.g. \x1c-\x1f yes, \ufeff no).
// Python's re `\s` on str patterns is the same set.
export const PY_SPACE_CLASS = '[\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const PY_WHITESPACE = new RegExp(`${PY_SPACE_CLASS}+`);
const PY_STRIP = new RegExp(`^${PY_SPACE_CLASS}+|${PY_SPACE_CLASS}+$`, 'g');

/** Python's `str.strip()`. */
export function pyStrip(s: string): string {
  return s.replace(PY_STRIP, '');
}

/** Whitespace tokens as Python's `str.split()` returns them. */
export function pySplit(s: string): string[] {
  return s.split(PY_WHITESPACE).filter((t) => t !== '');
}

// Letters that gained a lower-case mapping after Unicode 14 (Python 3.11's tables; 3.12 and 3.13 add none of
// these either): Cyrillic TJE U+1C89, Latin U+A7CB–A7DC (Unicode 16), Garay U+10D50–10D65 (16) and
// Beria Erfe U+16EA0–16EB8 (17). Node's ICU lower-cases them; Python's scorers leave them as they are.
const NEWER_UPPER = /[\u1C89\uA7CB\uA7CC\uA7CE\uA7D2\uA7D4\uA7DA\uA7DC\u{10D50}-\u{10D65}\u{16EA0}-\u{16EB8}]/u;
const NEWER_UPPER_SPLIT = new RegExp(`(${NEWER_UPPER.source})`, 'u');

/**
 * Python 3.11's `str.lower()`: JavaScript's toLowerCase, except for the letters whose case mapping is newer
 * than Python's Unicode 14 tables, which stay as they are (an answer holding U+A7CB does not match a gold
 * holding its lower-case U+0264 in the authors' scorers). Final sigma is handled alike by both.
 */
export function pyLower(s: string): string {
  if (!NEWER_UPPER.test(s)) return s.toLowerCase();
  return s.split(NEWER_UPPER_SPLIT).map((part, k) => (k % 2 === 1 ? part : part.toLowerCase())).join('');
}

/** lowercase → remove punctuation → remove articles → collapse whitespace (the SQuAD order). */
export function normalizeAnswer(s: string, opts: NormalizeOptions = {}): string {
  let t = opts.underscoreToSpace ? s.replaceAll('_', ' ') : s;
  t = pyLower(t);
  t = t.replace(PUNCTUATION, '');
  if (!opts.keepArticles) t = t.replace(ARTICLES, ' ');
  return pySplit(t).join(' ');
}

/** Sentences of a passage's text (split after . ! ?), trimmed, empty ones dropped. */
export function sentencesOf(text: string): string[] {
  return text.split(/(?<=[.!?])\s+/).map((s) => s.trim()).filter(Boolean);
}
