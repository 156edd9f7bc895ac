/**
 * A Retriever that spreads searches over worker threads, each with the same index folder open, so a
 * server uses every core while its event loop stays free for other clients (`/health`, small
 * requests, WebSocket frames). Search-R1's trainer and verl-tool send hundreds of queries per call;
 * a batch is cut into slices that go to the least busy workers and are answered in query order.
 *
 * Memory: the passages and BM25 postings are files; workers read them through the operating system's
 * shared page cache. Postings that would be loaded into the heap are loaded only while all workers'
 * copies together stay within the single-process budget (a quarter of RAM), so N workers never hold
 * N times that budget. Dense vectors are loaded per worker (the README says so).
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { RagtrailError } from '../core/errors.js';
import { DEFAULT_MAX_POSTINGS_IN_MEMORY } from './bm25/index.js';
import type { DenseSearchMode } from './dense/index.js';
import type { SearchMethod } from './index-dir.js';
import type { Hit, Retriever } from './types.js';

/** What a worker needs to open the index: plain data, since it crosses a thread boundary. */
export interface PoolOpenOptions {
  method?: SearchMethod;
  denseMode?: DenseSearchMode;
  maxPostingsInMemory?: number;
  rrfK?: number;
  rrfDepth?: number;
  apiKey?: string;
}

export interface WorkerRequest {
  id: number;
  queries: string[];
  k: number;
}
export type WorkerReply = { id: number; hits: Hit[][] } | { id: number; error: string } | { ready: true; name: string } | { failed: string };

interface Slot {
  worker: Worker;
  busy: number;
}

/** Queries per message: small enough that one client's large batch interleaves with other clients' requests. */
const SLICE = 32;

export function defaultWorkers(): number {
  return availableParallelism();
}

/** Starts the worker entry file: compiled JavaScript in a build, TypeScript through tsx in tests and benches. */
function spawn(workerData: unknown): Worker {
  const here = import.meta.url;
  const ts = here.endsWith('.ts');
  const file = new URL(ts ? './pool-worker.ts' : './pool-worker.js', here).href;
  const code = ts
    ? `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then(({ register }) => { register(); return import(${JSON.stringify(file)}); })`
    : `import(${JSON.stringify(file)})`;
  return new Worker(code, { eval: true, workerData });
}

export class PooledRetriever implements Retriever {
  readonly name: string;
  private readonly pending = new Map<number, { resolve: (h: Hit[][]) => void; reject: (e: Error) => void; slot: Slot }>();
  private nextId = 0;
  private closed = false;

  private constructor(
    private readonly slots: Slot[],
    inner: string,
  ) {
    this.name = `${inner} ×${slots.length} threads`;
    for (const slot of slots) {
      slot.worker.on('message', (m: WorkerReply) => this.onReply(m));
      slot.worker.on('error', (e) => this.failAll(slot, e));
      slot.worker.on('exit', (code) => {
        if (!this.closed) this.failAll(slot, new Error(`retrieval worker exited with code ${code}`));
      });
    }
  }

  static async open(location: string, workers: number, opts: PoolOpenOptions = {}): Promise<PooledRetriever> {
    if (!Number.isInteger(workers) || workers < 1) throw new RagtrailError(`retrieval workers must be a positive integer, got ${workers}`);
    const data = { location, opts: { ...opts, maxPostingsInMemory: opts.maxPostingsInMemory ?? Math.floor(DEFAULT_MAX_POSTINGS_IN_MEMORY / workers) } };
    const started = Array.from({ length: workers }, () => spawn(data));
    try {
      const names = await Promise.all(
        started.map(
          (w) =>
            new Promise<string>((resolve, reject) => {
              w.once('message', (m: WorkerReply) => ('ready' in m ? resolve(m.name) : reject(new RagtrailError('failed' in m ? m.failed : 'a retrieval worker did not start'))));
              w.once('error', reject);
            }),
        ),
      );
      return new PooledRetriever(started.map((worker) => ({ worker, busy: 0 })), names[0]!);
    } catch (e) {
      await Promise.all(started.map((w) => w.terminate()));
      throw e;
    }
  }

  get workers(): number {
    return this.slots.length;
  }

  private onReply(m: WorkerReply): void {
    if (!('id' in m)) return;
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    p.slot.busy--;
    if ('error' in m) p.reject(new Error(m.error));
    else p.resolve(m.hits);
  }

  private failAll(slot: Slot, e: Error): void {
    for (const [id, p] of this.pending) {
      if (p.slot !== slot) continue;
      this.pending.delete(id);
      p.reject(e);
    }
  }

  private run(queries: string[], k: number): Promise<Hit[][]> {
    if (this.closed) return Promise.reject(new RagtrailError('the retrieval pool is closed'));
    let slot = this.slots[0]!;
    for (const s of this.slots) if (s.busy < slot.busy) slot = s;
    slot.busy++;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, slot });
      slot.worker.postMessage({ id, queries, k } satisfies WorkerRequest);
    });
  }

  async search(query: string, k: number): Promise<Hit[]> {
    return (await this.run([query], k))[0]!;
  }

  async searchBatch(queries: readonly string[], k: number): Promise<Hit[][]> {
    if (queries.length === 0) return [];
    // A small batch is still split over every thread, so that one client's request uses every core.
    const slice = Math.min(SLICE, Math.ceil(queries.length / this.slots.length));
    const slices: Promise<Hit[][]>[] = [];
    for (let i = 0; i < queries.length; i += slice) slices.push(this.run(queries.slice(i, i + slice), k));
    return (await Promise.all(slices)).flat();
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}
