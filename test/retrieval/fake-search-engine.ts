/**
 * A loopback stand-in for an Elasticsearch / OpenSearch node, for tests: the few REST calls
 * ragtrail makes (index create / exists / mapping, _bulk, _refresh, _msearch, search pipelines),
 * answered in the engines' documented response shapes (with Elasticsearch's `x-elastic-product`
 * header, which its client checks). Searches are answered from what was bulk-loaded — term overlap
 * for `match`, dot product for kNN, RRF for hybrid — so that results are real; it records every
 * request for shape checks. It is not a search engine and makes no claim about their scores.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface EngineRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  /** JSON body, or the parsed lines of an NDJSON body. */
  body: unknown;
}

interface StoredIndex {
  settings: Record<string, unknown>;
  mappings: Record<string, unknown> & { _meta?: Record<string, unknown> };
  docs: Map<string, Record<string, unknown>>;
}

export interface FakeEngine {
  url: string;
  requests: EngineRequest[];
  indices: Map<string, StoredIndex>;
  /** Number of documents received by _bulk. */
  bulkDocs: number;
  /** Make the n-th _bulk call (1-based) report an item error. */
  failBulk?: number;
  close(): Promise<void>;
}

const words = (s: string) => s.toLowerCase().match(/[a-z0-9]+/g) ?? [];

function hitsFor(index: string, idx: StoredIndex, body: Record<string, any>): { _index: string; _id: string; _score: number; _source: Record<string, unknown> }[] {
  const size = Number(body['size'] ?? 10);
  const matchRank = (query: string) => {
    const q = new Set(words(query));
    return [...idx.docs.entries()].map(([id, d]) => ({ id, score: words(String(d['contents'] ?? '')).filter((w) => q.has(w)).length })).filter((x) => x.score > 0).sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
  };
  const knnRank = (vector: number[], k: number) =>
    [...idx.docs.entries()].map(([id, d]) => ({ id, score: (d['vector'] as number[]).reduce((s, x, i) => s + x * vector[i]!, 0) })).sort((a, b) => b.score - a.score).slice(0, k);
  let ranked: { id: string; score: number }[];
  const q = body['query'] as Record<string, any> | undefined;
  const rrf = (lists: { id: string }[][], k: number) => {
    const s = new Map<string, number>();
    for (const l of lists) l.forEach((h, i) => s.set(h.id, (s.get(h.id) ?? 0) + 1 / (k + i + 1)));
    return [...s.entries()].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score);
  };
  if (body['retriever']) {
    const r = body['retriever'].rrf;
    ranked = rrf([matchRank(r.retrievers[0].standard.query.match.contents), knnRank(r.retrievers[1].knn.query_vector, r.retrievers[1].knn.k)], r.rank_constant);
  } else if (body['knn']) {
    ranked = knnRank(body['knn'].query_vector, body['knn'].k);
  } else if (q?.['hybrid']) {
    const [m, kq] = q['hybrid'].queries;
    ranked = rrf([matchRank(m.match.contents), knnRank(kq.knn.vector.vector, kq.knn.vector.k)], 60);
  } else if (q?.['knn']) {
    ranked = knnRank(q['knn'].vector.vector, q['knn'].vector.k);
  } else {
    ranked = matchRank(q?.['match']?.contents ?? '');
  }
  const fields = (body['_source'] as string[] | undefined) ?? ['id', 'title', 'text'];
  return ranked.slice(0, size).map(({ id, score }) => ({ _index: index, _id: id, _score: score, _source: Object.fromEntries(fields.map((f) => [f, idx.docs.get(id)![f]])) }));
}

export async function startFakeEngine(): Promise<FakeEngine> {
  const state: FakeEngine = { url: '', requests: [], indices: new Map(), bulkDocs: 0, close: async () => {} };
  let bulkCalls = 0;
  const server: Server = createServer(async (req, res) => {
    let raw = '';
    for await (const c of req) raw += c;
    const u = new URL(req.url ?? '/', 'http://x');
    const ndjson = u.pathname.endsWith('/_bulk') || u.pathname.endsWith('/_msearch');
    const body = raw === '' ? undefined : ndjson ? raw.trim().split('\n').map((l) => JSON.parse(l)) : JSON.parse(raw);
    const method = req.method ?? 'GET';
    state.requests.push({ method, path: u.pathname, query: Object.fromEntries(u.searchParams), body });
    const send = (status: number, payload?: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'x-elastic-product': 'Elasticsearch' });
      res.end(payload === undefined ? '' : JSON.stringify(payload));
    };
    const parts = u.pathname.split('/').filter(Boolean);
    const name = parts[0] ?? '';
    const idx = state.indices.get(name);
    const missing = () => send(404, { error: { root_cause: [], type: 'index_not_found_exception', reason: `no such index [${name}]`, index: name }, status: 404 });
    if (parts.length === 1 && method === 'HEAD') return send(idx ? 200 : 404);
    if (parts.length === 1 && method === 'PUT') {
      if (idx) return send(400, { error: { type: 'resource_already_exists_exception', reason: `index [${name}] already exists` }, status: 400 });
      const b = body as { settings?: Record<string, unknown>; mappings?: Record<string, unknown> };
      state.indices.set(name, { settings: b.settings ?? {}, mappings: b.mappings ?? {}, docs: new Map() });
      return send(200, { acknowledged: true, shards_acknowledged: true, index: name });
    }
    if (parts[1] === '_mapping') {
      if (!idx) return missing();
      if (method === 'GET') return send(200, { [name]: { mappings: idx.mappings } });
      const meta = (body as { _meta?: Record<string, unknown> })._meta;
      if (meta) idx.mappings._meta = meta;
      return send(200, { acknowledged: true });
    }
    if (parts[1] === '_refresh') return idx ? send(200, { _shards: { total: 2, successful: 1, failed: 0 } }) : missing();
    if (parts[0] === '_search' && parts[1] === 'pipeline') return send(200, { acknowledged: true });
    if (u.pathname === '/_bulk') {
      bulkCalls++;
      const lines = body as Record<string, any>[];
      const items: unknown[] = [];
      for (let i = 0; i < lines.length; i += 2) {
        const { _index, _id } = lines[i]!.index;
        if (state.failBulk === bulkCalls && i === 0) {
          items.push({ index: { _index, _id, status: 400, error: { type: 'document_parsing_exception', reason: 'injected failure' } } });
          continue;
        }
        state.indices.get(_index)!.docs.set(_id, lines[i + 1]!);
        state.bulkDocs++;
        items.push({ index: { _index, _id, _version: 1, result: 'created', _shards: { total: 2, successful: 1, failed: 0 }, _seq_no: state.bulkDocs, _primary_term: 1, status: 201 } });
      }
      return send(200, { took: 3, errors: items.some((it) => (it as { index: { error?: unknown } }).index.error), items });
    }
    if (parts[1] === '_msearch') {
      if (!idx) return missing();
      const lines = body as Record<string, unknown>[];
      const responses = [];
      for (let i = 0; i < lines.length; i += 2) {
        const hits = hitsFor(name, idx, lines[i + 1] as Record<string, unknown>);
        responses.push({ took: 1, timed_out: false, _shards: { total: 1, successful: 1, skipped: 0, failed: 0 }, hits: { total: { value: hits.length, relation: 'eq' }, max_score: hits[0]?._score ?? null, hits }, status: 200 });
      }
      return send(200, { took: 2, responses });
    }
    send(400, { error: { type: 'illegal_argument_exception', reason: `fake engine: no handler for ${method} ${u.pathname}` }, status: 400 });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return state;
}
