/**
 * Selective-Context (Li, Dong, Guerin, Lin, EMNLP 2023, "Compressing Context to Enhance Inference
 * Efficiency of Large Language Models"), a baseline of ReasonRAG's table, as standard RAG over the
 * compressed documents (compressed-rag.ts). A small causal LM gives each token its self-information
 * I(x_t) = −log p(x_t | x_<t); tokens are grouped into lexical units (sentences, phrases or tokens) and
 * the units whose self-information falls below the `ratio` percentile of all units' are dropped.
 *
 * As the authors' code and FlashRAG's copy of it (what ReasonRAG ran) do: the documents are written as
 * `Doc i(Title: "…") text` lines (FlashRAG's refiners') and their whitespace collapsed; the text is split into sentences after
 * "." or "?" and a space (not after an initialism such as "U.S." nor an abbreviation such as "Mr."); each sentence
 * is scored on its own (one echo request per sentence, made concurrently); a unit's self-information
 * is the MEAN over its tokens (the paper writes a sum; the code it released takes the mean); a token
 * spread over k units gives each a k-th of its self-information; the threshold is numpy's `nanpercentile`
 * (linear interpolation) and a unit is dropped when strictly below it; dropped phrases and tokens leave
 * nothing behind. Defaults: phrase units (the paper's default) and ratio 0.5 (FlashRAG's `reduce_ratio`,
 * which ReasonRAG ran; the authors' code defaults to 0.35).
 *
 * Left out: spaCy's noun chunks. The reference phrase units are spaCy tokens with noun chunks merged,
 * which need a parser; here a phrase is approximated without one — words and punctuation marks, with a
 * run of capitalised words ("Maren Tolvik") merged, and a determiner or number merged with what follows
 * it and a head word ("a 1971 film", "an American actress") — see {@link phraseUnits}. The reference
 * prefixes each sentence with GPT-2's `<|endoftext|>` so its first token is scored too; a server echoes
 * no log-probability for a prompt's first token unless it adds one (vLLM adds Llama's BOS, not GPT-2's or
 * Qwen's), so by default that token is left out of its unit's mean — `prefix: '<|endoftext|>'` restores
 * the reference for GPT-2.
 */
import { InputError } from '../core/errors.js';
import type { RetrievedDoc } from '../core/trajectory.js';
import type { LLM } from '../llm/types.js';
import { compressedRag, docLines, isBytePiece, isTextToken, nanMean, type ScoredToken, scoreText, selfInfo, withAuxModel } from './compressed-rag.js';
import type { Protocol } from './protocol.js';

/** The lexical units Selective-Context filters. */
export type LexicalUnit = 'sentence' | 'phrase' | 'token';

/** FlashRAG's reduce ratio (ReasonRAG's setting): the share of units, by self-information percentile, that is dropped. */
export const SELECTIVE_CONTEXT_RATIO = 0.5;
/** The paper's default unit. */
export const SELECTIVE_CONTEXT_UNIT: LexicalUnit = 'phrase';

/** Options of {@link selectiveContext}. */
export interface SelectiveContextOptions {
  /** The causal LM that scores the text (default: the agent's own model); the paper's is GPT-2 (FlashRAG: gpt2). */
  scorer?: LLM;
  /** Share of units dropped, 0–1 (default {@link SELECTIVE_CONTEXT_RATIO}). */
  ratio?: number;
  /** Unit of filtering (default phrase). */
  unit?: LexicalUnit;
  /** Text sent before each sentence and not scored: `<|endoftext|>` gives GPT-2 the context the reference gives it. */
  prefix?: string;
}

/** Sentences as the reference splits them: after "." or "?" and one whitespace, unless the stop closes an initialism ("U.S.") or a capitalised two-letter abbreviation ("Mr."). */
export function scSentences(text: string): string[] {
  return text
    // Python's \w is Unicode ("É.U." is an initialism there too).
    .split(/(?<![\p{L}\p{N}_]\.[\p{L}\p{N}_].)(?<![A-Z][a-z]\.)(?<=[.?])\s/u)
    .map((s) => s.trim())
    .filter(Boolean);
}

const DETERMINERS = new Set(['a', 'an', 'the', 'this', 'that', 'these', 'those', 'his', 'her', 'its', 'their', 'our', 'my', 'your', 'some', 'any', 'no', 'every', 'each', 'another']);
const FUNCTION_WORDS = new Set([
  ...DETERMINERS,
  'i', 'he', 'she', 'it', 'we', 'they', 'you', 'him', 'them', 'us', 'me', 'who', 'whom', 'whose', 'which', 'what', 'where', 'when', 'why', 'how',
  'is', 'was', 'are', 'were', 'be', 'been', 'being', 'am', 'has', 'have', 'had', 'do', 'does', 'did', 'will', 'would', 'can', 'could', 'may', 'might', 'shall', 'should', 'must',
  'of', 'in', 'on', 'at', 'by', 'for', 'with', 'from', 'to', 'into', 'onto', 'about', 'as', 'after', 'before', 'during', 'since', 'until', 'over', 'under', 'between', 'through', 'against', 'among', 'within', 'without',
  'and', 'or', 'but', 'nor', 'so', 'yet', 'if', 'than', 'then', 'because', 'while', 'although', 'though', 'not', 'also',
]);

const isWord = (t: string) => /^[\p{L}\p{N}]/u.test(t);
const isNumber = (t: string) => /^\p{N}/u.test(t);
const isCapitalised = (t: string) => /^\p{Lu}/u.test(t) && !FUNCTION_WORDS.has(t.toLowerCase());
/** A word that can head a noun phrase after a determiner: a content word that does not read as a verb form or an adverb. */
const isHead = (t: string) => isWord(t) && !FUNCTION_WORDS.has(t.toLowerCase()) && !/(?:ed|ing|ly)$/i.test(t);

/**
 * The phrase units of a sentence, each with the whitespace before it, so that they concatenate back to
 * the sentence: words and punctuation marks, a run of capitalised words or numbers merged into one unit,
 * and a determiner or number merged with what follows it: such a run, then one head word that does not
 * read as a verb form or an adverb. (The reference merges spaCy's noun chunks; this approximates them
 * without a parser.)
 */
export function phraseUnits(sentence: string): string[] {
  const parts: { text: string; lead: string }[] = [];
  const re = /(\s*)([\p{L}\p{N}]+(?:['’.\-][\p{L}\p{N}]+)*|\S)/gu;
  for (let m = re.exec(sentence); m; m = re.exec(sentence)) parts.push({ lead: m[1]!, text: m[2]! });
  const units: string[] = [];
  let i = 0;
  while (i < parts.length) {
    let j = i;
    const w = parts[i]!.text;
    if (DETERMINERS.has(w.toLowerCase()) || isNumber(w) || isCapitalised(w)) {
      // One determiner, numbers, then a run of capitalised words (and numbers).
      if (DETERMINERS.has(w.toLowerCase())) j++;
      while (j < parts.length && isNumber(parts[j]!.text)) j++;
      const runStart = j;
      while (j < parts.length && (isCapitalised(parts[j]!.text) || (j > runStart && isNumber(parts[j]!.text)))) j++;
      // The head noun: after a determiner or number ("a 1971 film", "an American actress"), not after a bare name.
      if (runStart > i && j < parts.length && isHead(parts[j]!.text)) j++;
    }
    if (j === i) j = i + 1;
    units.push(parts.slice(i, j).map((p) => p.lead + p.text).join(''));
    i = j;
  }
  return units;
}

/**
 * Each unit's self-information: the mean of what its tokens give it, a token overlapping k units giving
 * each 1/k of its −log p (the reference's rule); tokens with no log-probability and tokens of whitespace
 * only give nothing; a unit given nothing is NaN (never dropped). `units` concatenate to the scored text.
 */
export function unitSelfInfo(units: readonly string[], tokens: readonly ScoredToken[]): number[] {
  const spans: { start: number; end: number }[] = [];
  let at = 0;
  for (const u of units) {
    spans.push({ start: at, end: at + u.length });
    at += u.length;
  }
  const gathered = units.map((): number[] => []);
  for (const tok of tokens) {
    // A later byte piece of a split character goes to the unit of that character (the one before it).
    const t = isBytePiece(tok) && tok.start > 0 ? { ...tok, start: tok.start - 1 } : tok;
    if (t.end <= t.start || /^\s*$/.test(t.token)) continue;
    const hit = spans.flatMap((s, k) => (s.start < t.end && t.start < s.end ? [k] : []));
    const info = selfInfo(t);
    for (const k of hit) gathered[k]!.push(info / hit.length);
  }
  return gathered.map(nanMean);
}

/** numpy's `nanpercentile(values, p)` with linear interpolation (p in 0–100); NaN when no value is a number. */
export function nanPercentile(values: readonly number[], p: number): number {
  const v = values.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  if (v.length === 0) return Number.NaN;
  const rank = (p / 100) * (v.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return v[lo]! + (v[hi]! - v[lo]!) * (rank - lo);
}

/** Which units survive: those whose self-information is not below the `ratio` percentile (NaN ones always do). */
export function keepInformative(infos: readonly number[], ratio: number): boolean[] {
  const threshold = nanPercentile(infos, ratio * 100);
  return infos.map((x) => !(x < threshold));
}

/** The documents compressed by Selective-Context (see the module comment). */
export async function selectiveContextCompress(docs: readonly RetrievedDoc[], scorer: LLM, opts: SelectiveContextOptions = {}): Promise<string> {
  const ratio = opts.ratio ?? SELECTIVE_CONTEXT_RATIO;
  const level = opts.unit ?? SELECTIVE_CONTEXT_UNIT;
  const prefix = opts.prefix ?? '';
  const sentences = scSentences(docLines(docs).join('\n').replace(/\s+/g, ' '));
  if (sentences.length === 0) return '';
  const scored = await Promise.all(
    sentences.map(async (s) =>
      (await scoreText(scorer, prefix + s, 'Selective-Context'))
        .filter((t) => t.start >= prefix.length)
        .map((t) => ({ ...t, start: t.start - prefix.length, end: t.end - prefix.length })),
    ),
  );
  if (level === 'sentence') {
    // Every token of the sentence counts, whitespace ones too (the reference's np.mean over all of them).
    const infos = scored.map((tokens) => nanMean(tokens.map(selfInfo)));
    const keep = keepInformative(infos, ratio);
    return sentences.filter((_, i) => keep[i]).join(' ');
  }
  // Phrases or tokens: units of every sentence together, the first of each later sentence after a space.
  const units: string[] = [];
  const infos: number[] = [];
  sentences.forEach((s, i) => {
    const tokens = scored[i]!;
    // Token units: every token of the text, a later byte piece of a split character as a unit with no text of its own.
    const own = level === 'phrase' ? phraseUnits(s) : tokens.filter(isTextToken).map((t) => s.slice(t.start, t.end));
    const info = level === 'phrase' ? unitSelfInfo(own, tokens) : tokens.filter(isTextToken).map(selfInfo);
    if (i > 0 && own.length > 0) own[0] = ` ${own[0]!.trimStart()}`;
    units.push(...own);
    infos.push(...info);
  });
  const keep = keepInformative(infos, ratio);
  return units.filter((_, i) => keep[i]).join('').trim();
}

/** Selective-Context with a scorer, ratio and unit of your own (defaults: the agent's model, 0.5, phrase). */
export function selectiveContext(opts: SelectiveContextOptions = {}): Protocol {
  const ratio = opts.ratio ?? SELECTIVE_CONTEXT_RATIO;
  if (!(ratio >= 0 && ratio <= 1)) throw new InputError(`selective-context: the ratio is the share of units dropped, from 0 to 1, not ${ratio}`);
  return withAuxModel((aux) => selectiveContext({ ...opts, scorer: aux }), compressedRag({
    name: 'selective-context',
    description:
      "Selective-Context: one search; the half of the documents' phrases with least self-information dropped, then answer; scored by echo log-probs (vLLM/SGLang) of a small causal LM (the paper's GPT-2, as --aux-llm; default: the agent's model)",
    compress: (_question, docs, llm) => selectiveContextCompress(docs, opts.scorer ?? llm, opts),
  }));
}

export const selectiveContextProtocol = selectiveContext();
