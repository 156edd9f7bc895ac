import type { Command } from 'commander';
import { type ErrorRecord, errorRecord, InputError, RecordError, recordFailures } from '../core/errors.js';
import { readJsonlEach, writeFileAtomic, writeLine } from '../core/io.js';
import { Progress } from '../core/progress.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { openRetriever, readManifest, registeredRetrieverKind, type SearchMethod } from '../retrieval/index-dir.js';
import { defaultWorkers, PooledRetriever } from '../retrieval/pool.js';
import type { Retriever } from '../retrieval/types.js';
import { choiceArg, intArg } from './options.js';

interface SearchOpts {
  index: string;
  k: number;
  retrieval?: SearchMethod;
  queries?: string;
  out?: string;
  batch: number;
  token?: string;
  apiKey?: string;
  denseMode?: 'flat' | 'hnsw';
  rescore?: number;
  floatsInMemory?: boolean;
  ef?: number;
  threads?: number;
  workers: number;
}

/**
 * Whether `search --queries` spreads its batches over search threads: BM25 over a local index folder.
 * Dense search has its own threads (--threads), a server or an engine its own cores.
 */
function poolable(index: string, method: SearchMethod | undefined): boolean {
  if (registeredRetrieverKind(index) !== undefined || !existsSync(join(index, 'index.json'))) return false;
  return (method ?? (readManifest(index).bm25 ? 'bm25' : 'dense')) === 'bm25';
}

const METHODS = ['bm25', 'dense', 'hybrid'] as const;

export function registerSearch(program: Command): void {
  program
    .command('search')
    .description('search an index folder or a /retrieve server: one query (readable) or a batch (--queries Q.jsonl --out H.jsonl)')
    .argument('[query]', 'the query text')
    .requiredOption('--index <dir|url|engine>', 'index folder, http://host:port of a Search-R1-style retrieval server, or es:URL#INDEX / opensearch:URL#INDEX')
    .option('--k <n>', 'hits per query', intArg(1, 10_000), 5)
    .option('--retrieval <m>', `bm25, dense or hybrid (RRF); default bm25 when built, else dense`, choiceArg(METHODS))
    .option('--queries <file>', 'JSON Lines of {id, query} (a "question" field works too, so datasets can be passed as is)')
    .option('--out <file>', 'with --queries: JSON Lines of {id, hits: [{id, title, score}]}, in query order')
    .option('--batch <n>', 'queries per batch', intArg(1, 100_000), 64)
    .option('--token <token>', 'bearer token of a retrieval server')
    .option('--api-key <key>', 'API key for an openai: embedder (default: $OPENAI_API_KEY)')
    .option('--dense-mode <m>', 'dense search: flat (every code scored) or hnsw; default hnsw when the index has a graph', choiceArg(['flat', 'hnsw'] as const))
    .option('--rescore <x>', 'int8/binary codes: shortlist re-scored with float32, as a multiple of k (default 2 for int8, 40 for binary)', intArg(1, 10_000))
    .option('--floats-in-memory', 'int8/binary codes: hold the float32 rows that re-score the shortlist in memory (N × dim × 4 bytes) instead of reading them from disk per query')
    .option('--ef <n>', 'HNSW search width (default max(64, shortlist))', intArg(1, 100_000))
    .option('--threads <n>', 'threads for dense search (default: all cores)', intArg(0, 1024))
    .option('--workers <n>', `with --queries over a BM25 index folder: search threads, each with the index open (0: this thread; default ${defaultWorkers()}, one per core); the hits are the same`, intArg(0, 1024), defaultWorkers())
    .action(async (query: string | undefined, opts: SearchOpts) => {
      if ((query === undefined) === (opts.queries === undefined)) throw new InputError('give either a query or --queries FILE', 'e.g. ragtrail search --index DIR "who wrote X"');
      if (opts.queries && !opts.out) throw new InputError('--queries needs --out FILE for the hits');
      const pooled = opts.queries !== undefined && opts.workers > 0 && poolable(opts.index, opts.retrieval);
      const retriever: Retriever = pooled ? await PooledRetriever.open(opts.index, opts.workers, { method: 'bm25' }) : await openRetriever(opts.index, {
        method: opts.retrieval,
        token: opts.token,
        embedderOptions: { apiKey: opts.apiKey },
        denseMode: opts.denseMode,
        dense: { rescore: opts.rescore, floatsInMemory: opts.floatsInMemory, expansion: opts.ef, threads: opts.threads },
      });
      try {
        if (query !== undefined) {
          const hits = await retriever.search(query, opts.k);
          console.log(`${retriever.name}: ${hits.length} hits for ${JSON.stringify(query)}`);
          hits.forEach((h, i) => {
            console.log(`${String(i + 1).padStart(3)}. ${h.score.toFixed(4)}  ${h.title}  [${h.passageId}]`);
            const text = h.text.replace(/\s+/g, ' ');
            console.log(`     ${text.length > 220 ? text.slice(0, 217) + '...' : text}`);
          });
          return;
        }
        // A line that cannot be read is an {id, error} line of the output, in its place; the others are searched.
        const items: ({ id: string; query: string } | ErrorRecord)[] = [];
        for await (const r of readJsonlEach(opts.queries as string)) {
          if ('error' in r) {
            items.push(errorRecord(r.error));
            continue;
          }
          const rec = (r.value ?? {}) as Record<string, unknown>;
          const q = rec['query'] ?? rec['question'];
          if (typeof q !== 'string') {
            items.push(errorRecord(new RecordError(r.loc, 'query', 'is missing', 'lines must look like {"id": ..., "query": ...}'), r.value));
            continue;
          }
          const id = rec['id'];
          items.push({ id: typeof id === 'string' || typeof id === 'number' ? String(id) : String(items.length), query: q });
        }
        const errors = items.filter((i) => 'error' in i).length;
        const progress = new Progress('searching', { unit: 'queries', total: items.length - errors });
        const searchAt = (i: number) => {
          const queries = items.slice(i, i + opts.batch).filter((b): b is { id: string; query: string } => !('error' in b));
          const p = queries.length ? retriever.searchBatch(queries.map((b) => b.query), opts.k) : Promise.resolve([]);
          p.catch(() => {}); // awaited in its turn; a write failing first must not leave it unhandled
          return p;
        };
        await writeFileAtomic(opts.out as string, async (out) => {
          // The next batch is searched (on the search threads) while this one is written out.
          let ahead = items.length > 0 ? searchAt(0) : undefined;
          for (let i = 0; i < items.length; i += opts.batch) {
            const batch = items.slice(i, i + opts.batch);
            const results = await ahead!;
            ahead = i + opts.batch < items.length ? searchAt(i + opts.batch) : undefined;
            let next = 0;
            for (const b of batch) {
              if ('error' in b) {
                await writeLine(out, JSON.stringify(b));
                continue;
              }
              const hits = results[next++]!.map((h) => ({ id: h.passageId, title: h.title, score: h.score }));
              await writeLine(out, JSON.stringify({ id: b.id, hits }));
            }
            progress.tick(results.length);
          }
        });
        progress.finish();
        console.log(`${items.length - errors} queries → ${opts.out} (${retriever.name})${errors ? `, and ${errors} error record${errors === 1 ? '' : 's'}` : ''}`);
        const failed = recordFailures(errors, items.length, opts.out as string);
        if (failed) throw failed;
      } finally {
        await retriever.close?.();
      }
    });
}
