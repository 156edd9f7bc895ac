/**
 * Querying dense vectors: exact inner-product search over all vectors (flat), or approximate search
 * through the usearch HNSW graph (memory-mapped with `view`, so it need not fit in the heap).
 * Vectors are unit length, so the score is cosine similarity.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../../core/errors.js';
import { TopK } from '../topk.js';
import type { ScoredDoc } from '../types.js';
import { DENSE_FORMAT_VERSION, type DenseMeta } from './build.js';
import { loadUsearch, type UsearchIndex } from './usearch.js';

export type DenseSearchMode = 'auto' | 'flat' | 'hnsw';

export class DenseIndex {
  private constructor(
    readonly meta: DenseMeta,
    private readonly vectors: Float32Array | undefined,
    private readonly hnsw: UsearchIndex | undefined,
  ) {}

  /** Opens the vectors of `dir`; `mode` auto uses HNSW when the index has one. */
  static async open(dir: string, mode: DenseSearchMode = 'auto'): Promise<DenseIndex> {
    let meta: DenseMeta;
    try {
      meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as DenseMeta;
    } catch {
      throw new InputError(`${dir}: not a dense index (no readable meta.json)`, 'build one with `ragtrail index build --dense`');
    }
    if (meta.format !== 'ragtrail-dense' || meta.version !== DENSE_FORMAT_VERSION) {
      throw new InputError(`${dir}: dense index format ${meta.format} v${meta.version} is not supported`, 'rebuild the index');
    }
    const useHnsw = mode === 'hnsw' || (mode === 'auto' && meta.hnsw !== undefined);
    if (useHnsw) {
      if (!meta.hnsw) throw new InputError(`${dir}: this dense index has no HNSW graph`, 'rebuild with --hnsw, or search with the flat mode');
      const { Index } = await loadUsearch();
      const index = new Index({ dimensions: meta.dim, metric: 'ip', quantization: 'f32', connectivity: meta.hnsw.connectivity, expansion_add: 0, expansion_search: 0, multi: false });
      index.view(join(dir, meta.hnsw.file));
      return new DenseIndex(meta, undefined, index);
    }
    const raw = readFileSync(join(dir, 'vectors.f32'));
    const copy = new Uint8Array(raw.length);
    copy.set(raw);
    return new DenseIndex(meta, new Float32Array(copy.buffer), undefined);
  }

  get size(): number {
    return this.meta.n;
  }

  get mode(): 'flat' | 'hnsw' {
    return this.hnsw ? 'hnsw' : 'flat';
  }

  search(query: Float32Array, k: number): ScoredDoc[] {
    const dim = this.meta.dim;
    if (query.length !== dim) throw new InputError(`query vector has size ${query.length}, the index holds size ${dim}`, 'use the embedder the index was built with');
    if (this.hnsw) {
      const m = this.hnsw.search(query, Math.min(k, this.meta.n), 0);
      const out: ScoredDoc[] = [];
      for (let i = 0; i < m.keys.length; i++) {
        const key = m.keys[i]!;
        if (key === 0xffffffffffffffffn) continue; // usearch pads missing results
        out.push({ doc: Number(key), score: 1 - m.distances[i]! });
      }
      return out;
    }
    const v = this.vectors!;
    const top = new TopK(k);
    for (let d = 0, off = 0; d < this.meta.n; d++, off += dim) {
      let s = 0;
      for (let j = 0; j < dim; j++) s += v[off + j]! * query[j]!;
      if (s > top.threshold) top.push(d, s);
    }
    return top.sorted();
  }
}
