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
// Letters and digits assigned after Unicode 14 (every code point compared with Python 3.11's str.isalnum):
// Node's \p{L} / \p{N} have them, Python 3.11's `\w` does not, so an "a" beside one is still a word there.
const NEWER_ALNUM = '\\u{88F}\\u{C5C}\\u{CDC}\\u{1C89}-\\u{1C8A}\\u{A7CB}-\\u{A7CF}\\u{A7D2}\\u{A7D4}\\u{A7DA}-\\u{A7DC}\\u{A7F1}\\u{105C0}-\\u{105F3}\\u{10940}-\\u{10959}\\u{10D40}-\\u{10D65}\\u{10D6F}-\\u{10D85}\\u{10EC2}-\\u{10EC7}\\u{1123F}-\\u{11240}\\u{11380}-\\u{11389}\\u{1138B}\\u{1138E}\\u{11390}-\\u{113B5}\\u{113B7}\\u{113D1}\\u{113D3}\\u{116D0}-\\u{116E3}\\u{11BC0}-\\u{11BE0}\\u{11BF0}-\\u{11BF9}\\u{11DB0}-\\u{11DDB}\\u{11DE0}-\\u{11DE9}\\u{11F02}\\u{11F04}-\\u{11F10}\\u{11F12}-\\u{11F33}\\u{11F50}-\\u{11F59}\\u{1342F}\\u{13441}-\\u{13446}\\u{13460}-\\u{143FA}\\u{16100}-\\u{1611D}\\u{16130}-\\u{16139}\\u{16D40}-\\u{16D6C}\\u{16D70}-\\u{16D79}\\u{16EA0}-\\u{16EB8}\\u{16EBB}-\\u{16ED3}\\u{16FF2}-\\u{16FF6}\\u{187F8}-\\u{187FF}\\u{18CFF}\\u{18D09}-\\u{18D1E}\\u{18D80}-\\u{18DF2}\\u{1B132}\\u{1B155}\\u{1CCF0}-\\u{1CCF9}\\u{1D2C0}-\\u{1D2D3}\\u{1DF25}-\\u{1DF2A}\\u{1E030}-\\u{1E06D}\\u{1E4D0}-\\u{1E4EB}\\u{1E4F0}-\\u{1E4F9}\\u{1E5D0}-\\u{1E5ED}\\u{1E5F0}-\\u{1E5FA}\\u{1E6C0}-\\u{1E6DE}\\u{1E6E0}-\\u{1E6E2}\\u{1E6E4}-\\u{1E6E5}\\u{1E6E7}-\\u{1E6ED}\\u{1E6F0}-\\u{1E6F4}\\u{1E6FE}-\\u{1E6FF}\\u{2B739}-\\u{2B73F}\\u{2CEA2}-\\u{2CEAD}\\u{2EBF0}-\\u{2EE5D}\\u{31350}-\\u{33479}';
/**
 * One character of Python 3.11's `\w` on str patterns (`str.isalnum()` or "_", Unicode 14 tables), as a
 * regular-expression fragment for the `u` flag: Unicode letters, numbers and "_", less those assigned later.
 */
export const PY_WORD_CHAR = `(?:(?![${NEWER_ALNUM}])[\\p{L}\\p{N}_])`;
// Python's `\b(a|an|the)\b` with str patterns.
const ARTICLES = new RegExp(`(?<!${PY_WORD_CHAR})(?:a|an|the)(?!${PY_WORD_CHAR})`, 'gu');
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

/**
 * Sentences of prose, split after ". ", "! " and "? " except after an initial ("W. A. Mozart"), an
 * initialism ("the U.S. in 1990") or a common abbreviation ("Dr.", "Jr.", "St.", "vs."): for text
 * shown to or taken from a model (IRCoT's steps, ARENA's SFT analyses). {@link sentencesOf}'s plain split stays where features were fitted on it.
 */
export function proseSentences(text: string): string[] {
  const out: string[] = [];
  let from = 0;
  const re = /[.!?](?=\s+\S)/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const word = /(\S+)$/.exec(text.slice(from, m.index))?.[1] ?? '';
    // An initial ("W."), an initialism ("U.S.", "É.U.") or a common abbreviation does not end a sentence.
    if (/^\p{Lu}$/u.test(word) || /^(?:\p{L}\.)+\p{L}$/u.test(word) || /^(?:Mr|Mrs|Ms|Dr|St|Jr|Sr|Prof|Mt|vs|etc|e\.g|i\.e|No)$/i.test(word)) continue;
    out.push(text.slice(from, m.index + 1).trim());
    from = m.index + 1;
  }
  out.push(text.slice(from).trim());
  return out.filter(Boolean);
}

/** Sentences of a passage's text (split after . ! ?), trimmed, empty ones dropped. */
export function sentencesOf(text: string): string[] {
  return text.split(/(?<=[.!?])\s+/).map((s) => s.trim()).filter(Boolean);
}

/**
 * A function of a string, memoised: for text-reading code that sees the same pages and questions over
 * and over (features of every candidate of every rollout). The cache is emptied when it holds `max`.
 */
export function memoByText<T>(f: (text: string) => T, max: number): (text: string) => T {
  const cache = new Map<string, T>();
  return (text) => {
    if (cache.has(text)) return cache.get(text)!;
    const v = f(text);
    if (cache.size >= max) cache.clear();
    cache.set(text, v);
    return v;
  };
}
