/** evaluatePrm: pair accuracy, by type, and Bradley-Terry loss of any PRM backend (prm eval --prm SPEC). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { evaluatePrm, type PrmPairRecord } from '../../src/prm/trained.js';
import type { PRM } from '../../src/prm/types.js';

const step = (type: string, raw: string) => ({ type, action: type === 'search' ? { type: 'search' as const, query: raw } : { type: 'answer' as const, answer: raw }, raw });
const pairs: PrmPairRecord[] = [
  { id: 'q1:0', state: { question: 'Who?', steps: [] }, chosen: step('search', 'aaaa'), rejected: step('answer', 'a') }, // 4 vs 1: right
  { id: 'q2:0', state: { question: 'Who?', steps: [] }, chosen: step('search', 'bb'), rejected: step('search', 'bbb') }, // 2 vs 3: wrong
  { id: 'q3:0', state: { question: 'Who?', steps: [] }, chosen: step('answer', 'cc'), rejected: step('search', 'dd') }, // tie: 0.5
];
/** Scores a step by its text's length: a backend whose numbers are easy to follow by hand. */
const byLength: PRM = { name: 'length', score: async (_s, cands) => cands.map((c) => c.raw.length) };

test('evaluatePrm scores both steps of a pair in its state and tallies as the trained head does', async () => {
  const e = await evaluatePrm(byLength, pairs);
  assert.equal(e.n, 3);
  assert.equal(e.accuracy, 0.5); // (1 + 0 + 0.5) / 3
  assert.deepEqual(e.by_type, { search: { n: 2, accuracy: 0.5 }, answer: { n: 1, accuracy: 0.5 } });
  // −log σ(3) , −log σ(−1), −log σ(0)
  const softplus = (x: number) => Math.log1p(Math.exp(x));
  assert.ok(Math.abs(e.loss - (softplus(-3) + softplus(1) + softplus(0)) / 3) < 1e-12);
});
