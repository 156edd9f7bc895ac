/**
 * `ragtrail/llm`: one `LLM.generate` interface over OpenAI-compatible servers (vLLM, SGLang,
 * llama.cpp server, Ollama, hosted APIs), node-llama-cpp (GGUF) and backends of your own
 * (`registerLLMBackend`), with the shared machinery around them: concurrency limit, on-disk cache,
 * usage metering. `ScriptedLLM` is a test double that replays fixed replies.
 * @module
 */
export type { Choice, GenerateRequest, GenerateResult, LLM, PromptLogprobs, TokenLogprobs } from './types.js';
export { createBackend, createLLM, LLM_SPEC_HELP, type LLMBackendFactory, llmBackends, type LLMOptions, registerLLMBackend, withMachinery } from './create.js';
export { CachedLLM, type CacheMode, LimitedLLM, MeteredLLM, type Prices, TemperatureRoutedLLM, type UsageTotals } from './middleware.js';
export { OpenAICompatibleLLM, type OpenAIOptions } from './openai.js';
export { type Script, ScriptedLLM, type ScriptOutput } from './scripted.js';
export { EndpointPoolLLM, type EndpointPoolOptions, type EndpointUsage, parseEndpointList } from './endpoints.js';
export { KvStore } from '../core/kvstore.js';
export { Limiter } from '../core/limiter.js';
