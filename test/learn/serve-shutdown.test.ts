/**
 * Graceful stop of the two servers as users run them (child processes of the real CLI): SIGTERM with a
 * WebSocket client connected closes it with 1001 and exits within 5 s (the process used to stay up
 * until the client left); a request in flight when SIGTERM arrives is still answered.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { generateWorld, writeWorld } from '../../src/corpus/world/index.js';
import { buildIndex } from '../../src/retrieval/index-dir.js';
import { startServerCli as startServer, tempDir } from '../helpers.js';

describe('graceful shutdown on SIGTERM', () => {
  const tmp = tempDir();
  before(async () => {
    await writeWorld(join(tmp.dir, 'world'), generateWorld({ seed: 3, entities: 300, questions: 12 }));
    await buildIndex(join(tmp.dir, 'world', 'corpus.jsonl'), join(tmp.dir, 'index'), { quiet: true });
  });
  after(() => tmp.cleanup());

  it('serve-env: closes a connected WebSocket with 1001 and exits within 5 s', async () => {
    const { child, base, exited } = await startServer(['serve-env', '--index', join(tmp.dir, 'index'), '--dataset', join(tmp.dir, 'world', 'questions.jsonl'), '--workers', '1']);
    const ws = new WebSocket(`${base.replace('http', 'ws')}/ws`);
    const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
    await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
    ws.send(JSON.stringify({ type: 'reset', data: {} }));
    await new Promise((r) => ws.once('message', r));
    const t0 = performance.now();
    child.kill('SIGTERM');
    assert.equal(await closed, 1001);
    const { code, at } = await exited;
    assert.equal(code, 0);
    assert.ok(at - t0 < 5000, `exited after ${(at - t0).toFixed(0)} ms`);
  });

  it('serve-retriever: finishes the request in flight, then exits within 5 s', async () => {
    const { child, base, exited } = await startServer(['serve-retriever', '--index', join(tmp.dir, 'index'), '--workers', '0']);
    const queries = Array.from({ length: 3000 }, (_, i) => `entity ${i} born city`);
    const inFlight = fetch(`${base}/retrieve`, { method: 'POST', body: JSON.stringify({ queries, topk: 5 }) });
    await new Promise((r) => setTimeout(r, 100));
    const t0 = performance.now();
    child.kill('SIGTERM');
    const reply = await inFlight;
    assert.equal(reply.status, 200);
    assert.equal(((await reply.json()) as { result: unknown[] }).result.length, 3000);
    const { code, at } = await exited;
    assert.equal(code, 0);
    assert.ok(at - t0 < 5000, `exited after ${(at - t0).toFixed(0)} ms`);
  });
});
