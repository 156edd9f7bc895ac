/** The embedding pipeline of `index build --dense --embedder openai:…` against a loopback fake server. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { writeCorpus } from '../../src/corpus/corpus.js';
import { createEmbedder } from '../../src/retrieval/embedders/embedder.js';
import { buildIndex } from '../../src/retrieval/index-dir.js';
import { cliRunner, ROOT, tempDir } from '../helpers.js';
import { startFakeEmbeddings } from './fake-embeddings.js';

const tmp = tempDir();
after(tmp.cleanup);
const corpus = join(tmp.dir, 'corpus.jsonl');
const N = 600;

describe('embedding pipeline', () => {
  before(async () => {
    await writeCorpus(corpus, Array.from({ length: N }, (_, i) => ({ id: `p${i}`, title: `Entity ${i}`, text: `Entity ${i} was founded in ${1800 + i} in Town${i % 17}.` })));
  });

  it('keeps `concurrency` batches in flight, retries a failed one, and writes vectors in passage order', async () => {
    // 150 ms per batch: long enough that all four requests overlap even on a loaded machine.
    const server = await startFakeEmbeddings({ dim: 32, delayMs: 150, slots: 4, failures: [0, 0, 503] });
    try {
      const embedder = await createEmbedder(`openai:${server.url}#fake`, { batchSize: 50, concurrency: 4 });
      const dir = join(tmp.dir, 'concurrent');
      const m = await buildIndex(corpus, dir, { embedder, dense: { batchSize: 50, concurrency: 4 }, quiet: true });
      assert.equal(m.dense?.n, N);
      assert.equal(server.stats.maxInFlight, 4);
      assert.equal(server.stats.texts, N); // the 503 was retried, nothing embedded twice
      // Same vectors as one request at a time.
      const one = await createEmbedder(`openai:${server.url}#fake`, { batchSize: 50, concurrency: 1 });
      const seq = join(tmp.dir, 'sequential');
      await buildIndex(corpus, seq, { embedder: one, dense: { batchSize: 50, concurrency: 1 }, quiet: true });
      assert.deepEqual(readFileSync(join(dir, 'dense', 'vectors.f32')), readFileSync(join(seq, 'dense', 'vectors.f32')));
    } finally {
      await server.close();
    }
  });

  it('resumes after kill -9 without embedding again what is stored', async () => {
    const server = await startFakeEmbeddings({ dim: 32, delayMs: 30, slots: 2 });
    const dir = join(tmp.dir, 'killed');
    const args = ['index', 'build', '--corpus', corpus, '--out', dir, '--dense', '--embedder', `openai:${server.url}#fake`, '--batch-size', '20', '--concurrency', '2', '--quantize', 'int8'];
    try {
      // First run: killed with SIGKILL once about a third of the passages are embedded.
      const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), join(ROOT, 'src', 'cli', 'main.ts'), ...args], { cwd: tmp.dir, stdio: 'ignore' });
      const partial = join(dir, 'dense', 'vectors.f32.partial');
      while (!(existsSync(partial) && statSync(partial).size >= (N / 3) * 32 * 4)) await new Promise((r) => setTimeout(r, 10));
      child.kill('SIGKILL');
      await new Promise((r) => child.on('exit', r));
      const stored = Math.floor(statSync(partial).size / (32 * 4));
      assert.ok(stored >= N / 3 && stored < N, `${stored}`);
      // The dead client's last requests are still being served: wait for them before counting.
      while (server.stats.inFlight > 0) await new Promise((r) => setTimeout(r, 10));
      const before = server.stats.texts;
      // Second run: embeds only the rest.
      const r = await cliRunner(tmp.dir).runAsync(...args);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(server.stats.texts - before, N - stored);
      const info = cliRunner(tmp.dir).run('index', 'info', dir);
      assert.match(info.stdout, /codes int8/);
      assert.match(info.stdout, /dense flat search: 32 bytes per vector, RAM needed 0\.00 GiB \(int8 codes in memory, float32 re-scoring from disk/);
      // The vectors equal an uninterrupted build's.
      const clean = join(tmp.dir, 'clean');
      await buildIndex(corpus, clean, { embedder: await createEmbedder(`openai:${server.url}#fake`, { batchSize: 20 }), dense: { batchSize: 20 }, quiet: true });
      assert.deepEqual(readFileSync(join(dir, 'dense', 'vectors.f32')), readFileSync(join(clean, 'dense', 'vectors.f32')));
    } finally {
      await server.close();
    }
  });
});
