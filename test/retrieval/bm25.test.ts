import assert from 'node:assert/strict';
import { closeSync, copyFileSync, ftruncateSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Analyzer } from '../../src/retrieval/analyzer.js';
import { Bm25Builder } from '../../src/retrieval/bm25/build.js';
import { Bm25Index } from '../../src/retrieval/bm25/index.js';
import { Rng } from '../../src/core/rng.js';
import { tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);

const DOCS = [
  'The quick brown fox jumps over the lazy dog.',
  'A fox, a fox! Foxes hunt at dusk; the fox is quick.',
  'Dogs and cats live together in the old house.',
  'Quantum computing uses qubits; quantum states interfere.',
  'The lazy cat sleeps all day in the warm sun.',
  'Brown bears and brown dogs: a study of brown animals in the north.',
  'Nothing to see here.',
  'Fox News is not about animals at all.',
];

/** BM25 the straightforward way: every document, every query term, Lucene's formula. */
const analysed = new WeakMap<string[], { terms: string[][]; df: Map<string, number> }>();
function reference(docs: string[], query: string, k1: number, b: number): number[] {
  const an = new Analyzer();
  let a = analysed.get(docs);
  if (!a) {
    const terms = docs.map((d) => an.analyze(d));
    const df = new Map<string, number>();
    for (const t of terms) for (const u of new Set(t)) df.set(u, (df.get(u) ?? 0) + 1);
    a = { terms, df };
    analysed.set(docs, a);
  }
  const { terms: docTerms, df: dfs } = a;
  const n = docs.length;
  const avgdl = docTerms.reduce((s, t) => s + t.length, 0) / n;
  const q = an.analyze(query);
  return docTerms.map((terms) => {
    let score = 0;
    for (const t of q) {
      const df = dfs.get(t) ?? 0;
      if (df === 0) continue;
      const tf = terms.filter((x) => x === t).length;
      if (tf === 0) continue;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      score += (idf * tf) / (tf + k1 * (1 - b + (b * terms.length) / avgdl));
    }
    return score;
  });
}

function build(dir: string, runPostings?: number, params: { k1?: number; b?: number } = {}): Bm25Index {
  const b = new Bm25Builder(dir, { runPostings, ...params });
  for (const d of DOCS) b.add(d);
  b.finish();
  return Bm25Index.open(dir);
}

describe('BM25 index', () => {
  const index = build(join(tmp.dir, 'small'));

  it('scores a hand-computed case', () => {
    // Query "qubits": only doc 3 has it (df 1, tf 1); N = 8.
    // idf = ln(1 + (8 − 1 + 0.5)/(1 + 0.5)) = ln 6 = 1.791759469
    // doc 3 analyses to [quantum, comput, us, qubit, quantum, state, interfer]: |d| = 7.
    const lens = DOCS.map((d) => new Analyzer().analyze(d).length);
    assert.equal(lens[3], 7);
    const avgdl = lens.reduce((s, x) => s + x, 0) / 8;
    const expected = (Math.log(6) * 1) / (1 + 0.9 * (1 - 0.4 + (0.4 * 7) / avgdl));
    const [top] = index.searchDocs('qubits', 5);
    assert.equal(top?.doc, 3);
    assert.ok(Math.abs(top!.score - expected) < 1e-12);
  });

  it('equals the reference computation for every document and query (to 1e-9)', () => {
    const queries = ['quick fox', 'brown dog brown', 'lazy cat in the sun', 'animals', 'quantum fox dogs house', 'zebra', 'the'];
    for (const q of queries) {
      const ref = reference(DOCS, q, 0.9, 0.4);
      const got = index.searchDocs(q, DOCS.length);
      const expectedDocs = ref.map((s, d) => ({ d, s })).filter((x) => x.s > 0);
      assert.equal(got.length, expectedDocs.length, q);
      for (const { doc, score } of got) assert.ok(Math.abs(score - ref[doc]!) < 1e-9, `${q}: doc ${doc} ${score} vs ${ref[doc]}`);
      // Ranked best first, ties by document number.
      for (let i = 1; i < got.length; i++) assert.ok(got[i - 1]!.score > got[i]!.score || (got[i - 1]!.score === got[i]!.score && got[i - 1]!.doc < got[i]!.doc));
    }
  });

  it('honours other k1 / b, at build time or at open time', () => {
    const other = build(join(tmp.dir, 'params'), undefined, { k1: 1.2, b: 0.75 });
    const ref = reference(DOCS, 'brown dog', 1.2, 0.75);
    for (const { doc, score } of other.searchDocs('brown dog', 8)) assert.ok(Math.abs(score - ref[doc]!) < 1e-9);
    const reopened = Bm25Index.open(join(tmp.dir, 'small'), { params: { k1: 1.2, b: 0.75 } });
    assert.deepEqual(reopened.searchDocs('brown dog', 8), other.searchDocs('brown dog', 8));
  });

  it('merges many sorted runs into exactly the postings of a single-run build', () => {
    build(join(tmp.dir, 'runs'), 3);
    const meta = JSON.parse(readFileSync(join(tmp.dir, 'runs', 'meta.json'), 'utf8'));
    assert.ok(meta.runs > 5, `runs: ${meta.runs}`);
    for (const f of ['postings.bin', 'postings.off', 'df.bin', 'doclen.bin', 'terms.bin', 'terms.ids']) {
      assert.deepEqual(readFileSync(join(tmp.dir, 'runs', f)), readFileSync(join(tmp.dir, 'small', f)), f);
    }
  });

  it('serves postings from disk with the same results', () => {
    const disk = Bm25Index.open(join(tmp.dir, 'small'), { maxPostingsInMemory: 0 });
    assert.equal(disk.postingsInMemory, false);
    for (const q of ['quick fox', 'brown dog brown', 'lazy cat']) assert.deepEqual(disk.searchDocs(q, 5), index.searchDocs(q, 5));
    disk.close();
  });

  it('looks terms up in the byte-sorted dictionary', () => {
    assert.equal(index.docFreq('fox'), 3);
    assert.equal(index.docFreq('brown'), 2);
    assert.equal(index.docFreq('zzz'), 0);
    assert.equal(index.docFreq(''), 0);
  });
});

describe('BM25 MaxScore pruning with skip pointers', () => {
  // Zipf-like text over a small vocabulary, so that many terms have thousands of postings (many skip blocks).
  const words = Array.from({ length: 400 }, (_, i) => `w${i.toString(36)}x`);
  const rng = new Rng(5);
  const weights = words.map((_, i) => 1 / (i + 1));
  const docs = Array.from({ length: 3000 }, () => Array.from({ length: rng.range(5, 60) }, () => words[rng.weighted(weights)]).join(' '));
  const queries = Array.from({ length: 60 }, () => Array.from({ length: rng.range(1, 6) }, () => words[rng.weighted(weights.map((w, i) => (i < 5 ? w * 20 : w)))]).join(' '));
  const dir = join(tmp.dir, 'zipf');
  const b = new Bm25Builder(dir, { runPostings: 10_000 });
  for (const d of docs) b.add(d);
  b.finish();
  // The same index with its postings moved past 2 GiB (a sparse file): held in memory, the cursors'
  // positions are offsets into that one buffer, as in a 21M-passage index (2.65 GiB of postings).
  const far = join(tmp.dir, 'zipf-far');
  const shift = 2 ** 31 + 1000;
  mkdirSync(far, { recursive: true });
  for (const f of readdirSync(dir)) if (f !== 'postings.bin' && f !== 'postings.off') copyFileSync(join(dir, f), join(far, f));
  const postings = readFileSync(join(dir, 'postings.bin'));
  const fd = openSync(join(far, 'postings.bin'), 'w');
  ftruncateSync(fd, shift);
  writeSync(fd, postings, 0, postings.length, shift);
  closeSync(fd);
  const off = new Float64Array(new Uint8Array(readFileSync(join(dir, 'postings.off'))).buffer);
  writeFileSync(join(far, 'postings.off'), new Uint8Array(off.map((x) => x + shift).buffer));

  for (const [label, open] of [
    ['in memory', () => Bm25Index.open(dir)],
    ['in memory, postings past 2 GiB', () => {
      const index = Bm25Index.open(far, { maxPostingsInMemory: 2 ** 32 - 1 });
      assert.ok(index.postingsInMemory);
      // The WebAssembly kernel then addresses postings past 2^31 too.
      assert.equal(index.kernel, 'wasm');
      return index;
    }],
    ['postings on disk', () => Bm25Index.open(dir, { maxPostingsInMemory: 0 })],
    ['postings on disk, read 64 bytes at a time', () => Bm25Index.open(dir, { maxPostingsInMemory: 0, readWindow: 64 })],
  ] as const) {
    it(`returns exactly the exhaustive top k (${label})`, () => {
      const index = open();
      assert.ok(index.docFreq(words[0]!) > 1000, 'the test needs long postings lists');
      for (const q of queries) {
        const ref = reference(docs, q, 0.9, 0.4)
          .map((score, doc) => ({ doc, score }))
          .filter((x) => x.score > 0)
          .sort((x, y) => y.score - x.score || x.doc - y.doc);
        for (const k of [1, 10, 100]) {
          const got = index.searchDocs(q, k);
          const want = ref.slice(0, k);
          assert.equal(got.length, want.length, `${q} k=${k}`);
          got.forEach((g, i) => {
            assert.ok(Math.abs(g.score - want[i]!.score) < 1e-9, `${q} k=${k} rank ${i}: ${g.score} vs ${want[i]!.score}`);
            // Documents agree except where scores tie to within float error.
            if (Math.abs(want[i]!.score - (want[i + 1]?.score ?? -1)) > 1e-9 && Math.abs(want[i]!.score - (want[i - 1]?.score ?? -1)) > 1e-9) assert.equal(g.doc, want[i]!.doc);
          });
        }
      }
    });
  }

  it('stays exact with overridden k1 / b (looser bounds)', () => {
    const index = Bm25Index.open(dir, { params: { k1: 1.5, b: 0.9 } });
    for (const q of queries.slice(0, 20)) {
      const ref = reference(docs, q, 1.5, 0.9).sort((x, y) => y - x).slice(0, 10);
      assert.deepEqual(index.searchDocs(q, 10).map((h) => h.score.toFixed(9)), ref.filter((s) => s > 0).map((s) => s.toFixed(9)));
    }
  });
});
