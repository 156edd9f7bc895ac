/** Several servers for one model: least-loaded routing, failover when one dies mid-run, endpoint lists. */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EndpointPoolLLM, parseEndpointList } from '../../src/llm/endpoints.js';
import { createLLM } from '../../src/llm/create.js';
import { startFakeOpenAI } from '../fixtures/fake-openai.js';
import { cliRunner, tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);
const ask = (i: number) => ({ messages: [{ role: 'user' as const, content: `question ${i}` }], temperature: 0 });

describe('EndpointPoolLLM', () => {
  it('spreads sequential requests evenly and concurrent ones by load', async () => {
    const a = await startFakeOpenAI(() => 'a');
    const b = await startFakeOpenAI(() => 'b');
    try {
      const pool = new EndpointPoolLLM([a.url, b.url], 'tiny');
      for (let i = 0; i < 10; i++) await pool.generate(ask(i));
      assert.deepEqual([a.served, b.served], [5, 5]);
      // A slow server keeps requests in flight longer, so it is picked less.
      const slow = await startFakeOpenAI(() => 'slow', { delayMs: 80 });
      const fast = await startFakeOpenAI(() => 'fast', { delayMs: 5 });
      try {
        const p2 = new EndpointPoolLLM([slow.url, fast.url], 'tiny');
        let next = 0;
        await Promise.all(Array.from({ length: 4 }, async () => {
          while (next < 60) await p2.generate(ask(next++));
        }));
        assert.equal(slow.served + fast.served, 60);
        assert.ok(fast.served > 2 * slow.served, `fast ${fast.served}, slow ${slow.served}`);
      } finally {
        await slow.close();
        await fast.close();
      }
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('moves requests off a server that dies mid-run: none is lost', async () => {
    // The first server cuts the connection of its 5th request and stops listening for good.
    const dying = await startFakeOpenAI(() => 'x', { outageAt: { request: 5, ms: 600_000 }, delayMs: 5 });
    const healthy = await startFakeOpenAI(() => 'y', { delayMs: 5 });
    try {
      const pool = new EndpointPoolLLM([dying.url, healthy.url], 'tiny', { cooldownMs: 50, maxCooldownMs: 200 });
      let next = 0;
      const texts: string[] = [];
      await Promise.all(Array.from({ length: 4 }, async () => {
        while (next < 40) {
          const i = next++;
          texts[i] = (await pool.generate(ask(i))).choices[0]!.text;
        }
      }));
      assert.equal(texts.filter((t) => t === 'x' || t === 'y').length, 40);
      const [d, h] = pool.endpointUsage();
      assert.equal(d!.requests + h!.requests, 40);
      // A reply the dying server wrote as it cut its connections may never arrive: it counts as served there, failed here.
      assert.ok(d!.requests <= dying.served && dying.served <= d!.requests + 4, `${d!.requests} answered, ${dying.served} served`);
      assert.ok(d!.requests <= 4 && d!.failures >= 1, JSON.stringify(d));
      assert.equal(h!.failures, 0);
    } finally {
      await dying.close();
      await healthy.close();
    }
  });

  it('gives up with one clear error when every server stays down past the retry window', async () => {
    const a = await startFakeOpenAI(() => 'a');
    const b = await startFakeOpenAI(() => 'b');
    await a.close();
    await b.close();
    const pool = new EndpointPoolLLM([a.url, b.url], 'tiny', { cooldownMs: 20, retryForMs: 300 });
    await assert.rejects(pool.generate(ask(0)), /every LLM endpoint of openai:\[2 endpoints\]#tiny kept failing .*ECONNREFUSED/);
  });

  it('reads endpoint lists from the spec or from a file, and rejects what is not a URL', async () => {
    assert.deepEqual(parseEndpointList('http://a:1/v1, http://b:2/v1'), ['http://a:1/v1', 'http://b:2/v1']);
    const file = join(tmp.dir, 'endpoints.txt');
    writeFileSync(file, '# the serving fleet\nhttp://10.0.0.5:8000/v1\n\nhttp://10.0.0.6:8000/v1  # second node\n');
    assert.deepEqual(parseEndpointList(`@${file}`), ['http://10.0.0.5:8000/v1', 'http://10.0.0.6:8000/v1']);
    assert.throws(() => parseEndpointList('http://a:1/v1,ftp://b'), /"ftp:\/\/b" is not an http\(s\) URL/);
    const llm = await createLLM(`openai:@${file}#m`);
    assert.equal(llm.spec, 'openai:[2 endpoints]#m');
    assert.equal((await createLLM('openai:http://a:1/v1#m')).spec, 'openai:http://a:1/v1#m');
  });
});

describe('ragtrail run with two LLM servers, one dying mid-run', () => {
  const { run: ragtrail, runAsync } = cliRunner(tmp.dir);
  const world = join(tmp.dir, 'world');
  const index = join(tmp.dir, 'index');
  before(() => {
    assert.equal(ragtrail('world', '--seed', '5', '--entities', '400', '--out', world).status, 0);
    assert.equal(ragtrail('index', 'build', '--corpus', join(world, 'corpus.jsonl'), '--out', index).status, 0);
  });

  it('answers every question and reports each server', async () => {
    const answer = (r: { body: Record<string, unknown> }) => ((r.body['messages'] as unknown[]).length > 2 ? '<answer> 1900 </answer>' : '<search> first hop </search>');
    const dying = await startFakeOpenAI(answer, { outageAt: { request: 7, ms: 600_000 }, delayMs: 5 });
    const healthy = await startFakeOpenAI(answer, { delayMs: 5 });
    try {
      const out = join(tmp.dir, 'run');
      const r = await runAsync('run', '--agent', 'search-r1', '--llm', `openai:${dying.url},${healthy.url}#tiny`, '--index', index, '--dataset', join(world, 'questions.jsonl'), '--limit', '20', '--concurrency', '4', '--no-cache', '--out', out);
      assert.equal(r.status, 0, r.stderr);
      const ts = readFileSync(join(out, 'trajectories.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      assert.equal(ts.length, 20);
      assert.ok(ts.every((t) => t.prediction === '1900' && t.retrievalCount === 1 && t.formatFailures === 0));
      assert.match(r.stdout, new RegExp(`${dying.url}: \\d+ requests, .*, [1-9]\\d* failed attempts`));
      assert.match(r.stdout, new RegExp(`${healthy.url}: \\d+ requests, .*, 0 failed attempts`));
      const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
      const eps = summary.session.llm.endpoints as { requests: number }[];
      assert.equal(eps.length, 2);
      assert.equal(eps[0]!.requests + eps[1]!.requests, 40);
    } finally {
      await dying.close();
      await healthy.close();
    }
  });
});
