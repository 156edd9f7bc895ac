/**
 * OpenAI-compatible servers (vLLM, SGLang, llama.cpp server, Ollama, hosted APIs) through a thin
 * fetch layer rather than the `openai` client: the client brings its own retry loop (which would
 * stack with ours) and types that hide the fields these servers add or vary (`stop_reason`, logprob
 * shapes of /completions vs /chat/completions), while the requests themselves are two small JSON POSTs.
 * Chat mode posts to /chat/completions; completion mode (base models) to /completions.
 */
import { fetchJson, type RetryOptions } from '../core/http.js';
import { type Choice, type GenerateRequest, type GenerateResult, type LLM, messagesToPrompt } from './types.js';

/** Settings of an OpenAI-compatible backend; the retry and timeout settings apply to each HTTP request. */
export interface OpenAIOptions extends RetryOptions {
  apiKey?: string;
  /** "chat" (default) or "completion". */
  mode?: 'chat' | 'completion';
  /** Extra body fields for the server (e.g. vLLM's `top_k`, `repetition_penalty`). */
  extraBody?: Record<string, unknown>;
}

interface WireChoice {
  index?: number;
  text?: string;
  message?: { content?: string | null };
  finish_reason?: string | null;
  logprobs?: {
    content?: { token: string; logprob: number; top_logprobs?: { token: string; logprob: number }[] }[] | null;
    tokens?: string[];
    token_logprobs?: (number | null)[];
    top_logprobs?: (Record<string, number> | null)[] | null;
    text_offset?: number[];
  } | null;
}

interface WireReply {
  choices?: WireChoice[];
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

/**
 * A model behind an OpenAI-compatible server (vLLM, SGLang, llama.cpp server, Ollama, hosted APIs),
 * via /chat/completions or, in completion mode, /completions. The API key defaults to
 * `$OPENAI_API_KEY`.
 */
export class OpenAICompatibleLLM implements LLM {
  readonly spec: string;
  private readonly apiKey: string | undefined;
  private readonly mode: 'chat' | 'completion';

  constructor(
    readonly baseURL: string,
    readonly model: string,
    private readonly opts: OpenAIOptions = {},
  ) {
    this.mode = opts.mode ?? 'chat';
    this.spec = `openai:${baseURL}#${model}${this.mode === 'completion' ? ' (completion)' : ''}`;
    this.apiKey = opts.apiKey ?? process.env['OPENAI_API_KEY'];
  }

  /**
   * Posts the request (retrying transient failures). When a server returns fewer than `n` samples, the
   * missing ones are asked for concurrently, one request each with a shifted seed; usage is summed over
   * all requests.
   */
  async generate(req: GenerateRequest): Promise<GenerateResult> {
    const n = req.n ?? 1;
    const first = await this.request(req, n, 0);
    const choices: Choice[] = first.choices.slice(0, n);
    const usage = { ...first.usage };
    // Some servers (llama.cpp, Ollama, transformers serve) ignore `n` and return one sample: ask for
    // the missing ones at once, one request each, so a server that batches concurrent requests
    // (continuous batching, parallel slots) decodes them together instead of one after another.
    if (choices.length < n) {
      const more = await Promise.all(Array.from({ length: n - choices.length }, (_, i) => this.request(req, 1, i + 1)));
      for (const reply of more) {
        choices.push(...reply.choices.slice(0, 1));
        usage.promptTokens += reply.usage.promptTokens;
        usage.completionTokens += reply.usage.completionTokens;
      }
    }
    return { choices, usage };
  }

  private async request(req: GenerateRequest, n: number, part: number): Promise<GenerateResult> {
    // Scoring a prompt (echo) exists only on /completions.
    const chat = this.mode === 'chat' && !req.echo;
    const body: Record<string, unknown> = { model: this.model, n, ...this.opts.extraBody };
    const prompt = chat ? '' : (req.prompt ?? messagesToPrompt(req.messages ?? []));
    if (chat) body['messages'] = req.messages ?? [{ role: 'user', content: req.prompt ?? '' }];
    else body['prompt'] = prompt;
    if (req.temperature !== undefined) body['temperature'] = req.temperature;
    if (req.topP !== undefined) body['top_p'] = req.topP;
    if (req.maxTokens !== undefined) body['max_tokens'] = req.maxTokens;
    if (req.stop?.length) body['stop'] = req.stop;
    // A request for missing samples must not repeat the first request's seed.
    if (req.seed !== undefined) body['seed'] = req.seed + part * 1_000_003;
    const top = req.topLogprobs ?? 0;
    if (req.logprobs || top > 0 || req.echo) {
      body['logprobs'] = chat ? true : Math.max(1, top);
      if (chat && top > 0) body['top_logprobs'] = top;
    }
    if (req.echo) body['echo'] = true;
    const url = `${this.baseURL.replace(/\/+$/, '')}/${chat ? 'chat/completions' : 'completions'}`;
    const reply = await fetchJson<WireReply>(url, {
      serverKind: 'LLM server',
      ...this.opts,
      body,
      // A 200 without choices is what an overloaded proxy or a restarting server sends: ask again.
      validate: (r) => (Array.isArray((r as WireReply | null)?.choices) && (r as WireReply).choices!.length > 0 ? undefined : 'the reply has no "choices"'),
      headers: this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {},
    });
    const choices = [...reply.choices!]
      .sort((a, b) => (a.index ?? 0) - (b.index ?? 0))
      .map((c): Choice => {
        const text = (chat ? c.message?.content : c.text) ?? '';
        const choice: Choice = { text, finishReason: c.finish_reason ?? 'unknown' };
        readLogprobs(choice, c, req.echo ? prompt : undefined, top > 0);
        if (req.echo && choice.text.startsWith(prompt)) choice.text = choice.text.slice(prompt.length);
        return req.stop?.length ? cutAtStop(choice, req.stop) : choice;
      });
    return { choices, usage: { promptTokens: reply.usage?.prompt_tokens ?? 0, completionTokens: reply.usage?.completion_tokens ?? 0 } };
  }
}

/**
 * Fills a choice's token log-probabilities from either wire shape (chat: `content[]`; completions:
 * parallel `tokens` / `token_logprobs` / `top_logprobs` arrays). With echo the completions arrays start
 * with the prompt's tokens: those starting before the prompt's end (by `text_offset`, or by summed
 * token lengths when a server omits it) go to `promptLogprobs`.
 */
function readLogprobs(choice: Choice, c: WireChoice, echoedPrompt: string | undefined, wantTop: boolean): void {
  const lp = c.logprobs;
  if (lp?.content) {
    choice.logprobs = { tokens: lp.content.map((t) => t.token), logprobs: lp.content.map((t) => t.logprob) };
    if (wantTop) choice.logprobs.top = lp.content.map((t) => Object.fromEntries((t.top_logprobs ?? []).map((x) => [x.token, x.logprob])));
    return;
  }
  if (!lp?.tokens || !lp.token_logprobs) return;
  let split = 0;
  if (echoedPrompt !== undefined) {
    // The generated tokens are the last ones, and they spell the text after the prompt: counted back from
    // the end, which needs neither the offsets (vLLM's are sums of token lengths, off after an echoed <s>)
    // nor the prompt's tokens to decode cleanly.
    const completion = (c.text ?? '').startsWith(echoedPrompt) ? (c.text ?? '').slice(echoedPrompt.length) : undefined;
    if (completion !== undefined) {
      split = lp.tokens.length;
      let got = 0;
      while (split > 0 && got < completion.length) got += lp.tokens[--split]!.length;
    } else {
      let at = 0;
      while (split < lp.tokens.length && at < echoedPrompt.length) at += lp.tokens[split++]!.length;
    }
    // Servers count offsets in Unicode characters (Python's len), JavaScript strings in UTF-16 units.
    const units = utf16Offsets(echoedPrompt);
    const chars = units.length - 1;
    const offsets = lp.text_offset?.slice(0, split).map((o) => units[Math.min(o, chars)]!);
    choice.promptLogprobs = { tokens: lp.tokens.slice(0, split), logprobs: lp.token_logprobs.slice(0, split).map((x) => x ?? null), ...(offsets && { offsets }) };
  }
  choice.logprobs = { tokens: lp.tokens.slice(split), logprobs: lp.token_logprobs.slice(split).map((x) => x ?? 0) };
  if (wantTop && lp.top_logprobs) choice.logprobs.top = lp.top_logprobs.slice(split).map((x) => x ?? {});
}

/** For each Unicode character of `text` (and its end), where it starts in UTF-16 units. */
function utf16Offsets(text: string): number[] {
  const out: number[] = [];
  let at = 0;
  for (const ch of text) {
    out.push(at);
    at += ch.length;
  }
  out.push(at);
  return out;
}

/**
 * The text before the first stop string, as the request's contract says (GenerateRequest.stop). Not
 * every server keeps it: `transformers serve` returns the stop string with the text, and with
 * continuous batching it ignores stop strings and goes on to the end of the turn. Token logprobs
 * are kept for the tokens that start before the cut.
 */
export function cutAtStop(choice: Choice, stop: readonly string[]): Choice {
  let at = -1;
  for (const s of stop) {
    const i = s ? choice.text.indexOf(s) : -1;
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  if (at < 0) return choice;
  const cut: Choice = { ...choice, text: choice.text.slice(0, at), finishReason: 'stop' };
  if (choice.logprobs) {
    let start = 0;
    let keep = 0;
    for (const t of choice.logprobs.tokens) {
      if (start >= at) break;
      start += t.length;
      keep++;
    }
    cut.logprobs = { tokens: choice.logprobs.tokens.slice(0, keep), logprobs: choice.logprobs.logprobs.slice(0, keep) };
    if (choice.logprobs.top) cut.logprobs.top = choice.logprobs.top.slice(0, keep);
  }
  return cut;
}
