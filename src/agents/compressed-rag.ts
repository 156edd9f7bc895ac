/**
 * Standard RAG over compressed documents: the context compressors of ReasonRAG's "Summary" rows
 * (RECOMP, LongLLMLingua, Selective-Context), which it ran through FlashRAG's refiners. The episode is
 * `rag`'s — a fixed first search with the question, then one answer — but before the answer the
 * retrieved documents go through a compressor, and the answer prompt shows what it returns. The
 * compression is made in `prepare` (its calls at temperature 0, so they replay from the response
 * cache) and stored on the search step's `summary`, which later calls and reloaded trajectories reuse.
 * A policy that makes no model calls (oracle, sim) never compresses and sees the documents themselves.
 *
 * Also here: what the perplexity-based compressors share — a text's token log-probabilities under a
 * scoring model, read from an `echo` request (vLLM's and SGLang's /completions), with each token placed
 * on the characters of the text it covers.
 */
import { InputError } from '../core/errors.js';
import type { Message, RetrievedDoc, Step } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import type { LLM } from '../llm/types.js';
import { firstSearch, formatDocs, hasAnswered, type Protocol } from './protocol.js';
import { rag, ragUserPrompt, SYSTEM } from './rag-gym.js';

/** Turns the question's retrieved documents into the context the answer prompt shows. */
export type Compressor = (question: string, docs: readonly RetrievedDoc[], llm: LLM) => Promise<string>;

/** What {@link compressedRag} needs: the agent's name and one-line description, and its compressor. */
export interface CompressedRagSpec {
  name: string;
  description: string;
  compress: Compressor;
}

/** What the prompt shows when a compressor keeps nothing (RECOMP's "selective augmentation": an empty summary). */
export const NO_CONTEXT = '(nothing relevant in the documents)';

/** The context the answer prompt shows: the compressed documents, or the documents themselves before any compression. */
export function compressedContext(state: State): string {
  const search = firstSearch(state);
  if (!search) return '(none)';
  if (search.summary === undefined) return formatDocs(search.docs ?? []);
  return search.summary.trim() || NO_CONTEXT;
}

/** `protocol` with its `withAux` (the compressor's own model given). */
export function withAuxModel(withAux: (aux: LLM) => Protocol, protocol: Protocol): Protocol {
  return { ...protocol, withAux };
}

/** A protocol that retrieves once with the question, compresses the documents with `spec.compress`, and answers over the result (see the module comment). */
export function compressedRag(spec: CompressedRagSpec): Protocol {
  // Branches of a search tree share the search step: one compression per step, even when asked for at once.
  const pending = new WeakMap<Step, Promise<string>>();
  return {
    ...rag,
    name: spec.name,
    description: spec.description,
    async prepare(state: State, llm: LLM): Promise<void> {
      const search = firstSearch(state);
      if (!search || search.summary !== undefined || hasAnswered(state)) return;
      let job = pending.get(search);
      if (!job) {
        job = spec.compress(state.question.question, search.docs ?? [], llm);
        pending.set(search, job);
      }
      try {
        search.summary = await job;
      } finally {
        pending.delete(search);
      }
    },
    render: (state: State): Message[] => [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: ragUserPrompt(state.question.question, compressedContext(state)) },
    ],
    template: {
      kinds: { main: { description: 'the whole prompt', fields: { question: { required: true, description: 'the question' }, documents: { required: true, description: "the retrieved documents as the compressor left them (the documents themselves before it ran)" } } } },
      fill: (state) => ({ kind: 'main', values: { question: state.question.question, documents: compressedContext(state) }, continuation: [] }),
    },
  };
}

// ------------------------------------------------------------------------ scoring a text by echo

/** One token of a scored text: the characters it covers (`text.slice(start, end)`) and its log-probability given the tokens before it (null for the first, or where the server gave none). */
export interface ScoredToken {
  token: string;
  start: number;
  end: number;
  logprob: number | null;
}

/** A special token the server may echo without it being in the text (`<s>`, `<|endoftext|>`). */
const SPECIAL = /^<\|?[^<>\s]*\|?>$/;

/**
 * Places each token on the characters of `text` it covers, in order. With the server's character
 * offsets (`text_offset`) token i covers [offset i, offset i+1) — when they are consistent: every token
 * that decodes cleanly must read at its offset (vLLM sums the echoed tokens' lengths, which a split
 * character or an echoed `<s>` throws off). Otherwise, and without them, tokens are taken as the text they decode to; a byte-level or SentencePiece marker (Ġ, Ċ, ▁) is read
 * as the space or line break it stands for, and a special token absent from the text covers nothing. A
 * character split over several byte tokens is echoed as "�" pieces: such a run covers the text up to where
 * the next token that decodes cleanly is found. Any other token that does not match covers as many
 * characters as it has (the best guess), so that one odd token does not shift the rest by more than itself.
 */
export function alignTokens(text: string, tokens: readonly string[], offsets?: readonly number[]): { start: number; end: number }[] {
  const plainOf = (t: string) => t.replace(/[Ġ▁]/g, ' ').replace(/Ċ/g, '\n');
  const readsAt = (t: string, at: number) => t.includes('\uFFFD') || SPECIAL.test(t) || text.startsWith(t, at) || text.startsWith(plainOf(t), at);
  if (offsets && offsets.length === tokens.length && tokens.every((t, i) => readsAt(t, offsets[i]!))) {
    return tokens.map((_, i) => {
      const start = Math.min(text.length, offsets[i]!);
      return { start, end: Math.max(start, Math.min(text.length, offsets[i + 1] ?? text.length)) };
    });
  }
  const spans: { start: number; end: number }[] = [];
  let pos = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    const plain = plainOf(t);
    const start = pos;
    if (text.startsWith(t, pos)) pos += t.length;
    else if (text.startsWith(plain, pos)) pos += plain.length;
    else if (t.includes('\uFFFD')) {
      // A run of byte pieces: it ends where the next clean token's text starts (within a few characters).
      let j = i;
      while (j < tokens.length && tokens[j]!.includes('\uFFFD')) j++;
      const next = j < tokens.length ? plainOf(tokens[j]!) : '';
      const found = next ? text.indexOf(next, pos) : text.length;
      const end = found >= pos && found - pos <= 4 * (j - i) ? found : Math.min(text.length, pos + (j - i));
      spans.push({ start, end });
      for (let k = i + 1; k < j; k++) spans.push({ start: end, end });
      pos = end;
      i = j - 1;
      continue;
    } else if (!SPECIAL.test(t)) pos = Math.min(text.length, pos + t.length);
    spans.push({ start, end: pos });
  }
  return spans;
}

/**
 * The token log-probabilities of `text` under `llm` (an `echo` request for one token at temperature 0),
 * each token placed on the characters it covers; text left uncovered at the end becomes one unscored
 * token. `who` names the agent in the one-line InputError raised when the backend returns no prompt
 * log-probabilities (node-llama-cpp, hosted chat APIs, the scripted model without them).
 */
export async function scoreText(llm: LLM, text: string, who: string): Promise<ScoredToken[]> {
  const result = await llm.generate({ prompt: text, echo: true, maxTokens: 1, temperature: 0 });
  const lp = result.choices[0]?.promptLogprobs;
  if (!lp || lp.tokens.length === 0) {
    throw new InputError(
      `${who} scores text by the log-probabilities of its tokens, and the model ${llm.spec.replace(/\s+/g, ' ')} returned none for its prompt`,
      'serve the scoring model with vLLM or SGLang and name it as openai:<baseURL>#<model>: their /completions accept echo with logprobs',
    );
  }
  const spans = alignTokens(text, lp.tokens, lp.offsets);
  const scored: ScoredToken[] = lp.tokens.map((token, i) => ({ token, ...spans[i]!, logprob: lp.logprobs[i] ?? null }));
  // A server that counts a special token's characters may hand the prompt's last token back with the
  // completion: the text it leaves uncovered is one token with no score (kept by every compressor).
  const end = spans.at(-1)?.end ?? 0;
  if (end < text.length) scored.push({ token: text.slice(end), start: end, end: text.length, logprob: null });
  return scored;
}

/**
 * A token that counts as one of the text's although it covers no character of it: a later byte piece of a
 * character split over several tokens (echoed as "�"; the first piece holds the character). The references
 * count and score every piece as a token.
 */
export const isBytePiece = (t: ScoredToken): boolean => t.end === t.start && t.token.includes('\uFFFD');

/** A token of the text: it covers characters, or it is a later byte piece of one ({@link isBytePiece}). */
export const isTextToken = (t: ScoredToken): boolean => t.end > t.start || isBytePiece(t);

/** Self-information (−log p, in nats) of a scored token; NaN where it has no log-probability. */
export const selfInfo = (t: ScoredToken): number => (t.logprob === null || !Number.isFinite(t.logprob) ? Number.NaN : -t.logprob);

/** The mean of the numbers that are not NaN; NaN when there are none. */
export function nanMean(xs: readonly number[]): number {
  let s = 0;
  let n = 0;
  for (const x of xs) {
    if (Number.isNaN(x)) continue;
    s += x;
    n++;
  }
  return n > 0 ? s / n : Number.NaN;
}

/**
 * Documents as FlashRAG's refiners list them for compression (refiner.py: `Doc {i}(Title: {title}) {text}`,
 * the title as its `contents` holds it, in double quotes): one line each, line breaks inside a text made spaces.
 */
export function docLines(docs: readonly RetrievedDoc[]): string[] {
  return docs.map((d, i) => `Doc ${i + 1}(Title: "${d.title}") ${d.text}`.replace(/\s*[\r\n]+\s*/g, ' '));
}
