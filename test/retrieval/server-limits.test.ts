/**
 * serve-retriever under hostile and heavy requests (issue 21) and with the auth forms its upstream
 * clients can use (issue 19), over 127.0.0.1, on the HotpotQA sample's context paragraphs as a corpus;
 * and the worker-thread pool answering exactly what the in-process index answers.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeCorpus } from '../../src/corpus/corpus.js';
import { buildIndex, openRetriever } from '../../src/retrieval/index-dir.js';
import { PooledRetriever } from '../../src/retrieval/pool.js';
import { createRetrievalServer, searchSliced } from '../../src/retrieval/server.js';
import type { Retriever } from '../../src/retrieval/types.js';
import { data, tempDir } from '../helpers.js';

const tmp = tempDir();
const TOKEN = 's3cr3t';

describe('serve-retriever: bounded requests, open /health, URL tokens, worker threads', () => {
  let local: Retriever;
  let pool: PooledRetriever;
  let questions: string[];
  const servers: Server[] = [];
  const serve = async (retriever: Retriever, opts: Parameters<typeof createRetrievalServer>[1] = {}) => {
    const s = createRetrievalServer(retriever, opts);
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    servers.push(s);
    return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  };
  // Search-R1's `_batch_search` / retrieval_request.py: requests.post(url, json=payload).json()['result'].
  const retrieve = async (url: string, payload: unknown, headers: Record<string, string> = {}) => {
    const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(payload) });
    return { status: r.status, body: (await r.json()) as any };
  };

  before(async () => {
    const rows = JSON.parse(readFileSync(data('hotpotqa', 'distractor_dev_first53_official.json'), 'utf8')) as { question: string; context: [string, string[]][] }[];
    const seen = new Map<string, { id: string; title: string; text: string }>();
    for (const r of rows) for (const [title, sents] of r.context) if (!seen.has(title)) seen.set(title, { id: `p${seen.size}`, title, text: sents.join('') });
    await writeCorpus(join(tmp.dir, 'c.jsonl'), [...seen.values()]);
    await buildIndex(join(tmp.dir, 'c.jsonl'), join(tmp.dir, 'idx'), { quiet: true });
    local = await openRetriever(join(tmp.dir, 'idx'));
    pool = await PooledRetriever.open(join(tmp.dir, 'idx'), 2);
    questions = rows.map((r) => r.question);
  });
  after(async () => {
    for (const s of servers) {
      s.closeAllConnections();
      s.close();
    }
    await pool.close();
    tmp.cleanup();
  });

  it('the worker pool returns exactly what the in-process index returns, in query order', async () => {
    const qs = [...questions, ...questions.slice(0, 40)];
    assert.deepEqual(await pool.searchBatch(qs, 5), await local.searchBatch(qs, 5));
    assert.deepEqual(await searchSliced(local, qs, 5, 7), await local.searchBatch(qs, 5));
    const url = await serve(pool);
    const r = await retrieve(`${url}/retrieve`, { queries: questions.slice(0, 3), topk: 2, return_scores: true });
    const ref = await local.searchBatch(questions.slice(0, 3), 2);
    assert.deepEqual(r.body.result.map((l: any[]) => l.map((x) => x.document.id)), ref.map((l) => l.map((h) => h.passageId)));
  });

  it('refuses 4,096 queries × topk 1,000 with 413 naming the limit, at once (it used to exhaust the heap)', async () => {
    const url = await serve(local);
    const t0 = performance.now();
    const r = await retrieve(`${url}/retrieve`, { queries: Array.from({ length: 4096 }, (_, i) => questions[i % questions.length]), topk: 1000, return_scores: true });
    assert.equal(r.status, 413);
    assert.match(r.body.error, /4096 queries × topk 1000 = 4096000 results; the limit is 65536 .*--max-results/);
    assert.ok(performance.now() - t0 < 3000);
  });

  it('names each limit it enforces: queries per request, query length, reply size', async () => {
    const url = await serve(local, { maxQueries: 8, maxQueryChars: 50, maxResponseBytes: 4000 });
    const many = await retrieve(`${url}/retrieve`, { queries: questions.slice(0, 9), topk: 1 });
    assert.equal(many.status, 413);
    assert.match(many.body.error, /9 queries; the limit is 8 .*--max-queries/);
    const long = await retrieve(`${url}/retrieve`, { queries: ['short', 'x'.repeat(51)], topk: 1 });
    assert.equal(long.status, 413);
    assert.match(long.body.error, /query 1 has 51 characters; the limit is 50 .*--max-query-chars/);
    const big = await retrieve(`${url}/retrieve`, { queries: questions.slice(0, 8).map((q) => q.slice(0, 50)), topk: 10 });
    assert.equal(big.status, 413);
    assert.match(big.body.error, /--max-response-mb/);
    assert.equal((await retrieve(`${url}/retrieve`, { queries: [questions[0]!.slice(0, 50)], topk: 1 })).status, 200);
  });

  it('keeps answering /health while a heavy batch is being searched', async () => {
    const url = await serve(local);
    const queries = Array.from({ length: 4096 }, (_, i) => `${questions[i % questions.length]} ${i}`);
    let done = false;
    const heavy = retrieve(`${url}/retrieve`, { queries, topk: 10 }).then((r) => ((done = true), r));
    // Wait until the server is inside the batch (the body is read), then time a health probe.
    await new Promise((r) => setTimeout(r, 150));
    const t0 = performance.now();
    const h = await fetch(`${url}/health`);
    const healthMs = performance.now() - t0;
    assert.equal(h.status, 200);
    const r = await heavy;
    assert.equal(r.status, 200);
    assert.equal(r.body.result.length, 4096);
    assert.ok(!done || healthMs < 1000, `health took ${healthMs.toFixed(0)} ms`);
    assert.ok(healthMs < 1000, `health took ${healthMs.toFixed(0)} ms during the batch`);
  });

  it('leaves /health open with a token set, and takes the token as header (any case), ?token= or /t/<token>/', async () => {
    const url = await serve(local, { token: TOKEN });
    assert.equal((await fetch(`${url}/health`)).status, 200);
    const payload = { queries: [questions[0]], topk: 1, return_scores: true };
    assert.equal((await retrieve(`${url}/retrieve`, payload)).status, 401);
    assert.match((await retrieve(`${url}/retrieve`, payload)).body.error, /\?token=<token>/);
    assert.equal((await retrieve(`${url}/retrieve`, payload, { authorization: `bearer ${TOKEN}` })).status, 200);
    assert.equal((await retrieve(`${url}/retrieve`, payload, { authorization: `BEARER ${TOKEN}` })).status, 200);
    // Search-R1 is configured with a search_url only: the token rides in it.
    const viaQuery = await retrieve(`${url}/retrieve?token=${TOKEN}`, payload);
    assert.equal(viaQuery.status, 200);
    assert.ok(Array.isArray(viaQuery.body['result']), "Search-R1 reads ['result'] (it crashed with KeyError on the 401 before)");
    assert.equal((await retrieve(`${url}/t/${TOKEN}/retrieve`, payload)).status, 200);
    assert.equal((await retrieve(`${url}/t/wrong/retrieve`, payload)).status, 401);
    assert.equal((await retrieve(`${url}/retrieve?token=wrong`, payload)).status, 401);
  });
});
