import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Analyzer, ENGLISH_STOP_WORDS } from '../../src/retrieval/analyzer.js';

describe('English analyzer', () => {
  const a = new Analyzer();
  const cases: [string, string[]][] = [
    // Porter stemming (the original algorithm, as Lucene's PorterStemFilter)
    ['connection connected connecting connections', ['connect', 'connect', 'connect', 'connect']],
    ['generalizations', ['gener']],
    ['Ponies and caresses', ['poni', 'caress']],
    ['Hopping hopped happily', ['hop', 'hop', 'happili']],
    // possessives dropped (both apostrophes), lowercased
    ['The cats’ owner’s houses', ['cat', 'owner', 'hous']],
    ["The Director's films", ['director', 'film']],
    // Lucene's 33 English stop words vanish entirely
    ['it is not to be', []],
    // Unicode letters stay in words; punctuation splits
    ['Müller naïve São Paulo', ['müller', 'naïv', 'são', 'paulo']],
    ['X-ray 3D 1990s', ['x', 'rai', '3d', '1990']],
  ];
  for (const [text, terms] of cases) it(`${JSON.stringify(text)} → ${JSON.stringify(terms)}`, () => assert.deepEqual(a.analyze(text), terms));

  it("uses Lucene's stop list and can skip stemming", () => {
    assert.equal(ENGLISH_STOP_WORDS.size, 33);
    assert.deepEqual(new Analyzer({ stem: false }).analyze('Running dogs'), ['running', 'dogs']);
  });
});
