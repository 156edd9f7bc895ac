/**
 * One small interface for text embeddings, many backends (the Vercel AI SDK's provider idea):
 *   hash:<dim>                  offline hashed n-grams (lexical, not semantic; the default)
 *   openai:<baseURL>#<model>    any OpenAI-compatible /v1/embeddings server (vLLM, TEI, Ollama, llama.cpp, hosted)
 *   llama:<path.gguf>           node-llama-cpp with a local GGUF model (optional dependency)
 * Vectors are L2-normalised, so inner product = cosine similarity everywhere downstream.
 */
import { InputError } from '../../core/errors.js';

export type EmbedKind = 'query' | 'passage';

/** Text → L2-normalised vectors (so inner product is cosine similarity), for dense indexes. */
export interface Embedder {
  /** The spec string that re-creates this embedder (stored in the index manifest). */
  readonly spec: string;
  /** True for embedders that only see surface forms (hashed n-grams): label results accordingly. */
  readonly lexical: boolean;
  /** Vector size; known before the first call for local embedders, after it for remote ones. */
  readonly dim: number | undefined;
  /**
   * One unit-length vector per text, in order; `kind` says whether the texts are queries or passages
   * (asymmetric models embed them differently).
   */
  embed(texts: readonly string[], kind: EmbedKind): Promise<Float32Array[]>;
  /** Releases a loaded model or open connections. */
  close?(): Promise<void>;
}

/** Instruction prefixes in the E5 / BGE style, e.g. {query: "query: ", passage: "passage: "}. */
export interface Prefixes {
  query?: string;
  passage?: string;
}

export function l2normalize(v: Float32Array): Float32Array {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!;
  if (s > 0) {
    const inv = 1 / Math.sqrt(s);
    for (let i = 0; i < v.length; i++) v[i]! *= inv;
  }
  return v;
}

/** Wraps an embedder so that queries and passages get their instruction prefixes. */
export function withPrefixes(e: Embedder, prefixes: Prefixes): Embedder {
  if (!prefixes.query && !prefixes.passage) return e;
  return {
    spec: e.spec,
    lexical: e.lexical,
    get dim() {
      return e.dim;
    },
    embed: (texts, kind) => e.embed(texts.map((t) => (prefixes[kind] ?? '') + t), kind),
    close: e.close ? () => e.close!() : undefined,
  };
}

/** Settings of remote embedders (ignored by the offline `hash` embedder). */
export interface EmbedderOptions {
  apiKey?: string;
  /** Texts per request for remote embedders (default 64). */
  batchSize?: number;
  /** Requests in flight at once for remote embedders (default 4). */
  concurrency?: number;
}

/** The accepted embedder specs, in words, for help texts and error messages. */
export const EMBEDDER_SPEC_HELP = 'hash:<dim> (offline, lexical), openai:<baseURL>#<model>, or llama:<model.gguf>';

/** Parses an embedder spec string into a backend. */
export async function createEmbedder(spec: string, opts: EmbedderOptions = {}): Promise<Embedder> {
  const colon = spec.indexOf(':');
  const kind = colon < 0 ? spec : spec.slice(0, colon);
  const rest = colon < 0 ? '' : spec.slice(colon + 1);
  switch (kind) {
    case 'hash': {
      const { HashedNgramEmbedder } = await import('./hashed.js');
      const dim = rest === '' ? undefined : Number(rest);
      if (dim !== undefined && !(Number.isInteger(dim) && dim >= 8 && dim <= 65536)) {
        throw new InputError(`embedder "${spec}": the dimension must be an integer from 8 to 65536`, 'e.g. hash:512');
      }
      return new HashedNgramEmbedder(dim);
    }
    case 'openai': {
      const { OpenAIEmbedder } = await import('./openai.js');
      const hash = rest.lastIndexOf('#');
      if (hash < 0 || !/^https?:\/\//.test(rest)) {
        throw new InputError(`embedder "${spec}": expected openai:<baseURL>#<model>`, 'e.g. openai:http://127.0.0.1:8080/v1#BAAI/bge-base-en-v1.5');
      }
      return new OpenAIEmbedder(rest.slice(0, hash), rest.slice(hash + 1), opts);
    }
    case 'llama': {
      const { LlamaCppEmbedder } = await import('./llama.js');
      if (!rest) throw new InputError(`embedder "${spec}": expected llama:<path to a .gguf file>`);
      return LlamaCppEmbedder.load(rest);
    }
    default:
      throw new InputError(`unknown embedder "${spec}"`, `use ${EMBEDDER_SPEC_HELP}`);
  }
}
