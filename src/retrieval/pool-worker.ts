/** One thread of PooledRetriever (pool.ts): opens the index folder and answers search slices. */
import { parentPort, workerData } from 'node:worker_threads';
import { openRetriever } from './index-dir.js';
import type { PoolOpenOptions, WorkerReply, WorkerRequest } from './pool.js';

const { location, opts } = workerData as { location: string; opts: PoolOpenOptions };
const port = parentPort!;
const send = (m: WorkerReply) => port.postMessage(m);

try {
  const retriever = await openRetriever(location, {
    method: opts.method,
    denseMode: opts.denseMode,
    bm25: { maxPostingsInMemory: opts.maxPostingsInMemory },
    rrfK: opts.rrfK,
    rrfDepth: opts.rrfDepth,
    embedderOptions: { apiKey: opts.apiKey },
  });
  port.on('message', (req: WorkerRequest) => {
    retriever.searchBatch(req.queries, req.k).then(
      (hits) => send({ id: req.id, hits }),
      (e: unknown) => send({ id: req.id, error: e instanceof Error ? e.message : String(e) }),
    );
  });
  send({ ready: true, name: retriever.name });
} catch (e) {
  send({ failed: e instanceof Error ? e.message : String(e) });
}
