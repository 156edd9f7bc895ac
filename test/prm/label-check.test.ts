/** checkLabels: an annotation's pairs against the gold plan — agreement on untied pairs, ties, and the features' ceiling. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Question } from '../../src/core/types.js';
import { checkLabels } from '../../src/prm/label-check.js';
import type { PrmPairRecord } from '../../src/prm/trained.js';

const question = (id: string): Question => ({
  id,
  question: `Who directed the film Ember ${id}?`,
  answers: [`Director ${id}`],
  decomposition: [{ question: `Who directed Ember ${id}?`, answer: `Director ${id}`, passageId: `p-${id}` }],
});
const answer = (text: string) => ({ type: 'A', action: { type: 'answer' as const, answer: text }, raw: `<answer>${text}</answer>` });
// The answer's page found by a search (found = false: no search yet, so any answer is a guess).
const found = (id: string) => [{ action: { type: 'search' as const, query: `Ember ${id}` }, raw: '', docs: [{ passageId: `p-${id}`, title: `Ember ${id}`, text: `Ember ${id} was directed by Director ${id}.`, score: 1 }] }];
const pair = (id: string, n: number, chosen: string, rejected: string, searched = true): PrmPairRecord => ({ id: `${id}:0:${n}`, state: { question: question(id).question, steps: searched ? found(id) : [] }, chosen: answer(chosen), rejected: answer(rejected) });

test('checkLabels counts the gold verdict on each pair: agreement among untied pairs, the tied share, unchecked questions left out', async () => {
  const qs = new Map(['q1', 'q2'].map((id) => [id, question(id)]));
  const pairs = [
    pair('q1', 0, 'Director q1', 'Someone'), // gold: +2 vs −2, agrees
    pair('q1', 1, 'Someone', 'Director q1'), // gold prefers the rejected step
    pair('q2', 0, 'Director q2', 'Nobody'), // agrees
    pair('q2', 1, 'Nobody', 'Someone'), // both wrong: −2 and −2, a tie
    pair('q2', 2, 'Director q2', 'Nobody', false), // right, but before the page was found: a guess, −2 like the wrong one — a tie
    pair('q9', 0, 'x', 'y'), // no question with a plan: not checked
  ];
  const c = await checkLabels(pairs, qs);
  assert.equal(c.checked, 5);
  assert.equal(c.goldTies, 0.4);
  assert.equal(c.goldAgreement, 2 / 3);
  assert.equal(c.featuresCeiling, null); // two questions: too few to train and hold out
  // Every pair here is answer against answer: one kind, with the same counts.
  assert.deepEqual(c.byKind, { 'A/A': { pairs: 5, goldTies: 0.4, goldAgreement: 2 / 3 } });
});

test('on gold-consistent labels over enough questions the head holds out well: the ceiling measures the features, not the labels', async () => {
  const ids = Array.from({ length: 30 }, (_, i) => `q${i}`);
  const qs = new Map(ids.map((id) => [id, question(id)]));
  // Half the annotation's labels are flipped (noise to the gold plan); the ceiling retrains on the gold verdicts.
  const pairs = ids.map((id, i) => (i % 2 ? pair(id, 0, 'Wrong Name', `Director ${id}`) : pair(id, 0, `Director ${id}`, 'Wrong Name')));
  const c = await checkLabels(pairs, qs, { seed: 1 });
  assert.equal(c.goldAgreement, 0.5);
  assert.ok(c.featuresCeiling !== null && c.featuresCeiling >= 0.8, `ceiling ${c.featuresCeiling}`);
});
