/** The Search-R1 /retrieve protocol over a real loopback socket: server, client, and malformed requests. */
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeCorpus } from '../../src/corpus/corpus.js';
import { OpenAIEmbedder } from '../../src/retrieval/embedders/openai.js';
import { HttpRetriever } from '../../src/retrieval/client.js';
import { buildIndex, openRetriever } from '../../src/retrieval/index-dir.js';
import { createRetrievalServer } from '../../src/retrieval/server.js';
import type { Retriever } from '../../src/retrieval/types.js';
import { tempDir } from '../helpers.js';

const tmp = tempDir();
const listen = async (s: Server) => {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
};

describe('retrieval server and client', () => {
  let local: Retriever;
  let server: Server;
  let guarded: Server;
  let url = '';
  let guardedUrl = '';
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${url}${path}`, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });

  before(async () => {
    const corpus = join(tmp.dir, 'c.jsonl');
    await writeCorpus(corpus, Array.from({ length: 50 }, (_, i) => ({ id: `d${i}`, title: `Title ${i}`, text: `Passage number ${i} about topic${i % 5}.` })));
    await buildIndex(corpus, join(tmp.dir, 'idx'), { quiet: true });
    local = await openRetriever(join(tmp.dir, 'idx'));
    server = createRetrievalServer(local, { defaultTopk: 3, maxTopk: 20, passages: 50 });
    guarded = createRetrievalServer(local, { token: 's3cret' });
    url = await listen(server);
    guardedUrl = await listen(guarded);
  });
  after(() => {
    server.close();
    guarded.close();
    tmp.cleanup();
  });

  it('answers in the Search-R1 shape, with and without scores', async () => {
    const withScores = (await (await post('/retrieve', JSON.stringify({ queries: ['number 7', 'topic3'], topk: 2, return_scores: true }))).json()) as { result: { document: Record<string, string>; score: number }[][] };
    assert.equal(withScores.result.length, 2);
    const first = withScores.result[0]![0]!;
    assert.deepEqual(Object.keys(first), ['document', 'score']);
    assert.equal(first.document['id'], 'd7');
    assert.equal(first.document['contents'], '"Title 7"\nPassage number 7 about topic2.');
    assert.equal(typeof first.score, 'number');
    const plain = (await (await post('/retrieve', JSON.stringify({ queries: ['number 7'] }))).json()) as { result: Record<string, string>[][] };
    assert.equal(plain.result[0]!.length, 3); // the server's default top-k
    assert.equal(plain.result[0]![0]!['id'], 'd7');
  });

  it('the client returns what the local retriever returns', async () => {
    const client = new HttpRetriever(url);
    const queries = ['number 12', 'topic4 passage', 'Title 33'];
    assert.deepEqual(await client.searchBatch(queries, 5), await local.searchBatch(queries, 5));
    assert.deepEqual(await new HttpRetriever(`${url}/retrieve`).search('number 12', 1), (await local.search('number 12', 1)));
  });

  it('serves concurrent requests', async () => {
    const client = new HttpRetriever(url);
    const qs = Array.from({ length: 40 }, (_, i) => `number ${i}`);
    const results = await Promise.all(qs.map((q) => client.search(q, 1)));
    assert.deepEqual(results.map((r) => r[0]?.passageId), qs.map((_, i) => `d${i}`));
  });

  it('rejects malformed requests with 4xx and a message', async () => {
    const cases: [string, string, number, RegExp][] = [
      ['/retrieve', '{not json', 400, /not valid JSON/],
      ['/retrieve', '[1,2]', 400, /must be a JSON object/],
      ['/retrieve', '{"queries": "one"}', 400, /"queries" must be a list of strings/],
      ['/retrieve', '{"queries": [1]}', 400, /"queries" must be a list of strings/],
      ['/retrieve', '{"queries": ["a"], "topk": -1}', 400, /"topk" must be an integer/],
      ['/retrieve', '{"queries": ["a"], "topk": 500}', 400, /from 1 to 20/],
      ['/retrieve', '{"queries": ["a"], "return_scores": "yes"}', 400, /"return_scores" must be true or false/],
      ['/search', '{}', 404, /no route \/search/],
    ];
    for (const [path, body, status, message] of cases) {
      const res = await post(path, body);
      assert.equal(res.status, status, body);
      assert.match(((await res.json()) as { error: string }).error, message);
    }
    const get = await fetch(`${url}/retrieve`);
    assert.equal(get.status, 405);
    const health = (await (await fetch(`${url}/health`)).json()) as Record<string, unknown>;
    assert.deepEqual(health, { status: 'ok', retriever: local.name, passages: 50 });
  });

  it('requires the bearer token when one is set', async () => {
    const body = JSON.stringify({ queries: ['number 1'] });
    assert.equal((await fetch(`${guardedUrl}/retrieve`, { method: 'POST', body })).status, 401);
    assert.equal((await fetch(`${guardedUrl}/retrieve`, { method: 'POST', body, headers: { authorization: 'Bearer wrong' } })).status, 401);
    assert.equal((await fetch(`${guardedUrl}/retrieve`, { method: 'POST', body, headers: { authorization: 'Bearer s3cret' } })).status, 200);
    await assert.rejects(new HttpRetriever(guardedUrl).search('x', 1), /HTTP 401/);
    assert.equal((await new HttpRetriever(guardedUrl, { token: 's3cret' }).search('number 1', 1))[0]?.passageId, 'd1');
  });
});

describe('OpenAI-compatible embeddings against a fake server on 127.0.0.1', () => {
  it('batches, orders by index, normalises, sends the key, and retries a 429', async () => {
    const seen: { auth?: string; input: string[] }[] = [];
    let first = true;
    const fake = createServer(async (req, res) => {
      let raw = '';
      for await (const c of req) raw += c;
      const body = JSON.parse(raw) as { input: string[]; model: string };
      if (first) {
        first = false;
        res.writeHead(429, { 'retry-after': '0' }).end('{}');
        return;
      }
      seen.push({ auth: req.headers.authorization, input: body.input });
      // Reply out of order: clients must sort by index.
      const data = body.input.map((t, index) => ({ index, embedding: [t.length, 0, 0, 3] })).reverse();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', model: body.model, data }));
    });
    const base = await listen(fake);
    try {
      const e = new OpenAIEmbedder(`${base}/v1`, 'tiny-embed', { apiKey: 'k', batchSize: 2 });
      const vs = await e.embed(['abcd', 'a', 'abc']);
      assert.equal(e.dim, 4);
      assert.deepEqual(seen.map((s) => s.input), [['abcd', 'a'], ['abc']]);
      assert.equal(seen[0]!.auth, 'Bearer k');
      // [4,0,0,3] / 5 and [1,0,0,3] / √10
      assert.deepEqual([...vs[0]!].map((x) => +x.toFixed(6)), [0.8, 0, 0, 0.6]);
      assert.deepEqual([...vs[1]!].map((x) => +x.toFixed(6)), [+(1 / Math.sqrt(10)).toFixed(6), 0, 0, +(3 / Math.sqrt(10)).toFixed(6)]);
    } finally {
      fake.close();
    }
  });
});
