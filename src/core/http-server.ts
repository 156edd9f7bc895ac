/** What ragtrail's HTTP servers share: JSON replies, bounded bodies, and errors that carry a status. */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { InputError } from './errors.js';

/** An error answered with its status and message (4xx for the client's mistakes). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const data = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) });
  res.end(data);
}

export async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new HttpError(413, `request body larger than ${limit} bytes (the server's --max-body-mb)`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Parses a JSON object body; `shape` describes the expected body in the error message. */
export function parseJsonObject(raw: string, shape: string): Record<string, unknown> {
  let body: unknown;
  try {
    body = raw.trim() === '' ? {} : JSON.parse(raw);
  } catch {
    throw new HttpError(400, 'the body is not valid JSON');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new HttpError(400, `the body must be a JSON object ${shape}`);
  return body as Record<string, unknown>;
}

/**
 * Starts `server` on host:port (0: a free port) and resolves with the port it got. A port that cannot
 * be had is the user's to fix (another port or host), so it is an InputError naming the flags.
 */
export async function listen(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => reject(listenError(e, port, host)));
    server.listen(port, host, resolve);
  });
  const addr = server.address();
  return typeof addr === 'object' && addr ? addr.port : port;
}

/** The error of a failed listen, in the words of the --port and --host flags every server command has. */
export function listenError(e: NodeJS.ErrnoException, port: number, host: string): Error {
  const where = `${host}:${port}`;
  switch (e.code) {
    case 'EADDRINUSE':
      return new InputError(`cannot listen on ${where}: the port is in use`, 'pass another --port, or --port 0 for a free one, or stop the process that holds it');
    case 'EACCES':
      return new InputError(`cannot listen on ${where}: permission denied`, 'ports below 1024 need privileges: pass a --port from 1024 up, or --port 0 for a free one');
    case 'EADDRNOTAVAIL':
      return new InputError(`cannot listen on ${where}: ${host} is not an address of this machine`, 'pass a local --host, e.g. 127.0.0.1, or 0.0.0.0 for every interface');
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new InputError(`cannot listen on ${where}: the host name ${host} does not resolve`, 'pass --host as an address, e.g. 127.0.0.1');
    default:
      return e;
  }
}

/**
 * Where a request's token may travel. Upstream clients cannot all set a header: Search-R1's
 * `_batch_search` and verl-tool's `send_batch_requests_async` post to a configured URL, OpenEnv's
 * `EnvClient` appends `/ws`, `/reset`, … to a base URL. So beside `Authorization: Bearer <token>`
 * (scheme case-insensitive, RFC 7235 §2.1) a server accepts `?token=<token>` and a leading path
 * segment pair `/t/<token>/…`, which it strips before routing. Comparisons take constant time.
 */
export interface Authorised {
  ok: boolean;
  /** The path with any `/t/<token>` prefix removed: what routing and logs see (never the token). */
  path: string;
  query: URLSearchParams;
}

function sameToken(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

export function authorise(req: IncomingMessage, token: string | undefined): Authorised {
  let url: URL;
  try {
    url = new URL(req.url ?? '/', 'http://localhost');
  } catch {
    url = new URL('http://localhost/.invalid'); // an unparseable request target routes nowhere
  }
  let path = url.pathname;
  let fromPath: string | undefined;
  const m = /^\/t\/([^/]+)(\/.*)?$/.exec(path);
  if (m) {
    try {
      fromPath = decodeURIComponent(m[1]!);
    } catch {
      fromPath = undefined; // malformed %-escapes: no token, not a crash
    }
    path = m[2] ?? '/';
  }
  if (!token) return { ok: true, path, query: url.searchParams };
  const header = req.headers.authorization;
  const bearer = header ? /^bearer\s+(.+)$/i.exec(header.trim())?.[1] : undefined;
  const candidates = [bearer, url.searchParams.get('token') ?? undefined, fromPath];
  return { ok: candidates.some((c) => c !== undefined && sameToken(c, token)), path, query: url.searchParams };
}

/** How to send the token, for 401 messages. */
export const AUTH_HELP = 'send "Authorization: Bearer <token>", or put it in the URL as ?token=<token> or a /t/<token>/ path prefix';

/**
 * Closes `server` without cutting a reply short, resolving once every connection has ended. Node's
 * `close()` destroys the connections it deems idle, and on Node 20 a reply that was ended (`res.end`)
 * but is still being written out counts as idle: a 32 MiB reply was cut after 3.9 MB (and
 * serve-retriever's in-flight batch in a CI run). So replies already ended are let flush first, and
 * replies still in progress close their connection once written instead of keeping it alive.
 * Returns the function that starts the close; call it once.
 */
export function gracefulCloser(server: Server): () => Promise<void> {
  const live = new Set<ServerResponse>();
  let closing = false;
  const endAfter = (res: ServerResponse, socket: Socket | null) => {
    if (!res.headersSent) res.shouldKeepAlive = false; // Node then ends the connection after this reply
    else res.once('finish', () => socket?.end()); // written out: end the kept-alive connection
  };
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    live.add(res);
    res.once('close', () => live.delete(res));
    if (closing) endAfter(res, req.socket);
  });
  return async () => {
    closing = true;
    for (const res of live) if (!res.writableEnded) endAfter(res, res.socket);
    // Until no ended reply is still being written (one may end while others flush); then close() in
    // the same tick, so none can end in between.
    for (;;) {
      const flushing = [...live].filter((r) => r.writableEnded && !r.writableFinished);
      if (flushing.length === 0) break;
      await Promise.all(flushing.map((r) => new Promise((done) => (r.once('finish', done), r.once('close', done)))));
    }
    await new Promise<void>((done) => {
      server.close(() => done());
      // Keep-alive connections with no request in flight would hold close() open.
      server.closeIdleConnections();
    });
  };
}

/** What {@link gracefulStopper} closes besides the server, and how long it waits. */
export interface StopOptions {
  sockets?: () => Iterable<{ close(code: number, reason: string): void; terminate(): void }>;
  graceMs?: number;
  log?: (msg: string) => void;
  /** Runs once the server has closed, before the exit (a multi-process copy waits there for its peers: core/cluster.ts). */
  onClosed?: () => Promise<void>;
}

/**
 * Graceful stop: stop accepting, close WebSockets with 1001 ("going away"), let in-flight requests
 * finish and their replies be written out (gracefulCloser), and exit within `graceMs` whatever still
 * hangs; a second call exits at once. Returns the function that stops, given the reason to log
 * (a signal's name, or the supervisor's word in a multi-process server: core/cluster.ts).
 */
export function gracefulStopper(server: Server, opts: StopOptions = {}): (reason: string) => void {
  let stopping = false;
  const close = gracefulCloser(server);
  return (reason: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    opts.log?.(`${reason}: finishing in-flight requests, then exiting`);
    const sockets = [...(opts.sockets?.() ?? [])];
    for (const ws of sockets) ws.close(1001, 'server shutting down');
    void close()
      .then(() => opts.onClosed?.())
      .then(() => process.exit(0));
    const grace = opts.graceMs ?? 4500;
    setTimeout(() => {
      for (const ws of sockets) ws.terminate();
      server.closeAllConnections();
      process.exit(0);
    }, grace).unref(); // a client that never answers the close frame must not hold the process past the grace period
  };
}

/** Graceful stop (gracefulStopper) on SIGTERM/SIGINT; a second signal exits at once. */
export function stopOnSignals(server: Server, opts: StopOptions = {}): void {
  const stop = gracefulStopper(server, opts);
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

/** Lets other callbacks run (other clients' requests, /health) between slices of heavy synchronous work. */
export const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
