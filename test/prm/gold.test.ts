/**
 * The gold PRM's plan as a partial order (prm/gold.ts openHops): a comparison's two lookups are open
 * together, a chain's hops one at a time. Scores hand-computed: 4·F1 − 1, F1 of the query's words
 * against the open hop's sub-question (after normalisation).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Question } from '../../src/core/types.js';
import type { State } from '../../src/env/env.js';
import { GoldPRM, openHops } from '../../src/prm/gold.js';
import { goldPlan } from '../../src/agents/gold.js';

// The deep world's shape of a bridge-comparison: an alternative title, then each novel's author, then their births.
const question: Question = {
  id: 'q',
  question: 'Which novel has the author who was born first, A Harbor in Featon or The Mirror of Prifelton?',
  answers: ['The Mirror of Prifelton'],
  decomposition: [
    { question: 'Which novel is also known as A Harbor in Featon?', answer: 'The Meadow of New Veford', passageId: 'b1-alt' },
    { question: 'Who wrote The Meadow of New Veford?', answer: 'Tiva Liford', passageId: 'b1' },
    { question: 'Who wrote The Mirror of Prifelton?', answer: 'Praalelie Dranez', passageId: 'b2' },
    { question: 'When was Tiva Liford born?', answer: '1906', passageId: 'p1' },
    { question: 'When was Praalelie Dranez born?', answer: '1901', passageId: 'p2' },
  ],
};
const state = (found: string[]): State => ({
  question,
  steps: found.map((id) => ({ action: { type: 'search' as const, query: id }, raw: '', docs: [{ passageId: id, title: id, text: '', score: 1 }] })),
  done: false, mustAnswer: false, turnsLeft: 10, searchesLeft: 8,
});
const search = (query: string) => ({ action: { type: 'search' as const, query }, raw: '' });

test('openHops: the lookups that need nothing earlier are open together; a hop opens when the one it names is resolved', () => {
  const plan = goldPlan(question);
  const open = (resolved: boolean[]) => openHops(plan, resolved).map((h) => h.passageId);
  assert.deepEqual(open([false, false, false, false, false]), ['b1-alt', 'b2']);
  assert.deepEqual(open([true, false, false, false, false]), ['b1', 'b2']);
  assert.deepEqual(open([true, false, true, false, false]), ['b1', 'p2']);
  assert.deepEqual(open([true, true, true, false, false]), ['p1', 'p2']);
  assert.deepEqual(open([true, true, true, true, true]), []);
});

test('the gold PRM scores a search for either entity of a comparison alike, and a hop whose subject is not yet known low', async () => {
  const prm = new GoldPRM();
  const [alt, other, tooEarly, answer] = await prm.score(state([]), [
    search('Which novel is also known as A Harbor in Featon?'),
    search('Who wrote The Mirror of Prifelton?'),
    search('Who wrote The Meadow of New Veford?'),
    { action: { type: 'answer' as const, answer: 'The Mirror of Prifelton' }, raw: '' },
  ]);
  assert.equal(alt, 3);
  assert.equal(other, 3);
  // Best against b2's sub-question (normalised, articles dropped): {who, wrote, meadow, of, new, veford}
  // against {who, wrote, mirror, of, prifelton}: 3 common, precision 3/6, recall 3/5, F1 6/11 → 4·6/11 − 1.
  assert.ok(Math.abs(tooEarly! - (4 * 6 / 11 - 1)) < 1e-12, String(tooEarly));
  assert.equal(answer, 2);
  // Once the alternative title is resolved, the real title's lookup is open too.
  const [real] = await prm.score(state(['b1-alt']), [search('Who wrote The Meadow of New Veford?')]);
  assert.equal(real, 3);
});
