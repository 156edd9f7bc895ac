/**
 * Retrieval benchmark (`npm run bench:retrieval`; figures, not tests).
 *  (a) Real data: recall@2/5/10 of HotpotQA supporting passages, each question as the query, over the
 *      union of the context passages of the three HotpotQA samples in ../shared/data.
 *  (b) Scale: a synthetic corpus of N passages of ~100 words (default N = 1,000,000): build time and
 *      peak RSS (in a child process), index bytes, single-threaded queries/s over 1,000 queries,
 *      recall@10 of each query's source passage, block-max pruning against MaxScore alone on the same
 *      index, the WebAssembly block-max kernel against the same evaluation in TypeScript; then a
 *      linear extrapolation to 21M passages.
 *  (c) Baselines in the same run: wink-bm25-text-search and minisearch, given ragtrail's analyzer and
 *      the same BM25 parameters, on a subset they can hold and on the HotpotQA corpus: build time,
 *      queries/s, recall, and ragtrail's speed ratio.
 *  With (b), anchors on the same N passages and queries, each in its own process (bench/bm25_anchor.py;
 *  bench-only, never ragtrail dependencies): bm25s from the bench venv and Xapian from Debian's
 *  python3-xapian, same analysis and k1/b, one thread; their build time, peak RSS, disk, queries/s,
 *  recall@10 and top-10 overlap with ragtrail, and ragtrail's ratios.
 * Options: --n 1000000 --lib-n 100000 --queries 1000 --parts abc (which parts to run)
 *          --keep (keep the indexes; the generated corpus is always kept in the temp dir for re-runs)
 *          --reuse-index (query an index kept by --keep instead of rebuilding it: 41 min saved at 21M;
 *          the build figures are then not measured)
 *          --anchors bm25s,xapian,lancedb,minisearch ('' for none; bm25s-chunked: bm25s queried over an
 *          index whose arrays bm25_anchor.py builds in chunks, for N where bm25s.index needs more RAM than
 *          there is: 21M). lancedb and minisearch run in Node (bench/js_anchor.ts): LanceDB's native
 *          full-text index, skipped with a line saying how to install it when @lancedb/lancedb is absent
 *          (it is not a devDependency: ~190 MiB); minisearch, an in-JS engine, only up to --in-js-max-n.
 *          --in-js-max-n 200000 (the largest N the in-heap engine is run at; it answers ~7 q/s at 100k)
 *          --in-js-queries 200 (the in-heap engine, and ragtrail in its paired rounds, time only the first
 *          this many queries, so a pass takes seconds, not minutes)
 *          --anchor-python .venv-bench/bin/python (bm25s)
 *          --xapian-python /usr/bin/python3
 *          --passes 3 (timed passes over the queries at scale, ragtrail's and the anchors' alike; the
 *          median is the figure, and each pass is printed).
 *          --duel-rounds 7 (then ragtrail and each anchor, whose process stays up, timed a pass each in
 *          alternating order: the verdict is the median of the per-round ratios; 0 for none).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import MiniSearch from 'minisearch';
import winkBm25 from 'wink-bm25-text-search';
import type { Passage, Question } from '../src/core/types.js';
import { corpusFromQuestions, readCorpus, writeCorpus } from '../src/corpus/corpus.js';
import { loadDataset } from '../src/corpus/dataset.js';
import { Analyzer } from '../src/retrieval/analyzer.js';
import { createEmbedder } from '../src/retrieval/embedders/embedder.js';
import { buildIndex, openRetriever, type OpenRetrieverOptions } from '../src/retrieval/index-dir.js';
import { Bm25Retriever } from '../src/retrieval/retrievers.js';
import type { Retriever } from '../src/retrieval/types.js';
import { formatTable } from '../src/cli/table.js';
import { quantileSorted } from '../src/eval/stats.js';
import { Rng } from '../src/core/rng.js';
import { JsonLinesProcess } from './json-lines-process.js';
import { SyntheticText, writeSyntheticCorpus } from './synthetic-text.js';
import { LANCEDB_INSTALL, LANCEDB_SETTINGS_TEXT, MINISEARCH_SETTINGS_TEXT, resolveBenchPackage } from './js_anchor.js';

const { values: args } = parseArgs({
  options: { parts: { type: 'string', default: 'abc' }, n: { type: 'string', default: '1000000' }, 'lib-n': { type: 'string', default: '100000' }, queries: { type: 'string', default: '1000' }, keep: { type: 'boolean', default: false }, 'reuse-index': { type: 'boolean', default: false },
    anchors: { type: 'string', default: 'bm25s,xapian,lancedb,minisearch' },
    'anchor-python': { type: 'string', default: process.env['RAGTRAIL_BENCH_PYTHON'] ?? resolve(import.meta.dirname, '..', '.venv-bench', 'bin', 'python') },
    'xapian-python': { type: 'string', default: '/usr/bin/python3' },
    passes: { type: 'string', default: '3' },
    'duel-rounds': { type: 'string', default: '7' },
    'in-js-max-n': { type: 'string', default: '200000' },
    'in-js-queries': { type: 'string', default: '200' },
  },
});
const N = Number(args.n);
const LIB_N = Number(args['lib-n']);
const NQ = Number(args.queries);
/** Timed passes over the queries for the scale part's figures, ragtrail's and the anchors' alike: the median is reported. */
const PASSES = Number(args.passes);
if (!Number.isInteger(PASSES) || PASSES < 1) throw new Error(`--passes must be a whole number ≥ 1, not '${args.passes}'`);
/** Paired rounds of ragtrail and each anchor (0: none). */
const DUEL_ROUNDS = Number(args['duel-rounds']);
if (!Number.isInteger(DUEL_ROUNDS) || DUEL_ROUNDS < 0) throw new Error(`--duel-rounds must be a whole number ≥ 0, not '${args['duel-rounds']}'`);
/** The in-heap anchor (minisearch) runs only up to this many passages, on the first IN_JS_QUERIES queries. */
const IN_JS_MAX_N = Number(args['in-js-max-n']);
const IN_JS_QUERIES = Number(args['in-js-queries']);
if (!Number.isInteger(IN_JS_QUERIES) || IN_JS_QUERIES < 1) throw new Error(`--in-js-queries must be a whole number ≥ 1, not '${args['in-js-queries']}'`);
const ROOT = resolve(import.meta.dirname, '..');
const DATA = resolve(ROOT, '..', 'shared', 'data', 'hotpotqa');
const work = join(tmpdir(), 'ragtrail-bench-retrieval');
mkdirSync(work, { recursive: true });

const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
const gib = (b: number) => `${(b / 2 ** 30).toFixed(2)} GiB`;
function folderBytes(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) t += e.isDirectory() ? folderBytes(join(dir, e.name)) : statSync(join(dir, e.name)).size;
  return t;
}
const secs = (t0: number) => (performance.now() - t0) / 1000;
// The machine is shared: every run states the load it ran under.
const load = () => loadavg().map((l) => l.toFixed(2)).join(', ');

// ---------------------------------------------------------------- baselines behind one small interface
interface Engine {
  name: string;
  build(passages: Passage[]): void;
  search(q: string, k: number): string[];
}
const analyzer = new Analyzer();

function wink(): Engine {
  const engine = winkBm25();
  return {
    name: 'wink-bm25-text-search',
    build(passages) {
      engine.defineConfig({ fldWeights: { body: 1 }, bm25Params: { k1: 0.9, b: 0.4, k: 1 } });
      engine.definePrepTasks([(t: string) => analyzer.analyze(t)]);
      passages.forEach((p) => engine.addDoc({ body: `${p.title}\n${p.text}` }, p.id));
      engine.consolidate();
    },
    search: (q, k) => (engine.search(q, k) as [string, number][]).map((r) => r[0]),
  };
}

function minisearch(): Engine {
  const ms = new MiniSearch<{ id: string; body: string }>({
    fields: ['body'],
    tokenize: (t) => analyzer.analyze(t),
    processTerm: (t) => t,
    searchOptions: { combineWith: 'OR', bm25: { k: 0.9, b: 0.4, d: 0 } },
  });
  return {
    name: 'minisearch',
    build(passages) {
      ms.addAll(passages.map((p) => ({ id: p.id, body: `${p.title}\n${p.text}` })));
    },
    search: (q, k) => ms.search(q).slice(0, k).map((r) => String(r.id)),
  };
}

function ragtrailEngine(retriever: Bm25Retriever): Engine {
  return { name: 'ragtrail bm25', build() {}, search: (q, k) => retriever.searchSync(q, k).map((h) => h.passageId) };
}

/** The index's ranking alone (the query analysed, no passage read), answering with document numbers. */
function rankingEngine(retriever: Bm25Retriever): Engine {
  return { name: 'ragtrail ranking', build() {}, search: (q, k) => retriever.index.searchDocs(q, k).map((h) => String(h.doc)) };
}

/** The BM25 retriever of an index folder, with its synchronous search and its index in reach. */
async function openBm25(dir: string, bm25?: OpenRetrieverOptions['bm25']): Promise<Bm25Retriever> {
  const r = await openRetriever(dir, { method: 'bm25', bm25 });
  if (!(r instanceof Bm25Retriever)) throw new Error(`${dir}: openRetriever gave ${r.name}, not a BM25 retriever`);
  return r;
}

/**
 * Queries/s over the queries, and the hits of each, after one untimed pass over all of them: a first
 * pass reads the passage store's pages from disk (the anchors hold everything in RAM), and after a
 * dense bench had evicted them it ran at 180 q/s against ~700 warm. The npm libraries compared at
 * 100k hold everything in memory and run at ~10 q/s: `warm` 20 spares them the extra pass.
 * With several passes the median is `qps` and every pass is in `passes`: one pass of 1,000 queries
 * on this noisy machine varied by ±8% between runs of the same build.
 */
function timeQueries(e: Engine, queries: string[], k: number, { warm = queries.length, passes: nPasses = 1 } = {}): { qps: number; passes: number[]; hits: string[][] } {
  for (const q of queries.slice(0, warm)) e.search(q, k);
  const passes: number[] = [];
  let hits: string[][] = [];
  for (let p = 0; p < nPasses; p++) {
    const t0 = performance.now();
    hits = queries.map((q) => e.search(q, k));
    passes.push(queries.length / secs(t0));
  }
  return { qps: quantileSorted([...passes].sort((a, b) => a - b), 0.5), passes, hits };
}

const passList = (xs: number[]) => (xs.length > 1 ? ` (median of ${xs.length} passes: ${xs.map((x) => x.toFixed(0)).join(', ')})` : '');

// ---------------------------------------------------------------- (a) HotpotQA recall
async function hotpot(): Promise<void> {
  const files = ['distractor_dev_sample100_hf.json', 'distractor_dev_first53_official.json', 'distractor_hard_train300.jsonl'].map((f) => join(DATA, f));
  const questions = new Map<string, Question>();
  for (const f of files) for await (const q of loadDataset(f)) questions.set(q.question, q);
  const qs = [...questions.values()];
  const corpusPath = join(work, 'hotpot-corpus.jsonl');
  const passages: Passage[] = [];
  await writeCorpus(corpusPath, corpusFromQuestions(qs));
  for await (const p of readCorpus(corpusPath)) passages.push(p);
  const dir = join(work, 'hotpot-index');
  rmSync(dir, { recursive: true, force: true });
  await buildIndex(corpusPath, dir, { bm25: true, embedder: await createEmbedder('hash:512'), quiet: true });

  const recall = (hits: string[][], k: number) =>
    qs.reduce((s, q, i) => s + (q.supporting ?? []).filter((id) => hits[i]!.slice(0, k).includes(id)).length / (q.supporting?.length || 1), 0) / qs.length;
  const rows: (string | number)[][] = [];
  for (const method of ['bm25', 'dense', 'hybrid'] as const) {
    const r: Retriever = await openRetriever(dir, { method });
    const t0 = performance.now();
    const hits = (await r.searchBatch(qs.map((q) => q.question), 10)).map((l) => l.map((h) => h.passageId));
    const qps = qs.length / secs(t0);
    rows.push([r.name, recall(hits, 2).toFixed(3), recall(hits, 5).toFixed(3), recall(hits, 10).toFixed(3), qps.toFixed(0)]);
  }
  for (const make of [wink, minisearch]) {
    const e = make();
    e.build(passages);
    const { qps, hits } = timeQueries(e, qs.map((q) => q.question), 10);
    rows.push([`${e.name} (same analyzer, k1 0.9, b 0.4)`, recall(hits, 2).toFixed(3), recall(hits, 5).toFixed(3), recall(hits, 10).toFixed(3), qps.toFixed(0)]);
  }
  console.log(`\n(a) HotpotQA distractor samples: ${qs.length} questions, ${passages.length} passages; recall of the 2 supporting passages`);
  console.log(formatTable(['retriever', 'R@2', 'R@5', 'R@10', 'q/s'], rows));
}

/**
 * ragtrail's query figures on the built index (one open per pruning and postings mode). The indexes
 * are closed and unreferenced on return: at 21M each holds ~3 GiB, which an anchor run after it needs.
 */
async function measureOwn(dir: string, queries: { query: string }[], corpusPath: string) {
  const texts = queries.map((q) => q.query);
  const t0 = performance.now();
  const retriever = await openBm25(dir);
  const index = retriever.index;
  const openSecs = secs(t0);
  const held = index.memoryBytes();
  const e = ragtrailEngine(retriever);
  const headline = timeQueries(e, texts, 10, { passes: PASSES });
  const { hits } = headline;
  // The work the anchors' clocks cover: they get pre-tokenized queries and return row numbers, while a
  // ragtrail search also reads the k passages from the store. Ranking only still analyses the query.
  const ranking = timeQueries(rankingEngine(retriever), texts, 10, { passes: PASSES });
  // Kept beside the corpus so the Python anchors can report their top-10 overlap with ragtrail.
  (await import('node:fs')).writeFileSync(`${corpusPath}.ragtrail-hits.json`, JSON.stringify(hits));
  // The same queries with the postings left on disk (the mode for indexes larger than RAM allows).
  const onDisk = await openBm25(dir, { maxPostingsInMemory: 0 });
  const disk = timeQueries(ragtrailEngine(onDisk), texts, 10);
  // The same index answered by MaxScore alone (the evaluation before block-max pruning), then block-max
  // again, in alternation: under a noisy load only ratios taken side by side mean much.
  const maxScoreOnly = await openBm25(dir, { pruning: 'maxscore' });
  const maxScoreEngine = ragtrailEngine(maxScoreOnly);
  const side: { block: number; max: number }[] = [];
  let sameTop = 0;
  for (let rep = 0; rep < 3; rep++) {
    const m = timeQueries(maxScoreEngine, texts, 10);
    const b = timeQueries(e, texts, 10);
    side.push({ block: b.qps, max: m.qps });
    if (rep === 0) sameTop = m.hits.filter((h, i) => h.join() === b.hits[i]!.join()).length;
  }
  const ratios = side.map((r) => r.block / r.max).sort((x, y) => x - y);
  // The same block-max evaluation in TypeScript (the WebAssembly kernel's twin, which serves postings
  // on disk), in alternation with the headline's kernel: what compiling it buys, ranking alone.
  const kernel = index.kernel;
  const tsOnly = await openBm25(dir, { kernel: 'js' });
  const kernels: { own: number; ts: number }[] = [];
  let sameKernelTop = 0;
  for (let rep = 0; rep < 3; rep++) {
    const t = timeQueries(rankingEngine(tsOnly), texts, 10);
    const o = timeQueries(rankingEngine(retriever), texts, 10);
    kernels.push({ own: o.qps, ts: t.qps });
    if (rep === 0) sameKernelTop = t.hits.filter((h, i) => h.join() === o.hits[i]!.join()).length;
  }
  const postingsInMemory = index.postingsInMemory;
  for (const r of [retriever, onDisk, maxScoreOnly, tsOnly]) r.index.close();
  return { openSecs, held, postingsInMemory, headline, ranking, disk, side, sameTop, ratios, kernel, kernels, sameKernelTop };
}

// ---------------------------------------------------------------- (b) + (c) synthetic scale
async function scale(): Promise<void> {
  const corpusPath = join(work, `synthetic-${N}.jsonl`);
  const queryFile = `${corpusPath}.queries.json`;
  let queries: { id: string; query: string; relevant: number }[];
  if (existsSync(corpusPath) && existsSync(queryFile)) {
    queries = JSON.parse(await import('node:fs').then((fs) => fs.readFileSync(queryFile, 'utf8')));
  } else {
    const t0 = performance.now();
    queries = await writeSyntheticCorpus(corpusPath, N, NQ);
    (await import('node:fs')).writeFileSync(queryFile, JSON.stringify(queries));
    console.log(`generated ${N} synthetic passages in ${secs(t0).toFixed(0)} s (${mib(statSync(corpusPath).size)})`);
  }
  const dir = join(work, `synthetic-${N}-index`);
  // A kept index (--keep) is queried again as it is with --reuse-index; its build is then not measured.
  let build: { seconds: number; peakRssBytes: number; vocabulary: number; postings: number; runs: number } | undefined;
  if (args['reuse-index'] && existsSync(join(dir, 'index.json')) && existsSync(join(dir, 'bm25', 'meta.json'))) {
    console.log(`reusing the index in ${dir} (--reuse-index): build figures not measured`);
  } else {
    if (args['reuse-index']) console.log(`no complete index kept in ${dir}: building one (--reuse-index applies to an index kept by --keep)`);
    rmSync(dir, { recursive: true, force: true });
    const out = execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'retrieval-build-child.ts'), corpusPath, dir], { encoding: 'utf8', maxBuffer: 1 << 26 });
    build = JSON.parse(out.trim().split('\n').pop()!) as NonNullable<typeof build>;
    // The build leaves its files as dirty pages; flushed here, outside any clock, so the kernel's
    // writeback does not compete with the query timings that follow.
    execFileSync('sync');
  }
  const notMeasured = 'not measured (--reuse-index)';
  const bytes = folderBytes(dir);
  const parts = Object.fromEntries(['docs.jsonl', 'docs.off', 'bm25/postings.bin', 'bm25/terms.bin'].map((f) => [f, statSync(join(dir, f)).size]));

  const measured = await measureOwn(dir, queries, corpusPath);
  const { openSecs, held, postingsInMemory, headline, ranking, disk, side, sameTop, ratios, kernel, kernels, sameKernelTop } = measured;
  const kernelRatio = quantileSorted(kernels.map((r) => r.own / r.ts).sort((x, y) => x - y), 0.5);
  const { qps, hits } = headline;
  const recall10 = queries.filter((q, i) => hits[i]!.includes(`syn-${q.relevant}`)).length / queries.length;
  (globalThis as { gc?: () => void }).gc?.(); // bench:retrieval runs with --expose-gc: the closed indexes' memory goes back now

  console.log(`\n(b) synthetic corpus: ${N} passages of ~100 words, ${queries.length} queries (3–6 words of one passage)`);
  console.log(formatTable(['measure', 'value'], [
    ['build time', build ? `${build.seconds.toFixed(1)} s (target ≤ 120 s at 1M)` : notMeasured],
    ['build peak RSS', build ? `${gib(build.peakRssBytes)} (target ≤ 4 GiB)` : notMeasured],
    ['vocabulary / postings / runs', build ? `${build.vocabulary} / ${build.postings} / ${build.runs}` : notMeasured],
    ['index on disk', `${mib(bytes)} (docstore ${mib(parts['docs.jsonl']!)}, postings ${mib(parts['bm25/postings.bin']!)}, terms ${mib(parts['bm25/terms.bin']!)})`],
    ['open time / memory held by the index', `${openSecs.toFixed(2)} s / ${mib(held)} (postings ${postingsInMemory ? 'in memory' : 'on disk'})`],
    ['queries/s, 1 thread, k = 10', `${qps.toFixed(0)} (target ≥ 300)${passList(headline.passes)}`],
    ['queries/s, ranking only (query analysed, passages not read)', `${ranking.qps.toFixed(0)}${passList(ranking.passes)}`],
    ['queries/s with postings on disk (windowed reads)', `${disk.qps.toFixed(0)}`],
    ['block-max vs MaxScore alone, 3 alternating rounds', `${side.map((r) => `${r.block.toFixed(0)} vs ${r.max.toFixed(0)}`).join(', ')} q/s: median ${ratios[1]!.toFixed(2)}×; identical top 10 on ${sameTop}/${queries.length} queries`],
    [`block-max kernel in use (${kernel}) vs the TypeScript evaluation, ranking only, 3 alternating rounds`, `${kernels.map((r) => `${r.own.toFixed(0)} vs ${r.ts.toFixed(0)}`).join(', ')} q/s: median ${kernelRatio.toFixed(2)}×; identical top 10 on ${sameKernelTop}/${queries.length} queries`],
    ['recall@10 of the source passage', recall10.toFixed(3)],
  ]));

  // Extrapolation to Wikipedia 2018 (21M passages): everything here grows linearly in N except the
  // vocabulary, which grows sublinearly; we scale it linearly too, which overestimates.
  const f = 21_000_000 / N;
  // Held at query time with postings on disk: everything but the postings, scaled, plus doc offsets.
  const heapAtQuery = (held - (postingsInMemory ? parts['bm25/postings.bin']! : 0)) * f + 21e6 * 8;
  const anchorNames = args.anchors.split(',').filter(Boolean);
  if (anchorNames.length) {
    const own = { build: build?.seconds, rss: build?.peakRssBytes, disk: bytes - parts['docs.jsonl']! - statSync(join(dir, 'docs.off')).size, qps, rankingQps: ranking.qps, recall10 };
    await anchorTable(anchorNames, corpusPath, queryFile, { ...own, dir, queries: queries.map((q) => q.query) });
  }

  if (N >= 21_000_000) return; // measured, nothing to extrapolate
  console.log(`\nextrapolated to 21M passages (×${f.toFixed(0)}):`);
  console.log(formatTable(['measure', 'estimate'], [
    ['index on disk', gib(bytes * f)],
    ['postings', `${gib(parts['bm25/postings.bin']! * f)} (held in memory up to a quarter of RAM, else read from disk in windows)`],
    ['query-time memory (norms, dictionary, skips, bounds, doc offsets)', gib(heapAtQuery)],
    ['build memory', build ? `run buffers ≤ 290 MB + vocabulary (here ${build.vocabulary} terms); peak measured ${gib(build.peakRssBytes)} at ${N}` : notMeasured],
    ['fits in 24 GiB?', heapAtQuery < 20 * 2 ** 30 ? 'yes' : 'no'],
  ]));

  if (!args.parts.includes('c')) return;
  // (c) Baselines on a subset they can hold.
  const subN = Math.min(LIB_N, N);
  const sub: Passage[] = [];
  for await (const p of readCorpus(corpusPath)) {
    if (sub.length >= subN) break;
    sub.push(p);
  }
  const gen = new SyntheticText();
  const qrng = new Rng('subset-queries');
  const subQueries = Array.from({ length: NQ }, () => {
    const relevant = qrng.int(subN);
    return { query: gen.query(qrng, sub[relevant]!.text), relevant };
  });
  const subCorpus = join(work, `synthetic-sub-${subN}.jsonl`);
  await writeCorpus(subCorpus, sub);
  const subDir = join(work, `synthetic-sub-${subN}-index`);
  rmSync(subDir, { recursive: true, force: true });
  const tb = performance.now();
  await buildIndex(subCorpus, subDir, { bm25: true, quiet: true });
  const ragBuild = secs(tb);
  const rows: (string | number)[][] = [];
  const ours = ragtrailEngine(await openBm25(subDir));
  const mine = timeQueries(ours, subQueries.map((q) => q.query), 10);
  const rec = (h: string[][]) => subQueries.filter((q, i) => h[i]!.includes(`syn-${q.relevant}`)).length / subQueries.length;
  rows.push([ours.name, ragBuild.toFixed(1), mine.qps.toFixed(0), rec(mine.hits).toFixed(3), '1.00']);
  let fastest = 0;
  for (const make of [wink, minisearch]) {
    const eng = make();
    const t1 = performance.now();
    eng.build(sub);
    const b = secs(t1);
    const r = timeQueries(eng, subQueries.map((q) => q.query), 10, { warm: 20 });
    fastest = Math.max(fastest, r.qps);
    rows.push([eng.name, b.toFixed(1), r.qps.toFixed(0), rec(r.hits).toFixed(3), (mine.qps / r.qps).toFixed(2)]);
  }
  console.log(`\n(c) the same synthetic text, first ${subN} passages, ${subQueries.length} queries, k = 10, one thread:`);
  console.log(formatTable(['engine', 'build s', 'q/s', 'recall@10', 'ragtrail q/s ÷ this'], rows));
  console.log(`ragtrail is ${(mine.qps / fastest).toFixed(1)}× the fastest baseline's queries/s (target ≥ 2×)`);
  if (!args.keep) {
    rmSync(subDir, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- BM25 anchors (Python, bench-only)
interface AnchorResult {
  engine: string; build_s: number | null; peak_rss_bytes: number; disk_bytes: number; qps_single: number; qps_batched: number | null; recall10: number; overlap10: number | null;
  /** Node anchors (bench/js_anchor.ts) only: package version, how many queries were timed, CPU seconds per wall second of the query passes and of the build. */
  version?: string; queries?: number; cpu_per_wall?: number; build_cpu_per_wall?: number | null;
}

const ANCHOR_LABEL: Record<string, string> = {
  bm25s: 'bm25s 0.3 (lucene, numba)',
  // bm25s's own save, load and retrieval; its arrays built in chunks by bm25_anchor.py (equal to bm25s.index's).
  'bm25s-chunked': 'bm25s 0.3, index built in chunks',
  xapian: 'Xapian 1.4 (BM25Weight)',
  lancedb: 'LanceDB (native full-text index)',
  minisearch: 'minisearch (in-JS, in the heap)',
};

/** Each anchor's analysis and BM25 settings, printed under the table (ragtrail: its analyzer, k1 0.9, b 0.4). */
const SAME_ANALYSIS = "ragtrail's analysis (lowercase ASCII letter/digit runs, Lucene's 33 stop words, the original Porter stemmer), title and text as one field";
const ANCHOR_SETTINGS: Record<string, string> = {
  bm25s: `${SAME_ANALYSIS}; method lucene, k1 0.9, b 0.4, numba backend, one thread`,
  'bm25s-chunked': `as bm25s; its arrays built in chunks by bench/bm25_anchor.py`,
  xapian: `${SAME_ANALYSIS} through Xapian's TermGenerator; BM25Weight(k1 0.9, k2 0, k3 1, b 0.4), no positions`,
  lancedb: `${LANCEDB_SETTINGS_TEXT}; queries with LANCE_CPU_THREADS=1, the build with ${process.env['RAGTRAIL_LANCE_BUILD_THREADS'] ?? '4'} pool threads (fewer deadlock on 2 cores)`,
  minisearch: `${MINISEARCH_SETTINGS_TEXT}; its document length is its count of distinct terms, not of terms, so its top 10 differ from ragtrail's`,
};
/** The anchors that run in Node (bench/js_anchor.ts) rather than Python (bench/bm25_anchor.py). */
const NODE_ANCHORS = new Set(['lancedb', 'minisearch']);

/**
 * A BM25 anchor in a Python process that stays up (bm25_anchor.py … serve): it builds, measures
 * itself as before and prints its row, then times one more pass whenever asked, so that each of its
 * figures can be paired with one of ragtrail's taken at the same moment.
 */
class AnchorProcess {
  private constructor(private readonly proc: JsonLinesProcess) {}

  /** `command script …argv serve [extra]`: python bm25_anchor.py, or node --import tsx js_anchor.ts. */
  static async start(command: string[], argv: string[], env: NodeJS.ProcessEnv, extra: string[] = []): Promise<{ anchor: AnchorProcess; row: AnchorResult }> {
    const proc = new JsonLinesProcess(command[0]!, [...command.slice(1), ...argv, 'serve', ...extra], command.at(-1)!.split('/').pop()!, env);
    return { anchor: new AnchorProcess(proc), row: (await proc.next()) as unknown as AnchorResult };
  }

  /** One pass over the queries, one by one, then batched (null where the engine has no batch call). */
  async time(): Promise<{ single: number; batched: number | null; cpuPerWall?: number }> {
    const a = await this.proc.ask('time');
    return { single: Number(a['qps_single']), batched: a['qps_batched'] === null ? null : Number(a['qps_batched']), ...(a['cpu_per_wall'] === undefined ? {} : { cpuPerWall: Number(a['cpu_per_wall']) }) };
  }

  close(): void {
    this.proc.close();
  }
}

/** Median and range of a list of ratios, as "1.23× (1.10–1.31)". */
function ratioSummary(xs: number[]): string {
  const sorted = [...xs].sort((a, b) => a - b);
  return `${quantileSorted(sorted, 0.5).toFixed(2)}× (${sorted[0]!.toFixed(2)}–${sorted.at(-1)!.toFixed(2)})`;
}

/**
 * The anchors beside ragtrail. Each anchor's own figures (medians of its passes, minutes after
 * ragtrail's) go in the table; then, with --duel-rounds R, ragtrail and the anchor are timed in R
 * alternating rounds (a pass of each, which goes first alternating too) and the verdict is the median
 * of the per-round ratios: on this shared machine, figures taken minutes apart moved by ±30%.
 */
async function anchorTable(names: string[], corpusPath: string, queryFile: string, own: { dir: string; queries: string[]; build?: number; rss?: number; disk: number; qps: number; rankingQps: number; recall10: number }): Promise<void> {
  const rows: (string | number)[][] = [[`ragtrail (N ${N})`, own.build?.toFixed(0) ?? 'reused', own.rss === undefined ? '' : gib(own.rss), mib(own.disk), own.qps.toFixed(0), '', own.recall10.toFixed(3), '1.000', '', '']];
  const settings: string[] = [];
  let fastest: { engine: string; qps: number } | undefined;
  const duels: { engine: string; ours: number[]; single: number[]; batched: number[]; best: number[] }[] = [];
  for (const name of names) {
    let command: string[];
    // How many of the queries the anchor times (all but for the in-heap engine); ragtrail's paired passes use as many.
    let used = own.queries.length;
    const extra: string[] = [];
    if (NODE_ANCHORS.has(name)) {
      if (name === 'lancedb' && !resolveBenchPackage('@lancedb/lancedb')) {
        console.log(`(anchor lancedb skipped: @lancedb/lancedb is not installed, and is not a devDependency; to add it: ${LANCEDB_INSTALL})`);
        continue;
      }
      if (name === 'minisearch') {
        if (N > IN_JS_MAX_N) {
          console.log(`(anchor minisearch skipped: it holds everything in the V8 heap and is run up to --in-js-max-n ${IN_JS_MAX_N} passages, not ${N})`);
          continue;
        }
        used = Math.min(used, IN_JS_QUERIES);
        extra.push(String(used));
      }
      // A larger heap limit than Node's default, so that the engine's own memory, not V8's cap, decides where it fits.
      command = [process.execPath, '--max-old-space-size=16384', '--import', 'tsx', join(ROOT, 'bench', 'js_anchor.ts')];
    } else {
      const py = name === 'xapian' ? args['xapian-python'] : args['anchor-python'];
      if (!existsSync(py)) {
        console.log(`(anchor ${name} skipped: no ${py}; see bench/bm25_anchor.py for its setup)`);
        continue;
      }
      command = [py, join(ROOT, 'bench', 'bm25_anchor.py')];
    }
    console.log(`anchor ${name}: started, load ${load()}`);
    // One thread for numba, BLAS and Lance's query pool alike, as ragtrail's single-threaded figure.
    // --keep keeps the anchors' indexes too (Xapian's database, the chunk-built bm25s index, which a later run reuses).
    const env = { ...process.env, NUMBA_NUM_THREADS: '1', OMP_NUM_THREADS: '1', OPENBLAS_NUM_THREADS: '1', MKL_NUM_THREADS: '1', LANCE_CPU_THREADS: '1', ...(args.keep ? { RAGTRAIL_BENCH_KEEP: '1' } : {}) };
    let a: AnchorResult;
    let anchor: AnchorProcess;
    try {
      ({ anchor, row: a } = await AnchorProcess.start(command, [name, corpusPath, queryFile, `${corpusPath}.ragtrail-hits.json`, String(N), work, String(PASSES)], env, extra));
    } catch (e) {
      console.log(`(anchor ${name} failed: ${(e as Error).message.split('\n')[0]})`);
      continue;
    }
    const best = Math.max(a.qps_single, a.qps_batched ?? 0);
    // An anchor timed on a subset of the queries is compared in its paired rounds, not against the full-pass figure.
    if (used === own.queries.length && (!fastest || best > fastest.qps)) fastest = { engine: a.engine, qps: best };
    const label = `${ANCHOR_LABEL[a.engine] ?? a.engine}${a.version ? ` ${a.version}` : ''}${used < own.queries.length ? ` (first ${used} queries)` : ''}`;
    settings.push(`  ${label}: ${ANCHOR_SETTINGS[a.engine] ?? ''}${a.cpu_per_wall === undefined ? '' : `; CPU s per wall s, queries ${a.cpu_per_wall.toFixed(2)}${a.build_cpu_per_wall ? `, build ${a.build_cpu_per_wall.toFixed(2)}` : ''}`}`);
    rows.push([
      label,
      a.build_s === null ? 'kept' : a.build_s.toFixed(0), gib(a.peak_rss_bytes), mib(a.disk_bytes), a.qps_single.toFixed(0), a.qps_batched === null ? '' : a.qps_batched.toFixed(0),
      a.recall10.toFixed(3), a.overlap10 === null ? '' : a.overlap10.toFixed(3),
      used < own.queries.length ? 'paired only' : `${(own.qps / a.qps_single).toFixed(2)}${a.qps_batched ? ` / ${(own.qps / a.qps_batched).toFixed(2)}` : ''}`,
      a.build_s === null || own.build === undefined ? '' : `${(own.build / a.build_s).toFixed(2)} / ${own.rss === undefined ? '' : (own.rss / a.peak_rss_bytes).toFixed(2)}`,
    ]);
    if (DUEL_ROUNDS > 0) {
      // Opened again rather than kept from measureOwn: the anchor's build (12 GiB for bm25s at 5M)
      // then runs without ragtrail's postings (2.65 GiB at 21M) held beside it.
      const retriever = await openBm25(own.dir);
      const engine = ragtrailEngine(retriever);
      const duelQueries = own.queries.slice(0, used);
      timeQueries(engine, own.queries, 10); // opened afresh: one untimed pass first
      const duel = { engine: label, ours: [] as number[], single: [] as number[], batched: [] as number[], best: [] as number[] };
      for (let r = 0; r < DUEL_ROUNDS; r++) {
        let ours: number;
        let theirs: Awaited<ReturnType<AnchorProcess['time']>>;
        if (r % 2 === 0) {
          ours = timeQueries(engine, duelQueries, 10, { warm: 0 }).qps;
          theirs = await anchor.time();
        } else {
          theirs = await anchor.time();
          ours = timeQueries(engine, duelQueries, 10, { warm: 0 }).qps;
        }
        duel.ours.push(ours);
        duel.single.push(ours / theirs.single);
        if (theirs.batched !== null) duel.batched.push(ours / theirs.batched);
        duel.best.push(ours / Math.max(theirs.single, theirs.batched ?? 0));
        console.log(`  round ${r + 1}: ragtrail ${ours.toFixed(0)} q/s, ${a.engine} ${theirs.single.toFixed(0)}${theirs.batched === null ? '' : ` / ${theirs.batched.toFixed(0)} batched`} q/s${theirs.cpuPerWall === undefined ? '' : ` (${theirs.cpuPerWall.toFixed(2)} CPU s per s)`} (load ${load()})`);
      }
      duels.push(duel);
      retriever.index.close();
    }
    anchor.close();
  }
  console.log(`\nBM25 anchors: the same ${N} passages and queries, one thread for the queries, settings below (load now ${load()})`);
  console.log(formatTable(['engine', 'build s', 'peak RSS', 'disk (no passages)', 'q/s one by one', 'q/s batched', 'recall@10', 'top-10 overlap with ragtrail', 'ragtrail q/s ÷ this (one / batched)', 'build s / peak RSS, ragtrail ÷ this'], rows));
  console.log(`settings (ragtrail: its analyzer, BM25 k1 0.9, b 0.4, block-max WAND, one thread):\n${settings.join('\n')}`);
  if (duels.length) {
    console.log(`\npaired rounds (${DUEL_ROUNDS}): ragtrail's search (passages read) and the anchor's, timed back to back in alternating order; median of the per-round ratios (range)`);
    console.log(formatTable(['anchor', 'ragtrail q/s per round', 'ragtrail ÷ one by one', 'ragtrail ÷ batched', 'ragtrail ÷ the faster of the two'], duels.map((d) => [
      d.engine, d.ours.map((x) => x.toFixed(0)).join(', '), ratioSummary(d.single), d.batched.length ? ratioSummary(d.batched) : '', ratioSummary(d.best),
    ])));
    const median = (xs: number[]) => quantileSorted([...xs].sort((x, y) => x - y), 0.5);
    const worst = duels.reduce((w, d) => (median(d.best) < median(w.best) ? d : w));
    console.log(`ragtrail one query at a time is ${ratioSummary(worst.best)} the fastest anchor in paired rounds (${worst.engine}; target ≥ 2×)`);
  }
  if (fastest) console.log(`unpaired (each engine's median pass, minutes apart): ragtrail ${(own.qps / fastest.qps).toFixed(2)}× the fastest anchor (${fastest.engine}, ${fastest.qps.toFixed(0)} q/s)`);
  console.log(`ranking only, for reference: ${own.rankingQps.toFixed(0)} q/s (the query analysed, the passages not read; the anchors' clocks cover neither)`);
}

console.log(`load average at start: ${load()}`);
if (args.parts.includes('a')) await hotpot();
if (args.parts.includes('b') || args.parts.includes('c')) await scale();
console.log(`load average at end: ${load()}`);
