/**
 * A dual encoder: one model for queries and another for passages (MedCPT's Query and Article encoders,
 * which RAG-Gym's MedQA retrieval uses; DPR's question and context encoders), each any embedder spec.
 * Spec `dual:<query spec>|<passage spec>`, e.g.
 * `dual:openai:http://127.0.0.1:8080/v1#ncbi/MedCPT-Query-Encoder|openai:http://127.0.0.1:8081/v1#ncbi/MedCPT-Article-Encoder`.
 * The two must give vectors of one size (checked on the first call for remote models).
 */
import { InputError } from '../../core/errors.js';
import type { EmbedKind, Embedder } from './base.js';

export class DualEmbedder implements Embedder {
  readonly spec: string;
  readonly lexical: boolean;

  constructor(
    readonly query: Embedder,
    readonly passage: Embedder,
  ) {
    this.spec = `dual:${query.spec}|${passage.spec}`;
    this.lexical = query.lexical && passage.lexical;
    this.checkDims();
  }

  get dim(): number | undefined {
    return this.query.dim ?? this.passage.dim;
  }

  private checkDims(): void {
    const [q, p] = [this.query.dim, this.passage.dim];
    if (q !== undefined && p !== undefined && q !== p) throw new InputError(`embedder "${this.spec}": the query encoder gives ${q}-dimensional vectors and the passage encoder ${p}`, 'pair two encoders trained together (they share one vector space)');
  }

  /** Queries through the query encoder, passages through the passage encoder. */
  async embed(texts: readonly string[], kind: EmbedKind): Promise<Float32Array[]> {
    const out = await (kind === 'query' ? this.query : this.passage).embed(texts, kind);
    this.checkDims();
    return out;
  }

  async close(): Promise<void> {
    await this.query.close?.();
    await this.passage.close?.();
  }
}
