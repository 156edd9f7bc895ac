import { existsSync, statSync, readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import type { Command } from 'commander';
import { InputError, RagtrailError } from '../core/errors.js';
import { createEmbedder, EMBEDDER_SPEC_HELP } from '../retrieval/embedders/embedder.js';
import { denseFootprint } from '../retrieval/dense/index.js';
import { QUANTIZATIONS, type Quantization } from '../retrieval/dense/quantize.js';
import { HNSW_ORDERS, type HnswOrder } from '../retrieval/dense/build.js';
import { buildEngineIndex, ENGINE_SPEC_HELP, parseEngineSpec } from '../retrieval/engines/search-engine.js';
import { buildIndex, manifestCorpus, readManifest } from '../retrieval/index-dir.js';
import { rebuildCommand, verifyIndexFiles } from '../retrieval/integrity.js';
import { choiceArg, intArg, numberArg } from './options.js';

interface BuildOpts {
  corpus: string;
  out?: string;
  to?: string;
  bm25?: boolean;
  dense?: boolean;
  embedder?: string;
  queryPrefix?: string;
  passagePrefix?: string;
  k1: number;
  b: number;
  hnsw: boolean;
  hnswM: number;
  efConstruction: number;
  hnswOrder: HnswOrder;
  threads: number;
  quantize: Quantization;
  batchSize: number;
  concurrency: number;
  apiKey?: string;
  force?: boolean;
}

function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    total += entry.isDirectory() ? folderBytes(p) : statSync(p).size;
  }
  return total;
}

export function registerIndex(program: Command): void {
  const index = program.command('index').description('build and inspect retrieval indexes (BM25, dense, both)');
  index
    .command('build')
    .description('index a corpus (.jsonl {id,title,text} or {id,contents}, or DPR .tsv; .gz fine): BM25 by default, dense with --dense')
    .requiredOption('--corpus <file>', 'corpus file')
    .option('--out <dir>', 'index folder (re-running on it keeps finished parts and resumes embedding)')
    .option('--to <engine>', `load the corpus into an Elasticsearch / OpenSearch index instead: ${ENGINE_SPEC_HELP} (resumable; BM25 with --k1/--b, vectors with --dense)`)
    .option('--bm25', 'build the BM25 index (default unless only --dense is given)')
    .option('--dense', 'build a dense index with --embedder')
    .option('--embedder <spec>', `embedder for --dense: ${EMBEDDER_SPEC_HELP}`, 'hash:512')
    .option('--query-prefix <text>', 'instruction prefix for queries, e.g. "query: " (E5) or a BGE instruction')
    .option('--passage-prefix <text>', 'instruction prefix for passages, e.g. "passage: " (E5)')
    .option('--k1 <x>', 'BM25 k1', numberArg(0, 100), 0.9)
    .option('--b <x>', 'BM25 b', numberArg(0, 1), 0.4)
    .option('--hnsw', 'also build an HNSW graph (usearch) for approximate dense search on large corpora', false)
    .option('--hnsw-m <n>', 'HNSW links per node and layer (M; the bottom layer keeps 2M)', intArg(2, 256), 16)
    .option('--ef-construction <n>', 'HNSW construction width (faiss efConstruction, usearch expansion_add): wider builds slower and links better (see docs/reference/retrieval.md)', intArg(1, 10_000), 40)
    .option('--hnsw-order <order>', 'order rows join the HNSW graph: clustered (neighbours near each other in memory: faster search and build; see docs/reference/retrieval.md) or natural (file order)', choiceArg(HNSW_ORDERS), 'clustered')
    .option('--threads <n>', 'threads building the HNSW graph (--hnsw): 1 builds the same graph file on every run; more add rows concurrently, so each run builds another graph, equally good but not byte-identical', intArg(1, 1024), availableParallelism())
    .option('--quantize <q>', 'codes held in memory for dense search: none (float32), int8 (a quarter of the size) or binary (1/32); int8 and binary re-score a shortlist with the float32 vectors on disk', choiceArg(QUANTIZATIONS), 'none')
    .option('--batch-size <n>', 'passages per embedding request', intArg(1, 100_000), 256)
    .option('--concurrency <n>', 'embedding requests in flight at once (keeps a remote server busy)', intArg(1, 1024), 4)
    .option('--api-key <key>', 'API key for an openai: embedder (default: $OPENAI_API_KEY)')
    .option('--force', 'rebuild from scratch (needed when --out holds an index of another corpus, or of this one before it changed)', false)
    .option('--skip-invalid', 'skip corpus lines that are not UTF-8 or do not parse, and repeated passage ids (counted), instead of stopping', false)
    .action(async (opts: BuildOpts & { skipInvalid: boolean }) => {
      if (!opts.bm25 && !opts.dense) opts.bm25 = true;
      if ((opts.out === undefined) === (opts.to === undefined)) throw new InputError('give either --out DIR (a ragtrail index folder) or --to ENGINE (Elasticsearch / OpenSearch)', `e.g. --out runs/index, or --to ${ENGINE_SPEC_HELP.split(', e.g. ')[1]}`);
      const t0 = performance.now();
      const embedder = opts.dense ? await createEmbedder(opts.embedder ?? 'hash:512', { apiKey: opts.apiKey, batchSize: opts.batchSize, concurrency: opts.concurrency }) : undefined;
      if (opts.to !== undefined) {
        const spec = parseEngineSpec(opts.to);
        if (!spec) throw new InputError(`--to "${opts.to}": not an engine index`, `use ${ENGINE_SPEC_HELP}`);
        if (!existsSync(opts.corpus)) throw new InputError(`--corpus ${opts.corpus}: no such file`);
        const m = await buildEngineIndex(opts.corpus, spec, { embedder, prefixes: { query: opts.queryPrefix, passage: opts.passagePrefix }, k1: opts.k1, b: opts.b });
        await embedder?.close?.();
        console.log(`loaded ${m.passages} passages into ${opts.to}${m.dim ? ` with ${m.embedder} vectors (dim ${m.dim})` : ''} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
        return;
      }
      const out = opts.out as string;
      const m = await buildIndex(opts.corpus, out, {
        bm25: opts.bm25 ?? false,
        bm25Options: { k1: opts.k1, b: opts.b },
        embedder,
        dense: { prefixes: { query: opts.queryPrefix, passage: opts.passagePrefix }, batchSize: opts.batchSize, concurrency: opts.concurrency, hnsw: opts.hnsw, connectivity: opts.hnswM, expansionAdd: opts.efConstruction, hnswOrder: opts.hnswOrder, threads: opts.threads, quantize: opts.quantize },
        force: opts.force,
        skipInvalid: opts.skipInvalid,
      });
      if (m.skippedRecords) console.error(`warning: ${m.skippedRecords} invalid corpus records skipped (--skip-invalid)`);
      await embedder?.close?.();
      console.log(`indexed ${m.passages} passages into ${out} in ${((performance.now() - t0) / 1000).toFixed(1)} s (${(folderBytes(out) / 2 ** 20).toFixed(1)} MiB)`);
      if (m.dense?.lexical) console.log(`note: the dense part uses ${m.dense.embedder}, a lexical hashed n-gram embedder, not a neural model`);
    });
  index
    .command('info')
    .description('describe an index folder')
    .argument('<dir>', 'index folder')
    .action((dir: string) => {
      const m = readManifest(dir);
      console.log(`index ${dir}: ${m.passages} passages from ${relative(process.cwd(), manifestCorpus(dir, m))} (built ${m.created}), ${(folderBytes(dir) / 2 ** 20).toFixed(1)} MiB`);
      if (m.bm25) console.log(`  bm25: k1=${m.bm25.k1} b=${m.bm25.b}, ${m.bm25.vocabulary} terms, ${m.bm25.postings} postings, avg length ${m.bm25.avgdl.toFixed(1)} tokens`);
      if (m.dense) {
        const prefixes = Object.entries(m.dense.prefixes).filter(([, v]) => v).map(([k, v]) => `${k} prefix ${JSON.stringify(v)}`);
        const q = m.dense.quantization ?? 'none';
        console.log(`  dense: ${m.dense.embedder}${m.dense.lexical ? ' (lexical)' : ''}, dim ${m.dense.dim}, ${m.dense.hnsw ? 'HNSW + flat' : 'flat'}, codes ${q === 'none' ? 'float32' : q}${prefixes.length ? ', ' + prefixes.join(', ') : ''}`);
        const graph = m.dense.hnsw && join(dir, 'dense', m.dense.hnsw.file);
        const flat = denseFootprint(m.dense);
        const gib = (b: number) => `${(b / 2 ** 30).toFixed(2)} GiB`;
        // DocStore keeps N + 1 float64 passage offsets in memory beside the search structure.
        const offsets = (m.passages + 1) * 8;
        console.log(`  dense flat search: ${flat.bytesPerVector} bytes per vector, RAM needed ${gib(flat.ramBytes + offsets)} (${flat.where}, plus passage offsets)`);
        if (graph && existsSync(graph)) {
          const bytes = statSync(graph).size;
          const h = m.dense.hnsw!;
          const what = h.vectors === 'int8-uniform' ? 'uniform int8 codes' : h.vectors === 'int8-codes' ? 'per-dimension int8 codes (rebuilt by the next index build)' : `${h.quantization ?? 'f32'} vectors`;
          console.log(`  dense HNSW search: ${(bytes / m.passages).toFixed(0)} bytes per vector (${what} + links; M ${h.connectivity}, efConstruction ${h.expansionAdd ?? 40}, ${h.order ?? 'natural'} order), RAM needed ${gib(bytes + offsets)} (the graph, memory-mapped${q === 'none' ? '' : '; float32 re-scoring from disk'})`);
        }
      }
      if (!m.bm25 && !m.dense) throw new InputError(`${dir}: the index has no search structure`, 'rebuild it');
    });
  index
    .command('verify')
    .description('check every file of an index folder against the sizes and SHA-256 checksums recorded when it was built (exit 1 if any is damaged)')
    .argument('<dir>', 'index folder')
    .action((dir: string) => verifyCommand(dir));
}

/** `ragtrail index verify DIR`: one line per file, then a summary; a damaged file ends with exit 1. */
function verifyCommand(dir: string): void {
  const t0 = performance.now();
  const manifestFile = join(dir, 'index.json');
  let m;
  try {
    m = readManifest(dir);
  } catch (e) {
    // A torn or altered manifest is damage too (exit 1), unlike a folder that holds no index at all.
    if (!(e instanceof InputError) || !existsSync(manifestFile)) throw e;
    console.log(`DAMAGED  ${manifestFile}`);
    throw new RagtrailError(e.message);
  }
  const fix = `rebuild it with \`${rebuildCommand(dir, m, manifestCorpus(dir, m))}\``;
  const files = verifyIndexFiles(dir, m);
  if (!files) {
    console.log(`${dir} was built without checksums (by an older ragtrail): index verify cannot check its files; ${fix} to add them`);
    return;
  }
  console.log(`OK       ${manifestFile} (its own checksum)`);
  for (const f of files) console.log(f.damaged ? `DAMAGED  ${f.file}: ${f.damaged}` : `OK       ${f.file} (${mib(f.bytes)})`);
  const bad = files.filter((f) => f.damaged);
  const bytes = files.reduce((s, f) => s + f.bytes, 0);
  const seconds = ((performance.now() - t0) / 1000).toFixed(1);
  if (bad.length) throw new RagtrailError(`${dir}: ${bad.length} of ${files.length + 1} files damaged (${bad.map((f) => relative(dir, f.file)).join(', ')}): ${fix}`);
  console.log(`${dir}: all ${files.length + 1} files sound (${mib(bytes)} checked in ${seconds} s)`);
}

const mib = (bytes: number) => (bytes < 2 ** 20 ? `${(bytes / 1024).toFixed(1)} KiB` : bytes < 2 ** 30 ? `${(bytes / 2 ** 20).toFixed(1)} MiB` : `${(bytes / 2 ** 30).toFixed(2)} GiB`);
