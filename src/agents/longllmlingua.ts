/**
 * LongLLMLingua (Jiang et al., ACL 2024, "LongLLMLingua: Accelerating and Enhancing LLMs in Long Context
 * Scenarios via Prompt Compression"), a baseline of ReasonRAG's table, as standard RAG over the
 * compressed documents (compressed-rag.ts). Coarse to fine, with a small causal LM's log-probabilities:
 *
 * 1. Question-aware coarse ranking: each document d_k is scored by the perplexity of the question, with
 *    the paper's restrictive sentence after it, given the document — the mean −log p of those tokens in
 *    one echo request of `d_k + question + " " + restriction` (nothing between the document and the
 *    question, as LLMLingua joins them) — and the documents are ordered by it,
 *    lowest first (the most relevant first: the "sort" reordering).
 * 2. Budget: the target is `(L_q + Σ L_k)·rate − L_q` tokens (L in the scorer's tokens; 100 when
 *    negative), plus 100 ("+100", the context budget); documents are taken in ranked order, each
 *    subtracting its length, until the budget is spent (the one that overspends it is kept).
 * 3. Dynamic compression ratio: with τ = target / (Σ_kept (L_k + 2) + 1), the document at rank k of N
 *    keeps the share τ + 0.3·(N − 1 − 2k)/(N − 1) of its tokens, clipped to [0, 1] — the first gets τ + 0.3,
 *    the last τ − 0.3.
 * 4. Question-aware fine compression: two echo requests over the kept documents joined by blank lines,
 *    one alone and one after the question; each token's contrastive score is its −log p alone minus its
 *    −log p after the question (how much more the question makes it expected). A document at ratio r
 *    keeps its tokens scoring strictly above the ⌊n·r⌋-th highest of all n scores (r = 1: all of them);
 *    a token with no score is kept.
 *
 * Settings are LLMLingua's documented LongLLMLingua ones, which FlashRAG (what ReasonRAG ran) passes:
 * rate 0.55, condition_in_question "after_condition", reorder "sort", dynamic ratio 0.3, condition_compare,
 * context budget "+100", rank method "longllmlingua"; FlashRAG's scorer was Llama-2-7B.
 *
 * Left out: (a) the iterative token-level compression — the reference scores windows of 200 tokens one
 * after another, each conditioned on the already compressed text before it (a growing KV cache); here
 * every token is scored once, on the uncompressed context, and one threshold per document is taken from
 * the whole context's scores; (b) subsequence recovery, which maps the reader's reply back onto the
 * original text — a post-processing of long answers, not a part of the compression; (c) the reference
 * deciding each token by the score of the token after it (its loss vector is shifted by one); here a
 * token is decided by its own score; (d) compression of the blank lines between documents (they are
 * kept, and the compressed documents are shown one a line), and the question appended to the
 * compressed context (the answer prompt states it). Kept are all the components the paper's ablation
 * takes away one at a time that act on the prompt: the question-aware coarse ranking (with the
 * restrictive statement; its removal costs the most there), document reordering, the dynamic ratio and
 * the question-aware fine-grained (contrastive) compression.
 */
import { InputError } from '../core/errors.js';
import type { RetrievedDoc } from '../core/trajectory.js';
import type { LLM } from '../llm/types.js';
import { compressedRag, docLines, isTextToken, nanMean, type ScoredToken, scoreText, selfInfo, withAuxModel } from './compressed-rag.js';
import type { Protocol } from './protocol.js';

/** The restrictive statement LongLLMLingua appends to the question when ranking documents. */
export const LLMLINGUA_RESTRICTION = 'We can get the answer to this question in the given documents.';

/** LongLLMLingua's documented settings (LLMLingua's README, FlashRAG's run). */
export const LONGLLMLINGUA_DEFAULTS = { rate: 0.55, dynamicRatio: 0.3, budget: 100 } as const;

/** Options of {@link longLlmLingua}. */
export interface LongLLMLinguaOptions {
  /** The small causal LM that scores (default: the agent's own model); the paper's and FlashRAG's is Llama-2-7B. */
  scorer?: LLM;
  /** Target share of the prompt's tokens kept (default 0.55). */
  rate?: number;
  /** Spread of the per-document ratios around τ (default 0.3). */
  dynamicRatio?: number;
  /** Tokens added to the coarse-level budget (default 100). */
  budget?: number;
}

/** One document as ranked: its place in the input, its length in scorer tokens, and the question's perplexity (mean −log p) given it. */
export interface RankedDoc {
  index: number;
  tokens: number;
  perplexity: number;
}

const isText = isTextToken;

/**
 * Step 1: each document's length and the question's mean −log p after it (one echo request each, at
 * once), in ranked order, lowest first (ties and unscored ones keep their input order, unscored last).
 * Also the question's length in scorer tokens (read off the first document's request).
 */
export async function rankDocuments(question: string, lines: readonly string[], scorer: LLM): Promise<{ ranked: RankedDoc[]; questionTokens: number }> {
  let questionTokens = 0;
  const docs = await Promise.all(
    lines.map(async (line, index): Promise<RankedDoc> => {
      const tokens = (await scoreText(scorer, `${line}${question} ${LLMLINGUA_RESTRICTION}`, 'LongLLMLingua')).filter(isText);
      const cut = line.length;
      const after = tokens.filter((t) => t.start >= cut);
      if (index === 0) questionTokens = after.filter((t) => t.start < cut + question.length).length;
      return { index, tokens: tokens.length - after.length, perplexity: nanMean(after.map(selfInfo)) };
    }),
  );
  const key = (d: RankedDoc) => (Number.isNaN(d.perplexity) ? Number.POSITIVE_INFINITY : d.perplexity);
  return { ranked: [...docs].sort((a, b) => key(a) - key(b) || a.index - b.index), questionTokens };
}

/** Step 2: the token target (without the budget bonus) and the documents kept, in ranked order. */
export function coarseBudget(ranked: readonly RankedDoc[], questionTokens: number, rate: number, bonus: number): { target: number; kept: RankedDoc[] } {
  const target = (questionTokens + ranked.reduce((s, d) => s + d.tokens, 0)) * rate - questionTokens;
  let left = (target < 0 ? 100 : target) + bonus;
  const kept: RankedDoc[] = [];
  for (const d of ranked) {
    left -= d.tokens;
    kept.push(d);
    if (left < 0) break;
  }
  return { target, kept };
}

/** Step 3: the share of tokens each kept document keeps, by rank. */
export function dynamicRatios(kept: readonly RankedDoc[], target: number, spread: number): number[] {
  const n = kept.length;
  const tau = target / (kept.reduce((s, d) => s + d.tokens + 2, 0) + 1);
  return kept.map((_, k) => Math.max(0, Math.min(1, tau + (n > 1 ? (spread * (n - 1 - 2 * k)) / (n - 1) : 0))));
}

/** The threshold of a ratio over scores: the ⌊n·ratio⌋-th highest (clamped to the list), −∞ at ratio 1; a token is kept when strictly above it. */
export function contrastThreshold(scores: readonly number[], ratio: number): number {
  if (ratio >= 1) return Number.NEGATIVE_INFINITY;
  const v = scores.filter((x) => !Number.isNaN(x)).sort((a, b) => b - a);
  if (v.length === 0) return Number.NEGATIVE_INFINITY;
  return v[Math.max(0, Math.min(v.length - 1, Math.floor(v.length * ratio) - 1))]!;
}

/** Step 4: the kept documents (in ranked order), each cut to its tokens of high contrastive score. */
export async function fineCompress(question: string, texts: readonly string[], ratios: readonly number[], scorer: LLM): Promise<string[]> {
  const context = texts.join('\n\n');
  const lead = `${question}\n\n`;
  const [alone, after] = await Promise.all([scoreText(scorer, context, 'LongLLMLingua'), scoreText(scorer, lead + context, 'LongLLMLingua')]);
  // The same token after the question: the one covering the same characters of the context (a later byte
  // piece, covering none, by its place among the pieces at that point).
  const keyOf = (tokens: readonly ScoredToken[]) => {
    const seen = new Map<string, number>();
    return tokens.map((t) => {
      const k = `${t.start}:${t.end}`;
      const n = seen.get(k) ?? 0;
      seen.set(k, n + 1);
      return `${k}:${n}`;
    });
  };
  const afterShifted = after.filter((t) => isText(t) && t.start >= lead.length).map((t) => ({ ...t, start: t.start - lead.length, end: t.end - lead.length }));
  const conditioned = new Map<string, ScoredToken>();
  keyOf(afterShifted).forEach((k, i) => conditioned.set(k, afterShifted[i]!));
  const spans: { start: number; end: number }[] = [];
  let at = 0;
  for (const t of texts) {
    spans.push({ start: at, end: at + t.length });
    at += t.length + 2;
  }
  const own = alone.filter(isText);
  const ownKeys = keyOf(own);
  const scored = own.map((t, i) => {
    const c = conditioned.get(ownKeys[i]!);
    const contrast = c ? selfInfo(t) - selfInfo(c) : Number.NaN;
    // A later byte piece belongs to the document of the character before it.
    const at = t.end > t.start ? t : { start: t.start - 1, end: t.start };
    return { t, contrast, doc: spans.findIndex((s) => s.start < at.end && at.start < s.end) };
  });
  const all = scored.filter((x) => x.doc >= 0).map((x) => x.contrast);
  const thresholds = ratios.map((r) => contrastThreshold(all, r));
  return texts.map((text, k) => {
    const s = spans[k]!;
    return scored
      .filter((x) => x.doc === k && (Number.isNaN(x.contrast) || x.contrast > thresholds[k]!))
      .map((x) => context.slice(Math.max(x.t.start, s.start), Math.min(x.t.end, s.end)))
      .join('')
      .trim();
  });
}

/** The documents compressed by LongLLMLingua (see the module comment): the kept ones, most relevant first, one a line. */
export async function longLlmLinguaCompress(question: string, docs: readonly RetrievedDoc[], scorer: LLM, opts: LongLLMLinguaOptions = {}): Promise<string> {
  if (docs.length === 0) return '';
  const lines = docLines(docs);
  const { ranked, questionTokens } = await rankDocuments(question, lines, scorer);
  const { target, kept } = coarseBudget(ranked, questionTokens, opts.rate ?? LONGLLMLINGUA_DEFAULTS.rate, opts.budget ?? LONGLLMLINGUA_DEFAULTS.budget);
  const ratios = dynamicRatios(kept, target, opts.dynamicRatio ?? LONGLLMLINGUA_DEFAULTS.dynamicRatio);
  const texts = await fineCompress(question, kept.map((d) => lines[d.index]!), ratios, scorer);
  return texts.filter(Boolean).join('\n');
}

/** LongLLMLingua with a scorer and settings of your own (defaults: the agent's model, rate 0.55, dynamic ratio 0.3, budget +100). */
export function longLlmLingua(opts: LongLLMLinguaOptions = {}): Protocol {
  const rate = opts.rate ?? LONGLLMLINGUA_DEFAULTS.rate;
  if (!(rate > 0 && rate <= 1)) throw new InputError(`longllmlingua: the rate is the share of the prompt's tokens kept, above 0 and at most 1, not ${rate}`);
  return withAuxModel((aux) => longLlmLingua({ ...opts, scorer: aux }), compressedRag({
    name: 'longllmlingua',
    description:
      "LongLLMLingua: one search; documents ranked by the question's perplexity given each, kept to budget and cut to ~55% of tokens by question-contrastive perplexity, then answer; scored by echo log-probs (vLLM/SGLang) of a small LM (the paper's Llama-2-7B, as --aux-llm; default: the agent's model)",
    compress: (question, docs, llm) => longLlmLinguaCompress(question, docs, opts.scorer ?? llm, opts),
  }));
}

export const longLlmLinguaProtocol = longLlmLingua();
