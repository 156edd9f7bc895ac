/**
 * One small interface for text embeddings, many backends (the Vercel AI SDK's provider idea):
 *   hash:<dim>                  offline hashed n-grams (lexical, not semantic; the default)
 *   openai:<baseURL>#<model>    any OpenAI-compatible /v1/embeddings server (vLLM, TEI, Ollama, llama.cpp, hosted)
 *   llama:<path.gguf>           node-llama-cpp with a local GGUF model (optional dependency)
 *   dual:<query spec>|<passage spec>   a dual encoder: queries and passages through two models (MedCPT)
 * Vectors are L2-normalised, so inner product = cosine similarity everywhere downstream.
 */
import { InputError } from '../../core/errors.js';
import type { Embedder, EmbedderOptions } from './base.js';

export { type EmbedKind, type Embedder, type EmbedderOptions, l2normalize, type Prefixes, withPrefixes } from './base.js';

/** The accepted embedder specs, in words, for help texts and error messages. */
export const EMBEDDER_SPEC_HELP = 'hash:<dim> (offline, lexical), openai:<baseURL>#<model>, llama:<model.gguf>, or dual:<query spec>|<passage spec> (a dual encoder, e.g. MedCPT)';

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
    case 'dual': {
      const bar = rest.indexOf('|');
      if (bar <= 0 || bar === rest.length - 1) throw new InputError(`embedder "${spec}": expected dual:<query spec>|<passage spec>`, 'e.g. dual:openai:http://127.0.0.1:8080/v1#ncbi/MedCPT-Query-Encoder|openai:http://127.0.0.1:8081/v1#ncbi/MedCPT-Article-Encoder');
      const { DualEmbedder } = await import('./dual.js');
      return new DualEmbedder(await createEmbedder(rest.slice(0, bar), opts), await createEmbedder(rest.slice(bar + 1), opts));
    }
    default:
      throw new InputError(`unknown embedder "${spec}"`, `use ${EMBEDDER_SPEC_HELP}`);
  }
}
