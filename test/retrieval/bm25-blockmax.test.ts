import assert from 'node:assert/strict';
import { copyFileSync, cpSync, readFileSync, readdirSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Analyzer } from '../../src/retrieval/analyzer.js';
import { boundAbove, Bm25Builder, SKIP_BLOCK } from '../../src/retrieval/bm25/build.js';
import { Bm25Index } from '../../src/retrieval/bm25/index.js';
import { InputError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';
import { ROOT, tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);

// Zipf-like text over 600 words: the first words have thousands of postings (hundreds of skip blocks),
// the tail a handful. Every 40th document repeats an earlier one, so that exact score ties occur.
const words = Array.from({ length: 600 }, (_, i) => `b${i.toString(36)}z`);
const rng = new Rng('block-max');
const weights = words.map((_, i) => 1 / (i + 1) ** 1.1);
const docs: string[] = [];
for (let d = 0; d < 4000; d++) {
  if (d % 40 === 39) docs.push(docs[rng.int(d)]!);
  else docs.push(Array.from({ length: rng.range(3, 90) }, () => words[rng.weighted(weights)]).join(' '));
}
const pick = (boostHead: boolean) => words[rng.weighted(boostHead ? weights.map((w, i) => (i < 8 ? w * 30 : w)) : weights)]!;
const queries: string[] = [
  ...Array.from({ length: 80 }, (_, i) => Array.from({ length: rng.range(1, 6) }, () => pick(i % 2 === 0)).join(' ')),
  // Long queries (many non-essential terms), with repeats.
  ...Array.from({ length: 15 }, () => Array.from({ length: rng.range(12, 40) }, () => pick(true)).join(' ')),
  // Repeated terms weigh the term by its count; unknown terms are ignored.
  `${words[0]} ${words[0]} ${words[0]} ${words[300]}`,
  `${words[5]} ${words[5]} nosuchword ${words[2]} ${words[2]} ${words[590]}`,
  `${words[1]} ${words[599]}`,
  ...docs.slice(0, 10).map((d) => d.split(' ').slice(0, 8).join(' ')),
];
const KS = [1, 3, 10, 100, 5000];

const dir = join(tmp.dir, 'zipf');
{
  const b = new Bm25Builder(dir, { runPostings: 20_000 });
  for (const d of docs) b.add(d);
  b.finish();
}

/** Every answer of `index` must equal scoring every document (`pruning: 'none'`), ids and scores bit for bit. */
function assertExact(index: Bm25Index, reference: Bm25Index, qs = queries): void {
  let ties = 0;
  for (const q of qs) {
    for (const k of KS) {
      const want = reference.searchDocs(q, k);
      assert.deepEqual(index.searchDocs(q, k), want, `${q} k=${k}`);
      for (let i = 1; i < want.length; i++) if (want[i]!.score === want[i - 1]!.score) ties++;
    }
  }
  assert.ok(ties > 0, 'the queries must produce tied scores');
}

describe('BM25 block-max pruning', () => {
  const exhaustive = Bm25Index.open(dir, { pruning: 'none' });

  it('stores, per skip block of every term, the block maximum of tf / (tf + norm), rounded up', () => {
    const an = new Analyzer();
    const analysed = docs.map((d) => an.analyze(d));
    const avgdl = analysed.reduce((s, t) => s + t.length, 0) / docs.length;
    const postings = new Map<string, { tf: number; len: number }[]>();
    analysed.forEach((terms) => {
      const tf = new Map<string, number>();
      for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + 1);
      for (const [t, n] of tf) (postings.get(t) ?? postings.set(t, []).get(t)!).push({ tf: n, len: terms.length });
    });
    const raw = readFileSync(join(dir, 'blockmax.bin'));
    const stored = new Float32Array(raw.buffer, raw.byteOffset, raw.length / 4);
    const index = Bm25Index.open(dir);
    // Expected file, term by term in term-id order.
    const byId: number[][] = [];
    for (const [term, list] of postings) {
      const blocks: number[] = [];
      for (let i = 0; i < list.length; i += SKIP_BLOCK) {
        const best = Math.max(...list.slice(i, i + SKIP_BLOCK).map(({ tf, len }) => tf / (tf + 0.9 * (1 - 0.4 + (0.4 * len) / avgdl))));
        blocks.push(boundAbove(best));
        assert.ok(boundAbove(best) >= best && boundAbove(best) <= best * (1 + 2 ** -18));
      }
      byId[index.termId(term)] = blocks;
    }
    assert.deepEqual([...stored], byId.flat());
    assert.ok(byId[index.termId(words[0]!)]!.length > 80, 'the first word spans many blocks');
  });

  it('a build from many sorted runs writes the same block maxima as a single run', () => {
    const one = join(tmp.dir, 'one-run');
    const b = new Bm25Builder(one);
    for (const d of docs) b.add(d);
    b.finish();
    assert.ok(JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')).runs > 3);
    for (const f of ['blockmax.bin', 'maximpact.bin', 'skips.bin']) assert.deepEqual(readFileSync(join(one, f)), readFileSync(join(dir, f)), f);
  });

  it('returns exactly the exhaustive top k (ids and scores, ties included) with postings in memory', () => {
    const index = Bm25Index.open(dir);
    assert.equal(index.pruning, 'block-max');
    assert.equal(index.postingsInMemory, true);
    assert.equal(index.kernel, 'wasm');
    assertExact(index, exhaustive);
  });

  it('the WebAssembly kernel and the TypeScript evaluation give the same answers, scores to the bit', () => {
    const wasm = Bm25Index.open(dir, { kernel: 'wasm' });
    const js = Bm25Index.open(dir, { kernel: 'js' });
    assert.equal(js.kernel, 'js');
    assert.equal(js.pruning, 'block-max');
    for (const q of queries) for (const k of KS) assert.deepEqual(wasm.searchDocs(q, k), js.searchDocs(q, k), `${q} k=${k}`);
    // Its memory holds the postings, skips, block maxima and norms: the index does not hold them twice.
    const postings = statSync(join(dir, 'postings.bin')).size;
    assert.ok(wasm.memoryBytes() >= postings && wasm.memoryBytes() < js.memoryBytes() + (16 << 20), `${wasm.memoryBytes()} against ${js.memoryBytes()}`);
  });

  it('a k beyond the kernel’s top-k area is answered by the TypeScript evaluation, still exact', () => {
    const index = Bm25Index.open(dir);
    for (const q of queries.slice(0, 5)) assert.deepEqual(index.searchDocs(q, 70_000), exhaustive.searchDocs(q, 70_000), q);
  });

  it('uses TypeScript where the kernel cannot serve, and names the reason when the kernel is asked for', () => {
    assert.equal(Bm25Index.open(dir, { maxPostingsInMemory: 0 }).kernel, 'js');
    assert.equal(Bm25Index.open(dir, { pruning: 'maxscore' }).kernel, 'js');
    assert.equal(Bm25Index.open(dir, { params: { k1: 1.6, b: 0.95 } }).kernel, 'js');
    assert.throws(() => Bm25Index.open(dir, { kernel: 'wasm', maxPostingsInMemory: 0 }), (e: unknown) => e instanceof InputError && /WebAssembly BM25 kernel cannot serve .*postings stay on disk/.test(e.message));
    assert.throws(() => Bm25Index.open(dir, { kernel: 'wasm', pruning: 'none' }), (e: unknown) => e instanceof InputError && /block-max evaluation only, not 'none'/.test(e.message));
    assert.throws(() => Bm25Index.open(dir, { kernel: 'simd' as never }), (e: unknown) => e instanceof InputError && /unknown BM25 kernel 'simd'/.test(e.message));
  });

  it('and with postings on disk, read in windows of 64 bytes and of 64 KiB', () => {
    for (const readWindow of [64, 1 << 16]) {
      const disk = Bm25Index.open(dir, { maxPostingsInMemory: 0, readWindow });
      assert.equal(disk.postingsInMemory, false);
      assert.equal(disk.pruning, 'block-max');
      assertExact(disk, exhaustive, queries.slice(0, 60));
      disk.close();
    }
  });

  it('MaxScore alone gives the same answers; so do the reference scores (to 1e-9)', () => {
    assertExact(Bm25Index.open(dir, { pruning: 'maxscore' }), exhaustive);
    const an = new Analyzer();
    const analysed = docs.map((d) => an.analyze(d));
    const avgdl = analysed.reduce((s, t) => s + t.length, 0) / docs.length;
    const df = new Map<string, number>();
    for (const t of analysed) for (const u of new Set(t)) df.set(u, (df.get(u) ?? 0) + 1);
    for (const q of queries.slice(80, 100)) {
      const qt = an.analyze(q);
      const scores = analysed.map((terms) =>
        qt.reduce((s, t) => {
          const tf = terms.filter((x) => x === t).length;
          if (!tf) return s;
          const idf = Math.log(1 + (docs.length - df.get(t)! + 0.5) / (df.get(t)! + 0.5));
          return s + (idf * tf) / (tf + 0.9 * (1 - 0.4 + (0.4 * terms.length) / avgdl));
        }, 0),
      );
      const got = Bm25Index.open(dir).searchDocs(q, 10);
      const want = [...scores].sort((a, b) => b - a).slice(0, 10);
      got.forEach((g, i) => assert.ok(Math.abs(g.score - want[i]!) < 1e-9 && Math.abs(scores[g.doc]! - g.score) < 1e-9, q));
    }
  });

  it('falls back to MaxScore with k1 / b other than the build’s (block maxima no longer hold), still exact', () => {
    const params = { k1: 1.6, b: 0.95 };
    const index = Bm25Index.open(dir, { params });
    assert.equal(index.pruning, 'maxscore');
    assertExact(index, Bm25Index.open(dir, { params, pruning: 'none' }), queries.slice(0, 40));
  });

  it('rejects a truncated blockmax.bin and an unknown pruning with InputError', () => {
    const bad = join(tmp.dir, 'truncated');
    cpSync(dir, bad, { recursive: true });
    truncateSync(join(bad, 'blockmax.bin'), 400);
    assert.throws(() => Bm25Index.open(bad), (e: unknown) => e instanceof InputError && /blockmax\.bin: 400 bytes/.test(e.message));
    assert.throws(() => Bm25Index.open(dir, { pruning: 'wand' as never }), (e: unknown) => e instanceof InputError && /unknown BM25 pruning 'wand'/.test(e.message));
  });
});

describe('BM25 index written before block maxima (format 1 without blockmax.bin)', () => {
  // Built by ragtrail main at 2fe1171 (the builder before this change); expected.json holds that
  // version's answers to 40 queries at k = 1, 10 and 50.
  const fixture = join(ROOT, 'test', 'fixtures', 'bm25-v1');
  const dir = join(tmp.dir, 'v1');
  cpSync(fixture, dir, { recursive: true });
  const expected = JSON.parse(readFileSync(join(fixture, 'expected.json'), 'utf8')) as { queries: string[]; answers: Record<string, [number, number][]>[] };

  it('opens, uses MaxScore, and answers as the version that wrote it', () => {
    assert.ok(!readdirSync(dir).includes('blockmax.bin'));
    const index = Bm25Index.open(dir);
    assert.equal(index.pruning, 'maxscore');
    let compared = 0;
    expected.queries.forEach((q, i) => {
      for (const [k, want] of Object.entries(expected.answers[i]!)) {
        const got = index.searchDocs(q, Number(k));
        assert.deepEqual(got.map((h) => h.doc), want.map(([doc]) => doc), `${q} k=${k}`);
        got.forEach((h, j) => assert.ok(Math.abs(h.score - want[j]![1]) <= 1e-12 * want[j]![1], `${q} k=${k} rank ${j}`));
        compared += got.length;
      }
    });
    assert.ok(compared > 1000, `compared ${compared} hits`);
  });

  it('and equals exhaustive scoring exactly, in memory and on disk', () => {
    const reference = Bm25Index.open(dir, { pruning: 'none' });
    for (const opts of [{}, { maxPostingsInMemory: 0, readWindow: 64 }]) {
      const index = Bm25Index.open(dir, opts);
      for (const q of expected.queries) for (const k of [1, 10, 50, 1000]) assert.deepEqual(index.searchDocs(q, k), reference.searchDocs(q, k), `${q} k=${k}`);
    }
  });

  it('a blockmax.bin copied in from another index is refused, not silently used', () => {
    copyFileSync(join(tmp.dir, 'zipf', 'blockmax.bin'), join(dir, 'blockmax.bin'));
    assert.throws(() => Bm25Index.open(dir), InputError);
  });
});

describe('BM25 length normalisation', () => {
  // The block-max tests above have documents of 3–90 tokens (lengths held in one byte); these need two and four.
  const cases = [
    { name: 'two bytes', lens: [2, 300, 2], texts: ['alpha beta', `alpha ${'gamma '.repeat(299)}`, 'beta gamma'] },
    { name: 'four bytes', lens: [2, 300, 70_000, 2], texts: ['alpha beta', `alpha ${'gamma '.repeat(299)}`, `alpha ${'delta '.repeat(69_999)}`, 'beta gamma'] },
  ];
  for (const { name, lens, texts } of cases) {
    it(`keeps exact norms for documents of up to ${Math.max(...lens)} tokens (lengths in ${name})`, () => {
      const d = join(tmp.dir, `long-${lens.length}`);
      const b = new Bm25Builder(d, {});
      for (const t of texts) b.add(t);
      b.finish();
      // Lucene's BM25 by hand (k1 0.9, b 0.4): "alpha" is once in every document but the last.
      const n = lens.length;
      const avgdl = lens.reduce((s, x) => s + x, 0) / n;
      const idf = Math.log(1 + (n - (n - 1) + 0.5) / (n - 1 + 0.5));
      const want = lens.slice(0, -1).map((len) => idf / (1 + 0.9 * (1 - 0.4 + (0.4 * len) / avgdl)));
      for (const pruning of ['none', 'block-max'] as const) {
        const index = Bm25Index.open(d, { pruning });
        // Two-byte lengths go to the WebAssembly kernel; longer ones (no length-norm table) stay in TypeScript.
        if (pruning === 'block-max') assert.equal(index.kernel, name === 'four bytes' ? 'js' : 'wasm');
        const got = index.searchDocs('alpha', 10);
        assert.deepEqual(got.map((h) => h.doc), want.map((_, doc) => doc), pruning);
        got.forEach((h, i) => assert.ok(Math.abs(h.score - want[i]!) <= 1e-12 * want[i]!, `${pruning} doc ${h.doc}: ${h.score} vs ${want[i]}`));
      }
    });
  }
});
