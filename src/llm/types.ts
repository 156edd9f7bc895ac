/**
 * One small interface for language models, many backends (the Vercel AI SDK's provider idea):
 * OpenAI-compatible HTTP servers, node-llama-cpp, and a scripted model for tests. Cross-cutting
 * machinery (caching, concurrency limits, usage accounting) wraps any backend from outside.
 */
import type { Message, TokenUsage } from '../core/trajectory.js';

export type { Message, TokenUsage };

/** Per-endpoint counters, for the run summary. */
export interface EndpointUsage {
  url: string;
  /** Requests answered by this endpoint. */
  requests: number;
  /** Attempts that failed here and were retried elsewhere (or later). */
  failures: number;
  promptTokens: number;
  completionTokens: number;
  /** Out of rotation right now (cooling down after a failure). */
  down: boolean;
}

/** One generation request: a conversation or a raw prompt, with sampling settings. Unset settings are left to the backend. */
export interface GenerateRequest {
  /** Chat messages (chat backends), or… */
  messages?: Message[];
  /** …a raw prompt (completion backends). One of the two is required. */
  prompt?: string;
  /** Number of samples (default 1). */
  n?: number;
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  /** Generation stops before any of these strings (they are not included in the text). */
  stop?: string[];
  /** Seeded sampling: the same request and seed give the same text on servers that honour it. */
  seed?: number;
  /** Ask for token log-probabilities. */
  logprobs?: boolean;
  /**
   * Also the `topLogprobs` most likely tokens at each generated position (`TokenLogprobs.top`); implies
   * `logprobs`. Self-RAG reads its reflection tokens' probabilities this way. Servers cap it (OpenAI
   * at 20; vLLM at its `--max-logprobs`, 20 by default).
   */
  topLogprobs?: number;
  /**
   * Score the prompt too: each choice's `promptLogprobs` holds the log-probability of every prompt
   * token given the ones before it (the compressors' self-information and perplexity). Sent to
   * /completions with `echo`, which vLLM and SGLang serve; the prompt is `prompt` (or the messages
   * as plain text).
   */
  echo?: boolean;
}

/** Per-token log-probabilities of a generated text (natural log), `tokens[i]` with `logprobs[i]`. */
export interface TokenLogprobs {
  tokens: string[];
  logprobs: number[];
  /** With `topLogprobs`: the most likely tokens at each position and their log-probabilities. */
  top?: Record<string, number>[];
}

/** Log-probabilities of a prompt's tokens (`echo`): the first token has none (null), nor may a server give one for others. */
export interface PromptLogprobs {
  tokens: string[];
  logprobs: (number | null)[];
  /** Where each token starts in the prompt (characters), when the server says (`text_offset`). */
  offsets?: number[];
}

/** One sampled completion of a request. */
export interface Choice {
  text: string;
  /** "stop", "length", … as the backend reports it. */
  finishReason: string;
  logprobs?: TokenLogprobs;
  /** With `echo`: the prompt's tokens and their log-probabilities. */
  promptLogprobs?: PromptLogprobs;
}

/** The samples of one request (up to its `n`) and the tokens the request used in total. */
export interface GenerateResult {
  choices: Choice[];
  usage: TokenUsage;
  /** Served from the response cache. */
  cached?: boolean;
}

/** A language-model backend. Wrappers (cache, limiter, meter) implement it too, so they stack around any backend. */
export interface LLM {
  /** Re-creates the backend, e.g. "openai:http://127.0.0.1:8000/v1#Qwen2.5-7B-Instruct". */
  readonly spec: string;
  /** Samples `req.n` completions (default 1) of the request. */
  generate(req: GenerateRequest): Promise<GenerateResult>;
  /** Releases what the backend holds (a loaded model, a subprocess); wrappers pass it on to the backend they wrap. */
  close?(): Promise<void>;
  /** Per-server counters when the backend spreads requests over several servers (see llm/endpoints);
   * wrappers pass it through. */
  endpointUsage?(): EndpointUsage[] | undefined;
}

/** Sum of a choice's token log-probabilities (the sequence log-likelihood), if present. */
export function sequenceLogprob(c: Choice): number | undefined {
  return c.logprobs ? c.logprobs.logprobs.reduce((s, x) => s + x, 0) : undefined;
}

/** A plain-text transcript of chat messages, for completion backends (base models). */
export function messagesToPrompt(messages: readonly Message[]): string {
  return messages.map((m) => (m.role === 'assistant' ? m.content : m.content + '\n')).join('');
}
