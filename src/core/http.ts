/**
 * JSON over HTTP with the behaviour long jobs need: a per-request timeout, and retries with
 * exponential backoff and full jitter on network errors, timeouts, 408/429 and 5xx, honouring
 * Retry-After. Shared by the embedding and retrieval clients and the LLM backends.
 */
import { RagtrailError } from './errors.js';

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
      const res = await fetch(url, {
        method: req.method ?? (req.body === undefined ? 'GET' : 'POST'),
        headers: { 'content-type': 'application/json', accept: 'application/json', ...req.headers },
        body: req.body === undefined ? undefined : JSON.stringify(req.body),
        signal: AbortSignal.timeout(req.timeoutMs ?? 120_000),
      });
      const text = await res.text();
      if (res.ok) {
        try {
          return JSON.parse(text) as T;
        } catch {
          throw new HttpError(url, res.status, `reply is not JSON: ${text}`);
        }
      }
      const err = new HttpError(url, res.status, text);
      if (!retryable(res.status)) throw err;
      lastError = err;
      wait = retryAfterMs(res.headers.get('retry-after'));
    } catch (e) {
      if (e instanceof HttpError && !retryable(e.status)) throw e;
      lastError = e;
    }
    if (attempt === retries) break;
    // Full jitter: uniform in [0, min(cap, base·2^attempt)], unless the server said when.
    await sleep(wait ?? random() * Math.min(cap, base * 2 ** attempt));
  }
  if (lastError instanceof HttpError) throw lastError;
  const why = lastError instanceof Error ? (lastError.cause instanceof Error ? lastError.cause.message : lastError.message) : String(lastError);
  throw new RagtrailError(`cannot reach ${url}: ${why}`, 'check that the server is running and the URL is right');
}
