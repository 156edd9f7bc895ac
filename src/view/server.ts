/**
 * `ragtrail view`'s server: the web app (assets/view/) and its data (view/data.ts) over HTTP, read-only, on
 * the loopback interface unless told otherwise. Every answer names a source by its id, never a path, so
 * nothing outside the sources can be read; the page may fetch from this server only (Content-Security-Policy).
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InputError } from '../core/errors.js';
import { HttpError, sendJson } from '../core/http-server.js';
import type { ViewData } from './data.js';

/** The app's own files: index.html, app.js, app.css. */
export const ASSETS = fileURLToPath(new URL('../../assets/view/', import.meta.url));
const ASSET_TYPES: Record<string, string> = { 'index.html': 'text/html; charset=utf-8', 'app.js': 'text/javascript; charset=utf-8', 'app.css': 'text/css; charset=utf-8' };

/** The page may run only this server's scripts and fetch only from it. */
export const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/**
 * The request's Host must name the loopback interface when the server listens there: a page elsewhere
 * cannot then reach it through a DNS name rebound to 127.0.0.1.
 */
function hostAllowed(req: IncomingMessage, host: string): boolean {
  if (!LOOPBACK.has(host)) return true;
  const h = (req.headers.host ?? '').replace(/:\d+$/, '');
  return LOOPBACK.has(h);
}

async function answer(data: ViewData, parts: string[]): Promise<unknown> {
  const [what, id, n] = parts;
  const line = () => {
    const k = Number(n);
    if (!Number.isInteger(k) || k < 0) throw new HttpError(400, `line number "${n}" is not a whole number`);
    return k;
  };
  switch (what) {
    case 'sources':
      return data.list();
    case 'run':
      return data.run(id!);
    case 'traj':
      return data.trajectory(id!, line());
    case 'annotation':
      return data.annotation(id!);
    case 'tree':
      return data.tree(id!, line());
    case 'results':
      return data.results(id!);
    case 'training':
      return data.training(id!);
    default:
      throw new HttpError(404, `no such data: ${parts.join('/')}`);
  }
}

/** The HTTP server over `data` (not yet listening). `host` is the interface it will listen on. */
export function viewServer(data: ViewData, host: string): Server {
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      res.setHeader('content-security-policy', CSP);
      res.setHeader('x-content-type-options', 'nosniff');
      res.setHeader('referrer-policy', 'no-referrer');
      try {
        if (!hostAllowed(req, host)) throw new HttpError(403, 'this server answers requests for the loopback interface only');
        if (req.method !== 'GET' && req.method !== 'HEAD') throw new HttpError(405, 'the viewer is read-only: GET only');
        const url = new URL(req.url ?? '/', 'http://view.local');
        const path = url.pathname;
        if (path.startsWith('/api/')) {
          const parts = path.slice('/api/'.length).split('/').map(decodeURIComponent);
          res.setHeader('cache-control', 'no-store');
          sendJson(res, 200, await answer(data, parts));
          return;
        }
        const file = path === '/' ? 'index.html' : path.slice(1);
        const type = ASSET_TYPES[file];
        if (!type) throw new HttpError(404, `no such page: ${path}`);
        const body = readFileSync(join(ASSETS, file));
        res.writeHead(200, { 'content-type': type, 'content-length': body.length });
        res.end(req.method === 'HEAD' ? undefined : body);
      } catch (e) {
        const status = e instanceof HttpError ? e.status : e instanceof InputError ? 404 : 500;
        sendJson(res, status, { error: e instanceof Error ? e.message : String(e) });
      }
    })();
  });
}
