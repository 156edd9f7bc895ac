/**
 * `ragtrail view --bundle OUT`: the same web app as static files, with the data inside, for sharing — open
 * OUT/index.html from disk or any static host. Every answer the server would give is computed once and
 * written as a small script (data/<key>.js) that the page loads when it needs it: a page opened from disk
 * may load scripts beside it but not fetch files, and nothing is loaded before it is looked at.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureOutDir, writeTextAtomicSync } from '../core/io.js';
import type { ViewData } from './data.js';
import { ASSETS } from './server.js';

/** Lines of trajectories and trees per data file: a question opens one small file. */
export const BUNDLE_CHUNK = { traj: 100, tree: 50 } as const;

/** The page's policy in a bundle: its own scripts and styles, no network at all. */
const BUNDLE_CSP = "default-src 'none'; script-src 'self' file:; style-src 'self' file:; img-src data:; base-uri 'none'; form-action 'none'";

/** The data file of `key` (slashes become underscores). */
export const bundleFile = (key: string) => `data/${key.replace(/\//g, '_')}.js`;

/** Writes the bundle of everything `data` holds into `out`; returns the files written and their bytes. */
export async function writeBundle(data: ViewData, out: string): Promise<{ files: number; bytes: number }> {
  ensureOutDir(out);
  mkdirSync(join(out, 'data'), { recursive: true });
  let files = 0;
  let bytes = 0;
  const put = (key: string, value: unknown) => {
    const text = `window.__RAGTRAIL__=window.__RAGTRAIL__||{};window.__RAGTRAIL__[${JSON.stringify(key)}]=${JSON.stringify(value)};\n`;
    writeFileSync(join(out, bundleFile(key)), text);
    files++;
    bytes += Buffer.byteLength(text);
  };
  const list = data.list();
  put('sources', { ...list, bundle: { createdAt: new Date().toISOString() } });
  for (const s of list.sources) {
    if (s.kind === 'run') {
      const run = await data.run(s.id);
      put(`run/${s.id}`, run);
      const chunks = new Map<number, Record<number, unknown>>();
      for (const row of run.rows) {
        const c = Math.floor(row.n / BUNDLE_CHUNK.traj);
        if (!chunks.has(c)) chunks.set(c, {});
        chunks.get(c)![row.n] = await data.trajectory(s.id, row.n);
      }
      for (const [c, v] of chunks) put(`traj/${s.id}/${c}`, v);
    } else if (s.kind === 'annotation') {
      const ann = await data.annotation(s.id);
      put(`annotation/${s.id}`, ann);
      const chunks = new Map<number, Record<number, unknown>>();
      for (const row of ann.rows) {
        const c = Math.floor(row.n / BUNDLE_CHUNK.tree);
        if (!chunks.has(c)) chunks.set(c, {});
        chunks.get(c)![row.n] = await data.tree(s.id, row.n);
      }
      for (const [c, v] of chunks) put(`tree/${s.id}/${c}`, v);
    } else if (s.kind === 'results') put(`results/${s.id}`, data.results(s.id));
    else put(`training/${s.id}`, data.training(s.id));
  }
  // The page itself: the server's, told where its data is and given a policy with no network.
  const html = readFileSync(join(ASSETS, 'index.html'), 'utf8')
    .replace('<meta name="ragtrail-mode" content="server">', `<meta name="ragtrail-mode" content="bundle">\n<meta http-equiv="Content-Security-Policy" content="${BUNDLE_CSP}">`);
  writeTextAtomicSync(join(out, 'index.html'), html);
  for (const f of ['app.js', 'app.css']) copyFileSync(join(ASSETS, f), join(out, f));
  for (const f of ['index.html', 'app.js', 'app.css']) {
    files++;
    bytes += readFileSync(join(out, f)).length;
  }
  return { files, bytes };
}
