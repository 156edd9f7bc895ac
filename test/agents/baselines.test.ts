/**
 * The inference-time baselines' control flow on a scripted LLM and a table retriever, traced by hand:
 * which queries are searched, what each model call is shown, when the episode ends and with what answer.
 * Two-hop question: "Where was the director of The Silent Harbor born?" — Maren Tolvik, born in Oslo.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LlmPolicy } from '../../src/agents/policy.js';
import type { RoutedProtocol } from '../../src/agents/router.js';
import { PROTOCOLS } from '../../src/agents/registry.js';
import type { Question } from '../../src/core/types.js';
import { RagEnv } from '../../src/env/env.js';
import { runEpisode } from '../../src/eval/run.js';
import { ScriptedLLM } from '../../src/llm/scripted.js';
import { noise, TableRetriever } from '../fixtures/table-retriever.js';

const question: Question = { id: 'q1', question: 'Where was the director of The Silent Harbor born?', answers: ['Oslo'] };

async function run(agent: keyof typeof PROTOCOLS, script: string[]) {
  const p = PROTOCOLS[agent];
  const retriever = new TableRetriever();
  const llm = new ScriptedLLM(script);
  const env = new RagEnv({ retriever, topK: 2, maxTurns: p.defaults.maxTurns, maxSearches: p.defaults.maxSearches });
  const t = await runEpisode(env, new LlmPolicy(p, llm), question);
  const user = llm.requests.map((r) => r.messages!.find((m) => m.role === 'user')!.content);
  return { t, queries: retriever.queries, user, requests: llm.requests };
}

describe('IRCoT', () => {
  it('searches the question, then each written sentence; paragraphs accumulate once each; stops at "So the answer is:"', async () => {
    // The second reply writes the rest of the chain at once: only its first sentence is the step (the paper's), so the next hop is still searched.
    const { t, queries, user } = await run('ircot', ['The Silent Harbor was directed by Maren Tolvik.\nMore text.', 'Maren Tolvik was born in Oslo. So the answer is: Oslo', 'So the answer is: Oslo']);
    assert.deepEqual(queries, [question.question, 'The Silent Harbor was directed by Maren Tolvik.', 'Maren Tolvik was born in Oslo.']);
    assert.equal(user.length, 3);
    // Call 1: the question's paragraphs, nothing reasoned yet.
    assert.match(user[0]!, /^Paragraphs:\nTitle: The Silent Harbor\n.*\n\nTitle: Harbor Lights\n/);
    assert.match(user[0]!, /Reasoning so far: \(nothing yet\)/);
    // Call 2: the three distinct paragraphs (Harbor once), and the first sentence as the chain so far.
    assert.equal(user[1]!.split('Title: The Silent Harbor').length - 1, 1);
    assert.match(user[1]!, /Title: Harbor Lights[\s\S]*Title: Maren Tolvik/);
    assert.match(user[1]!, /Reasoning so far: The Silent Harbor was directed by Maren Tolvik\.\n/);
    assert.match(user[2]!, /Reasoning so far: The Silent Harbor was directed by Maren Tolvik\. Maren Tolvik was born in Oslo\.\n/);
    assert.equal(t.prediction, 'Oslo');
    assert.equal(t.retrievalCount, 3);
  });

  it('a step is the first sentence (initials and abbreviations do not end it); the cue in it answers, in any case', async () => {
    const { firstSentence } = await import('../../src/agents/ircot.js');
    assert.equal(firstSentence('W. A. Mozart was born in Salzburg. The Salzach flows there.'), 'W. A. Mozart was born in Salzburg.');
    assert.equal(firstSentence('Dr. No is a 1962 film. Next.'), 'Dr. No is a 1962 film.');
    const s = { question, steps: [], done: false, mustAnswer: false, turnsLeft: 5, searchesLeft: 5 };
    assert.deepEqual(PROTOCOLS.ircot.parse('It is in India, so the answer is: New Delhi.', s), { type: 'answer', answer: 'New Delhi.' });
    assert.deepEqual(PROTOCOLS.ircot.parse('So the answer is: W. A. Mozart.', s), { type: 'answer', answer: 'W. A. Mozart.' });
    assert.deepEqual(PROTOCOLS.ircot.parse('Thinking first. So the answer is: X', { ...s, mustAnswer: true }), { type: 'answer', answer: 'X' });
  });

  it('out of searches it asks for the answer sentence only', async () => {
    const thoughts = Array.from({ length: 4 }, (_, i) => `Thought ${i} about the Harbor.`);
    const { t, queries, user } = await run('ircot', [...thoughts, 'So the answer is: Oslo']);
    assert.equal(queries.length, 5); // the question and four sentences: the budget of 5 searches
    assert.match(user.at(-1)!, /No more paragraphs will be looked up/);
    assert.equal(t.prediction, 'Oslo');
  });
});

describe('Iter-RetGen', () => {
  it('three iterations: the question, then question + each whole generation; each generation sees its own retrieval; the last answers', async () => {
    const g1 = 'The film was directed by Maren Tolvik.\nAnswer: Maren Tolvik';
    const g2 = 'Maren Tolvik was born in Oslo.\nAnswer: Oslo';
    const { t, queries, user } = await run('iter-retgen', [g1, g2, 'She was born in Oslo.\nAnswer: Oslo']);
    assert.deepEqual(queries, [question.question, `${question.question} ${g1}`, `${question.question} ${g2}`]);
    assert.equal(user.length, 3);
    assert.match(user[0]!, /^Documents:\nDoc 1 \(Title: The Silent Harbor\).*\nDoc 2 \(Title: Harbor Lights\)/);
    // Iteration 2 and 3 show only their own retrieval (the born/Tolvik rule), not the first one's noise.
    for (const u of user.slice(1)) {
      assert.match(u, /^Documents:\nDoc 1 \(Title: Maren Tolvik\).*\nDoc 2 \(Title: The Silent Harbor\)/);
      assert.doesNotMatch(u, /Harbor Lights/);
    }
    assert.equal(t.prediction, 'Oslo');
    assert.equal(t.retrievalCount, 3);
    assert.equal(t.steps.length, 4);
  });
});

describe('Self-Ask', () => {
  it('follow-ups searched one by one, the transcript carried on, intermediate answers written after each search', async () => {
    const { t, queries, user, requests } = await run('self-ask', [
      'Follow up: Who directed The Silent Harbor?\n',
      ' Maren Tolvik directed it.\nFollow up: Where was Maren Tolvik born?\n',
      ' She was born in Oslo.\nSo the final answer is: Oslo',
    ]);
    assert.deepEqual(queries, [question.question, 'Who directed The Silent Harbor?', 'Where was Maren Tolvik born?']);
    assert.deepEqual(requests[0]!.stop, ['Intermediate answer:']);
    assert.match(user[0]!, /Question: Where was the director of The Silent Harbor born\?\nAre follow up questions needed here: Yes\.$/);
    assert.ok(user[1]!.endsWith('Are follow up questions needed here: Yes.\nFollow up: Who directed The Silent Harbor?\nIntermediate answer:'));
    assert.ok(user[2]!.endsWith('Follow up: Who directed The Silent Harbor?\nIntermediate answer: Maren Tolvik directed it.\nFollow up: Where was Maren Tolvik born?\nIntermediate answer:'));
    // Each call's context is the latest search's documents only.
    assert.match(user[1]!, /^Context:\nDoc 1 \(Title: The Silent Harbor\)/);
    assert.match(user[2]!, /^Context:\nDoc 1 \(Title: Maren Tolvik\)/);
    assert.equal(t.prediction, 'Oslo');
    assert.equal(t.retrievalCount, 3);
  });
});

describe('Adaptive-RAG and SKR: one decision call routes the question', () => {
  const fresh = (): Question => ({ ...question });
  async function routed(agent: 'adaptive-rag' | 'skr', script: string[]) {
    const p = PROTOCOLS[agent];
    const retriever = new TableRetriever();
    const llm = new ScriptedLLM(script);
    const env = new RagEnv({ retriever, topK: 2, maxTurns: p.defaults.maxTurns, maxSearches: p.defaults.maxSearches });
    const q = fresh();
    const t = await runEpisode(env, new LlmPolicy(p, llm), q);
    return { t, queries: retriever.queries, requests: llm.requests, route: (p as RoutedProtocol).routeOf(q) };
  }

  it('Adaptive-RAG: A answers directly (no search), B searches the question once, C runs IRCoT; an unreadable label is C', async () => {
    const a = await routed('adaptive-rag', ['A', 'Oslo']);
    assert.deepEqual([a.route, a.queries, a.requests.length, a.t.prediction], ['A', [], 2, 'Oslo']);
    assert.match(a.requests[0]!.messages![0]!.content, /reply with one letter only[\s\S]*Question: Where was the director of The Silent Harbor born\?\nLabel:$/);
    assert.equal(a.requests[0]!.temperature, 0);
    const b = await routed('adaptive-rag', ['B', 'She was born in Oslo.\nAnswer: Oslo']);
    assert.deepEqual([b.route, b.queries, b.requests.length, b.t.prediction], ['B', [question.question], 2, 'Oslo']);
    const c = await routed('adaptive-rag', ['Label: C', 'The Silent Harbor was directed by Maren Tolvik.', 'So the answer is: Oslo']);
    assert.deepEqual([c.route, c.queries, c.requests.length, c.t.prediction], ['C', [question.question, 'The Silent Harbor was directed by Maren Tolvik.'], 3, 'Oslo']);
    const unread = await routed('adaptive-rag', ['maybe', 'So the answer is: Oslo']);
    assert.equal(unread.route, 'C');
  });

  it('SKR: "no" answers from the model\'s own knowledge, "yes" searches the question first', async () => {
    const own = await routed('skr', ['No, I know it.', 'Tolvik was born in Oslo.\nAnswer: Oslo']);
    assert.deepEqual([own.route, own.queries, own.requests.length, own.t.prediction], ['own', [], 2, 'Oslo']);
    const retrieve = await routed('skr', ['yes', 'Answer: Oslo']);
    assert.deepEqual([retrieve.route, retrieve.queries, retrieve.requests.length], ['retrieve', [question.question], 2]);
    assert.match(retrieve.requests[1]!.messages![1]!.content, /^Documents:\nSearch: Where was the director/);
  });
});

describe('SuRe', () => {
  it('one search; K = 2 candidates, a summary each, validity and the pair judged in both orders; the best candidate answers with no further call', async () => {
    const { t, queries, user, requests } = await run('sure', [
      '(a) Oslo\n(b) Bergen',
      'Maren Tolvik, who directed the film, was born in Oslo.',
      'Nothing in the documents mentions Bergen.',
      'True',
      'False',
      '1',
      '2',
    ]);
    assert.deepEqual(queries, [question.question]);
    assert.equal(requests.length, 7);
    assert.match(user[0]!, /Give 2 different short candidate answers[\s\S]*\(a\) <short answer>\n\(b\) <short answer>$/);
    assert.match(user[1]!, /supports the answer "Oslo"/);
    assert.match(user[2]!, /supports the answer "Bergen"/);
    assert.match(user[3]!, /^Question: .*\nProposed answer: Oslo\nSummary: Maren Tolvik, who directed/);
    assert.match(user[5]!, /Summary 1: Maren Tolvik[\s\S]*Summary 2: Nothing in the documents/);
    assert.match(user[6]!, /Summary 1: Nothing in the documents[\s\S]*Summary 2: Maren Tolvik/);
    assert.ok(requests.every((r) => r.temperature === 0));
    assert.equal(t.prediction, 'Oslo');
    assert.equal(t.steps[0]!.summary, 'SuRe candidates: Oslo (validity 1, ranking 1); Bergen (validity 0, ranking 0); chosen: Oslo');
    // The seven calls are the answer step's cost (its usage and model time), though the step itself is fixed.
    const script = ['(a) Oslo\n(b) Bergen', 'Maren Tolvik, who directed the film, was born in Oslo.', 'Nothing in the documents mentions Bergen.', 'True', 'False', '1', '2'];
    const prompt = requests.reduce((n, r) => n + Math.ceil(JSON.stringify(r.messages).length / 4), 0);
    const completion = script.reduce((n, x) => n + Math.ceil(x.length / 4), 0);
    assert.deepEqual(t.steps[1]!.usage, { promptTokens: prompt, completionTokens: completion });
    assert.ok(t.steps[1]!.llmMs! >= 0 && t.steps[0]!.usage === undefined);
  });

  it('a pairwise verdict can outweigh validity, and ties go to the first candidate', async () => {
    const { sureChoice, readCandidates } = await import('../../src/agents/sure.js');
    assert.equal(sureChoice(['x', 'y'], [1, 1], [0, 1]), 'y');
    assert.equal(sureChoice(['x', 'y'], [1, 0], [0, 1]), 'x');
    assert.deepEqual(readCandidates('Candidates:\n(a) Oslo\n(b) oslo\nb) Bergen\n3. Paris'), ['Oslo', 'Bergen']);
    // The one-line form SuRe's prompt asks for (FlashRAG's differential, probe "one line").
    assert.deepEqual(readCandidates('(a) 1946, (b) 1975.'), ['1946', '1975']);
  });

  it('a judge that always names the first position wins each order once: the pair is a tie and validity decides', async () => {
    // Both summaries judged valid; verdicts "1" then "1" (position bias): ½ each, so the first candidate keeps its tie-break.
    const biased = await run('sure', ['(a) Bergen\n(b) Oslo', 'Bergen summary.', 'Oslo summary.', 'False', 'True', '1', '1']);
    assert.equal(biased.requests.length, 7);
    assert.equal(biased.t.steps[0]!.summary, 'SuRe candidates: Bergen (validity 0, ranking 0.5); Oslo (validity 1, ranking 0.5); chosen: Oslo');
    assert.equal(biased.t.prediction, 'Oslo');
  });
});

describe('CoRAG', () => {
  it('sub-query, search, sub-answer for the path length (3), then one final call over the chain; the reply is the answer', async () => {
    const { t, queries, user, requests } = await run('corag', [
      '"Who directed The Silent Harbor?"', // sub-query 1 (quotes dropped)
      'Maren Tolvik', // sub-answer 1
      'Intermediate query 2: Where was Maren Tolvik born?', // sub-query 2 (lead dropped)
      'Oslo', // sub-answer 2
      'When was Maren Tolvik born?', // sub-query 3: CoRAG does not stop early
      'In 1930.', // sub-answer 3
      'Oslo', // final answer
    ]);
    assert.deepEqual(queries, ['Who directed The Silent Harbor?', 'Where was Maren Tolvik born?', 'When was Maren Tolvik born?']);
    assert.equal(requests.length, 7);
    assert.match(user[0]!, /^## Previous intermediate queries and answers\nNothing yet\n\n## Task description\nanswer multi-hop questions\n\n## Main query to answer\nWhere was the director of The Silent Harbor born\?\n/);
    // The sub-answer call: the search's documents, the best last.
    assert.match(user[1]!, /^## Documents\nHarbor Lights\nHarbor Lights is a novel\.\n\nThe Silent Harbor\nThe Silent Harbor is a 1971 film directed by Maren Tolvik\.\n\n## Query\nWho directed The Silent Harbor\?/);
    assert.match(user[2]!, /^## Previous intermediate queries and answers\nIntermediate query 1: Who directed The Silent Harbor\?\nIntermediate answer 1: Maren Tolvik\n\n## Task/);
    assert.match(user[6]!, /^## Documents\nDoc 0: [\s\S]*## Intermediate queries and answers\nIntermediate query 1: [\s\S]*Intermediate answer 3: In 1930\.\n\n## Task description/);
    assert.ok(requests.slice(1).filter((_, i) => i % 2 === 0).every((r) => r.temperature === 0), 'sub-answers at temperature 0');
    assert.equal(t.prediction, 'Oslo');
    assert.equal(t.steps[0]!.summary, 'Maren Tolvik');
  });
});

describe('SimpleDeepSearcher with its reader', () => {
  it('the reader reads each new search (documents and the reasoning so far) at temperature 0; its analysis is spliced into the running turn', async () => {
    const { t, queries, requests } = await run('simple-deep-searcher', [
      'I need the director first.\n\n<|begin_search_query|>The Silent Harbor director',
      'Notes.\n**Final Information**\nThe Silent Harbor was directed\nby Maren Tolvik.',
      'Born in Oslo.\n\n**Final Answer**\n\\boxed{Oslo}',
    ]);
    assert.deepEqual(queries, ['The Silent Harbor director']);
    assert.equal(requests.length, 3);
    const reader = requests[1]!;
    assert.equal(reader.temperature, 0);
    assert.match(reader.messages![0]!.content, /Search query: The Silent Harbor director\n\nPages found:\nDoc 1 \(Title: The Silent Harbor\)/);
    const last = requests[2]!.messages!;
    assert.equal(last.at(-1)!.content, '\n\n<|begin_search_result|>The Silent Harbor was directedby Maren Tolvik.<|end_search_result|>\n\n');
    assert.equal(last.at(-2)!.content, 'I need the director first.\n\n<|begin_search_query|>The Silent Harbor director<|end_search_query|>');
    assert.equal(t.prediction, 'Oslo');
  });
});
