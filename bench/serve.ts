/**
 * `npm run bench:serve`: throughput and latency of serve-retriever and serve-env with their searches
 * on worker threads (--workers W, default every core) against the one-process baseline (--workers 0:
 * searches on the main thread) in the same run, at 1, 8, 64 and 256 concurrent clients.
 *
 * Each server is the real CLI in a child process; this process only generates load (Node's fetch, keep-alive).
 * - retriever: each request is Search-R1's `/retrieve` with --batch queries (topk --topk);
 * - env: each request is verl-tool's `/get_observation` with --batch new trajectories, each searching
 *   once (Search-R1 text), and the previous request's trajectories finished in the same call.
 * queries/s counts queries (retriever) or trajectory steps (env); p50/p99 are per request.
 *
 * Options: --n 50000 (synthetic passages) --requests 300 (per level and server) --batch 8 --topk 5
 *          --levels 1,8,64,256 --workers <cores> --parts retriever,env
 * Figures depend on the machine and its load; the ratio of the two servers in one run is what counts.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { formatTable } from '../src/cli/table.js';
import { buildIndex } from '../src/retrieval/index-dir.js';
import { startServerCli } from '../test/helpers.js';
import { writeSyntheticCorpus } from './synthetic-text.js';

const { values: args } = parseArgs({
  options: {
    n: { type: 'string', default: '50000' },
    requests: { type: 'string', default: '300' },
    batch: { type: 'string', default: '8' },
    topk: { type: 'string', default: '5' },
    levels: { type: 'string', default: '1,8,64,256' },
    workers: { type: 'string', default: String(availableParallelism()) },
    parts: { type: 'string', default: 'retriever,env' },
  },
});
const N = Number(args.n);
const REQUESTS = Number(args.requests);
const BATCH = Number(args.batch);
const TOPK = Number(args.topk);
const LEVELS = args.levels.split(',').map(Number);
const WORKERS = Number(args.workers);
const work = join(tmpdir(), `ragtrail-bench-serve-${N}`);
mkdirSync(work, { recursive: true });

// ---------------------------------------------------------------- data: a synthetic corpus, its index, questions
const index = join(work, 'index');
const queriesFile = join(work, 'queries.json');
if (!existsSync(join(index, 'index.json')) || !existsSync(queriesFile)) {
  const qs = await writeSyntheticCorpus(join(work, 'corpus.jsonl'), N, 2000);
  await buildIndex(join(work, 'corpus.jsonl'), index, { quiet: true });
  writeFileSync(queriesFile, JSON.stringify(qs.map((q) => q.query)));
  // serve-env's questions: each query is a question whose gold answer does not matter here.
  writeFileSync(join(work, 'questions.jsonl'), qs.map((q) => JSON.stringify({ id: q.id, question: q.query, golden_answers: ['x'] })).join('\n') + '\n');
}
const queries = (await import(queriesFile, { with: { type: 'json' } })).default as string[];

// ---------------------------------------------------------------- servers as users run them
const start = (cmd: string[], workers: number) => startServerCli([...cmd, '--workers', String(workers)]);
async function stop(child: ChildProcess): Promise<void> {
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await gone;
}

interface Result {
  qps: number;
  p50: number;
  p99: number;
}
const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;

/** `clients` loops share `REQUESTS` requests; `send(i)` makes request i and returns the units it did. */
async function load(clients: number, send: (i: number) => Promise<number>): Promise<Result> {
  let next = 0;
  let units = 0;
  const lat: number[] = [];
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let i = next++; i < REQUESTS; i = next++) {
        const s = performance.now();
        const done = await send(i); // not `units += await …`: that reads units before the await and loses updates
        units += done;
        lat.push(performance.now() - s);
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  return { qps: units / secs, p50: pct(lat, 50), p99: pct(lat, 99) };
}

async function post(url: string, body: unknown): Promise<any> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (r.status !== 200) throw new Error(`${url}: HTTP ${r.status} ${await r.text()}`);
  return r.json();
}

const retrieverSend = (base: string) => async (i: number) => {
  const qs = Array.from({ length: BATCH }, (_, j) => queries[(i * BATCH + j) % queries.length]!);
  const r = await post(`${base}/retrieve`, { queries: qs, topk: TOPK, return_scores: true });
  if (r.result.length !== BATCH) throw new Error('short reply');
  return BATCH;
};

const envSend = (base: string, run: string) => async (i: number) => {
  const ids = Array.from({ length: BATCH }, (_, j) => `${run}-${i}-${j}`);
  const prev = i > 0 ? Array.from({ length: BATCH }, (_, j) => `${run}-${i - 1}-${j}`) : [];
  const body = {
    trajectory_ids: [...ids, ...prev],
    actions: [...ids.map((_, j) => `<think>look</think> <search> ${queries[(i * BATCH + j) % queries.length]} </search>`), ...prev.map(() => '')],
    finish: [...ids.map(() => false), ...prev.map(() => true)],
    extra_fields: [...ids.map((_, j) => ({ index: (i * BATCH + j) % queries.length })), ...prev.map(() => ({}))],
  };
  const r = await post(`${base}/get_observation`, body);
  if (!String(r.observations[0].obs).includes('<information>')) throw new Error('no information block');
  return BATCH;
};

const parts = args.parts.split(',');
const rows: string[][] = [];
const fmt = (r: Result) => [r.qps.toFixed(0), r.p50.toFixed(1), r.p99.toFixed(1)];
console.log(`bench:serve — ${N} passages, ${REQUESTS} requests of ${BATCH} per level, topk ${TOPK}, ${WORKERS} worker threads vs the main thread, ${availableParallelism()} cores`);
for (const part of parts) {
  const cmd = part === 'retriever' ? ['serve-retriever', '--index', index, '--topk', String(TOPK)] : ['serve-env', '--index', index, '--dataset', join(work, 'questions.jsonl'), '--top-k', String(TOPK)];
  const results: Record<string, Result[]> = {};
  for (const [label, w] of [['one process', 0], [`${WORKERS} workers`, WORKERS]] as const) {
    const { child, base } = await start(cmd, w);
    // serve-env trajectories get fresh ids per level (`run`), so every request opens new episodes.
    const send = (run: string) => (part === 'retriever' ? retrieverSend(base) : envSend(base, run));
    await load(8, send('warm')); // page cache, JIT, connections
    results[label] = [];
    for (const c of LEVELS) results[label]!.push(await load(c, send(`c${c}`)));
    await stop(child);
  }
  const [base, pooled] = Object.values(results) as [Result[], Result[]];
  LEVELS.forEach((c, i) => rows.push([part, String(c), ...fmt(base[i]!), ...fmt(pooled[i]!), `${(pooled[i]!.qps / base[i]!.qps).toFixed(2)}×`]));
}
console.log(formatTable(['server', 'clients', 'one process q/s', 'p50 ms', 'p99 ms', `${WORKERS} workers q/s`, 'p50 ms', 'p99 ms', 'q/s ratio'], rows));
