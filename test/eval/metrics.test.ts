/**
 * Expected values were computed with the reference SQuAD/HotpotQA Python functions
 * (normalize_answer, f1_score with the yes/no/noanswer rule), which FlashRAG copies.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { answerScores, coverMatch, exactMatch, f1Score, normalizeAnswer } from '../../src/eval/metrics.js';

describe('normalizeAnswer', () => {
  const cases: [string, string][] = [
    ['The Quick, Brown Fox!', 'quick brown fox'],
    ['Theater of an Anathema', 'theater of anathema'], // articles only as whole words
    ['A', ''],
    ['  the  ', ''],
    ['The The', ''],
    ['U.S.A.', 'usa'],
    ['Hello_World', 'helloworld'], // "_" is ASCII punctuation
    ['1,000,000 people', '1000000 people'],
    ["l'été", 'lété'],
    // Unicode: only ASCII punctuation goes, and word boundaries are Unicode-aware as in Python 3's re.
    ['éa b', 'éa b'], // "a" is glued to "é", so it is not an article
    ['café—the best', 'café— best'], // the em dash stays and still bounds "the"
    ['naïve the end', 'naïve end'],
    ['“Quoted” answer', '“quoted” answer'],
    ['Ærøskøbing, the town', 'ærøskøbing town'],
    ['ΑΝ an Άλφα', 'αν άλφα'],
    // Python's str.split() whitespace: NBSP, ideographic space and \x1c split; U+FEFF does not.
    ['a\u00a0b\u3000c', 'b c'],
    ['x\x1cy', 'x y'],
    ['x\ufeffy', 'x\ufeffy'],
  ];
  for (const [input, expected] of cases) {
    it(`${JSON.stringify(input)} → ${JSON.stringify(expected)}`, () => assert.equal(normalizeAnswer(input), expected));
  }
  it("maps '_' to a space in ARENA's variant", () => {
    assert.equal(normalizeAnswer('Hello_World', { underscoreToSpace: true }), 'hello world');
  });
});

describe('exactMatch', () => {
  it('compares normalised strings', () => {
    assert.equal(exactMatch('The James Madison.', 'james madison'), 1);
    assert.equal(exactMatch('James Madison Jr', 'james madison'), 0);
  });
  it('takes the maximum over gold answers', () => {
    assert.equal(exactMatch('Ralph Reichenthal', ['Ralph Rainger', 'Ralph Reichenthal']), 1);
    assert.equal(exactMatch('Ralph', ['Ralph Rainger', 'Ralph Reichenthal']), 0);
  });
});

describe('f1Score', () => {
  it('token F1: "the cat sat on the mat" vs "cat on mat" = 2·(3/4)·1/(3/4+1) = 6/7', () => {
    const r = f1Score('the cat sat on the mat', 'cat on mat');
    assert.equal(r.precision, 0.75);
    assert.equal(r.recall, 1);
    assert.ok(Math.abs(r.f1 - 6 / 7) < 1e-15);
  });
  it('counts repeated tokens by multiplicity: "cat cat dog" vs "cat dog dog" = 2/3', () => {
    assert.ok(Math.abs(f1Score('cat cat dog', 'cat dog dog').f1 - 2 / 3) < 1e-15);
  });
  it('"New York City" vs "the city of new york": P = 1, R = 3/4, F1 = 6/7', () => {
    const r = f1Score('New York City', 'the city of new york');
    assert.equal(r.precision, 1);
    assert.equal(r.recall, 0.75);
    assert.ok(Math.abs(r.f1 - 6 / 7) < 1e-15);
  });
  it('applies the HotpotQA yes/no/noanswer rule', () => {
    assert.equal(f1Score('yes', 'yes sir').f1, 0); // prediction is special and differs
    assert.equal(f1Score('no way', 'no').f1, 0); // gold is special and differs
    assert.equal(f1Score('No.', 'no').f1, 1);
    assert.equal(f1Score('noanswer', 'no answer').f1, 0);
  });
  it('takes the maximum over gold answers', () => {
    assert.equal(f1Score('Paris', 'Paris, France').f1, 2 / 3);
    assert.equal(f1Score('Paris', ['Paris, France', 'Paris']).f1, 1);
  });
  it('maximises precision and recall independently, as FlashRAG does', () => {
    // vs "a b c d": P = 1, R = 1/2 ; vs "a": P = 1/2, R = 1
    const r = f1Score('alpha beta', ['alpha beta gamma delta', 'alpha']);
    assert.equal(r.precision, 1);
    assert.equal(r.recall, 1);
    assert.equal(r.f1, 2 / 3);
  });
  it('is 0 with no overlap and for an empty prediction', () => {
    assert.equal(f1Score('Thomas Jefferson', 'james madison').f1, 0);
    assert.equal(f1Score('', 'james madison').f1, 0);
  });
});

describe('coverMatch (FlashRAG acc)', () => {
  it('is 1 when a normalised gold is a substring of the normalised prediction', () => {
    assert.equal(coverMatch('It was James Madison, I think', 'james madison'), 1);
    assert.equal(coverMatch('Madison', 'james madison'), 0);
    // Substring, not token match: "1999" is inside "19995".
    assert.equal(coverMatch('19995', '1999'), 1);
  });
  it('bundles EM, F1 and Acc', () => {
    assert.deepEqual(answerScores('29 May 1932', 'May 29, 1932'), { em: 0, f1: 1, acc: 0 });
  });
});
