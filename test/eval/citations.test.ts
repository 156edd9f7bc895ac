/** Citation metrics of citing protocols (ARENA): precision of the cited references, by hand. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Step } from '../../src/core/trajectory.js';
import { arenaRelevance, citationPrecision, citedAndGold, trajectoryCitationPrecision } from '../../src/eval/citations.js';

describe('citationPrecision = |cited ∩ gold| / |cited|', () => {
  it('hand cases', () => {
    assert.equal(citationPrecision([1, 3], [1, 3]), 1);
    assert.equal(citationPrecision([1, 2], [1, 3]), 0.5);
    assert.equal(citationPrecision([1], [1, 3]), 1); // precise though incomplete
    assert.equal(citationPrecision([1, 2, 3, 4], [3]), 0.25);
    assert.equal(citationPrecision([2, 4], [1, 3]), 0);
    assert.equal(citationPrecision([2], []), 0); // nothing is gold: every citation is wrong
  });
  it('distinct numbers: a repeated citation counts once; a number outside the references is a wrong one', () => {
    assert.equal(citationPrecision([1, 1, 2], [1]), 0.5);
    assert.equal(citationPrecision([1, 9], [1]), 0.5);
  });
  it('nothing cited (an empty list, or no <relevance> list) is 0, whatever the gold', () => {
    assert.equal(citationPrecision([], [1]), 0);
    assert.equal(citationPrecision([], []), 0);
    assert.equal(citationPrecision(undefined, [1]), 0);
  });
});

describe('citation metrics of a trajectory', () => {
  const search: Step = {
    action: { type: 'search', query: 'q' },
    raw: 'q',
    docs: ['a', 'b', 'c', 'd'].map((id) => ({ passageId: id, title: id, text: id, score: 1 })),
  };
  const answer = (citations?: number[]): Step => ({ action: citations ? { type: 'answer', answer: 'x', citations } : { type: 'answer', answer: 'x' }, raw: '' });

  it('gold = supporting passages among the references searched; cited = the final answer\'s citations', () => {
    const t = { steps: [search, answer([2, 3])], meta: { supporting: ['c', 'z'] } };
    assert.deepEqual(citedAndGold(t), { cited: [2, 3], gold: [3] });
    assert.equal(trajectoryCitationPrecision(t), 0.5);
    assert.equal(arenaRelevance(t), 0.5);
  });
  it("with the question's own context the references are the context, in order", () => {
    const t = { steps: [answer([1])], meta: { supporting: ['p2'], contextIds: ['p2', 'p1'] } };
    assert.deepEqual(citedAndGold(t), { cited: [1], gold: [1] });
    assert.equal(trajectoryCitationPrecision(t), 1);
    assert.equal(arenaRelevance(t), 1);
  });
  it('no answer, or an answer without citations: precision 0', () => {
    assert.equal(trajectoryCitationPrecision({ steps: [search], meta: { supporting: ['a'] } }), 0);
    assert.equal(trajectoryCitationPrecision({ steps: [search, answer()], meta: { supporting: ['a'] } }), 0);
  });
});
