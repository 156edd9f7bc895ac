/**
 * JSON over HTTP with the behaviour long jobs need: a per-request timeout, and retries with
 * exponential backoff and full jitter on network errors, timeouts, 408/429 and 5xx, honouring
 * Retry-After. Shared by the embedding and retrieval clients and the LLM backends.
 *
 * Built on node:http with keep-alive agents rather than fetch: annotation keeps hundreds of model
 * requests in flight, and fetch's per-request machinery (streams, abort signals) cost about twice the
 * client CPU per call, enough to leave a fast server waiting (bench/annotate.ts).
 */
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { RagtrailError } from './errors.js';

const agents = { http: new HttpAgent({ keepAlive: true, maxSockets: Infinity }), https: new HttpsAgent({ keepAlive: true, maxSockets: Infinity }) };

interface RawResponse {
  status: number;
  text: string;
  retryAfter: string | null;
}

class TimeoutError extends Error {}

/** One request, no retries. */
function send(url: string, method: string, headers: Record<string, string>, body: string | undefined, timeoutMs: number): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      reject(new RagtrailError(`not a valid URL: ${url}`));
      return;
    }
    const secure = u.protocol === 'https:';
    const req = (secure ? httpsRequest : httpRequest)(
      u,
      { method, headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent: secure ? agents.https : agents.http },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const ra = res.headers['retry-after'];
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), retryAfter: Array.isArray(ra) ? (ra[0] ?? null) : (ra ?? null) });
        });
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new TimeoutError(`no reply within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

export class HttpError extends RagtrailError {
  constructor(
    readonly url: string,
    readonly status: number,
    readonly body: string,
  ) {
    super(`HTTP ${status} from ${url}: ${body.slice(0, 300).replace(/\s+/g, ' ').trim()}`);
  }
}

export interface RetryOptions {
  /** Retries after the first attempt (default 4). */
  retries?: number;
  /** First backoff in ms (default 500); doubles each retry, capped at `maxDelayMs`. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Per-attempt timeout in ms (default 120 s). */
  timeoutMs?: number;
  /** Injected for tests. */
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

export interface JsonRequest extends RetryOptions {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: unknown;
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function retryable(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Delay requested by a Retry-After header, in ms (seconds or an HTTP date), if any. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (!header) return undefined;
  const secs = Number(header);
  if (Number.isFinite(secs)) return Math.max(0, secs * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Sends a JSON request and parses the JSON reply, retrying transient failures. */
export async function fetchJson<T = unknown>(url: string, req: JsonRequest = {}): Promise<T> {
  const retries = req.retries ?? 4;
  const base = req.baseDelayMs ?? 500;
  const cap = req.maxDelayMs ?? 30_000;
  const sleep = req.sleep ?? defaultSleep;
  const random = req.random ?? Math.random;
  let lastError: unknown;
  for (let attempt = 0; attempt <= retries; attempt++) {
    let wait: number | undefined;
    try {
      const res = await send(
        url,
        req.method ?? (req.body === undefined ? 'GET' : 'POST'),
        { 'content-type': 'application/json', accept: 'application/json', ...req.headers },
        req.body === undefined ? undefined : JSON.stringify(req.body),
        req.timeoutMs ?? 120_000,
      );
      if (res.status >= 200 && res.status < 300) {
        try {
          return JSON.parse(res.text) as T;
        } catch {
          throw new HttpError(url, res.status, `reply is not JSON: ${res.text}`);
        }
      }
      const err = new HttpError(url, res.status, res.text);
      if (!retryable(res.status)) throw err;
      lastError = err;
      wait = retryAfterMs(res.retryAfter);
    } catch (e) {
      if (e instanceof HttpError && !retryable(e.status)) throw e;
      lastError = e;
    }
    if (attempt === retries) break;
    // Full jitter: uniform in [0, min(cap, base·2^attempt)], unless the server said when.
    await sleep(wait ?? random() * Math.min(cap, base * 2 ** attempt));
  }
  if (lastError instanceof HttpError) throw lastError;
  if (lastError instanceof RagtrailError) throw lastError;
  const why = lastError instanceof Error ? (lastError.cause instanceof Error ? lastError.cause.message : lastError.message || (lastError as NodeJS.ErrnoException).code) : String(lastError);
  throw new RagtrailError(`cannot reach ${url}: ${why}`, 'check that the server is running and the URL is right');
}
