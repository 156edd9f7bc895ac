/**
 * One model served by several OpenAI-compatible servers (`openai:URL1,URL2,…#MODEL`, or
 * `openai:@FILE#MODEL` with one base URL per line): each request goes to the healthy endpoint with the
 * fewest requests in flight, so a slow server gets less work and a fast one more. An endpoint that
 * fails transiently (refused or reset connection, timeout, 429 / 5xx) is taken out for a cooldown that
 * doubles with each consecutive failure (1 s up to 60 s), and the request is retried on another one;
 * after its cooldown it is tried again, and a success puts it back. Requests fail only when every
 * endpoint has been failing for longer than the retry window (`--retry-for`), or on errors that no
 * other server would fix (4xx other than 408/409/429, a bad request).
 */
import { readFileSync } from 'node:fs';
import { InputError, RagtrailError } from '../core/errors.js';
import { formatMs, HttpError, retryable, retryDefaults } from '../core/http.js';
import { OpenAICompatibleLLM, type OpenAIOptions } from './openai.js';
import type { EndpointUsage, GenerateRequest, GenerateResult, LLM } from './types.js';

// The counters' type lives with the LLM interface (which reports them) so that types.ts need not import
// this module: that import closed a cycle types → endpoints → openai → types.
export type { EndpointUsage };

export interface EndpointPoolOptions extends OpenAIOptions {
  /** First cooldown after a failure, ms (default 1000); doubles per consecutive failure up to `maxCooldownMs` (60 000). */
  cooldownMs?: number;
  maxCooldownMs?: number;
  /** Injected for tests. */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

interface Endpoint {
  llm: LLM;
  usage: EndpointUsage;
  inFlight: number;
  /** Consecutive failures, and the time before which the endpoint is not picked. */
  streak: number;
  downUntil: number;
}

/** A failure that another endpoint (or this one, later) may not have. */
function transient(e: unknown): boolean {
  if (e instanceof HttpError) return retryable(e.status);
  // The HTTP layer's "cannot reach …" / "gave up …" errors, timeouts and socket errors.
  return e instanceof RagtrailError || (e as NodeJS.ErrnoException)?.code !== undefined;
}

/** Base URLs of an `openai:` spec's URL part: a comma-separated list, or `@FILE` (one per line, # comments). */
export function parseEndpointList(part: string): string[] {
  let urls: string[];
  if (part.startsWith('@')) {
    const file = part.slice(1);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      throw new InputError(`llm endpoint file ${file}: cannot read it`, 'give a text file with one base URL per line, e.g. http://10.0.0.5:8000/v1');
    }
    urls = text.split('\n').map((l) => l.replace(/#.*/, '').trim()).filter(Boolean);
  } else urls = part.split(',').map((u) => u.trim()).filter(Boolean);
  const bad = urls.find((u) => !/^https?:\/\/\S+$/.test(u));
  if (bad !== undefined) throw new InputError(`llm endpoint "${bad}" is not an http(s) URL`, 'e.g. openai:http://10.0.0.5:8000/v1,http://10.0.0.6:8000/v1#MODEL');
  if (urls.length === 0) throw new InputError(`llm endpoints "${part}": no URL`, 'list at least one base URL');
  return urls;
}

export class EndpointPoolLLM implements LLM {
  readonly spec: string;
  private readonly endpoints: Endpoint[];
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;

  /** `llms` overrides the backends (tests); by default one OpenAI-compatible backend per URL. */
  constructor(urls: readonly string[], readonly model: string, private readonly opts: EndpointPoolOptions = {}, llms?: readonly LLM[]) {
    this.now = opts.now ?? Date.now;
    this.sleep = opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    // Each endpoint retries little on its own: the pool moves a failing request to another endpoint
    // instead of waiting out one server's backoff.
    const perEndpoint: OpenAIOptions = { ...opts, retries: 0 };
    this.endpoints = urls.map((url, i) => ({
      llm: llms?.[i] ?? new OpenAICompatibleLLM(url, model, perEndpoint),
      usage: { url, requests: 0, failures: 0, promptTokens: 0, completionTokens: 0, down: false },
      inFlight: 0,
      streak: 0,
      downUntil: 0,
    }));
    // The cache key must not depend on which servers serve the model: the spec names the model.
    const mode = opts.mode === 'completion' ? ' (completion)' : '';
    this.spec = `openai:${urls.length === 1 ? urls[0] : `[${urls.length} endpoints]`}#${model}${mode}`;
  }

  /** Counters per endpoint, in the order given. */
  endpointUsage(): EndpointUsage[] {
    const t = this.now();
    return this.endpoints.map((e) => ({ ...e.usage, down: e.downUntil > t }));
  }

  /** The healthy endpoint with the fewest requests in flight (then the fewest served, then the first). */
  private pick(): Endpoint | undefined {
    const t = this.now();
    let best: Endpoint | undefined;
    for (const e of this.endpoints) {
      if (e.downUntil > t) continue;
      if (!best || e.inFlight < best.inFlight || (e.inFlight === best.inFlight && e.usage.requests < best.usage.requests)) best = e;
    }
    return best;
  }

  async generate(req: GenerateRequest): Promise<GenerateResult> {
    const start = this.now();
    const retryFor = this.opts.retryForMs ?? retryDefaults.retryForMs;
    let lastError: unknown;
    for (;;) {
      const e = this.pick();
      if (!e) {
        // Every endpoint is cooling down: wait for the first to come back, within the retry window.
        const next = Math.min(...this.endpoints.map((x) => x.downUntil));
        if (next - start > retryFor) throw this.giveUp(lastError, start);
        await this.sleep(Math.max(0, next - this.now()));
        continue;
      }
      e.inFlight++;
      try {
        const result = await e.llm.generate(req);
        e.streak = 0;
        e.usage.requests++;
        e.usage.promptTokens += result.usage.promptTokens;
        e.usage.completionTokens += result.usage.completionTokens;
        return result;
      } catch (err) {
        if (!transient(err)) throw err;
        lastError = err;
        e.usage.failures++;
        e.streak++;
        const cooldown = Math.min(this.opts.maxCooldownMs ?? 60_000, (this.opts.cooldownMs ?? 1000) * 2 ** (e.streak - 1));
        e.downUntil = this.now() + cooldown;
        if (this.now() - start > retryFor) throw this.giveUp(lastError, start);
      } finally {
        e.inFlight--;
      }
    }
  }

  private giveUp(lastError: unknown, start: number): RagtrailError {
    const why = lastError instanceof Error ? lastError.message : String(lastError);
    return new RagtrailError(`every LLM endpoint of ${this.spec} kept failing for ${formatMs(this.now() - start)}; last error: ${why}`, 'check that the servers are running; --retry-for sets how long to keep trying');
  }

  async close(): Promise<void> {
    await Promise.all(this.endpoints.map((e) => e.llm.close?.()));
  }
}
