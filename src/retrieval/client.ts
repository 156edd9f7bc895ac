/**
 * A Retriever backed by any server speaking Search-R1's `/retrieve` protocol: a ragtrail
 * `serve-retriever`, Search-R1's own FAISS/BM25 server, or FlashRAG's remote retriever.
 */
import { RagtrailError } from '../core/errors.js';
import { stableId } from '../core/hash.js';
import { fetchJson, type RetryOptions } from '../core/http.js';
import { splitContents } from '../corpus/corpus.js';
import type { Hit, Retriever } from './types.js';

/**
 * A retriever backed by a server speaking Search-R1's `/retrieve` protocol (ragtrail
 * `serve-retriever`,
 * Search-R1's or FlashRAG's retrieval server). `/retrieve` is appended to the location unless present;
 * `opts.token` is sent as a bearer token; transient failures are retried (core/http.ts).
 */
export class HttpRetriever implements Retriever {
  readonly name: string;
  private readonly url: string;

  constructor(
    location: string,
    private readonly opts: { token?: string; retry?: RetryOptions } = {},
  ) {
    this.url = /\/retrieve\/?$/.test(location) ? location : `${location.replace(/\/+$/, '')}/retrieve`;
    this.name = `http(${this.url})`;
  }

  /** One-query {@link HttpRetriever.searchBatch}. */
  async search(query: string, k: number): Promise<Hit[]> {
    return (await this.searchBatch([query], k))[0]!;
  }

  async searchBatch(queries: readonly string[], k: number): Promise<Hit[][]> {
    if (queries.length === 0) return [];
    const reply = await fetchJson<{ result?: unknown }>(this.url, {
      ...this.opts.retry,
      body: { queries, topk: k, return_scores: true },
      headers: this.opts.token ? { authorization: `Bearer ${this.opts.token}` } : {},
    });
    const result = reply.result;
    if (!Array.isArray(result) || result.length !== queries.length) {
      throw new RagtrailError(`${this.url}: expected "result" with ${queries.length} lists, got ${JSON.stringify(reply).slice(0, 200)}`);
    }
    return result.map((list) => {
      if (!Array.isArray(list)) throw new RagtrailError(`${this.url}: each entry of "result" must be a list`);
      return list.map((item) => this.toHit(item));
    });
  }

  private toHit(item: unknown): Hit {
    const rec = (item ?? {}) as Record<string, unknown>;
    const doc = (rec['document'] ?? rec) as Record<string, unknown>;
    const score = typeof rec['score'] === 'number' ? rec['score'] : 0;
    let title = typeof doc['title'] === 'string' ? doc['title'] : undefined;
    let text = typeof doc['text'] === 'string' ? doc['text'] : undefined;
    if ((title === undefined || text === undefined) && typeof doc['contents'] === 'string') ({ title, text } = splitContents(doc['contents']));
    if (text === undefined) throw new RagtrailError(`${this.url}: a document has neither "contents" nor "text"`);
    const id = doc['id'] ?? doc['docid'];
    const passageId = typeof id === 'string' || typeof id === 'number' ? String(id) : stableId('doc-', title ?? '', text);
    return { passageId, title: title ?? '', text, score };
  }
}
