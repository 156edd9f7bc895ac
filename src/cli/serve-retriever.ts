import type { Command } from 'commander';
import { openRetriever, readManifest, type SearchMethod } from '../retrieval/index-dir.js';
import { createRetrievalServer } from '../retrieval/server.js';
import { choiceArg, intArg } from './options.js';

interface ServeOpts {
  index: string;
  port: number;
  host: string;
  token?: string;
  retrieval?: SearchMethod;
  topk: number;
  apiKey?: string;
  quiet: boolean;
}

export function registerServeRetriever(program: Command): void {
  program
    .command('serve-retriever')
    .description("serve an index over HTTP with Search-R1's protocol: POST /retrieve {queries, topk, return_scores}; GET /health")
    .requiredOption('--index <dir>', 'index folder')
    .option('--port <n>', 'port (0 picks a free one)', intArg(0, 65535), 8000)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--token <token>', 'require Authorization: Bearer <token> (default: $RAGTRAIL_RETRIEVER_TOKEN if set)', process.env['RAGTRAIL_RETRIEVER_TOKEN'])
    .option('--retrieval <m>', 'bm25, dense or hybrid', choiceArg(['bm25', 'dense', 'hybrid'] as const))
    .option('--topk <n>', 'top-k when a request gives none', intArg(1, 1000), 3)
    .option('--api-key <key>', 'API key for an openai: embedder (default: $OPENAI_API_KEY)')
    .option('--quiet', 'do not log requests', false)
    .action(async (opts: ServeOpts) => {
      const manifest = readManifest(opts.index);
      const retriever = await openRetriever(opts.index, { method: opts.retrieval, embedderOptions: { apiKey: opts.apiKey } });
      const server = createRetrievalServer(retriever, {
        token: opts.token,
        defaultTopk: opts.topk,
        passages: manifest.passages,
        onRequest: opts.quiet ? undefined : ({ status, queries, ms }) => console.error(`${new Date().toISOString()} ${status} ${queries} queries ${ms.toFixed(1)} ms`),
      });
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(opts.port, opts.host, resolve);
      });
      const addr = server.address();
      const port = typeof addr === 'object' && addr ? addr.port : opts.port;
      console.log(`serving ${retriever.name} over ${manifest.passages} passages at http://${opts.host}:${port}/retrieve${opts.token ? ' (bearer token required)' : ''}`);
      const stop = () => server.close(() => process.exit(0));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
