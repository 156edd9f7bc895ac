/**
 * Builds the dense side of an index: every passage embedded (title + text, with the passage
 * prefix), vectors appended to `vectors.f32` (row-major Float32, N × dim), and optionally an HNSW
 * graph (usearch) for corpora too large for exact search. Embedding is the slow part (days with a
 * remote model on Wikipedia), so it is resumable: vectors go to `vectors.f32.partial`, and a re-run
 * with the same embedder continues after the last complete vector.
 */
import { closeSync, existsSync, openSync, readFileSync, readSync, renameSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../../core/errors.js';
import { Progress } from '../../core/progress.js';
import type { Passage } from '../../core/types.js';
import type { Embedder, Prefixes } from '../embedders/embedder.js';
import { loadUsearch } from './usearch.js';

export const DENSE_FORMAT_VERSION = 1;

export interface DenseMeta {
  format: 'ragtrail-dense';
  version: number;
  embedder: string;
  lexical: boolean;
  prefixes: Prefixes;
  dim: number;
  n: number;
  /** HNSW graph file, when built. */
  hnsw?: { file: string; connectivity: number };
}

export interface DenseBuildOptions {
  prefixes?: Prefixes;
  /** Passages per embedding call (default 256). */
  batchSize?: number;
  /** Also build an HNSW graph with usearch. */
  hnsw?: boolean;
  connectivity?: number;
  quiet?: boolean;
}

export function passageText(p: Passage): string {
  return p.title ? `${p.title}\n${p.text}` : p.text;
}

export async function buildDense(
  dir: string,
  passages: (from: number) => AsyncIterable<Passage>,
  total: number,
  embedder: Embedder,
  opts: DenseBuildOptions = {},
): Promise<DenseMeta> {
  const prefixes = opts.prefixes ?? {};
  const batchSize = opts.batchSize ?? 256;
  const partial = join(dir, 'vectors.f32.partial');
  const progressFile = join(dir, 'progress.json');
  // Resume: same embedder and prefixes, keep every complete vector already written.
  let done = 0;
  let dim = embedder.dim;
  if (existsSync(partial) && existsSync(progressFile)) {
    const prev = JSON.parse(readFileSync(progressFile, 'utf8')) as { embedder: string; prefixes: Prefixes; dim: number };
    if (prev.embedder === embedder.spec && JSON.stringify(prev.prefixes) === JSON.stringify(prefixes)) {
      dim = prev.dim;
      done = Math.min(total, Math.floor(statSync(partial).size / (4 * dim)));
      truncateSync(partial, done * 4 * dim);
    } else {
      truncateSync(partial, 0);
    }
  } else {
    writeFileSync(partial, new Uint8Array(0));
  }
  const fd = openSync(partial, 'a');
  const progress = new Progress('embedding', { unit: 'passages', total, quiet: opts.quiet });
  if (done > 0) progress.tick(done);
  try {
    let batch: string[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const vectors = await embedder.embed(batch.map((t) => (prefixes.passage ?? '') + t), 'passage');
      if (dim === undefined) {
        dim = vectors[0]!.length;
        writeFileSync(progressFile, JSON.stringify({ embedder: embedder.spec, prefixes, dim }));
      }
      const buf = new Float32Array(vectors.length * dim);
      vectors.forEach((v, i) => {
        if (v.length !== dim) throw new InputError(`embedder ${embedder.spec} returned a vector of size ${v.length}, expected ${dim}`);
        buf.set(v, i * dim!);
      });
      writeSync(fd, new Uint8Array(buf.buffer));
      progress.tick(batch.length);
      batch = [];
    };
    if (dim !== undefined) writeFileSync(progressFile, JSON.stringify({ embedder: embedder.spec, prefixes, dim }));
    for await (const p of passages(done)) {
      batch.push(passageText(p));
      if (batch.length >= batchSize) await flush();
    }
    await flush();
  } finally {
    closeSync(fd);
  }
  progress.finish();
  if (dim === undefined) throw new InputError('no passages to embed', 'the corpus is empty');
  renameSync(partial, join(dir, 'vectors.f32'));
  const meta: DenseMeta = { format: 'ragtrail-dense', version: DENSE_FORMAT_VERSION, embedder: embedder.spec, lexical: embedder.lexical, prefixes, dim, n: total };
  if (opts.hnsw) {
    const connectivity = opts.connectivity ?? 16;
    await buildHnsw(dir, dim, total, connectivity);
    meta.hnsw = { file: 'hnsw.usearch', connectivity };
  }
  writeFileSync(join(dir, 'meta.json'), JSON.stringify(meta, null, 2) + '\n');
  writeFileSync(progressFile, JSON.stringify({ embedder: embedder.spec, prefixes, dim, complete: true }));
  return meta;
}

/** Adds the stored vectors to a usearch HNSW graph in chunks (bounded memory) and saves it. */
async function buildHnsw(dir: string, dim: number, n: number, connectivity: number): Promise<void> {
  const { Index } = await loadUsearch();
  const index = new Index({ dimensions: dim, metric: 'ip', quantization: 'f32', connectivity, expansion_add: 0, expansion_search: 0, multi: false });
  const fd = openSync(join(dir, 'vectors.f32'), 'r');
  const chunk = 65536;
  const buf = new Float32Array(chunk * dim);
  try {
    for (let start = 0; start < n; start += chunk) {
      const rows = Math.min(chunk, n - start);
      readSync(fd, new Uint8Array(buf.buffer, 0, rows * dim * 4), 0, rows * dim * 4, start * dim * 4);
      const keys = new BigUint64Array(rows);
      for (let i = 0; i < rows; i++) keys[i] = BigInt(start + i);
      index.add(keys, buf.subarray(0, rows * dim));
    }
  } finally {
    closeSync(fd);
  }
  index.save(join(dir, 'hnsw.usearch'));
}
