/** usearch (HNSW, native binaries shipped in the npm package) is an optional dependency, loaded on demand. */
import { InputError } from '../../core/errors.js';

export interface UsearchIndex {
  add(keys: BigUint64Array, vectors: Float32Array): void;
  search(vector: Float32Array, k: number, threads: number): { keys: BigUint64Array; distances: Float32Array };
  save(path: string): void;
  view(path: string): void;
  load(path: string): void;
  size(): number;
}

export interface UsearchModule {
  Index: new (config: { dimensions: number; metric: string; quantization: string; connectivity: number; expansion_add: number; expansion_search: number; multi: boolean }) => UsearchIndex;
}

export async function loadUsearch(): Promise<UsearchModule> {
  try {
    const name = 'usearch';
    const mod = (await import(name)) as { default?: UsearchModule } & UsearchModule;
    return mod.default ?? mod;
  } catch {
    throw new InputError('HNSW search needs the optional package usearch', 'run `npm install usearch`, or build without --hnsw for exact search');
  }
}
