/**
 * A synthetic corpus with the statistics that matter for an inverted index: ~100-word passages whose
 * words follow a Zipf law (exponent 1.07 over a 400k-word vocabulary, like English text), with stop
 * words at their usual share (~35% of tokens). Queries are 3–6 distinct content words of one passage,
 * so each query has a known relevant passage (recall@k = that passage is in the top k).
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { ENGLISH_STOP_WORDS } from '../src/retrieval/analyzer.js';
import { Rng } from '../src/core/rng.js';

const SYL = ['ka', 'lo', 'mi', 're', 'tan', 'vo', 'sel', 'dra', 'pu', 'nor', 'ish', 'el', 'ga', 'tri', 'bo', 'zen', 'qua', 'fi', 'mer', 'ost', 'ul', 'ar', 'wen', 'cy'];

export class SyntheticText {
  readonly words: string[];
  private readonly cdf: Float64Array;
  private readonly stop = [...ENGLISH_STOP_WORDS];

  constructor(vocabulary = 400_000, exponent = 1.07) {
    const seen = new Set<string>();
    this.words = [];
    for (let i = 0; this.words.length < vocabulary; i++) {
      // Bijective base-24 syllable spelling of i, plus a suffix for short ones: unique, pronounceable.
      let n = i;
      let w = '';
      do {
        w += SYL[n % SYL.length];
        n = Math.floor(n / SYL.length);
      } while (n > 0);
      if (w.length < 4) w += 'th';
      if (!seen.has(w) && !ENGLISH_STOP_WORDS.has(w)) {
        seen.add(w);
        this.words.push(w);
      }
    }
    this.cdf = new Float64Array(vocabulary);
    let s = 0;
    for (let r = 0; r < vocabulary; r++) this.cdf[r] = s += 1 / Math.pow(r + 1, exponent);
    for (let r = 0; r < vocabulary; r++) this.cdf[r]! /= s;
  }

  word(rng: Rng): string {
    if (rng.chance(0.35)) return rng.pick(this.stop);
    const u = rng.next();
    let lo = 0;
    let hi = this.cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return this.words[lo]!;
  }

  passage(rng: Rng, i: number): { id: string; title: string; text: string } {
    const n = rng.range(80, 120);
    const ws: string[] = [];
    for (let j = 0; j < n; j++) ws.push(this.word(rng));
    return { id: `syn-${i}`, title: `${this.words[rng.int(this.words.length)]} ${this.words[rng.int(this.words.length)]}`, text: ws.join(' ') + '.' };
  }

  /** 3–6 distinct non-stop words of the passage. */
  query(rng: Rng, text: string): string {
    const content = [...new Set(text.replace(/\.$/, '').split(' ').filter((w) => !ENGLISH_STOP_WORDS.has(w)))];
    return rng.sample(content, rng.range(3, 6)).join(' ');
  }
}

/** Writes `n` passages as JSON Lines and returns `queries` queries drawn from random passages. */
export async function writeSyntheticCorpus(path: string, n: number, queries: number, seed = 1): Promise<{ id: string; query: string; relevant: number }[]> {
  const gen = new SyntheticText();
  const rng = new Rng(seed);
  const qrng = new Rng(`${seed}/queries`);
  const want = new Set<number>();
  while (want.size < Math.min(queries, n)) want.add(qrng.int(n));
  const out: { id: string; query: string; relevant: number }[] = [];
  const file = createWriteStream(path);
  let buf: string[] = [];
  for (let i = 0; i < n; i++) {
    const p = gen.passage(rng, i);
    if (want.has(i)) out.push({ id: `q${out.length}`, query: gen.query(qrng, p.text), relevant: i });
    buf.push(JSON.stringify(p));
    if (buf.length === 2000) {
      if (!file.write(buf.join('\n') + '\n')) await once(file, 'drain');
      buf = [];
    }
  }
  if (buf.length) file.write(buf.join('\n') + '\n');
  file.end();
  await once(file, 'close');
  return out;
}
