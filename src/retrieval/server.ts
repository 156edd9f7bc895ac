/**
 * An HTTP retrieval server speaking Search-R1's `/retrieve` protocol (see protocol.ts), so that a
 * Python trainer (verl, Search-R1, LWS's verl-tool setup) uses a ragtrail index unchanged.
 * Listens on 127.0.0.1 unless told otherwise; an optional token guards every route but `/health`
 * (header, `?token=` or a `/t/<token>/` prefix: Search-R1's `_batch_search` can only be given a URL).
 *
 * Every request's work is bounded: queries per request, queries × topk, characters per query and the
 * size of the reply each have a limit (a flag of `serve-retriever`), and a request over one gets 413
 * naming it — one request cannot exhaust the heap. Searches run on worker threads (pool.ts) or, with
 * an in-process retriever, in slices that yield to the event loop, so a large batch never stalls
 * other clients.
 */
import { createServer, type Server } from 'node:http';
import { AUTH_HELP, authorise, HttpError as BadRequest, readBody, sendJson as send, yieldToLoop } from '../core/http-server.js';
import { PooledRetriever } from './pool.js';
import { toWireDocument } from './protocol.js';
import type { Hit, Retriever } from './types.js';

export interface RetrievalLimits {
  /** Queries in one request (default 4,096: Search-R1 sends a whole rollout batch's searches at once). */
  maxQueries: number;
  maxTopk: number;
  /** Queries × topk in one request (default 65,536). */
  maxResults: number;
  /** Characters in one query (default 4,096). */
  maxQueryChars: number;
  /** Bytes of one reply, estimated before it is serialised (default 64 MiB). */
  maxResponseBytes: number;
  /** Largest request body in bytes (default 4 MiB). */
  maxBodyBytes: number;
}

export const DEFAULT_RETRIEVAL_LIMITS: RetrievalLimits = {
  maxQueries: 4096,
  maxTopk: 1000,
  maxResults: 65_536,
  maxQueryChars: 4096,
  maxResponseBytes: 64 << 20,
  maxBodyBytes: 4 << 20,
};

/** Options of {@link createRetrievalServer}; unset limits take their defaults (`DEFAULT_RETRIEVAL_LIMITS`). */
export interface RetrievalServerOptions extends Partial<RetrievalLimits> {
  /** Required (see core/http-server.ts `authorise`) when set. */
  token?: string;
  /** topk when the request gives none (Search-R1 falls back to its configured top-k). Default 3. */
  defaultTopk?: number;
  /** Passages in the index, for /health. */
  passages?: number;
  /** Called once per request with its outcome, for logging (the token never appears in it). */
  onRequest?: (info: { status: number; queries: number; ms: number }) => void;
}

interface RetrieveRequest {
  queries: string[];
  topk: number;
  returnScores: boolean;
}

/** The flag of `serve-retriever` that raises each limit, named in 413 replies. */
const FLAG: Record<keyof RetrievalLimits, string> = {
  maxQueries: '--max-queries',
  maxTopk: '--max-topk',
  maxResults: '--max-results',
  maxQueryChars: '--max-query-chars',
  maxResponseBytes: '--max-response-mb',
  maxBodyBytes: '--max-body-mb',
};

function parseRetrieve(raw: string, limits: RetrievalLimits, defaultTopk: number): RetrieveRequest {
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
  if (queries.length > limits.maxQueries) throw new BadRequest(413, `"queries" holds ${queries.length} queries; the limit is ${limits.maxQueries} per request (split the batch, or raise ${FLAG.maxQueries})`);
  const long = (queries as string[]).findIndex((q) => q.length > limits.maxQueryChars);
  if (long >= 0) throw new BadRequest(413, `query ${long} has ${queries[long].length} characters; the limit is ${limits.maxQueryChars} (raise ${FLAG.maxQueryChars})`);
  const topk = b['topk'] ?? null;
  if (topk !== null && !(Number.isInteger(topk) && (topk as number) >= 0 && (topk as number) <= limits.maxTopk)) {
    throw new BadRequest(400, `"topk" must be an integer from 1 to ${limits.maxTopk} (0 or null: the server default)`);
  }
  const rs = b['return_scores'] ?? false;
  if (typeof rs !== 'boolean') throw new BadRequest(400, '"return_scores" must be true or false');
  // Search-R1 treats a missing or zero topk as "use the default".
  const k = (topk as number | null) || defaultTopk;
  if (queries.length * k > limits.maxResults) {
    throw new BadRequest(413, `${queries.length} queries × topk ${k} = ${queries.length * k} results; the limit is ${limits.maxResults} per request (send fewer queries or a smaller topk, or raise ${FLAG.maxResults})`);
  }
  return { queries: queries as string[], topk: k, returnScores: rs };
}

/** Searches `queries`: all at once on a worker pool, else in slices with the event loop free between them. */
export async function searchSliced(retriever: Retriever, queries: readonly string[], k: number, slice = 16): Promise<Hit[][]> {
  if (retriever instanceof PooledRetriever || queries.length <= slice) return retriever.searchBatch(queries, k);
  const out: Hit[][] = [];
  for (let i = 0; i < queries.length; i += slice) {
    if (i > 0) await yieldToLoop();
    out.push(...(await retriever.searchBatch(queries.slice(i, i + slice), k)));
  }
  return out;
}

/**
 * An HTTP server (not yet listening) answering Search-R1's `POST /retrieve` {queries, topk,
 * return_scores}
 * and `GET /health` over `retriever`. Requests over a limit get 413, a missing or wrong token 401.
 */
export function createRetrievalServer(retriever: Retriever, opts: RetrievalServerOptions = {}): Server {
  const limits: RetrievalLimits = { ...DEFAULT_RETRIEVAL_LIMITS };
  for (const key of Object.keys(DEFAULT_RETRIEVAL_LIMITS) as (keyof RetrievalLimits)[]) if (opts[key] !== undefined) limits[key] = opts[key]!;
  const defaultTopk = opts.defaultTopk ?? 3;
  return createServer(async (req, res) => {
    const t0 = performance.now();
    let queries = 0;
    let status = 200;
    try {
      const auth = authorise(req, opts.token);
      // Health stays open for load balancers and readiness probes, as serve-env's does.
      if (auth.path === '/health' && req.method === 'GET') {
        send(res, 200, { status: 'ok', retriever: retriever.name, passages: opts.passages });
        return;
      }
      if (!auth.ok) throw new BadRequest(401, `missing or wrong token: ${AUTH_HELP}`);
      if (auth.path !== '/retrieve') throw new BadRequest(404, `no route ${auth.path}; use POST /retrieve or GET /health`);
      if (req.method !== 'POST') throw new BadRequest(405, '/retrieve takes POST');
      const r = parseRetrieve(await readBody(req, limits.maxBodyBytes), limits, defaultTopk);
      queries = r.queries.length;
      const hits = await searchSliced(retriever, r.queries, r.topk);
      // Each document goes out with its contents and again as title and text, plus JSON framing.
      let bytes = 2;
      for (const list of hits) for (const h of list) bytes += 2 * (h.title.length + h.text.length) + h.passageId.length + 80;
      if (bytes > limits.maxResponseBytes) {
        throw new BadRequest(413, `the reply would hold about ${(bytes / 2 ** 20).toFixed(1)} MiB; the limit is ${(limits.maxResponseBytes / 2 ** 20).toFixed(1)} MiB (send fewer queries or a smaller topk, or raise ${FLAG.maxResponseBytes})`);
      }
      const result = hits.map((list) => list.map((h) => (r.returnScores ? { document: toWireDocument(h), score: h.score } : toWireDocument(h))));
      send(res, 200, { result });
    } catch (e) {
      status = e instanceof BadRequest ? e.status : 500;
      // A client that sent too much is answered before its body is read to the end: close the connection.
      if (status === 413) res.setHeader('connection', 'close');
      send(res, status, { error: e instanceof Error ? e.message : String(e) });
    } finally {
      opts.onRequest?.({ status: res.statusCode || status, queries, ms: performance.now() - t0 });
    }
  });
}
