/**
 * The papers' reward ablations as options (LWS Table 4 and Table 2, ARENA §5.3), on hand-made texts
 * with hand-worked values: weights drop a term from the total and leave its component as measured.
 */
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { type EpisodeText, episodeTrajectory } from '../../src/rewards/episode.js';
import { composeScheme, usesJudge } from '../../src/rewards/schemes.js';
import type { Judge } from '../../src/rewards/judge.js';

async function score(scheme: string, agent: string, ep: Partial<EpisodeText> & { response: string }, options: string[] = [], judge?: Judge) {
  const episode: EpisodeText = { id: 'q', question: 'Which city is the capital?', golden_answers: ['Paris'], ...ep };
  const r = await composeScheme(scheme, options).compute({ trajectory: episodeTrajectory(episode, agent), episode, ...(judge ? { judge } : {}) });
  return { total: r.total, ...r.components } as Record<'total' | 'format' | 'search' | 'answer' | 'accuracy' | 'relevance' | 'bonus', number>;
}

// One search, then the right answer: format 1, search 1 (a short keyword query), RC 1.
const RIGHT = '<think> I need the capital. </think>\n<search> capital city </search>\n\n<information>Doc 1(Title: Paris) Paris is the capital.</information>\n\n<think> Found it. </think>\n<reflect> The document says so. </reflect>\n<answer> Paris </answer>';
const WRONG = RIGHT.replace('<answer> Paris </answer>', '<answer> Lyon </answer>');

test('LWS: search_weight=0 is "w/o r_s", answer_weight=0 "w/o r_a"; components stay as measured', async () => {
  const full = await score('lws-stage2', 'search-r1', { response: RIGHT });
  assert.equal(full.answer, 1 - 0.3 * 1); // stage 2, correct: 1 − β·RC
  assert.equal(full.total, full.format + full.search + full.answer);
  const noSearch = await score('lws-stage2', 'search-r1', { response: RIGHT }, ['search_weight=0']);
  assert.deepEqual({ ...noSearch, total: undefined }, { ...full, total: undefined });
  assert.equal(noSearch.total, full.format + full.answer);
  const noAnswer = await score('lws-stage2', 'search-r1', { response: RIGHT }, ['answer_weight=0']);
  assert.equal(noAnswer.total, full.format + full.search);
});

test('LWS unified (unstaged) reward: the correct answer pays 1 − β·RC and the wrong one −1 + β·RC, at once', async () => {
  assert.equal((await score('lws-unified', 'search-r1', { response: RIGHT })).answer, 0.7);
  assert.equal((await score('lws-unified', 'search-r1', { response: WRONG })).answer, -0.7);
  // the staged ones keep one side each
  assert.equal((await score('lws-stage1', 'search-r1', { response: RIGHT })).answer, 1);
  assert.equal((await score('lws-stage2', 'search-r1', { response: WRONG })).answer, -1);
});

const refs = { gold_reference_ids: [1], references: [{ id: 1, title: 'Paris', text: 'Capital.' }, { id: 2, title: 'Lyon', text: 'City.' }] };
const ARENA = (answer: string) => `<relevance>[1]</relevance>\n<analysis>Reference 1 names it.</analysis>\n<answer>${answer}</answer>`;

test('ARENA: accuracy=f1 scores accuracy by token F1 (the bonus still needs accuracy 1)', async () => {
  // "Paris France" against "Paris": precision 1/2, recall 1 → F1 2/3
  const em = await score('arena', 'arena', { response: ARENA('Paris France'), ...refs });
  assert.deepEqual(em, { total: 2, format: 1, accuracy: 0, relevance: 1, bonus: 0 });
  const f1 = await score('arena', 'arena', { response: ARENA('Paris France'), ...refs }, ['accuracy=f1']);
  assert.ok(Math.abs(f1.accuracy! - 2 / 3) < 1e-12);
  assert.equal(f1.bonus, 0);
  const exact = await score('arena', 'arena', { response: ARENA('Paris'), ...refs }, ['accuracy=f1']);
  assert.deepEqual(exact, { total: 13, format: 1, accuracy: 1, relevance: 1, bonus: 10 });
});

test('ARENA: accuracy=judge asks the judge; a scheme that needs one says so', async () => {
  const yes = { verdict: async () => ({ correct: true }) } as unknown as Judge;
  const r = await score('arena', 'arena', { response: ARENA('the French capital'), ...refs }, ['accuracy=judge'], yes);
  assert.deepEqual(r, { total: 13, format: 1, accuracy: 1, relevance: 1, bonus: 10 });
  assert.equal(usesJudge(composeScheme('arena', ['accuracy=judge'])), true);
  assert.equal(usesJudge(composeScheme('arena')), false);
  assert.equal(usesJudge(composeScheme('lws-stage1', ['correct=judge'])), true);
  assert.equal(usesJudge(composeScheme('0.5*judge+f1')), true);
  await assert.rejects(score('arena', 'arena', { response: ARENA('x'), ...refs }, ['accuracy=judge']), /needs a judge model/);
  await assert.rejects(score('arena', 'arena', { response: ARENA('x'), ...refs }, ['accuracy=bleu']), /accuracy must be em, f1 or judge/);
});
