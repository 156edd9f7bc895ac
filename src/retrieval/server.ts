/**
 * An HTTP retrieval server speaking Search-R1's `/retrieve` protocol (see protocol.ts), so that a
 * Python trainer (verl, Search-R1, LWS's verl-tool setup) uses a ragtrail index unchanged.
 * Listens on 127.0.0.1 unless told otherwise; an optional bearer token guards it. Malformed requests
 * get 400 with a message naming the field.
 */
import { createServer, type Server } from 'node:http';
import { HttpError as BadRequest, readBody, sendJson as send } from '../core/http-server.js';
import { toWireDocument } from './protocol.js';
import type { Retriever } from './types.js';

export interface RetrievalServerOptions {
  /** Required as `Authorization: Bearer <token>` when set. */
  token?: string;
  /** topk when the request gives none (Search-R1 falls back to its configured top-k). Default 3. */
  defaultTopk?: number;
  maxTopk?: number;
  maxQueries?: number;
  /** Largest request body in bytes (default 4 MiB). */
  maxBodyBytes?: number;
  /** Passages in the index, for /health. */
  passages?: number;
  /** Called once per request with its outcome, for logging. */
  onRequest?: (info: { status: number; queries: number; ms: number }) => void;
}

interface RetrieveRequest {
  queries: string[];
  topk: number;
  returnScores: boolean;
}

function parseRetrieve(raw: string, opts: Required<Pick<RetrievalServerOptions, 'defaultTopk' | 'maxTopk' | 'maxQueries'>>): RetrieveRequest {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw new BadRequest(400, 'the body is not valid JSON');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new BadRequest(400, 'the body must be a JSON object {"queries": [...], "topk": k, "return_scores": bool}');
  const b = body as Record<string, unknown>;
  const queries = b['queries'];
  if (!Array.isArray(queries) || queries.some((q) => typeof q !== 'string')) throw new BadRequest(400, '"queries" must be a list of strings');
  if (queries.length > opts.maxQueries) throw new BadRequest(400, `"queries" holds ${queries.length} queries; at most ${opts.maxQueries} per request`);
  const topk = b['topk'] ?? null;
  if (topk !== null && !(Number.isInteger(topk) && (topk as number) >= 0 && (topk as number) <= opts.maxTopk)) {
    throw new BadRequest(400, `"topk" must be an integer from 1 to ${opts.maxTopk} (0 or null: the server default)`);
  }
  const rs = b['return_scores'] ?? false;
  if (typeof rs !== 'boolean') throw new BadRequest(400, '"return_scores" must be true or false');
  // Search-R1 treats a missing or zero topk as "use the default".
  return { queries: queries as string[], topk: (topk as number | null) || opts.defaultTopk, returnScores: rs };
}

export function createRetrievalServer(retriever: Retriever, opts: RetrievalServerOptions = {}): Server {
  const limits = { defaultTopk: opts.defaultTopk ?? 3, maxTopk: opts.maxTopk ?? 1000, maxQueries: opts.maxQueries ?? 4096 };
  const maxBody = opts.maxBodyBytes ?? 4 << 20;
  return createServer(async (req, res) => {
    const t0 = performance.now();
    let queries = 0;
    let status = 200;
    try {
      const path = (req.url ?? '/').split('?')[0];
      if (opts.token && req.headers.authorization !== `Bearer ${opts.token}`) throw new BadRequest(401, 'missing or wrong bearer token');
      if (path === '/health' && req.method === 'GET') {
        send(res, 200, { status: 'ok', retriever: retriever.name, passages: opts.passages });
        return;
      }
      if (path !== '/retrieve') throw new BadRequest(404, `no route ${path}; use POST /retrieve or GET /health`);
      if (req.method !== 'POST') throw new BadRequest(405, '/retrieve takes POST');
      const r = parseRetrieve(await readBody(req, maxBody), limits);
      queries = r.queries.length;
      const hits = await retriever.searchBatch(r.queries, r.topk);
      const result = hits.map((list) => list.map((h) => (r.returnScores ? { document: toWireDocument(h), score: h.score } : toWireDocument(h))));
      send(res, 200, { result });
    } catch (e) {
      status = e instanceof BadRequest ? e.status : 500;
      send(res, status, { error: e instanceof Error ? e.message : String(e) });
    } finally {
      opts.onRequest?.({ status: res.statusCode || status, queries, ms: performance.now() - t0 });
    }
  });
}
