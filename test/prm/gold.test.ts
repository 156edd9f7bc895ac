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
import { goldPlan, judgedPlanScores } from '../../src/agents/gold.js';

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

test('grounded answers: a right answer before every hop is retrieved scores as a wrong one; after, +2', async () => {
  const answer = (a: string) => ({ action: { type: 'answer' as const, answer: a }, raw: '' });
  const grounded = new GoldPRM({ grounded: true });
  // Four of five hops found: the answer may be right, but the history does not hold it yet — a guess.
  assert.deepEqual(await grounded.score(state(['b1-alt', 'b1', 'b2', 'p1']), [answer('The Mirror of Prifelton'), answer('A Harbor in Featon')]), [-2, -2]);
  assert.deepEqual(await new GoldPRM().score(state(['b1-alt', 'b1', 'b2', 'p1']), [answer('The Mirror of Prifelton')]), [2]);
  assert.deepEqual(await grounded.score(state(['b1-alt', 'b1', 'b2', 'p1', 'p2']), [answer('The Mirror of Prifelton'), answer('A Harbor in Featon')]), [2, -2]);
  // Searches and their scores do not change.
  assert.deepEqual(await grounded.score(state([]), [search('Who wrote The Mirror of Prifelton?')]), [3]);
  // A plan with nothing to look for (no answers, no passages) cannot be checked: EM alone.
  const bare: Question = { id: 'b', question: 'Is water wet?', answers: ['yes'] };
  assert.deepEqual(await grounded.score({ ...state([]), question: bare }, [answer('yes')]), [2]);
});

test("the plan judge's scores: a search by what it fetched — the open hop's page +3, another missing page +1, nothing new −1", () => {
  const fetched = (ids: string[]) => ({ action: { type: 'search' as const, query: 'q' }, docs: ids.map((id) => ({ passageId: id, title: id, text: '', score: 1 })) });
  // Nothing found yet: b1-alt and b2 are open; p1 is a later hop's page; b1-alt found again is a repeat once found.
  assert.deepEqual(judgedPlanScores(state([]), [fetched(['b2']), fetched(['p1']), fetched(['zz'])]), [3, 1, -1]);
  assert.deepEqual(judgedPlanScores(state(['b1-alt']), [fetched(['b1-alt']), fetched(['b1'])]), [-1, 3]);
  // Every hop found: any search is −1; answers are grounded (+2 right, −2 wrong); a search without documents is scored by its query.
  const all = state(['b1-alt', 'b1', 'b2', 'p1', 'p2']);
  assert.deepEqual(judgedPlanScores(all, [fetched(['p2']), { action: { type: 'answer', answer: 'The Mirror of Prifelton' } }]), [-1, 2]);
  assert.deepEqual(judgedPlanScores(state([]), [{ action: { type: 'search', query: 'Who wrote The Mirror of Prifelton?' } }]), [3]);
});

test('evidence scores +1 when it notes a found fact not yet noted, in whichever order a comparison found them', async () => {
  const note = (evidence: string) => ({ action: { type: 'extract' as const, evidence }, raw: '' });
  const prm = new GoldPRM();
  // b1-alt (answer The Meadow of New Veford) and b2 (Praalelie Dranez) found: either fact is new evidence.
  const found = state(['b1-alt', 'b2']);
  assert.deepEqual(await prm.score(found, [note('The Mirror of Prifelton was written by Praalelie Dranez.'), note('A Harbor in Featon is also The Meadow of New Veford.'), note('Featon is a town.')]), [1, 1, -1]);
  // Once Dranez is noted, noting him again is no news; the other fact still is.
  const noted: State = { ...found, steps: [...found.steps, { action: { type: 'extract', evidence: 'Written by Praalelie Dranez.' }, raw: '' }] };
  assert.deepEqual(await prm.score(noted, [note('Praalelie Dranez wrote it.'), note('Also known as The Meadow of New Veford.')]), [-1, 1]);
});
