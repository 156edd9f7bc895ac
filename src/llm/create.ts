/**
 * LLM spec strings → a ready backend with the shared machinery around it:
 *   openai:<baseURL>#<model>     OpenAI-compatible server (chat; `mode: "completion"`, or the spec
 *                                followed by " (completion)", for base models)
 *   llama:<model.gguf>           node-llama-cpp (optional dependency)
 * wrapped, from the outside in, as metered → cached → limited → backend, so that cache hits neither
 * wait for a slot nor count as spent tokens.
 */
import { join } from 'node:path';
import { InputError } from '../core/errors.js';
import { type RegisterOptions, Registry, splitSpec } from '../core/registry.js';
import { KvStore } from '../core/kvstore.js';
import { Limiter } from '../core/limiter.js';
import { type CacheMode, CachedLLM, canonical, LimitedLLM, MeteredLLM, type Prices } from './middleware.js';
import { EndpointPoolLLM, parseEndpointList } from './endpoints.js';
import { OpenAICompatibleLLM, type OpenAIOptions } from './openai.js';
import type { LLM } from './types.js';

/** The accepted built-in `--llm` specs, in words, for help texts and error messages. */
export const LLM_SPEC_HELP = 'openai:<baseURL>#<model> (e.g. openai:http://127.0.0.1:8000/v1#Qwen2.5-7B-Instruct) or llama:<model.gguf>';

/** Options of {@link createLLM}: the backend's own settings plus the shared machinery (concurrency, cache, prices). */
export interface LLMOptions extends OpenAIOptions {
  /** Requests in flight at once (default 8). */
  concurrency?: number;
  /** Folder of the response cache (default: no cache). */
  cacheDir?: string;
  cacheMode?: CacheMode;
  prices?: Prices;
}

/**
 * Builds the backend of one spec kind from the rest of the spec (after `kind:`), e.g. for
 * `openai:http://host/v1#model` the factory of `openai` receives `http://host/v1#model`.
 */
export type LLMBackendFactory = (rest: string, opts: LLMOptions) => LLM | Promise<LLM>;

/** LLM backends by spec kind: `openai`, `llama`, and any registered with `registerLLMBackend`. */
export const llmBackends = new Registry<LLMBackendFactory>('llm backend');

llmBackends.register('openai', (spec, opts) => {
  // "… (completion)" is how a completion-mode backend writes its spec, so that the spec re-creates it
  // (a table row's --model, a run's recorded model): base models, Self-RAG's raw prompt format.
  const completion = / \(completion\)$/.exec(spec);
  const rest = completion ? spec.slice(0, completion.index) : spec;
  if (completion) opts = { ...opts, mode: 'completion' };
  const hash = rest.lastIndexOf('#');
  if (hash < 0 || !/^(https?:\/\/|@)/.test(rest) || hash === rest.length - 1) {
    throw new InputError(`llm "openai:${rest}": expected openai:<baseURL>#<model>`, 'e.g. openai:http://127.0.0.1:8000/v1#Qwen2.5-7B-Instruct; several servers: openai:URL1,URL2#MODEL or openai:@FILE#MODEL');
  }
  const urls = parseEndpointList(rest.slice(0, hash));
  const model = rest.slice(hash + 1);
  return urls.length === 1 ? new OpenAICompatibleLLM(urls[0]!, model, opts) : new EndpointPoolLLM(urls, model, opts);
});
llmBackends.register('llama', async (rest) => {
  if (!rest) throw new InputError(`llm "llama:": expected llama:<path to a .gguf file>`);
  const { LlamaCppLLM } = await import('./llama.js');
  return LlamaCppLLM.load(rest);
});

/** Makes `KIND:…` specs build backends with `factory`, wherever an --llm spec is accepted. */
export function registerLLMBackend(kind: string, factory: LLMBackendFactory, opts?: RegisterOptions): void {
  llmBackends.register(kind, factory, opts);
}

/** The bare backend of a spec (no cache, limiter or meter: see `createLLM`). */
export async function createBackend(spec: string, opts: LLMOptions = {}): Promise<LLM> {
  const { kind, rest } = splitSpec(spec);
  const factory = llmBackends.find(kind);
  if (!factory) throw new InputError(`unknown llm "${spec}"`, `use ${LLM_SPEC_HELP}${llmBackends.names().length > 2 ? `; registered kinds: ${llmBackends.names().join(', ')}` : ''}`);
  return factory(rest, opts);
}

/** Wraps a backend with cache, limiter and meter. */
export function withMachinery(backend: LLM, opts: LLMOptions = {}): MeteredLLM {
  let llm: LLM = new LimitedLLM(backend, new Limiter(opts.concurrency ?? 8));
  // Extra body fields change the replies: they are part of the cache key.
  const salt = opts.extraBody && Object.keys(opts.extraBody).length ? canonical(opts.extraBody) : undefined;
  if (opts.cacheDir && opts.cacheMode !== 'off') llm = new CachedLLM(llm, KvStore.open(join(opts.cacheDir, 'llm-cache.jsonl')), opts.cacheMode, salt);
  return new MeteredLLM(llm, opts.prices);
}

/**
 * A ready model from a spec (see {@link LLM_SPEC_HELP}, or a kind added with `registerLLMBackend`),
 * wrapped as metered → cached → limited → backend. With `opts.cacheDir` set (and `cacheMode` not "off"),
 * responses are cached in `CACHEDIR/llm-cache.jsonl`. Read usage and cost from the returned model's `totals`.
 */
export async function createLLM(spec: string, opts: LLMOptions = {}): Promise<MeteredLLM> {
  return withMachinery(await createBackend(spec, opts), opts);
}
