import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { writeCorpus } from '../../src/corpus/corpus.js';
import { DenseIndex } from '../../src/retrieval/dense/index.js';
import { createEmbedder, type Embedder } from '../../src/retrieval/embedders/embedder.js';
import { HashedNgramEmbedder } from '../../src/retrieval/embedders/hashed.js';
import { reciprocalRankFusion } from '../../src/retrieval/hybrid.js';
import { buildIndex, openRetriever } from '../../src/retrieval/index-dir.js';
import type { Hit } from '../../src/retrieval/types.js';
import { tempDir } from '../helpers.js';

const tmp = tempDir();
const usearchMissing = await import('usearch').then(() => false, () => true);
after(tmp.cleanup);
const hit = (id: string): Hit => ({ passageId: id, title: id, text: '', score: 0 });

describe('reciprocal rank fusion', () => {
  it('sums 1/(60 + rank) over the lists', () => {
    // A = [a, b, c], B = [b, c, d]
    // a: 1/61 = .016393   b: 1/62 + 1/61 = .032522   c: 1/63 + 1/62 = .032002   d: 1/63 = .015873
    const fused = reciprocalRankFusion([['a', 'b', 'c'].map(hit), ['b', 'c', 'd'].map(hit)]);
    assert.deepEqual(fused.map((h) => h.passageId), ['b', 'c', 'a', 'd']);
    assert.ok(Math.abs(fused[0]!.score - (1 / 62 + 1 / 61)) < 1e-15);
    assert.ok(Math.abs(fused[3]!.score - 1 / 63) < 1e-15);
  });
  it('keeps first appearance order on ties and honours k', () => {
    const fused = reciprocalRankFusion([['x'].map(hit), ['y'].map(hit)], 1);
    assert.deepEqual(fused.map((h) => [h.passageId, h.score]), [['x', 0.5], ['y', 0.5]]);
  });
});

describe('hashed n-gram embedder', () => {
  const e = new HashedNgramEmbedder(256);
  it('is deterministic, unit length, and puts similar texts closer', () => {
    const [a, b, c] = [e.embedOne('The director of the film was born in Paris'), e.embedOne('Which film director was born in Paris?'), e.embedOne('Quantum qubits interfere')];
    assert.deepEqual(a, e.embedOne('The director of the film was born in Paris'));
    const dot = (x: Float32Array, y: Float32Array) => x.reduce((s, v, i) => s + v * y[i]!, 0);
    assert.ok(Math.abs(dot(a, a) - 1) < 1e-6);
    assert.ok(dot(a, b) > 0.4 && dot(a, c) < 0.1, `${dot(a, b)} ${dot(a, c)}`);
  });
  it('parses specs and rejects bad ones with the fix', async () => {
    assert.equal((await createEmbedder('hash:64')).dim, 64);
    await assert.rejects(createEmbedder('hash:3'), /from 8 to 65536/);
    await assert.rejects(createEmbedder('bert'), /unknown embedder "bert".*hash:<dim>/);
    await assert.rejects(createEmbedder('openai:localhost'), /expected openai:<baseURL>#<model>/);
    await assert.rejects(createEmbedder('llama:/nonexistent/model.gguf'), /no such model file/);
  });
});

describe('index folder with BM25 and dense parts', () => {
  const passages = Array.from({ length: 300 }, (_, i) => ({ id: `p${i}`, title: `Entity ${i}`, text: `Entity ${i} was founded in ${1800 + i} in the city of Town${i % 17}. It makes product${i % 23}.` }));
  const corpus = join(tmp.dir, 'corpus.jsonl');

  it('builds, reopens and searches with each method; the docstore returns the passages', async () => {
    await writeCorpus(corpus, passages);
    const dir = join(tmp.dir, 'idx');
    const m = await buildIndex(corpus, dir, { bm25: true, embedder: await createEmbedder('hash:128'), quiet: true });
    assert.equal(m.passages, 300);
    assert.equal(m.dense?.dim, 128);
    for (const method of ['bm25', 'dense', 'hybrid'] as const) {
      const r = await openRetriever(dir, { method });
      const [top] = await r.search('Entity 42 founded 1842', 3);
      assert.equal(top?.passageId, 'p42', method);
      assert.deepEqual({ id: top?.passageId, title: top?.title, text: top?.text }, { id: 'p42', title: passages[42]!.title, text: passages[42]!.text });
      const batch = await r.searchBatch(['Entity 7 product7', 'Town3'], 4);
      assert.equal(batch.length, 2);
      assert.ok(batch.every((l) => l.length === 4));
    }
  });

  it('flat dense search is exact', async () => {
    const index = await DenseIndex.open(join(tmp.dir, 'idx', 'dense'), 'flat');
    const e = new HashedNgramEmbedder(128);
    const q = e.embedOne('city of Town5 product9');
    const all = passages.map((p, d) => ({ d, s: e.embedOne(`${p.title}\n${p.text}`).reduce((acc, v, j) => acc + v * q[j]!, 0) }));
    all.sort((a, b) => b.s - a.s || a.d - b.d);
    const got = await index.search(q, 5);
    assert.deepEqual(got.map((g) => g.doc), all.slice(0, 5).map((a) => a.d));
    got.forEach((g, i) => assert.ok(Math.abs(g.score - all[i]!.s) < 1e-5));
  });

  it('resumes an interrupted embedding without re-embedding finished passages', async () => {
    const dir = join(tmp.dir, 'resume');
    await buildIndex(corpus, dir, { bm25: true, quiet: true });
    const inner = new HashedNgramEmbedder(64);
    let calls = 0;
    let failAfter = 2;
    const flaky: Embedder = {
      spec: inner.spec,
      lexical: true,
      dim: 64,
      embed: async (texts, kind) => {
        if (failAfter-- <= 0) throw new Error('server went away');
        calls += texts.length;
        return inner.embed(texts);
      },
    };
    await assert.rejects(buildIndex(corpus, dir, { embedder: flaky, dense: { batchSize: 50 }, quiet: true }), /server went away/);
    assert.equal(statSync(join(dir, 'dense', 'vectors.f32.partial')).size, 100 * 64 * 4);
    failAfter = Infinity;
    calls = 0;
    const m = await buildIndex(corpus, dir, { embedder: flaky, dense: { batchSize: 50 }, quiet: true });
    assert.equal(calls, 200);
    assert.equal(m.dense?.n, 300);
    assert.ok(!existsSync(join(dir, 'dense', 'vectors.f32.partial')));
    // Same vectors as an uninterrupted build.
    const clean = join(tmp.dir, 'clean');
    await buildIndex(corpus, clean, { embedder: inner, dense: { batchSize: 50 }, quiet: true });
    assert.deepEqual(readFileSync(join(dir, 'dense', 'vectors.f32')), readFileSync(join(clean, 'dense', 'vectors.f32')));
  });

  it('HNSW (usearch) agrees with exact search on most hits', { skip: usearchMissing && 'the optional package usearch is not installed' }, async () => {
    const dir = join(tmp.dir, 'hnsw');
    await buildIndex(corpus, dir, { embedder: new HashedNgramEmbedder(64), dense: { hnsw: true }, quiet: true });
    const [hnsw, flat] = [await DenseIndex.open(join(dir, 'dense'), 'hnsw'), await DenseIndex.open(join(dir, 'dense'), 'flat')];
    assert.equal(hnsw.mode, 'hnsw');
    const e = new HashedNgramEmbedder(64);
    let agree = 0;
    for (let i = 0; i < 30; i++) {
      const q = e.embedOne(`Entity ${i * 7} Town${i % 17}`);
      const a = new Set((await flat.search(q, 5)).map((h) => h.doc));
      agree += (await hnsw.search(q, 5)).filter((h) => a.has(h.doc)).length;
    }
    assert.ok(agree / 150 > 0.9, `overlap ${agree / 150}`);
  });

  it('says what is wrong with a folder that is not an index', async () => {
    writeFileSync(join(tmp.dir, 'stray.txt'), 'x');
    await assert.rejects(openRetriever(tmp.dir), /not a ragtrail index \(no index\.json\)/);
    const bm25only = join(tmp.dir, 'bm25only');
    await buildIndex(corpus, bm25only, { bm25: true, quiet: true });
    await assert.rejects(openRetriever(bm25only, { method: 'dense' }), /has no dense index \(rebuild with --dense --embedder SPEC, or search with --retrieval bm25\)/);
    await assert.rejects(buildIndex(join(tmp.dir, 'other.jsonl'), bm25only, { quiet: true }), /already holds an index of/);
  });
});
