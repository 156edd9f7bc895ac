/**
 * RECOMP (Xu, Shi, Choi, ICLR 2024, "RECOMP: Improving Retrieval-Augmented LMs with Compression and
 * Selective Augmentation"), a baseline of ReasonRAG's table, as standard RAG over the compressed
 * documents (compressed-rag.ts). Two compressors:
 *
 * - Extractive: a dual encoder scores every sentence of the retrieved documents against the question
 *   (inner product of the question's and the sentence's embeddings) and the top n are kept, shown in
 *   their order in the documents. The paper's encoder is Contriever fine-tuned per data set (released as
 *   fangyuan/{nq,tqa,hotpotqa}_extractive_compressor, mean-pooled); its n is 1 for NQ and TriviaQA and 2
 *   for HotpotQA — the default here is 2, the multi-hop setting (FlashRAG's extractive refiner keeps 5).
 *   Any ragtrail embedder spec serves (`openai:<url>#<model>` for a served encoder, `dual:<q>|<p>`); its
 *   vectors are unit length, so the score is the cosine (Contriever's raw inner product can rank a long
 *   sentence differently). The default `hash:512` is lexical, a stand-in that does not mean what the
 *   paper means. Sentences are the documents' texts (not titles, as FlashRAG) split by core/text's
 *   `proseSentences`; those of 5 characters or fewer are dropped (FlashRAG's filter).
 * - Abstractive: a summariser writes a summary of the documents focused on the question; an empty one
 *   (RECOMP's "selective augmentation") leaves the answer prompt with no documents. The paper's
 *   summariser is T5-large trained on GPT-3.5 summaries (fangyuan/{nq,tqa}_abstractive_compressor,
 *   fangyuan/hotpotqa_abstractive), which FlashRAG — what ReasonRAG ran ("recomp-abstractive") — feeds
 *   `Question: …\n Document: …\n Summary: ` (the documents' texts one a line) and lets write up to 512
 *   tokens. With `trained: true` the summariser gets exactly that input as a raw prompt; by default it
 *   is the agent's own model, asked in words for a summary of at most two sentences.
 */
import { InputError } from '../core/errors.js';
import { proseSentences } from '../core/text.js';
import type { RetrievedDoc } from '../core/trajectory.js';
import type { LLM } from '../llm/types.js';
import type { Embedder } from '../retrieval/embedders/base.js';
import { createEmbedder } from '../retrieval/embedders/embedder.js';
import { compressedRag, withAuxModel } from './compressed-rag.js';
import { formatDocs, type Protocol } from './protocol.js';

/** Sentences the extractive compressor keeps (the paper's HotpotQA setting; 1 for NQ and TriviaQA). */
export const RECOMP_TOP_N = 2;
/** The embedder used when none is given: lexical, offline — a stand-in for the trained dual encoder. */
export const RECOMP_DEFAULT_EMBEDDER = 'hash:512';
/** The summary's length limit in tokens (RECOMP's and FlashRAG's max target length). */
export const RECOMP_SUMMARY_TOKENS = 512;

/** Options of {@link recompExtractive}. */
export interface RecompExtractiveOptions {
  /** The sentence encoder: an embedder spec or an embedder (default {@link RECOMP_DEFAULT_EMBEDDER}). */
  embedder?: string | Embedder;
  /** Sentences kept (default {@link RECOMP_TOP_N}). */
  topN?: number;
}

/** The candidate sentences of the documents: each text's sentences in order, those longer than 5 characters. */
export function recompSentences(docs: readonly RetrievedDoc[]): string[] {
  return docs.flatMap((d) => proseSentences(d.text.replace(/\s+/g, ' '))).filter((s) => s.length > 5);
}

/** The `n` sentences of highest score (the earlier on a tie), in their original order. */
export function topSentences(sentences: readonly string[], scores: readonly number[], n: number): string[] {
  const best = new Set(
    sentences
      .map((_, i) => i)
      .sort((a, b) => scores[b]! - scores[a]! || a - b)
      .slice(0, Math.max(0, n)),
  );
  return sentences.filter((_, i) => best.has(i));
}

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * (b[i] ?? 0), 0);

/** The documents compressed by RECOMP's extractive compressor: the top `n` sentences by the embedder's score, joined by spaces. */
export async function recompExtract(question: string, docs: readonly RetrievedDoc[], embedder: Embedder, n = RECOMP_TOP_N): Promise<string> {
  const sentences = recompSentences(docs);
  if (sentences.length === 0) return '';
  const [q] = await embedder.embed([question], 'query');
  const vs = await embedder.embed(sentences, 'passage');
  return topSentences(sentences, vs.map((v) => dot(q!, v)), n).join(' ');
}

/** RECOMP's extractive compressor with an encoder and n of your own (defaults: hash:512, 2). */
export function recompExtractive(opts: RecompExtractiveOptions = {}): Protocol {
  const topN = opts.topN ?? RECOMP_TOP_N;
  if (!(Number.isInteger(topN) && topN >= 1)) throw new InputError(`recomp-extractive: topN must be a whole number of at least 1, not ${topN}`);
  let embedder: Promise<Embedder> | undefined;
  const encoder = () => (embedder ??= typeof opts.embedder === 'object' ? Promise.resolve(opts.embedder) : createEmbedder(opts.embedder ?? RECOMP_DEFAULT_EMBEDDER));
  return compressedRag({
    name: 'recomp-extractive',
    description: `RECOMP extractive: one search; the top ${topN} sentences of the documents by a dual encoder's score against the question, then answer; the paper's encoder is its trained Contriever (here: ${typeof opts.embedder === 'object' ? opts.embedder.spec : (opts.embedder ?? `${RECOMP_DEFAULT_EMBEDDER}, a lexical stand-in`)})`,
    compress: async (question, docs) => recompExtract(question, docs, await encoder(), topN),
  });
}

/** Options of {@link recompAbstractive}. */
export interface RecompAbstractiveOptions {
  /** The summariser (default: the agent's own model). */
  summarizer?: LLM;
  /** The summariser is one of RECOMP's trained T5 compressors: send it their input format as a raw prompt. */
  trained?: boolean;
  /** Summary length limit in tokens (default 512). */
  maxTokens?: number;
}

/** The input of RECOMP's trained abstractive compressors (FlashRAG's format): the question, then the documents' texts one a line. */
export function recompTrainedPrompt(question: string, docs: readonly RetrievedDoc[]): string {
  return `Question: ${question}\n Document: ${docs.map((d) => d.text).join('\n')}\n Summary: `;
}

/** The request to an instruction-following summariser. */
export function recompSummaryPrompt(question: string, docs: readonly RetrievedDoc[]): string {
  return `Documents:\n${formatDocs(docs)}\n\nQuestion: ${question}\nIn at most two sentences, write down what these documents say that helps to answer the question, keeping names, dates and numbers exact. If nothing in them helps, reply with the single word NONE.`;
}

/** A summary as the answer prompt shows it: trimmed, and empty when the summariser found nothing (NONE). */
export function readSummary(text: string): string {
  const s = text.trim();
  return /^\W*none\W*$/i.test(s) ? '' : s;
}

/** The documents compressed by RECOMP's abstractive compressor: the summariser's summary (empty when it found nothing). */
export async function recompSummarize(question: string, docs: readonly RetrievedDoc[], summarizer: LLM, opts: RecompAbstractiveOptions = {}): Promise<string> {
  if (docs.length === 0) return '';
  const maxTokens = opts.maxTokens ?? RECOMP_SUMMARY_TOKENS;
  const result = opts.trained
    ? await summarizer.generate({ prompt: recompTrainedPrompt(question, docs), temperature: 0, maxTokens })
    : await summarizer.generate({ messages: [{ role: 'user', content: recompSummaryPrompt(question, docs) }], temperature: 0, maxTokens });
  return readSummary(result.choices[0]?.text ?? '');
}

/** RECOMP's abstractive compressor with a summariser of your own (default: the agent's model, asked in words). */
export function recompAbstractive(opts: RecompAbstractiveOptions = {}): Protocol {
  // A summariser of its own is RECOMP's trained T5 compressor (served in completion mode): it gets their input format.
  const withAux = (aux: LLM) => recompAbstractive({ ...opts, summarizer: aux, trained: true });
  return withAuxModel(withAux, compressedRag({
    name: 'recomp',
    description: "RECOMP abstractive (ReasonRAG's row): one search; a summary of the documents for the question, then answer; the paper's summariser is its trained T5 compressor, given as --aux-llm (served in completion mode; default: the agent's model, asked in words)",
    compress: (question, docs, llm) => recompSummarize(question, docs, opts.summarizer ?? llm, opts),
  }));
}

export const recompProtocol = recompAbstractive();
export const recompExtractiveProtocol = recompExtractive();
