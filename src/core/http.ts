/**
 * JSON over HTTP with the behaviour long jobs need: a per-attempt timeout, and a retry policy
 * measured in time rather than attempts. Transient failures (network errors and resets, timeouts,
 * 408/409/429, 5xx, and 2xx replies that are not JSON or fail the caller's check) are retried with
 * capped exponential backoff and full jitter for up to `retryForMs` per request (default 10 minutes),
 * so an outage of the server pauses a run instead of ending it; Retry-After is honoured up to a cap.
 * Anything else (400, 401, 403, 404, …) fails at once with a hint. Shared by the LLM backends and the
 * embedding, retrieval and PRM clients.
 *
 * Built on node:http with keep-alive agents rather than fetch: annotation keeps hundreds of model
 * requests in flight, and fetch's per-request machinery (streams, abort signals) cost about twice the
 * client CPU per call, enough to leave a fast server waiting (bench/annotate.ts).
 */
import { EventEmitter } from 'node:events';
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
        // A connection reset mid-body ends the response with 'aborted' (and, on newer Nodes, 'error').
        res.on('aborted', () => reject(Object.assign(new Error('the connection was reset mid-reply'), { code: 'ECONNRESET' })));
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new TimeoutError(`no reply within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** What to do about a status that will not change by asking again. */
function hintFor(status: number): string | undefined {
  if (status === 401 || status === 403) return 'check the API key (--api-key or $OPENAI_API_KEY) and that it may use this server';
  if (status === 404) return 'check the base URL and the model name the server knows (GET /v1/models lists them)';
  return undefined;
}

export class HttpError extends RagtrailError {
  constructor(
    readonly url: string,
    readonly status: number,
    readonly body: string,
    /** Appended to the message, e.g. how long it was retried. */
    note = '',
    hint = hintFor(status),
  ) {
    super(`HTTP ${status} from ${url}: ${body.slice(0, 300).replace(/\s+/g, ' ').trim()}${note}`, hint);
  }
}

/** A 2xx reply that cannot be used (not JSON, or failing the caller's check): retried like a 5xx. */
class BadReplyError extends Error {}

/**
 * How a request is retried after transient failures (refused or reset connections, timeouts, 408 / 429 / 5xx):
 * within a time window, with exponential backoff and an optional cap on the number of retries.
 */
export interface RetryOptions {
  /** How long to keep retrying transient failures of one request, in ms (default: `retryDefaults.retryForMs`, 10 minutes). */
  retryForMs?: number;
  /** Optional cap on retries after the first attempt, on top of the time limit (default: none). */
  retries?: number;
  /** First backoff in ms (default 500); doubles each retry, capped at `maxDelayMs` (default 30 s). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Longest Retry-After obeyed, in ms (default 60 s): a server asking for an hour is asked again sooner. */
  maxRetryAfterMs?: number;
  /** Per-attempt timeout in ms (default 120 s). */
  timeoutMs?: number;
  /** What the server is, for the waiting line and errors ("LLM server"; default "server"). */
  serverKind?: string;
  /** Injected for tests. */
  sleep?: (ms: number) => Promise<void>;
  /** Source of uniform numbers in [0, 1) for the backoff jitter (default Math.random). */
  random?: () => number;
  /** Clock in ms, used to measure the retry time budget (default Date.now). */
  now?: () => number;
}

/** Process-wide defaults, set once by the CLI's `--retry-for`. */
export const retryDefaults = { retryForMs: 10 * 60_000, baseDelayMs: 500, maxDelayMs: 30_000, maxRetryAfterMs: 60_000 };

export interface JsonRequest extends RetryOptions {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: unknown;
  /** Checks a parsed 2xx reply; a returned string says why it is unusable, and the request is retried. */
  validate?: (reply: unknown) => string | undefined;
}

/** A request that is failing and waiting to try again, as shown on progress lines. */
export interface RetryWait {
  url: string;
  serverKind: string;
  /** Failed attempts so far. */
  attempts: number;
  /** When the first attempt failed (Date.now()). */
  since: number;
  waitMs: number;
  reason: string;
}

/**
 * Retry notices for whoever shows progress: 'wait' (a RetryWait) before each backoff sleep, and
 * 'recovered' (a RetryWait and its total ms lost) when a request that had failed succeeds.
 */
export const retryEvents = new EventEmitter();
retryEvents.setMaxListeners(0);

/** Counters over the process (the soak bench reads them). */
export const retryStats = { retries: 0, recovered: 0, gaveUp: 0, waitedMs: 0 };

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A status that asking again (later, or another server) may fix: 408, 409, 429 and 5xx. */
export function retryable(status: number): boolean {
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

/** A failure worth retrying: a timeout, an unusable reply, or a socket error (ECONNRESET, ECONNREFUSED, …, not Node's ERR_* misuse codes). */
function transient(e: unknown): boolean {
  if (e instanceof TimeoutError || e instanceof BadReplyError) return true;
  const code = (e as NodeJS.ErrnoException)?.code ?? ((e as Error)?.cause as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && /^E[A-Z]/.test(code) && !code.startsWith('ERR_');
}

function describe(e: unknown): string {
  if (e instanceof HttpError) return `HTTP ${e.status}`;
  if (e instanceof BadReplyError || e instanceof TimeoutError) return e.message;
  const err = e as NodeJS.ErrnoException;
  const cause = err?.cause as NodeJS.ErrnoException | undefined;
  return cause?.code ?? err?.code ?? cause?.message ?? err?.message ?? String(e);
}

/** Human duration for messages: "850 ms", "12 s", "10 min". */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  return `${+(ms / 60_000).toFixed(1)} min`;
}

/** Sends a JSON request and parses the JSON reply, retrying transient failures for up to `retryForMs`. */
export async function fetchJson<T = unknown>(url: string, req: JsonRequest = {}): Promise<T> {
  const retryFor = req.retryForMs ?? retryDefaults.retryForMs;
  const base = req.baseDelayMs ?? retryDefaults.baseDelayMs;
  const cap = req.maxDelayMs ?? retryDefaults.maxDelayMs;
  const raCap = req.maxRetryAfterMs ?? retryDefaults.maxRetryAfterMs;
  const sleep = req.sleep ?? defaultSleep;
  const random = req.random ?? Math.random;
  const kind = req.serverKind ?? 'server';
  const now = req.now ?? Date.now;
  const start = now();
  let failedSince = 0;
  let waited = 0;
  let lastError: unknown;
  for (let attempt = 0; ; attempt++) {
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
        let parsed: T;
        try {
          parsed = JSON.parse(res.text) as T;
        } catch {
          throw new BadReplyError(`the reply is not JSON: ${res.text.slice(0, 100).replace(/\s+/g, ' ')}`);
        }
        const bad = req.validate?.(parsed);
        if (bad !== undefined) throw new BadReplyError(bad);
        if (attempt > 0) {
          retryStats.recovered++;
          retryEvents.emit('recovered', { url, serverKind: kind, attempts: attempt, since: failedSince, waitMs: 0, reason: '' } satisfies RetryWait, waited);
        }
        return parsed;
      }
      const err = new HttpError(url, res.status, res.text);
      if (!retryable(res.status)) throw err;
      lastError = err;
      const ra = retryAfterMs(res.retryAfter);
      if (ra !== undefined) wait = Math.min(ra, raCap);
    } catch (e) {
      if (e instanceof HttpError && !retryable(e.status)) throw e;
      // Network errors, timeouts and bad replies may heal; a malformed URL or header will not.
      if (!(e instanceof HttpError) && !transient(e)) throw e instanceof RagtrailError ? e : new RagtrailError(`request to ${url} failed: ${e instanceof Error ? e.message : String(e)}`, 'check the URL, the API key and the other request settings');
      lastError = e;
    }
    if (attempt === 0) failedSince = now();
    // Full jitter: uniform in [0, min(cap, base·2^attempt)], unless the server said when (up to its cap).
    const delay = wait ?? random() * Math.min(cap, base * 2 ** Math.min(attempt, 30));
    const elapsed = now() - start;
    if ((req.retries !== undefined && attempt >= req.retries) || elapsed + delay > retryFor) {
      retryStats.gaveUp++;
      throw giveUp(url, kind, lastError, attempt + 1, elapsed);
    }
    retryStats.retries++;
    retryStats.waitedMs += delay;
    waited += delay;
    retryEvents.emit('wait', { url, serverKind: kind, attempts: attempt + 1, since: failedSince, waitMs: delay, reason: describe(lastError) } satisfies RetryWait);
    await sleep(delay);
  }
}

function giveUp(url: string, kind: string, lastError: unknown, attempts: number, elapsedMs: number): RagtrailError {
  // HttpError stays an HttpError, so callers can still read the status.
  const tried = `${attempts} attempt${attempts === 1 ? '' : 's'} over ${formatMs(elapsedMs)}`;
  const hint = `check that the ${kind} is running and the URL is right; --retry-for sets how long to keep trying`;
  if (lastError instanceof HttpError) return new HttpError(url, lastError.status, lastError.body, ` (gave up after ${tried})`, hint);
  if (lastError instanceof BadReplyError) return new RagtrailError(`${url}: ${lastError.message} (gave up after ${tried})`, hint);
  return new RagtrailError(`cannot reach ${url}: ${describe(lastError)} (gave up after ${tried})`, hint);
}
