/** `ragtrail run` as a user sees a model-server outage: the run pauses, says so, and finishes. */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateWorld, writeWorld } from '../../src/corpus/world/index.js';
import { buildIndex } from '../../src/retrieval/index-dir.js';
import { searchR1Reply, startFakeOpenAI } from '../fixtures/fake-openai.js';
import { cliRunner, tempDir } from '../helpers.js';

const tmp = tempDir();
const { runAsync: ragtrail } = cliRunner(tmp.dir);
before(async () => {
  await writeWorld(join(tmp.dir, 'world'), generateWorld({ seed: 4, entities: 300, questions: 5 }));
  await buildIndex(join(tmp.dir, 'world', 'corpus.jsonl'), join(tmp.dir, 'index'), { quiet: true });
});
after(tmp.cleanup);

describe('an LLM server outage during ragtrail run', () => {
  it('pauses the run with "waiting for the LLM server" on the progress line, then finishes every question', async () => {
    // The first request cuts the connection and the port stops listening for 2 s.
    const fake = await startFakeOpenAI(searchR1Reply, { outageAt: { request: 1, ms: 2000 } });
    try {
      const r = await ragtrail('run', '--agent', 'search-r1', '--llm', `openai:${fake.url}#tiny`, '--index', join(tmp.dir, 'index'), '--dataset', join(tmp.dir, 'world', 'questions.jsonl'), '--limit', '3', '--no-cache', '--out', join(tmp.dir, 'run'));
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stderr, /^run: 0\/3 questions .* — waiting for the LLM server \((ECONNRESET|ECONNREFUSED) from 127\.0\.0\.1:\d+, .* so far, attempt \d+ in .*\)$/m);
      // A line once it got through, without the notice.
      assert.match(r.stderr, /^run: 0\/3 questions [^—]*elapsed$/m);
      assert.match(r.stdout, /3 questions run, 0 already done/);
    } finally {
      await fake.close();
    }
  });

  it('stops at once, with the fix, when the server does not know the model', async () => {
    const fake = await startFakeOpenAI(searchR1Reply, { failures: [{ status: 404, retryAfter: '0' }] });
    try {
      const r = await ragtrail('run', '--agent', 'search-r1', '--llm', `openai:${fake.url}#no-such-model`, '--index', join(tmp.dir, 'index'), '--dataset', join(tmp.dir, 'world', 'questions.jsonl'), '--limit', '1', '--no-cache', '--out', join(tmp.dir, 'run-404'), '--quiet');
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, /^ragtrail: HTTP 404 from .*\/chat\/completions: .* \(check the base URL and the model name the server knows/m);
      assert.equal(fake.requests.length, 1);
    } finally {
      await fake.close();
    }
  });
});
