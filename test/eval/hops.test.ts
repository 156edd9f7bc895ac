/** Accuracy by hops (ARENA Table 13): where a question's hop count comes from, and the rows by hand. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Trajectory } from '../../src/core/trajectory.js';
import type { Question } from '../../src/core/types.js';
import { byHops, hopsOf } from '../../src/eval/hops.js';

const q = (id: string, extra: Partial<Question>): Question => ({ id, question: `${id}?`, answers: ['x'], ...extra });
const step = { question: 'a?', answer: 'b' };

describe('hopsOf', () => {
  it('the dataset\'s own count, else the decomposition, else the distinct supporting passages', () => {
    assert.equal(hopsOf(q('a', { metadata: { hops: 5 }, decomposition: [step, step] })), 5);
    assert.equal(hopsOf(q('b', { decomposition: [step, step, step] })), 3);
    assert.equal(hopsOf(q('c', { supporting: ['p1', 'p2', 'p2'] })), 2);
    assert.equal(hopsOf(q('d', {})), undefined);
  });
});

describe('byHops', () => {
  // Four questions: two of 2 hops (one right), one of 4 hops (right), one with no hop count (left out).
  const questions = new Map([q('a', { supporting: ['p1', 'p2'] }), q('b', { supporting: ['p3', 'p4'] }), q('c', { decomposition: [step, step, step, step] }), q('d', {})].map((x) => [x.id, x]));
  const t = (id: string, em: number, citations?: number[]): Trajectory => ({
    id, question: `${id}?`, answers: ['x'], agent: 'arena', policy: 'p', prediction: 'x', finished: true, retrievalCount: 1, formatFailures: 0,
    usage: { promptTokens: 0, completionTokens: 0, requests: 0 }, latencyMs: 0, source: 'native', metrics: { em, f1: em, acc: em },
    steps: [{ action: { type: 'answer', answer: 'x', ...(citations && { citations }) }, raw: '' }],
    meta: { supporting: ['p1', 'p2', 'p3'], contextIds: ['p1', 'p2', 'p3', 'p9'] },
  });

  it('EM per hop count, ascending, questions without a count left out', () => {
    assert.deepEqual(byHops([t('a', 1), t('b', 0), t('c', 1), t('d', 1)], questions), [{ hops: 2, n: 2, em: 0.5 }, { hops: 4, n: 1, em: 1 }]);
  });

  it('for citing protocols, the share citing exactly the gold references, and right on both', () => {
    // Gold reference numbers are [1, 2, 3] (p1–p3 among p1, p2, p3, p9): a cites them all and is right; b cites a subset; c cites all but is wrong.
    const rows = byHops([t('a', 1, [1, 2, 3]), t('b', 1, [1]), t('c', 0, [3, 2, 1])], questions, true);
    assert.deepEqual(rows, [{ hops: 2, n: 2, em: 1, relevance: 0.5, allCorrect: 0.5 }, { hops: 4, n: 1, em: 0, relevance: 1, allCorrect: 0 }]);
  });
});
