/**
 * Machinery that wraps any backend: an on-disk response cache (what makes long runs resumable and
 * re-runs free), a concurrency limit, and usage / cost accounting. Retries with backoff live in the
 * HTTP layer (core/http.ts), where the status codes and Retry-After are.
 */
import { createHash } from 'node:crypto';
import { RagtrailError } from '../core/errors.js';
import { KvStore } from '../core/kvstore.js';
import { Limiter } from '../core/limiter.js';
import type { EndpointUsage, GenerateRequest, GenerateResult, LLM } from './types.js';

/** Which requests the cache may answer: deterministic ones (temperature 0 or a seed), all, or none. */
export type CacheMode = 'deterministic' | 'all' | 'off';

export function canonical(value: unknown): string {
  // JSON with sorted keys, so that key order never changes a cache key.
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b))) : v,
  );
}

export function requestKey(spec: string, req: GenerateRequest): string {
  const normalised = { spec, ...req, n: req.n ?? 1 };
  return createHash('sha256').update(canonical(normalised)).digest('hex');
}

export function isDeterministic(req: GenerateRequest): boolean {
  return req.seed !== undefined || (req.temperature ?? 1) === 0;
}

/**
 * Answers repeated requests from a persistent store (keyed by the spec and the whole request), so
 * re-runs and resumed runs cost nothing. By default only deterministic requests (temperature 0 or a
 * seed) are cached; `hits` and `misses` count lookups.
 */
export class CachedLLM implements LLM {
  readonly spec: string;
  hits = 0;
  misses = 0;

  /** `salt`: what else decides a reply besides the spec and the request (the extra body fields a server is sent). */
  constructor(
    private readonly inner: LLM,
    readonly store: KvStore,
    private readonly mode: CacheMode = 'deterministic',
    private readonly salt?: string,
  ) {
    this.spec = inner.spec;
  }

  /** From the store when cached (marked `cached: true`); otherwise from the wrapped model, storing the reply when it may be cached. */
  async generate(req: GenerateRequest): Promise<GenerateResult> {
    const cacheable = this.mode === 'all' || (this.mode === 'deterministic' && isDeterministic(req));
    if (!cacheable) return this.inner.generate(req);
    const key = requestKey(this.salt ? `${this.spec} ${this.salt}` : this.spec, req);
    const hit = this.store.get<GenerateResult>(key);
    if (hit) {
      this.hits++;
      return { ...hit, cached: true };
    }
    this.misses++;
    const result = await this.inner.generate(req);
    this.store.set(key, { choices: result.choices, usage: result.usage });
    return result;
  }

  /** Closes the wrapped model. */
  async close(): Promise<void> {
    await this.inner.close?.();
  }

  endpointUsage(): EndpointUsage[] | undefined {
    return this.inner.endpointUsage?.();
  }
}

/** Keeps at most the limiter's number of requests in flight to the wrapped model; later ones wait their turn. */
export class LimitedLLM implements LLM {
  readonly spec: string;

  constructor(
    private readonly inner: LLM,
    readonly limiter: Limiter,
  ) {
    this.spec = inner.spec;
  }

  /** Waits for a free slot, then asks the wrapped model. */
  generate(req: GenerateRequest): Promise<GenerateResult> {
    return this.limiter.run(() => this.inner.generate(req));
  }

  /** Closes the wrapped model. */
  async close(): Promise<void> {
    await this.inner.close?.();
  }

  endpointUsage(): EndpointUsage[] | undefined {
    return this.inner.endpointUsage?.();
  }
}

/**
 * Sends each request to the backend kept for its sampling temperature. For servers whose sampling
 * settings are fixed per process — `transformers serve` with continuous batching takes those of its
 * first request for its whole life and ignores the temperature of every later one — a backend per
 * temperature keeps each request at the temperature it asks for. A request at a temperature
 * without a backend is an error, never silently sampled at another.
 */
export class TemperatureRoutedLLM implements LLM {
  readonly spec: string;

  constructor(private readonly routes: ReadonlyMap<number, LLM>) {
    if (routes.size === 0) throw new RagtrailError('TemperatureRoutedLLM needs at least one backend');
    this.spec = [...routes].map(([t, llm]) => `T${t}:${llm.spec}`).join(' | ');
  }

  generate(req: GenerateRequest): Promise<GenerateResult> {
    // An unset temperature is the backend's default, which this router cannot know: refused like an unserved one.
    const t = req.temperature;
    if (t === undefined) return Promise.reject(new RagtrailError('the request sets no temperature, and TemperatureRoutedLLM routes by it'));
    const llm = this.routes.get(t);
    if (!llm) return Promise.reject(new RagtrailError(`no backend serves temperature ${t} (served: ${[...this.routes.keys()].join(', ')})`));
    return llm.generate(req);
  }

  /** Closes every backend. */
  async close(): Promise<void> {
    for (const llm of this.routes.values()) await llm.close?.();
  }

  endpointUsage(): EndpointUsage[] | undefined {
    const all = [...this.routes.values()].flatMap((llm) => llm.endpointUsage?.() ?? []);
    return all.length > 0 ? all : undefined;
  }
}

/** Token prices used for the cost in {@link UsageTotals}. */
export interface Prices {
  /** Dollars per million prompt tokens. */
  inputPerM: number;
  /** Dollars per million completion tokens. */
  outputPerM: number;
}

/** Running totals of a {@link MeteredLLM}: requests (cache hits counted apart), tokens, backend time and cost. */
export interface UsageTotals {
  requests: number;
  cachedRequests: number;
  promptTokens: number;
  completionTokens: number;
  /** Wall time spent waiting for the backend (not counting cache hits), ms. */
  llmMs: number;
  /** Dollars, when prices are known; cache hits cost nothing. */
  cost?: number;
  /** Per server, when the model is served by several (`openai:URL1,URL2#MODEL`). */
  endpoints?: EndpointUsage[];
}

/** One line per endpoint for a command's closing summary ("" for a single server). */
export function formatEndpointUsage(endpoints: readonly EndpointUsage[] | undefined): string {
  if (!endpoints || endpoints.length < 2) return '';
  return endpoints.map((e) => `  ${e.url}: ${e.requests} requests, ${e.promptTokens} prompt + ${e.completionTokens} completion tokens, ${e.failures} failed attempts${e.down ? ' (cooling down)' : ''}`).join('\n');
}

/**
 * Adds up requests, tokens, backend time and cost (when prices are given) into `totals`; cache hits
 * count as requests only. The outermost wrapper of {@link createLLM}.
 */
export class MeteredLLM implements LLM {
  readonly spec: string;
  readonly totals: UsageTotals = { requests: 0, cachedRequests: 0, promptTokens: 0, completionTokens: 0, llmMs: 0 };

  constructor(
    private readonly inner: LLM,
    private readonly prices?: Prices,
  ) {
    this.spec = inner.spec;
    if (prices) this.totals.cost = 0;
  }

  /** The totals, with the per-endpoint counters when there are several servers. */
  usage(): UsageTotals {
    const endpoints = this.endpointUsage();
    return endpoints && endpoints.length > 1 ? { ...this.totals, endpoints } : { ...this.totals };
  }

  /** Asks the wrapped model and adds the reply's usage to `totals`. */
  async generate(req: GenerateRequest): Promise<GenerateResult> {
    const t0 = performance.now();
    const result = await this.inner.generate(req);
    const t = this.totals;
    t.requests++;
    if (result.cached) {
      t.cachedRequests++;
      return result;
    }
    t.llmMs += performance.now() - t0;
    t.promptTokens += result.usage.promptTokens;
    t.completionTokens += result.usage.completionTokens;
    if (this.prices && t.cost !== undefined) {
      t.cost += (result.usage.promptTokens * this.prices.inputPerM + result.usage.completionTokens * this.prices.outputPerM) / 1e6;
    }
    return result;
  }

  /** Closes the wrapped model. */
  async close(): Promise<void> {
    await this.inner.close?.();
  }

  endpointUsage(): EndpointUsage[] | undefined {
    return this.inner.endpointUsage?.();
  }
}
