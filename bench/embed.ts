/**
 * Embedding pipeline benchmark (`npm run bench:embed`; figures, not tests): `index build --dense
 * --embedder openai:…` against a fake /v1/embeddings server in its own process whose every batch
 * takes a fixed time (`--delay` ms, `--slots` batches at once, as a GPU server), for several
 * client concurrencies. The server's busy fraction (time its slots spent serving ÷ wall time from
 * the first request to the last) says whether the client keeps it saturated; the target is ≥ 90%.
 * Options: --n 20000 --dim 768 --batch 256 --delay 50 --slots 1 --concurrency 1,2,4
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { formatTable } from '../src/cli/table.js';
import { writeCorpus } from '../src/corpus/corpus.js';
import { createEmbedder } from '../src/retrieval/embedders/embedder.js';
import { buildIndex } from '../src/retrieval/index-dir.js';

const { values: args } = parseArgs({
  options: {
    n: { type: 'string', default: '20000' },
    dim: { type: 'string', default: '768' },
    batch: { type: 'string', default: '256' },
    delay: { type: 'string', default: '50' },
    slots: { type: 'string', default: '1' },
    concurrency: { type: 'string', default: '1,2,4' },
  },
});
const ROOT = resolve(import.meta.dirname, '..');
const N = Number(args.n);
const BATCH = Number(args.batch);
const work = mkdtempSync(join(tmpdir(), 'ragtrail-bench-embed-'));
const corpus = join(work, 'corpus.jsonl');
await writeCorpus(corpus, Array.from({ length: N }, (_, i) => ({ id: `p${i}`, title: `Entity ${i}`, text: `Entity ${i} was founded in ${1000 + (i % 1000)} in Town${i % 97} and makes product${i % 389} for the region of Area${i % 13}.` })));

const rows: string[][] = [];
for (const c of args.concurrency.split(',').map(Number)) {
  // A fresh server per run, so that its statistics cover this run only.
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test', 'retrieval', 'serve-fake-embeddings.ts'), '--dim', args.dim, '--delay', args.delay, '--slots', args.slots], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((res) => child.stdout.once('data', (d: Buffer) => res(d.toString().trim())));
  const dir = join(work, `index-${c}`);
  await buildIndex(corpus, dir, { bm25: false, quiet: true });
  const embedder = await createEmbedder(`openai:${url}#fake`, { batchSize: BATCH, concurrency: c });
  const t0 = performance.now();
  await buildIndex(corpus, dir, { embedder, dense: { batchSize: BATCH, concurrency: c }, quiet: true });
  const secs = (performance.now() - t0) / 1000;
  const stats = (await (await fetch(url.replace(/\/v1$/, '/stats'))).json()) as { requests: number; busyFraction: number; maxInFlight: number };
  child.kill();
  const ideal = Math.ceil(N / BATCH) * Number(args.delay) / 1000 / Number(args.slots);
  rows.push([String(c), secs.toFixed(1), (N / secs).toFixed(0), `${(100 * stats.busyFraction).toFixed(1)}%`, (ideal / secs).toFixed(2), String(stats.maxInFlight)]);
}
rmSync(work, { recursive: true, force: true });
console.log(`\nembedding ${N} passages, batches of ${BATCH}, ${args.dim} dims; fake server: ${args.delay} ms per batch, ${args.slots} slot(s)`);
console.log(formatTable(['concurrency', 'seconds', 'passages/s', 'server busy', 'ideal time ÷ time', 'max requests at server'], rows));
