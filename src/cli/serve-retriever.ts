import type { Command } from 'commander';
import { availableParallelism } from 'node:os';
import { copyIndex, drained, isServerCopy, reportReady, shouldSupervise, stopOnSupervisor, superviseCopies } from '../core/cluster.js';
import { gracefulStopper, listen, stopOnSignals } from '../core/http-server.js';
import { DEFAULT_MAX_POSTINGS_IN_MEMORY } from '../retrieval/bm25/index.js';
import { openRetriever, readManifest, registeredRetrieverKind, type SearchMethod } from '../retrieval/index-dir.js';
import { defaultWorkers, PooledRetriever } from '../retrieval/pool.js';
import { createRetrievalServer, DEFAULT_RETRIEVAL_LIMITS } from '../retrieval/server.js';
import { choiceArg, intArg, numberArg } from './options.js';

interface ServeOpts {
  index: string;
  port: number;
  host: string;
  token?: string;
  retrieval?: SearchMethod;
  topk: number;
  apiKey?: string;
  workers?: number;
  processes: number;
  maxQueries: number;
  maxTopk: number;
  maxResults: number;
  maxQueryChars: number;
  maxResponseMb: number;
  maxBodyMb: number;
  quiet: boolean;
}

const L = DEFAULT_RETRIEVAL_LIMITS;

export function registerServeRetriever(program: Command): void {
  program
    .command('serve-retriever')
    .description("serve an index over HTTP with Search-R1's protocol: POST /retrieve {queries, topk, return_scores}; GET /health")
    .requiredOption('--index <dir>', 'index folder')
    .option('--port <n>', 'port (0 picks a free one)', intArg(0, 65535), 8000)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--token <token>', 'require this token on every route but /health, as "Authorization: Bearer <token>", ?token=<token> or a /t/<token>/ path prefix (default: $RAGTRAIL_RETRIEVER_TOKEN if set)', process.env['RAGTRAIL_RETRIEVER_TOKEN'])
    .option('--retrieval <m>', 'bm25, dense or hybrid', choiceArg(['bm25', 'dense', 'hybrid'] as const))
    .option('--topk <n>', 'top-k when a request gives none', intArg(1, 1000), 3)
    .option('--api-key <key>', 'API key for an openai: embedder (default: $OPENAI_API_KEY)')
    .option('--processes <n>', 'server processes sharing the port, each with the index open (default: one per core); each parses, searches and encodes its own requests', intArg(1, 1024), availableParallelism())
    .option('--workers <n>', `search threads per process over the one index (0: search on the process's main thread; default: 0 with several processes, else ${defaultWorkers()}, one per core)`, intArg(0, 1024))
    .option('--max-queries <n>', 'queries in one request', intArg(1), L.maxQueries)
    .option('--max-topk <n>', 'largest topk a request may ask for', intArg(1), L.maxTopk)
    .option('--max-results <n>', 'queries × topk in one request', intArg(1), L.maxResults)
    .option('--max-query-chars <n>', 'characters in one query', intArg(1), L.maxQueryChars)
    .option('--max-response-mb <n>', 'size of one reply in MiB', numberArg(0.001, 4096), L.maxResponseBytes / 2 ** 20)
    .option('--max-body-mb <n>', 'size of one request body in MiB', numberArg(0.001, 1024), L.maxBodyBytes / 2 ** 20)
    .option('--quiet', 'do not log requests', false)
    .action(async (opts: ServeOpts) => {
      const log = (m: string) => console.error(m);
      // Several processes: this one only supervises the copies that serve (core/cluster.ts).
      if (shouldSupervise(opts.processes)) {
        const ready = await superviseCopies(opts.processes, log);
        for (const line of ready.banner) console.log(line);
        return;
      }
      const { count } = copyIndex();
      // Processes already fill the cores; threads on top would only add a hop per request.
      const workers = opts.workers ?? (count > 1 ? 0 : defaultWorkers());
      // The heap budget for BM25 postings is the whole server's: shared among its processes.
      const maxPostingsInMemory = Math.floor(DEFAULT_MAX_POSTINGS_IN_MEMORY / count);
      // A registered retriever kind (a plugin) has no index folder, and lives only in this thread.
      const custom = registeredRetrieverKind(opts.index) !== undefined;
      const manifest = custom ? undefined : readManifest(opts.index);
      const retriever = workers > 0 && !custom
        ? await PooledRetriever.open(opts.index, workers, { method: opts.retrieval, apiKey: opts.apiKey, maxPostingsInMemory: Math.floor(maxPostingsInMemory / workers) })
        : await openRetriever(opts.index, { method: opts.retrieval, embedderOptions: { apiKey: opts.apiKey }, bm25: { maxPostingsInMemory } });
      const server = createRetrievalServer(retriever, {
        token: opts.token,
        defaultTopk: opts.topk,
        passages: manifest?.passages,
        maxQueries: opts.maxQueries,
        maxTopk: opts.maxTopk,
        maxResults: opts.maxResults,
        maxQueryChars: opts.maxQueryChars,
        maxResponseBytes: Math.round(opts.maxResponseMb * 2 ** 20),
        maxBodyBytes: Math.round(opts.maxBodyMb * 2 ** 20),
        onRequest: opts.quiet ? undefined : ({ status, queries, ms }) => console.error(`${new Date().toISOString()} ${status} ${queries} queries ${ms.toFixed(1)} ms`),
      });
      // The search threads would keep the process alive after a failed listen (a port in use).
      const port = await listen(server, opts.port, opts.host).catch(async (e: unknown) => {
        await retriever.close?.();
        throw e;
      });
      const banner = `serving ${retriever.name} over ${manifest ? `${manifest.passages} passages` : opts.index} at http://${opts.host}:${port}/retrieve${count > 1 ? ` on ${count} processes` : ''}${opts.token ? ' (token required)' : ''}`;
      if (isServerCopy()) {
        stopOnSupervisor(gracefulStopper(server, { onClosed: drained }));
        reportReady({ port, banner: [banner] });
      } else {
        console.log(banner);
        stopOnSignals(server, { log });
      }
    });
}
