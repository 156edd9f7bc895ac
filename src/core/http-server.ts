/** What ragtrail's HTTP servers share: JSON replies, bounded bodies, and errors that carry a status. */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

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
    if (size > limit) throw new HttpError(413, `request body larger than ${limit} bytes`);
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

/** Starts `server` on host:port (0: a free port) and resolves with the port it got. */
export async function listen(server: Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const addr = server.address();
  return typeof addr === 'object' && addr ? addr.port : port;
}
