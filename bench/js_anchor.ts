/**
 * BM25 anchors that run in Node, for `npm run bench:retrieval` (bench-only: neither is a ragtrail
 * dependency). The Node twin of bench/bm25_anchor.py, with the same arguments and output, so the bench
 * runs it as it runs the Python anchors (its own process, so the peak RSS is that engine's; paired
 * rounds through `serve`):
 *   lancedb     LanceDB's native full-text index (@lancedb/lancedb, Rust, the embedded database a
 *               TypeScript user would reach for). Its own analyzer, stated in LANCEDB_SETTINGS; BM25
 *               with Lance's fixed k1 1.2, b 0.75 (not settable). Queries one at a time (no batch call
 *               for full-text search). Not a devDependency (~190 MiB installed, a 60 MB native binary
 *               to download on every `npm ci`): install it beside the repository with
 *               `npm install --prefix .bench-node @lancedb/lancedb@0.31.0 apache-arrow@18.1.0`.
 *   minisearch  an in-JS engine (minisearch, a devDependency) given ragtrail's analyzer and k1 0.9,
 *               b 0.4 (d 0: plain BM25); everything in the V8 heap, so the bench runs it only up to
 *               --in-js-max-n passages and on the first --in-js-queries queries (~7 q/s at 100k).
 * Usage: node --import tsx bench/js_anchor.ts ENGINE CORPUS.jsonl QUERIES.json RAGTRAIL_HITS.json|- N WORKDIR [PASSES [serve [QUERIES_USED]]]
 * Prints one JSON object: engine, version, settings, build_s (reading + analysis + indexing),
 * peak_rss_bytes, disk_bytes (the index alone, not the stored passages), qps_single (median of PASSES
 * passes), qps_batched (null), recall10, overlap10 (top-10 ids shared with ragtrail's, averaged),
 * cpu_per_wall (the process's CPU seconds per second of its timed passes: ~1 means one core).
 * With `serve`, then answers each line `time` on stdin with {qps_single, qps_batched} for one more pass.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import MiniSearch from 'minisearch';
import { readCorpus } from '../src/corpus/corpus.js';
import { Analyzer } from '../src/retrieval/analyzer.js';

const ROOT = resolve(import.meta.dirname, '..');

/** LanceDB's analyzer and index options, every one set rather than left to the version's defaults. */
export const LANCEDB_SETTINGS = {
  baseTokenizer: 'simple', // splits on whitespace and punctuation
  language: 'English',
  lowercase: true,
  stem: true, // tantivy's English stemmer (Snowball English, not the original Porter ragtrail uses)
  removeStopWords: true, // tantivy's English list: Lucene's 33, as ragtrail's
  asciiFolding: true,
  maxTokenLength: 40,
  withPosition: false, // no phrase queries, as ragtrail's index
} as const;
export const LANCEDB_SETTINGS_TEXT = "native FTS: simple tokenizer, lowercase, English stemmer (Snowball), English stop words, ASCII folding, no positions; BM25 k1 1.2, b 0.75 (Lance's, fixed)";
export const MINISEARCH_SETTINGS_TEXT = "ragtrail's analyzer (tokenize, processTerm identity), OR, BM25 k1 0.9, b 0.4, d 0";

/** Where the bench looks for packages that are not devDependencies (the `npm install --prefix` above). */
export const BENCH_NODE_PREFIX = join(ROOT, '.bench-node');
export const LANCEDB_INSTALL = 'npm install --prefix .bench-node @lancedb/lancedb@0.31.0 apache-arrow@18.1.0';

/** The path of an installed package's entry, from the repository's node_modules or .bench-node's; undefined when neither has it. */
export function resolveBenchPackage(name: string): string | undefined {
  for (const base of [join(ROOT, 'package.json'), join(BENCH_NODE_PREFIX, 'package.json')]) {
    try {
      return createRequire(base).resolve(name);
    } catch {
      /* not there: the next */
    }
  }
  return undefined;
}

function packageVersion(entry: string, name: string): string {
  // The entry is somewhere under node_modules/<name>/; its package.json is at that folder's top.
  const i = entry.lastIndexOf(`node_modules/${name}/`);
  return (JSON.parse(readFileSync(`${entry.slice(0, i)}node_modules/${name}/package.json`, 'utf8')) as { version: string }).version;
}

/** The part of @lancedb/lancedb this anchor calls (the package is loaded only when present, so it brings no types). */
interface LanceTable {
  add(rows: Record<string, unknown>[]): Promise<unknown>;
  createIndex(column: string, options: { config: unknown }): Promise<void>;
  query(): { fullTextSearch(q: string): { limit(k: number): { select(cols: string[]): { toArray(): Promise<{ id: number }[]> } } } };
}
interface LanceModule {
  connect(uri: string): Promise<{ createTable(name: string, rows: Record<string, unknown>[], options: { mode: 'overwrite' }): Promise<LanceTable>; openTable(name: string): Promise<LanceTable> }>;
  Index: { fts(options: object): unknown };
}

interface Built { version: string; settings: string; buildSeconds: number; diskBytes: number; search(q: string): Promise<number[]> | number[]; cleanup(): void }

function folderBytes(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) t += e.isDirectory() ? folderBytes(join(dir, e.name)) : statSync(join(dir, e.name)).size;
  return t;
}

async function* texts(corpus: string, n: number): AsyncGenerator<string> {
  let i = 0;
  for await (const p of readCorpus(corpus)) {
    if (i++ >= n) break;
    yield p.title ? `${p.title}\n${p.text}` : p.text; // title and text as one field, as every anchor
  }
}

async function loadLancedb(): Promise<{ lib: LanceModule; version: string }> {
  const entry = resolveBenchPackage('@lancedb/lancedb');
  if (!entry) throw new Error(`@lancedb/lancedb is not installed: ${LANCEDB_INSTALL}`);
  const mod = (await import(pathToFileURL(entry).href)) as Partial<LanceModule> & { default?: LanceModule };
  // A CommonJS package: its exports are on `default` or on the namespace, depending on the loader.
  return { lib: mod.connect ? (mod as LanceModule) : mod.default!, version: packageVersion(entry, '@lancedb/lancedb') };
}

/**
 * Writes the table and its full-text index (run as `js_anchor.ts lancedb-build CORPUS N WORKDIR`, in
 * its own process: see buildLancedb). Returns the build's seconds and CPU seconds.
 */
async function lancedbBuild(corpus: string, n: number, path: string): Promise<{ seconds: number; cpuSeconds: number }> {
  const { lib } = await loadLancedb();
  rmSync(path, { recursive: true, force: true });
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const db = await lib.connect(path);
  let table: LanceTable | undefined;
  let batch: Record<string, unknown>[] = [];
  let i = 0;
  const flush = async () => {
    if (!batch.length) return;
    if (table) await table.add(batch);
    else table = await db.createTable('passages', batch, { mode: 'overwrite' });
    batch = [];
  };
  // Added in batches of 100,000 rows (each a fragment), so the passages are never all in the heap.
  for await (const text of texts(corpus, n)) {
    batch.push({ id: i++, text });
    if (batch.length === 100_000) await flush();
  }
  await flush();
  await table!.createIndex('text', { config: lib.Index.fts(LANCEDB_SETTINGS) });
  const c = process.cpuUsage(c0);
  return { seconds: (performance.now() - t0) / 1000, cpuSeconds: (c.user + c.system) / 1e6 };
}

/**
 * LanceDB built in a child process, then opened here to be queried. Two processes because Lance sizes
 * its CPU pool once per process: its FTS build deadlocks with fewer than ~4 pool threads (a known Lance
 * bug on hosts with few cores: the posting-list writer and the page encoder wait on each other for
 * pool threads; on this 2-core machine the default pool hangs at 20,000 passages), while the queries
 * should run with one (LANCE_CPU_THREADS=1, as ragtrail's one thread). The build's peak RSS is the
 * child's; the build uses every core it is given.
 */
async function buildLancedb(corpus: string, n: number, workdir: string): Promise<Built & { buildPeakRss: number; buildCpuPerWall: number }> {
  const path = join(workdir, `lancedb-${n}`);
  const child = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), 'lancedb-build', corpus, String(n), path], {
    encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 20,
    env: { ...process.env, LANCE_CPU_THREADS: process.env['RAGTRAIL_LANCE_BUILD_THREADS'] ?? '4' },
  });
  if (child.status !== 0) throw new Error(`lancedb build failed (exit ${child.status}; its error is above)`);
  const b = JSON.parse(child.stdout.trim().split('\n').pop()!) as { seconds: number; cpuSeconds: number; peakRssBytes: number };
  const { lib, version } = await loadLancedb();
  const table = await (await lib.connect(path)).openTable('passages');
  const indices = join(path, 'passages.lance', '_indices');
  return {
    version,
    settings: LANCEDB_SETTINGS_TEXT,
    buildSeconds: b.seconds,
    buildPeakRss: b.peakRssBytes,
    buildCpuPerWall: b.cpuSeconds / b.seconds,
    diskBytes: existsSync(indices) ? folderBytes(indices) : folderBytes(path),
    search: async (q) => (await table.query().fullTextSearch(q).limit(10).select(['id']).toArray()).map((r) => Number(r.id)),
    cleanup: () => {
      if (process.env['RAGTRAIL_BENCH_KEEP'] !== '1') rmSync(path, { recursive: true, force: true });
    },
  };
}

async function buildMinisearch(corpus: string, n: number): Promise<Built> {
  const analyzer = new Analyzer();
  const t0 = performance.now();
  const ms = new MiniSearch<{ id: number; body: string }>({
    fields: ['body'],
    tokenize: (t) => analyzer.analyze(t),
    processTerm: (t) => t,
    searchOptions: { combineWith: 'OR', bm25: { k: 0.9, b: 0.4, d: 0 } },
  });
  let i = 0;
  for await (const body of texts(corpus, n)) ms.add({ id: i++, body });
  const buildSeconds = (performance.now() - t0) / 1000;
  return {
    version: packageVersion(createRequire(join(ROOT, 'package.json')).resolve('minisearch'), 'minisearch'),
    settings: MINISEARCH_SETTINGS_TEXT,
    buildSeconds,
    diskBytes: 0, // held in the heap only
    // minisearch has no top-k: it scores and sorts every match.
    search: (q) => ms.search(q).slice(0, 10).map((r) => Number(r.id)),
    cleanup: () => {},
  };
}

/** Queries/s of one pass over the queries, its hits, and the process's CPU seconds in it. */
async function pass(search: Built['search'], queries: string[]): Promise<{ qps: number; hits: number[][]; cpu: number; wall: number }> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const hits: number[][] = [];
  for (const q of queries) hits.push(await search(q));
  const wall = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  return { qps: queries.length / wall, hits, cpu: (c.user + c.system) / 1e6, wall };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  if (process.argv[2] === 'lancedb-build') {
    const [, corpus, n, path] = process.argv.slice(2);
    const b = await lancedbBuild(corpus!, Number(n), path!);
    process.stdout.write(`${JSON.stringify({ ...b, peakRssBytes: process.resourceUsage().maxRSS * 1024 })}\n`);
    return;
  }
  const [engine, corpus, queriesPath, hitsPath, nArg, workdir, passesArg, serveArg, usedArg] = process.argv.slice(2);
  if (!engine || !corpus || !queriesPath || !hitsPath || !nArg || !workdir) {
    throw new Error('usage: js_anchor.ts ENGINE CORPUS QUERIES HITS|- N WORKDIR [PASSES [serve [QUERIES_USED]]]');
  }
  const n = Number(nArg);
  const passes = Number(passesArg ?? 3);
  const all = JSON.parse(readFileSync(queriesPath, 'utf8')) as { query: string; relevant: number }[];
  const qs = usedArg ? all.slice(0, Number(usedArg)) : all;
  const queries = qs.map((q) => q.query);
  const built = engine === 'lancedb' ? await buildLancedb(corpus, n, workdir) : engine === 'minisearch' ? await buildMinisearch(corpus, n) : undefined;
  if (!built) throw new Error(`unknown engine ${engine}: use lancedb or minisearch`);
  for (const q of queries.slice(0, 20)) await built.search(q); // warm-up
  const runs = [];
  for (let p = 0; p < passes; p++) runs.push(await pass(built.search, queries));
  process.stderr.write(`${engine} one by one, ${runs.length} passes: ${runs.map((r) => r.qps.toFixed(0)).join(', ')} q/s\n`);
  const hits = runs.at(-1)!.hits;
  let overlap10: number | null = null;
  if (hitsPath !== '-' && existsSync(hitsPath)) {
    const ours = (JSON.parse(readFileSync(hitsPath, 'utf8')) as string[][]).map((h) => new Set(h.map((s) => Number(s.slice(4)))));
    overlap10 = hits.reduce((s, h, i) => s + h.filter((d) => ours[i]!.has(d)).length / 10, 0) / hits.length;
  }
  const out = {
    engine, n, version: built.version, settings: built.settings, queries: queries.length,
    build_s: built.buildSeconds, disk_bytes: built.diskBytes,
    qps_single: median(runs.map((r) => r.qps)), qps_batched: null,
    // The larger of the build's peak and this process's (for LanceDB the build ran in a child).
    peak_rss_bytes: Math.max(process.resourceUsage().maxRSS * 1024, 'buildPeakRss' in built ? Number(built.buildPeakRss) : 0),
    build_cpu_per_wall: 'buildCpuPerWall' in built ? Number(built.buildCpuPerWall) : null,
    recall10: qs.filter((q, i) => hits[i]!.includes(q.relevant)).length / qs.length,
    overlap10,
    cpu_per_wall: runs.reduce((s, r) => s + r.cpu, 0) / runs.reduce((s, r) => s + r.wall, 0),
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
  if (serveArg === 'serve') {
    for await (const line of createInterface({ input: process.stdin })) {
      if (line.trim() !== 'time') throw new Error(`serve: unknown command '${line.trim()}' (the only one is \`time\`)`);
      const r = await pass(built.search, queries);
      process.stdout.write(`${JSON.stringify({ qps_single: r.qps, qps_batched: null, cpu_per_wall: r.cpu / r.wall })}\n`);
    }
  }
  built.cleanup();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
