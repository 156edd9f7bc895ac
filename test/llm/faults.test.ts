/**
 * Fault injection: the retry policy of core/http.ts and the OpenAI-compatible backend against a
 * loopback fake server that answers 429 / 500 / resets / bad bodies / choice-less replies / outages,
 * then whole runs at a 50% seeded fault rate whose trajectories must equal a fault-free run's.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fetchJson, HttpError, type RetryWait, retryEvents } from '../../src/core/http.js';
import { Progress } from '../../src/core/progress.js';
import { generateWorld, writeWorld } from '../../src/corpus/world/index.js';
import { loadDataset } from '../../src/corpus/dataset.js';
import { buildSystem } from '../../src/eval/systems.js';
import { runQuestions } from '../../src/eval/run.js';
import { readTrajectories } from '../../src/eval/trajectories.js';
import { OpenAICompatibleLLM } from '../../src/llm/openai.js';
import { buildIndex, openRetriever } from '../../src/retrieval/index-dir.js';
import { comparable, searchR1Reply, startFakeOpenAI } from '../fixtures/fake-openai.js';
import { collectAll, tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);
const chat = (text: string) => ({ messages: [{ role: 'user' as const, content: text }], temperature: 0 });

describe('retry policy measured in time (fake clock)', () => {
  let server: Server;
  let base = '';
  let calls = 0;
  before(async () => {
    server = createServer((req, res) => {
      calls++;
      if (req.url === '/down') res.writeHead(503).end('unavailable');
      else if (req.url === '/key') res.writeHead(401).end('{"error":"invalid api key"}');
      else if (req.url === '/model') res.writeHead(404).end('{"error":"model \\"qwen\\" not found"}');
      else if (req.url === '/hour' && calls === 1) res.writeHead(429, { 'retry-after': '3600' }).end('later');
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  /** A clock that moves only when the client sleeps. */
  const fakeTime = () => {
    const clock = { t: 0, sleeps: [] as number[] };
    return { clock, now: () => clock.t, sleep: async (ms: number) => void (clock.sleeps.push(ms), (clock.t += ms)) };
  };

  it('keeps retrying a 503 for --retry-for (10 minutes by default), with capped exponential backoff', async () => {
    const { clock, now, sleep } = fakeTime();
    calls = 0;
    // random() = 1 takes the top of each jitter window: 500·2^k ms, capped at 30 s.
    await assert.rejects(fetchJson(`${base}/down`, { now, sleep, random: () => 1 }), (e: Error) => {
      assert.ok(e instanceof HttpError && e.status === 503);
      assert.match(e.message, /HTTP 503 .* \(gave up after 25 attempts over 9\.5 min\)/);
      assert.match(e.message, /--retry-for sets how long to keep trying/);
      return true;
    });
    // 500+1000+…+16000 = 31,500 ms, then 30 s steps while the total stays within 600 s: 18 of them.
    assert.deepEqual(clock.sleeps, [500, 1000, 2000, 4000, 8000, 16000, ...Array(18).fill(30_000)]);
    assert.equal(clock.t, 571_500);
    assert.equal(calls, 25);
  });

  it('a shorter --retry-for gives up sooner; 0 never retries', async () => {
    const a = fakeTime();
    await assert.rejects(fetchJson(`${base}/down`, { ...a, random: () => 1, retryForMs: 5_000 }), /gave up after 4 attempts over 4 s/);
    assert.deepEqual(a.clock.sleeps, [500, 1000, 2000]);
    const b = fakeTime();
    await assert.rejects(fetchJson(`${base}/down`, { ...b, retryForMs: 0 }), /gave up after 1 attempt over 0 ms/);
    assert.deepEqual(b.clock.sleeps, []);
  });

  it('obeys Retry-After only up to its cap (60 s by default), not an hour', async () => {
    const { clock, now, sleep } = fakeTime();
    calls = 0;
    assert.deepEqual(await fetchJson(`${base}/hour`, { now, sleep }), { ok: true });
    assert.deepEqual(clock.sleeps, [60_000]);
  });

  it('stops at once on 401 and 404, saying what to check', async () => {
    const { now, sleep } = fakeTime();
    calls = 0;
    await assert.rejects(fetchJson(`${base}/key`, { now, sleep }), /HTTP 401 .*invalid api key.* \(check the API key \(--api-key or \$OPENAI_API_KEY\)/);
    await assert.rejects(fetchJson(`${base}/model`, { now, sleep }), /HTTP 404 .*model \\"qwen\\" not found.* \(check the base URL and the model name/);
    assert.equal(calls, 2);
  });
});

describe('the OpenAI-compatible backend against injected faults', () => {
  const fast = { baseDelayMs: 1, maxDelayMs: 5, timeoutMs: 500 };

  it('retries a 200 that is not JSON and one without choices, a reset and a 500, then answers', async () => {
    const fake = await startFakeOpenAI(() => 'fine', { failures: ['bad-body', 'no-choices', 'reset', 500] });
    try {
      const waits: RetryWait[] = [];
      const onWait = (w: RetryWait) => waits.push(w);
      retryEvents.on('wait', onWait);
      const res = await new OpenAICompatibleLLM(fake.url, 'm', fast).generate(chat('q')).finally(() => retryEvents.off('wait', onWait));
      assert.equal(res.choices[0]!.text, 'fine');
      assert.equal(fake.requests.length, 5);
      assert.deepEqual(waits.map((w) => w.reason.replace(/:.*/, '')), ['the reply is not JSON', 'the reply has no "choices"', 'ECONNRESET', 'HTTP 500']);
      assert.ok(waits.every((w) => w.serverKind === 'LLM server'));
    } finally {
      await fake.close();
    }
  });

  it('waits out a 1.5 s outage (connections refused) and says so on the progress line', async () => {
    const fake = await startFakeOpenAI(() => 'back');
    try {
      const lines: string[] = [];
      const stream = { isTTY: false, write: (s: string) => lines.push(s) } as unknown as NodeJS.WriteStream;
      const progress = new Progress('run', { unit: 'questions', total: 1, stream });
      await fake.outage(1500);
      const t0 = performance.now();
      const res = await new OpenAICompatibleLLM(fake.url, 'm', { baseDelayMs: 50, maxDelayMs: 200 }).generate(chat('q'));
      const ms = performance.now() - t0;
      progress.tick();
      progress.finish();
      assert.equal(res.choices[0]!.text, 'back');
      assert.ok(ms >= 1400, `answered after ${ms} ms`);
      assert.match(lines[0]!, /^run: 0\/1 questions .* — waiting for the LLM server \(ECONNREFUSED from 127\.0\.0\.1:\d+, \d+ ms so far, attempt 2 in \d+ ms\)\n$/);
      assert.ok(!lines.at(-1)!.includes('waiting'), 'the final line no longer waits');
    } finally {
      await fake.close();
    }
  });
});

describe('whole runs at a 50% fault rate equal a fault-free run', () => {
  let index = '';
  let questionsPath = '';
  before(async () => {
    await writeWorld(join(tmp.dir, 'world'), generateWorld({ seed: 5, entities: 600, questions: 40 }));
    index = join(tmp.dir, 'index');
    questionsPath = join(tmp.dir, 'world', 'questions.jsonl');
    await buildIndex(join(tmp.dir, 'world', 'corpus.jsonl'), index, { quiet: true });
  });

  
  const runWith = async (name: string, faults?: { rate: number; seed: number }, outageMs = 0) => {
    const fake = await startFakeOpenAI(searchR1Reply, { faults, recordRequests: false });
    try {
      const retriever = await openRetriever(index);
      const questions = (await collectAll(loadDataset(questionsPath))).slice(0, 30);
      const built = await buildSystem({ agent: 'search-r1', llm: `openai:${fake.url}#tiny`, tracePrompts: false }, retriever, { baseDelayMs: 2, maxDelayMs: 20, timeoutMs: 2000, concurrency: 4 });
      // The run starts during an outage of the server, and must wait it out.
      if (outageMs) await fake.outage(outageMs);
      const out = join(tmp.dir, name);
      const t0 = performance.now();
      await runQuestions({ outDir: out, env: built.env, policy: built.policy, questions, concurrency: 4, temperature: 0, config: { name }, quiet: true });
      const seconds = (performance.now() - t0) / 1000;
      await built.llm?.close();
      return { trajectories: (await readTrajectories(out)).map(comparable).sort((a, b) => a.id.localeCompare(b.id)), injected: fake.injected, served: fake.served, seconds };
    } finally {
      await fake.close();
    }
  };

  it('finishes every question through faults and an outage, with the same trajectories', async () => {
    const clean = await runWith('clean');
    const faulty = await runWith('faulty', { rate: 0.5, seed: 1 }, 800);
    assert.equal(clean.trajectories.length, 30);
    assert.ok(new Set(clean.trajectories.map((t) => t.prediction)).size > 5, 'answers depend on the question');
    assert.ok(faulty.seconds >= 0.8, `the run waited out the outage (${faulty.seconds} s)`);
    const injected = Object.values(faulty.injected).reduce((a, b) => a + b, 0);
    assert.ok(injected >= 30, `only ${injected} faults injected`);
    assert.equal(faulty.served, clean.served);
    assert.deepEqual(faulty.trajectories, clean.trajectories);
  });
});

describe('errors that retrying cannot mend', () => {
  it('a header Node refuses (a key with a newline) fails at once instead of being retried for 10 minutes', async () => {
    const fake = await startFakeOpenAI(() => 'x');
    try {
      const llm = new OpenAICompatibleLLM(fake.url, 'm', { apiKey: 'sk-abc\n' });
      await assert.rejects(llm.generate(chat('q')), /request to .*\/chat\/completions failed: Invalid character in header content \["authorization"\]/);
      assert.equal(fake.requests.length, 0);
    } finally {
      await fake.close();
    }
  });
});
