/**
 * `npm run bench:serve`: throughput and latency of serve-retriever and serve-env on every core
 * (--processes N) against one process searching on its main thread (the anchor: `--processes 1
 * --workers 0`), at 1, 8 and 64 concurrent clients, in paired rounds: each round times every
 * configuration back to back at each level, in alternating order, and the figure is the median of the
 * per-round ratios to the anchor (range in brackets), since the machine is shared and noisy.
 *
 * Each server is the real CLI in a child process, all of them started once and left idle while
 * another is timed. This process only generates load, as lightly as it can: one process, one raw
 * keep-alive socket per client (opened afresh before each timing, so its connections spread over the
 * server's processes anew), requests encoded to bytes before the clock starts, replies checked by
 * status and a substring, never parsed. Its own CPU time is printed as a share of the run, since it shares the cores.
 * - retriever: each request is Search-R1's `/retrieve` with --batch queries (topk --topk);
 * - env: each request is verl-tool's `/get_observation` with --batch new trajectories, each searching
 *   once (Search-R1 text), and the previous request's trajectories finished in the same call, so with
 *   several processes each call's episodes are routed to the processes that hold them.
 * - batch: `ragtrail search --queries Q --out H` over --batch-queries queries (the 2,000 queries
 *   repeated), searching on the main thread (`--workers 0`, the anchor) against one search thread per
 *   core (`--workers <cores>`); wall time of the whole command, start-up and index opening included,
 *   and the two outputs checked equal every round.
 * queries/s counts queries (retriever) or trajectory steps (env); p50/p99 are per request.
 *
 * Options: --n 50000 (synthetic passages; the issue's sizes: 200000, 1000000) --requests 3000 (per
 *          timing) --batch 8 --topk 5 --levels 1,8,64 --rounds 3 --parts retriever,env,batch
 *          --batch-queries 40000
 *          --configs 1x0,Nx0,NxW: processes × search threads per process, the first the anchor
 *          (default 1x0, then <cores>x0, then <cores>x<cores>, then 1x<cores> — the one-process
 *          server with search threads that was the default before --processes)
 * Figures depend on the machine and its load; the ratios within one run are what count.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { formatTable } from '../src/cli/table.js';
import { buildIndex } from '../src/retrieval/index-dir.js';
import { cliRunner, startServerCli } from '../test/helpers.js';
import { writeSyntheticCorpus } from './synthetic-text.js';

const CORES = availableParallelism();
const { values: args } = parseArgs({
  options: {
    n: { type: 'string', default: '50000' },
    requests: { type: 'string', default: '3000' },
    batch: { type: 'string', default: '8' },
    topk: { type: 'string', default: '5' },
    levels: { type: 'string', default: '1,8,64' },
    rounds: { type: 'string', default: '3' },
    configs: { type: 'string', default: `1x0,${CORES}x0,${CORES}x${CORES},1x${CORES}` },
    parts: { type: 'string', default: 'retriever,env,batch' },
    'batch-queries': { type: 'string', default: '40000' },
  },
});
const N = Number(args.n);
const REQUESTS = Number(args.requests);
const BATCH = Number(args.batch);
const TOPK = Number(args.topk);
const LEVELS = args.levels.split(',').map(Number);
const ROUNDS = Number(args.rounds);
const CONFIGS = args.configs.split(',').map((c) => {
  const [p, w] = c.split('x').map(Number);
  if (!Number.isInteger(p) || !Number.isInteger(w) || p! < 1 || w! < 0) throw new Error(`--configs: ${c} is not PROCESSESxTHREADS, e.g. 2x0`);
  return { processes: p!, workers: w!, label: `${p}×${w}` };
});
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
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
let loadCpuMs = 0;
let loadWallMs = 0;

/**
 * One kept-alive connection speaking just enough HTTP/1.1 to POST and read a reply framed by
 * Content-Length (what both servers send): the request bytes are built before the clock starts and
 * the reply is checked by status and a substring, never parsed. node:http's client cost ~0.1 ms of
 * this process's CPU per request, which on two cores was taken from the servers it timed.
 */
class Connection {
  private readonly socket: Socket;
  private buf: Buffer = Buffer.alloc(0);
  private waiting?: { resolve: () => void; reject: (e: Error) => void; expect: string };
  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on('data', (c: Buffer) => this.onData(c));
    socket.on('error', (e) => this.fail(e));
    socket.on('close', () => this.fail(new Error('connection closed by the server')));
  }
  static open(url: URL): Promise<Connection> {
    return new Promise((resolve, reject) => {
      const s = connect(Number(url.port), url.hostname, () => resolve(new Connection(s)));
      s.once('error', reject);
    });
  }
  post(bytes: Buffer, expect: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject, expect };
      this.socket.write(bytes);
    });
  }
  close(): void {
    this.socket.removeAllListeners('close');
    this.socket.destroy();
  }
  private fail(e: Error): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.reject(e);
  }
  private onData(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const head = this.buf.indexOf('\r\n\r\n');
    if (head < 0) return;
    const header = this.buf.toString('latin1', 0, head);
    const m = /content-length:\s*(\d+)/i.exec(header);
    if (!m) return this.fail(new Error(`reply without content-length: ${header.slice(0, 200)}`));
    const total = head + 4 + Number(m[1]);
    if (this.buf.length < total) return;
    const body = this.buf.toString('latin1', head + 4, total);
    this.buf = this.buf.subarray(total);
    const w = this.waiting;
    this.waiting = undefined;
    if (!w) return;
    if (!header.startsWith('HTTP/1.1 200') || !body.includes(w.expect)) w.reject(new Error(`${header.split('\r\n')[0]} ${body.slice(0, 300)}`));
    else w.resolve();
  }
}

/** The bytes of one POST of a JSON body to `url`, built before the clock starts. */
const postBytes = (url: URL, body: Buffer): Buffer =>
  Buffer.concat([Buffer.from(`POST ${url.pathname} HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: keep-alive\r\n\r\n`, 'latin1'), body]);

/**
 * `clients` loops, one connection each (opened before the clock starts, so the server spreads them
 * over its processes anew every timing), share the requests in `bodies`.
 */
async function load(url: URL, clients: number, bodies: Buffer[], expect: string): Promise<Result> {
  const requests = bodies.map((b) => postBytes(url, b));
  const conns = await Promise.all(Array.from({ length: clients }, () => Connection.open(url)));
  let next = 0;
  const lat: number[] = [];
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    conns.map(async (conn) => {
      for (let i = next++; i < requests.length; i = next++) {
        const s = performance.now();
        await conn.post(requests[i]!, expect);
        lat.push(performance.now() - s);
      }
    }),
  );
  const wall = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  loadCpuMs += (cpu.user + cpu.system) / 1000;
  loadWallMs += wall;
  for (const c of conns) c.close();
  lat.sort((a, b) => a - b);
  return { qps: (bodies.length * BATCH) / (wall / 1000), p50: pct(lat, 50), p99: pct(lat, 99) };
}

const retrieverBodies = (): Buffer[] =>
  Array.from({ length: REQUESTS }, (_, i) => Buffer.from(JSON.stringify({ queries: Array.from({ length: BATCH }, (_, j) => queries[(i * BATCH + j) % queries.length]!), topk: TOPK, return_scores: true })));

/** Request i opens BATCH trajectories and finishes request i-1's: every episode's two calls may land on different processes. */
const envBodies = (run: string): Buffer[] =>
  Array.from({ length: REQUESTS }, (_, i) => {
    const ids = Array.from({ length: BATCH }, (_, j) => `${run}-${i}-${j}`);
    const prev = i > 0 ? Array.from({ length: BATCH }, (_, j) => `${run}-${i - 1}-${j}`) : [];
    return Buffer.from(
      JSON.stringify({
        trajectory_ids: [...ids, ...prev],
        actions: [...ids.map((_, j) => `<think>look</think> <search> ${queries[(i * BATCH + j) % queries.length]} </search>`), ...prev.map(() => '')],
        finish: [...ids.map(() => false), ...prev.map(() => true)],
        extra_fields: [...ids.map((_, j) => ({ index: (i * BATCH + j) % queries.length })), ...prev.map(() => ({}))],
      }),
    );
  });

const parts = args.parts.split(',');
const fmtRange = (xs: number[]) => `${median(xs).toFixed(2)}× (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)})`;
console.log(
  `bench:serve — ${N} passages, ${REQUESTS} requests of ${BATCH} per timing, topk ${TOPK}, ${ROUNDS} paired rounds; configurations processes×threads: ${CONFIGS.map((c) => c.label).join(', ')} (anchor ${CONFIGS[0]!.label}); ${CORES} cores; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`,
);
for (const part of parts) {
  if (part === 'batch') {
    await batchSearch();
    continue;
  }
  const cmd = part === 'retriever' ? ['serve-retriever', '--index', index, '--topk', String(TOPK)] : ['serve-env', '--index', index, '--dataset', join(work, 'questions.jsonl'), '--top-k', String(TOPK)];
  const route = part === 'retriever' ? '/retrieve' : '/get_observation';
  const expect = part === 'retriever' ? '"result"' : '<information>';
  const servers = [];
  for (const c of CONFIGS) servers.push(await startServerCli([...cmd, '--processes', String(c.processes), '--workers', String(c.workers)]));
  const urls = servers.map((s) => new URL(s.base + route));
  // serve-env trajectories get fresh ids per timing, so every request opens new episodes.
  let runs = 0;
  const bodies = () => (part === 'retriever' ? retrieverBodies() : envBodies(`r${runs++}`));
  for (const url of urls) await load(url, 8, bodies(), expect); // page cache, JIT, connections
  // results[config][level] = one Result per round
  const results = CONFIGS.map(() => LEVELS.map(() => [] as Result[]));
  loadCpuMs = loadWallMs = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const [li, c] of LEVELS.entries()) {
      const order = CONFIGS.map((_, i) => i);
      if ((round + li) % 2 === 1) order.reverse();
      for (const i of order) results[i]![li]!.push(await load(urls[i]!, c, bodies(), expect));
    }
  }
  for (const s of servers) await stop(s.child);
  const rows: string[][] = [];
  for (const [li, c] of LEVELS.entries()) {
    const anchor = results[0]![li]!;
    for (const [i, cfg] of CONFIGS.entries()) {
      const rs = results[i]![li]!;
      const ratio = i === 0 ? '1 (anchor)' : fmtRange(rs.map((r, k) => r.qps / anchor[k]!.qps));
      rows.push([part, String(c), cfg.label, median(rs.map((r) => r.qps)).toFixed(0), median(rs.map((r) => r.p50)).toFixed(1), median(rs.map((r) => r.p99)).toFixed(1), ratio]);
    }
  }
  console.log(formatTable(['server', 'clients', 'processes×threads', 'q/s (median)', 'p50 ms', 'p99 ms', 'q/s ÷ anchor, median (range)'], rows));
  console.log(`load generator: ${((100 * loadCpuMs) / loadWallMs).toFixed(0)}% of one core while timing (${((100 * loadCpuMs) / loadWallMs / CORES).toFixed(0)}% of the machine); load average now ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n`);
}

/** `search --queries` on the main thread against one search thread per core: whole-command wall time, paired rounds. */
async function batchSearch(): Promise<void> {
  const total = Number(args['batch-queries']);
  const file = join(work, `batch-${total}.jsonl`);
  if (!existsSync(file)) writeFileSync(file, Array.from({ length: total }, (_, i) => JSON.stringify({ id: `q${i}`, query: queries[i % queries.length] })).join('\n') + '\n');
  const { runAsync } = cliRunner(work);
  const timeOne = async (workers: number): Promise<{ seconds: number; out: string }> => {
    const out = join(work, `batch-hits-${workers}.jsonl`);
    const t0 = performance.now();
    const r = await runAsync('search', '--index', index, '--queries', file, '--out', out, '--k', String(TOPK), '--workers', String(workers));
    if (r.status !== 0) throw new Error(`search exited with ${r.status}: ${r.stderr}`);
    return { seconds: (performance.now() - t0) / 1000, out: readFileSync(out, 'utf8') };
  };
  const configs = [0, CORES];
  const times: number[][] = configs.map(() => []);
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? [0, 1] : [1, 0];
    const outs: string[] = [];
    for (const i of order) {
      const r = await timeOne(configs[i]!);
      times[i]!.push(r.seconds);
      outs[i] = r.out;
    }
    if (outs[0] !== outs[1]) throw new Error('search --queries: the hits on search threads differ from the main thread\'s');
  }
  const rows = configs.map((w, i) => [
    `search --queries (${total} queries)`,
    `--workers ${w}`,
    (total / median(times[i]!)).toFixed(0),
    median(times[i]!).toFixed(2),
    i === 0 ? '1 (anchor)' : fmtRange(times[0]!.map((t, k) => t / times[i]![k]!)),
  ]);
  console.log(formatTable(['batch', 'threads', 'q/s (median, whole command)', 'seconds', 'speed-up, median (range)'], rows));
  console.log(`hits equal in every round; load average now ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n`);
}
