/**
 * serve-retriever --processes N (core/cluster.ts) as users run it: the same answers as one process
 * over many connections (each may land on either process), the token, the limits and /health kept,
 * and a graceful stop that still answers the request in flight.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateWorld, writeWorld } from '../../src/corpus/world/index.js';
import { buildIndex } from '../../src/retrieval/index-dir.js';
import { callOnNewConnection, startServerCli, tempDir } from '../helpers.js';

const call = callOnNewConnection;

describe('serve-retriever on several processes', () => {
  const tmp = tempDir();
  let index: string;
  before(async () => {
    await writeWorld(join(tmp.dir, 'world'), generateWorld({ seed: 5, entities: 300, questions: 12 }));
    index = join(tmp.dir, 'index');
    await buildIndex(join(tmp.dir, 'world', 'corpus.jsonl'), index, { quiet: true });
  });
  after(() => tmp.cleanup());

  it('answers every request exactly as one process does, keeping the token, limits and /health', async () => {
    const args = ['serve-retriever', '--index', index, '--token', 'sesame', '--max-queries', '20'];
    const one = await startServerCli([...args, '--processes', '1', '--workers', '0']);
    const many = await startServerCli([...args, '--processes', '2']);
    try {
      const auth = { authorization: 'Bearer sesame' };
      for (let i = 0; i < 12; i++) {
        const body = { queries: Array.from({ length: 1 + (i % 5) }, (_, j) => `entity ${i * 7 + j} born city`), topk: 1 + (i % 4), return_scores: i % 2 === 0 };
        const [a, b] = await Promise.all([call(`${one.base}/retrieve`, body, auth), call(`${many.base}/retrieve`, body, auth)]);
        assert.equal(a.status, 200, a.text);
        assert.equal(b.text, a.text);
      }
      assert.equal((await call(`${many.base}/retrieve`, { queries: ['x'] })).status, 401);
      const over = await call(`${many.base}/retrieve`, { queries: Array.from({ length: 21 }, () => 'x') }, auth);
      assert.equal(over.status, 413);
      assert.match(over.text, /--max-queries/);
      const health = JSON.parse((await call(`${many.base}/health`)).text);
      assert.equal(health.status, 'ok');
      assert.equal(health.passages, JSON.parse((await call(`${one.base}/health`)).text).passages);
    } finally {
      one.child.kill('SIGTERM');
      many.child.kill('SIGTERM');
      await Promise.all([one.exited, many.exited]);
    }
  });

  it('SIGTERM to the supervisor: the request in flight is answered, then every process exits', async () => {
    const { child, base, exited } = await startServerCli(['serve-retriever', '--index', index, '--processes', '2']);
    const queries = Array.from({ length: 3000 }, (_, i) => `entity ${i} born city`);
    const inFlight = call(`${base}/retrieve`, { queries, topk: 5 });
    await new Promise((r) => setTimeout(r, 100));
    const t0 = performance.now();
    child.kill('SIGTERM');
    const reply = await inFlight;
    assert.equal(reply.status, 200);
    assert.equal((JSON.parse(reply.text) as { result: unknown[] }).result.length, 3000);
    const { code, at } = await exited;
    assert.equal(code, 0);
    assert.ok(at - t0 < 5000, `exited after ${(at - t0).toFixed(0)} ms`);
    await assert.rejects(call(`${base}/health`)); // no process left listening
  });
});
