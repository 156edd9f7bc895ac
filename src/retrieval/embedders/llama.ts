/**
 * Embeddings from a local GGUF model through node-llama-cpp. The package is optional (hundreds of MB
 * with its GPU builds): it is loaded on first use, and a clear message says how to add it.
 * Uses the prebuilt binaries only (`build: "never"`), so nothing is compiled or downloaded at run time.
 */
import { existsSync } from 'node:fs';
import { InputError } from '../../core/errors.js';
import { loadNodeLlamaCpp } from '../../core/node-llama-cpp.js';
import { type Embedder, l2normalize } from './base.js';

interface LlamaEmbeddingContextLike {
  getEmbeddingFor(text: string): Promise<{ vector: readonly number[] }>;
  dispose?(): Promise<void>;
}

export class LlamaCppEmbedder implements Embedder {
  readonly lexical = false;
  dim: number | undefined;

  private constructor(
    readonly spec: string,
    private readonly context: LlamaEmbeddingContextLike,
  ) {}

  static async load(modelPath: string): Promise<LlamaCppEmbedder> {
    if (!existsSync(modelPath)) throw new InputError(`embedder llama:${modelPath}: no such model file`, 'pass the path of a local .gguf embedding model');
    type Mod = { getLlama: (o: object) => Promise<{ loadModel(o: { modelPath: string }): Promise<{ createEmbeddingContext(): Promise<LlamaEmbeddingContextLike> }> }> };
    const { mod } = await loadNodeLlamaCpp<Mod>('embedder llama');
    const llama = await mod.getLlama({ build: 'never' });
    const model = await llama.loadModel({ modelPath });
    return new LlamaCppEmbedder(`llama:${modelPath}`, await model.createEmbeddingContext());
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (const t of texts) {
      const v = l2normalize(Float32Array.from((await this.context.getEmbeddingFor(t)).vector));
      this.dim ??= v.length;
      out.push(v);
    }
    return out;
  }

  async close(): Promise<void> {
    await this.context.dispose?.();
  }
}
