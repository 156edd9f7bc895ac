/**
 * Embeddings from any OpenAI-compatible `/v1/embeddings` endpoint (vLLM, TEI, Ollama, llama.cpp
 * server, hosted APIs), in batches, with the shared timeout/retry/backoff of core/http. One call
 * sends its batches one after another; concurrent calls (the index build keeps several in flight)
 * share one limiter per embedder, so at most `concurrency` requests reach the server at once.
 */
import { RagtrailError } from '../../core/errors.js';
import { fetchJson } from '../../core/http.js';
import { Limiter } from '../../core/limiter.js';
import { type Embedder, type EmbedderOptions, l2normalize } from './base.js';

interface EmbeddingsReply {
  data?: { embedding?: number[]; index?: number }[];
}

export class OpenAIEmbedder implements Embedder {
  readonly lexical = false;
  readonly spec: string;
  dim: number | undefined;
  private readonly apiKey: string | undefined;
  private readonly batchSize: number;
  private readonly limiter: Limiter;

  constructor(
    private readonly baseURL: string,
    private readonly model: string,
    opts: EmbedderOptions = {},
  ) {
    this.spec = `openai:${baseURL}#${model}`;
    this.apiKey = opts.apiKey ?? process.env['OPENAI_API_KEY'];
    this.batchSize = opts.batchSize ?? 64;
    this.limiter = new Limiter(opts.concurrency ?? 4);
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += this.batchSize) {
      const batch = texts.slice(i, i + this.batchSize);
      out.push(...(await this.limiter.run(() => this.request(batch))));
    }
    return out;
  }

  private async request(batch: readonly string[]): Promise<Float32Array[]> {
    const url = `${this.baseURL.replace(/\/+$/, '')}/embeddings`;
    const reply = await fetchJson<EmbeddingsReply>(url, {
      body: { model: this.model, input: batch, encoding_format: 'float' },
      headers: this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {},
    });
    const data = reply.data;
    if (!Array.isArray(data) || data.length !== batch.length) {
      throw new RagtrailError(`${url}: expected ${batch.length} embeddings, got ${Array.isArray(data) ? data.length : 'none'}`);
    }
    const out: Float32Array[] = [];
    for (const d of [...data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0))) {
      if (!Array.isArray(d.embedding)) throw new RagtrailError(`${url}: an item of "data" has no "embedding" list`);
      const v = l2normalize(Float32Array.from(d.embedding));
      if (this.dim === undefined) this.dim = v.length;
      else if (v.length !== this.dim) throw new RagtrailError(`${url}: embedding size changed from ${this.dim} to ${v.length}`);
      out.push(v);
    }
    return out;
  }
}
