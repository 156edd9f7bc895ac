/**
 * A fake OpenAI-compatible `/v1/embeddings` server on 127.0.0.1 for tests and `bench:dense`'s
 * embedding part: vectors are the offline hashed n-gram embedding of each input (so results are
 * real and checkable), each batch takes a fixed service time, and `slots` batches are served at
 * once (a GPU server's capacity; the rest queue). It counts what it served and how busy it was.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HashedNgramEmbedder } from '../../src/retrieval/embedders/hashed.js';

export interface FakeEmbeddings {
  url: string;
  stats: { requests: number; texts: number; inFlight: number; maxInFlight: number; busyMs: number; firstStart: number; lastEnd: number };
  /** Fraction of the time from the first request's start to the last one's end that the slots were serving. */
  busyFraction(): number;
  close(): Promise<void>;
}

export interface FakeEmbeddingsOptions {
  dim?: number;
  /** Service time of each batch. */
  delayMs?: number;
  slots?: number;
  /** Status codes answered to the first requests, in order (0: serve normally). */
  failures?: number[];
  /** Benchmarks: answer every batch with one cached body (the same vector for every input), so that the fake server's own CPU does not blur the client's. */
  cachedReply?: boolean;
}

export async function startFakeEmbeddings(opts: FakeEmbeddingsOptions = {}): Promise<FakeEmbeddings> {
  const embedder = new HashedNgramEmbedder(opts.dim ?? 32);
  const slots = opts.slots ?? 1;
  const failures = [...(opts.failures ?? [])];
  const stats = { requests: 0, texts: 0, inFlight: 0, maxInFlight: 0, busyMs: 0, firstStart: 0, lastEnd: 0 };
  let inService = 0;
  const cache = new Map<number, string>();
  const reply = (input: string[], model: string): string => {
    const make = (vector: (text: string) => number[]) => JSON.stringify({ object: 'list', data: input.map((text, index) => ({ object: 'embedding', index, embedding: vector(text) })), model, usage: { prompt_tokens: 0, total_tokens: 0 } });
    if (!opts.cachedReply) return make((text) => [...embedder.embedOne(text)]);
    if (!cache.has(input.length)) {
      const v = [...embedder.embedOne('a fixed passage')];
      cache.set(input.length, make(() => v));
    }
    return cache.get(input.length)!;
  };
  const queue: (() => void)[] = [];
  const server: Server = createServer(async (req, res) => {
    if (req.url === '/stats') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...stats, busyFraction: stats.busyMs / slots / Math.max(1e-9, stats.lastEnd - stats.firstStart) }));
      return;
    }
    stats.inFlight++;
    stats.maxInFlight = Math.max(stats.maxInFlight, stats.inFlight);
    try {
      let raw = '';
      for await (const c of req) raw += c;
      stats.requests++;
      const failure = failures.shift();
      if (failure) {
        res.writeHead(failure).end(JSON.stringify({ error: { message: `injected ${failure}` } }));
        return;
      }
      const body = JSON.parse(raw) as { input: string[]; model: string };
      if (inService >= slots) await new Promise<void>((resolve) => queue.push(resolve));
      inService++;
      const t0 = performance.now();
      if (!stats.firstStart) stats.firstStart = t0;
      const text = reply(body.input, body.model);
      const spent = performance.now() - t0;
      if (opts.delayMs && spent < opts.delayMs) await new Promise((resolve) => setTimeout(resolve, opts.delayMs! - spent));
      stats.lastEnd = performance.now();
      stats.busyMs += stats.lastEnd - t0;
      stats.texts += body.input.length;
      inService--;
      queue.shift()?.();
      res.writeHead(200, { 'content-type': 'application/json' }).end(text);
    } finally {
      stats.inFlight--;
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    stats,
    busyFraction: () => stats.busyMs / slots / Math.max(1e-9, stats.lastEnd - stats.firstStart),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
