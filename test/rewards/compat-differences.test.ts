/**
 * Every documented difference between a scheme's default (the paper's intent, on ragtrail's parse of
 * the episode) and compat=authors (the authors' code), each on a hand-made text with hand-worked
 * values. The README's per-scheme tables list the same rows.
 */
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { textProtocol } from '../../src/rewards/apply.js';
import { type EpisodeText, episodeTrajectory } from '../../src/rewards/episode.js';
import { composeScheme } from '../../src/rewards/schemes.js';
import { proragAuthorsStepFormat, proragStepRewards } from '../../src/rewards/prorag.js';

async function both(scheme: string, ep: Partial<EpisodeText> & { response: string }, options: string[] = []) {
  const episode: EpisodeText = { id: 'q', question: 'Q?', golden_answers: ['Paris'], ...ep };
  const run = async (compat: string) => {
    const s = composeScheme(scheme, [`compat=${compat}`, ...options]);
    const r = await s.compute({ trajectory: episodeTrajectory(episode, textProtocol(s)), episode });
    return { total: r.total, ...r.components } as Record<string, number>;
  };
  return { paper: await run('paper'), authors: await run('authors') };
}

const ARENA_OK = '<relevance>[1]</relevance>\n<analysis>Reference 1 names it.</analysis>\n<answer>Paris</answer>';
const refs = { gold_reference_ids: [1], references: [{ id: 1, title: 'Paris', text: 'Capital.' }, { id: 2, title: 'Lyon', text: 'City.' }] };

test('arena: a well-formed output scores the same in both modes (1 + 1 + 1 + 10)', async () => {
  const r = await both('arena', { response: ARENA_OK, ...refs });
  assert.deepEqual(r.paper, { total: 13, format: 1, accuracy: 1, relevance: 1, bonus: 10 });
  assert.deepEqual(r.authors, r.paper);
});

test('arena: trailing lines after </answer> pass the authors\' multi-line regex, not the default', async () => {
  const r = await both('arena', { response: `${ARENA_OK}\nThanks!`, ...refs });
  assert.equal(r.authors.format, 1);
  assert.equal(r.paper.format, 0);
});

test('arena: leading whitespace and trailing spaces fail the authors\' format only', async () => {
  for (const response of [`  ${ARENA_OK}`, `${ARENA_OK}  `]) {
    const r = await both('arena', { response, ...refs });
    assert.equal(r.authors.format, 0, JSON.stringify(response));
    assert.equal(r.paper.format, 1, JSON.stringify(response));
  }
});

test('arena: a "<" inside a section fails the authors\' format ([^<]*), not the default', async () => {
  const r = await both('arena', { response: '<relevance>[1]</relevance>\n<analysis>1 < 2, so reference 1.</analysis>\n<answer>Paris</answer>', ...refs });
  assert.equal(r.authors.format, 0);
  assert.equal(r.paper.format, 1);
});

test('arena: the authors map punctuation (curly quotes included) to a space, the default removes ASCII punctuation', async () => {
  const hyphen = await both('arena', { response: ARENA_OK.replace('Paris</answer>', 'Saint Denis</answer>'), golden_answers: ['Saint-Denis'], ...refs });
  assert.equal(hyphen.authors.accuracy, 1); // "saint denis" = "saint denis"
  assert.equal(hyphen.paper.accuracy, 0); // "saint denis" ≠ "saintdenis"
  const curly = await both('arena', { response: ARENA_OK.replace('Paris</answer>', 'Rock n Roll</answer>'), golden_answers: ['Rock ’n’ Roll'], ...refs });
  assert.equal(curly.authors.accuracy, 1); // ’ → space
  assert.equal(curly.paper.accuracy, 0); // ’ is not ASCII punctuation: "rock ’n’ roll"
});

test('arena: an unclosed <answer> is read by the default, not by the authors\' extract_answer', async () => {
  const r = await both('arena', { response: '<relevance>[1]</relevance>\n<analysis>Reference 1.</analysis>\n<answer>Paris', ...refs });
  assert.equal(r.authors.accuracy, 0);
  assert.equal(r.paper.accuracy, 1);
});

test('arena: relevance is scored without an answer by the authors; by default it belongs to the answer action', async () => {
  const r = await both('arena', { response: '<relevance>[1]</relevance>\n<analysis>Reference 1.</analysis>', ...refs });
  assert.equal(r.authors.relevance, 1);
  assert.equal(r.paper.relevance, 0);
});

test('arena: Python equality in the authors\' relevance ([true] == [1]); the default wants whole numbers', async () => {
  const r = await both('arena', { response: ARENA_OK.replace('[1]', '[true]'), ...refs });
  assert.equal(r.authors.relevance, 1);
  assert.equal(r.paper.relevance, 0);
});

test('arena: an unsorted gold list never equals the authors\' sorted prediction (0.5); the default compares sets (1)', async () => {
  const r = await both('arena', { response: ARENA_OK.replace('[1]', '[1, 2]'), gold_reference_ids: [2, 1], references: refs.references });
  assert.equal(r.authors.relevance, 0.5);
  assert.equal(r.paper.relevance, 1);
});

// ProRAG: texts as its rollouts write them (the prompt opens the first <step>).
const PRORAG_OK = 'I look it up.</step>\n<subquery>capital of France</subquery>\n<retrieval>\nDoc 1(Title: Paris) Paris is the capital.\n</retrieval>\n<step>\nIt is Paris.</step>\n<subanswer>Paris</subanswer>\n<step>\nDone.</step>\n<answer>Paris</answer>\n<|im_end|>';

test('prorag-outcome: a well-formed rollout scores 2·F1 + 1 = 3 in both modes', async () => {
  const r = await both('prorag-outcome', { response: PRORAG_OK });
  assert.deepEqual(r.paper, { total: 3, answer: 2, workflow: 1 });
  assert.deepEqual(r.authors, r.paper);
});

test('prorag-outcome: the authors\' F1 only lowercases and splits ("Paris." ≠ "paris")', async () => {
  const r = await both('prorag-outcome', { response: PRORAG_OK.replace('<answer>Paris</answer>', '<answer>Paris.</answer>') });
  assert.equal(r.authors.answer, 0);
  assert.equal(r.paper.answer, 2);
});

test('prorag-outcome: the authors match <ANSWER> in any case; the default protocol reads lowercase tags', async () => {
  const r = await both('prorag-outcome', { response: 'Done.</step>\n<ANSWER>Paris</ANSWER>' });
  assert.equal(r.authors.answer, 2);
  assert.equal(r.paper.answer, 0);
});

test('prorag-outcome: the authors take the first <answer> anywhere, retrieved text included; the default the final answer step', async () => {
  const r = await both('prorag-outcome', { response: PRORAG_OK.replace('Paris is the capital.', 'Quiz: <answer>Lyon</answer>') });
  assert.equal(r.authors.answer, 0); // F1("Lyon", "Paris") = 0
  assert.equal(r.paper.answer, 2);
});

test('prorag-outcome: the authors\' workflow check reads tags inside retrieved documents and is case-sensitive', async () => {
  const html = await both('prorag-outcome', { response: PRORAG_OK.replace('Paris is the capital.', 'Paris is <b>the</b> capital.') });
  assert.equal(html.authors.workflow, -1); // <b> is not a workflow tag
  assert.equal(html.paper.workflow, 1);
  const upper = await both('prorag-outcome', { response: PRORAG_OK.replace('<step>\nDone.</step>', '<Step>\nDone.</Step>') });
  assert.equal(upper.authors.workflow, -1);
  assert.equal(upper.paper.workflow, 1);
});

test('prorag-outcome: the authors take one gold string (the line\'s `answer`, else the first); the default the best of all', async () => {
  const r = await both('prorag-outcome', { response: PRORAG_OK.replace('<answer>Paris</answer>', '<answer>City of Light</answer>'), golden_answers: ['Paris', 'City of Light'] });
  assert.equal(r.authors.answer, 0);
  assert.equal(r.paper.answer, 2);
});

test('prorag step format: the authors\' format_reward_step is −2 for a well-formed step; the paper\'s schema gives +1', () => {
  const turn = 'I look it up.</step>\n<subquery>capital of France</subquery>\n<retrieval>\nDoc 1(Title: Paris) Paris.\n</retrieval>';
  assert.equal(proragAuthorsStepFormat(turn), -2);
  const step = { action: { type: 'search' as const, query: 'capital of France' }, raw: '<step>I look it up.</step>\n<subquery>capital of France</subquery>' };
  assert.deepEqual(proragStepRewards({ steps: [step] }), [1]);
});

const SR1_PROMPT = '<|im_start|>user\nAnswer inside <answer> and </answer>, for example <answer> Beijing </answer>. Question: capital of France?\n<|im_end|>\n<|im_start|>assistant\n';
const SR1_OK = '<think> I need to look it up. </think>\n<search> capital of France </search>\n\n<information>Doc 1(Title: "Paris") Paris is the capital of France.\n</information>\n\n<think> It is Paris. </think>\n<answer> Paris </answer>';

test('search-r1-em: with the prompt\'s example both modes find the last answer (score 1)', async () => {
  const r = await both('search-r1-em', { response: SR1_OK, prompt: SR1_PROMPT });
  assert.equal(r.paper.total, 1);
  assert.equal(r.authors.total, 1);
});

test('search-r1-em: the authors need two <answer> blocks in prompt + response; the default reads the response\'s final answer', async () => {
  const r = await both('search-r1-em', { response: SR1_OK });
  assert.equal(r.authors.total, 0);
  assert.equal(r.paper.total, 1);
});

test('search-r1-em: the authors take the last <answer> anywhere, retrieved text included; the default the episode\'s answer', async () => {
  const r = await both('search-r1-em', { response: SR1_OK.replace('<answer> Paris </answer>', '<answer> Paris </answer> I also saw <answer> Lyon </answer>'), prompt: SR1_PROMPT }, ['format_score=0.1']);
  assert.equal(r.authors.total, 0.1); // "Lyon": extracted, wrong → format_score
  assert.equal(r.paper.total, 1);
});

test('search-r1-format: without the <|im_start|>assistant marker the authors call every text malformed', async () => {
  const r = await both('search-r1-format', { response: SR1_OK.replace('<answer> Paris </answer>', '<answer> Lyon </answer>'), prompt: 'Question: capital of France? For example <answer> Beijing </answer>.\n' });
  assert.equal(r.authors.valid, 0);
  assert.equal(r.authors.total, 0.1); // wrong answer, malformed: final_format_score
  assert.equal(r.paper.valid, 1);
  assert.equal(r.paper.total, 0.2); // wrong answer, well-formed: structure_format_score
});

test('search-r1-format: an end-of-turn token after </answer> breaks the authors\' structure; the default ignores it', async () => {
  const r = await both('search-r1-format', { response: `${SR1_OK}<|im_end|>`, prompt: SR1_PROMPT });
  assert.equal(r.authors.valid, 0);
  assert.equal(r.authors.total, 0.8); // right answer, malformed: 1 − structure
  assert.equal(r.paper.valid, 1);
  assert.equal(r.paper.total, 1);
});

test('search-r1-format: a <reflect> before the answer (the LWS format ragtrail\'s search-r1 agent writes) is valid by default only', async () => {
  const r = await both('search-r1-format', { response: SR1_OK.replace('<answer>', '<reflect> Checked. </reflect>\n<answer>'), prompt: SR1_PROMPT });
  assert.equal(r.authors.valid, 0);
  assert.equal(r.paper.valid, 1);
});

test('reasonrag-terminal: the authors cut the answer at its first "." ("St. Louis" → "St")', async () => {
  const r = await both('reasonrag-terminal', { response: 'So the answer is <answer>St. Louis</answer>', golden_answers: ['St. Louis'], step: 2 });
  assert.equal(r.paper.total, 0.95 ** 2); // F1 1
  // "st" vs "st louis": precision 1, recall 1/2, F1 2/3.
  assert.equal(r.authors.f1, 2 / 3);
  assert.equal(r.authors.total, (2 / 3) * 0.95 ** 2);
});

test('reasonrag-terminal: an answer spanning a line break is not matched by the authors (no DOTALL): the whole text is the answer', async () => {
  const r = await both('reasonrag-terminal', { response: 'Reasoning done. <answer>Paris\n</answer>', step: 1 });
  assert.equal(r.paper.f1, 1);
  assert.equal(r.authors.f1, 0); // "Reasoning done" (cut at the ".") vs "Paris"
});

test('reasonrag-terminal: the authors read an untagged answer after "So the answer is"; the default needs the <answer> tag', async () => {
  const r = await both('reasonrag-terminal', { response: 'So the answer is Paris. Later I wrote <answer>Lyon</answer>', step: 1 });
  assert.equal(r.authors.f1, 0); // the last <answer> after the prefix: "Lyon"
  assert.equal(r.paper.f1, 0);
  const prefix = await both('reasonrag-terminal', { response: 'So the answer is Paris', step: 1 });
  assert.equal(prefix.authors.f1, 1);
  assert.equal(prefix.paper.f1, 0); // no <answer> tag: no answer action
});

test('arena: integers past 2^53 in the relevance list: the list is malformed by default, exact Python ints in compat', async () => {
  const response = (rel: string) => ARENA_OK.replace('[1]', rel);
  const big = await both('arena', { response: response('[9007199254740993]'), gold_reference_ids: [9007199254740992] });
  assert.equal(big.paper.relevance, 0); // not rounded to the gold's 2^53
  assert.equal(big.authors.relevance, 0); // 2^53 + 1 != 2^53 in Python
  const huge = await both('arena', { response: response(`[1, ${'7'.repeat(400)}]`), ...refs });
  assert.deepEqual([huge.paper.relevance, huge.authors.relevance], [0, 0.5]);
  const over = await both('arena', { response: response(`[1, ${'7'.repeat(5000)}]`), ...refs });
  assert.deepEqual([over.paper.relevance, over.authors.relevance], [0, 0]); // json.loads: ValueError past 4,300 digits
});
