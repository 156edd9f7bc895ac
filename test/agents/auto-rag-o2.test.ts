/**
 * Auto-RAG (ictnlp/Auto-RAG autorag.py / test.py) and O²-Searcher (Acade-Mate/O2-Searcher generation.py,
 * run_closedended.py) against transcripts assembled the way their authors' code joins strings — test
 * vectors, not ragtrail's own `format`: each model turn, as a backend returns it (stop string dropped),
 * parses to the authors' action, and the rendered turns after the prompt are the authors' messages,
 * character for character. Then each protocol end to end on a scripted model and a table retriever,
 * and the environment's several-query search (O²-Searcher's `queries`).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AUTO_RAG_RETRY, autoRag, autoRagDocument } from '../../src/agents/auto-rag.js';
import { O2_INVALID_NOTICE, o2Searcher, queryGroups } from '../../src/agents/o2-searcher.js';
import { LlmPolicy } from '../../src/agents/policy.js';
import type { Protocol } from '../../src/agents/protocol.js';
import type { Question } from '../../src/core/types.js';
import type { Action, Message, RetrievedDoc, Step } from '../../src/core/trajectory.js';
import { RagEnv, type State } from '../../src/env/env.js';
import { runEpisode } from '../../src/eval/run.js';
import { ScriptedLLM } from '../../src/llm/scripted.js';
import { TableRetriever } from '../fixtures/table-retriever.js';
import { alexandria, doc, euclid, question } from '../fixtures/euclid.js';

interface Turn {
  /** What the backend returns (stop string dropped). */
  raw: string;
  action: Action;
  docs?: RetrievedDoc[];
  docsPerQuery?: number[];
}

const stateOf = (steps: Step[], q = question): State => ({ question: { id: 'q', question: q, answers: [] }, steps, done: false, mustAnswer: false, turnsLeft: 9, searchesLeft: 9 });

/** Parses each turn in the state before it, checks the action, and returns the rendered messages after the system message. */
function replay(p: Protocol, turns: Turn[]): Message[] {
  const steps: Step[] = [];
  for (const t of turns) {
    assert.deepEqual(p.parse(t.raw, stateOf([...steps])), t.action, JSON.stringify(t.raw));
    steps.push({ action: t.action, raw: t.raw, ...(t.docs && { docs: t.docs }), ...(t.docsPerQuery && { docsPerQuery: t.docsPerQuery }) });
  }
  const messages = p.render({ ...stateOf(steps), done: true });
  assert.equal(messages[0]!.role, 'system');
  return messages.slice(1);
}

const user = (content: string): Message => ({ role: 'user', content });
const assistant = (content: string): Message => ({ role: 'assistant', content });

describe('Auto-RAG: "Query:" / "Final Answer:" markers, "Retrieved Document_N:" with two passages not shown before', () => {
  const m1 = 'Analysis: To answer this question, I would need to know who is called the founder of geometry and in which city he lived.\n\nInitial Query: founder of geometry';
  const m2 = 'Intermediate Answer_1: Based on the Retrieved Document_1, Euclid, the founder of geometry, worked in Alexandria. To answer the question, we need to find who founded Alexandria.\n\nRefined Query: who founded Alexandria';
  const m3 = 'Intermediate Answer_2: Based on the Retrieved Document_2, Alexandria was founded by Alexander the Great.\n\nFinal Answer: Alexander the Great.';

  it("renders the authors' chat: the turns stripped, each search's first two unseen passages (text only) joined by a space", () => {
    const messages = replay(autoRag, [
      // A backend may return surrounding whitespace; the authors strip every turn.
      { raw: `\n${m1}  `, action: { type: 'search', query: 'founder of geometry' }, docs: euclid },
      // The second search returns a passage shown before first: it is skipped, and the next two unseen are shown.
      { raw: m2, action: { type: 'search', query: 'who founded Alexandria' }, docs: [euclid[1]!, ...alexandria] },
      { raw: m3, action: { type: 'answer', answer: 'Alexander the Great.' } },
    ]);
    // "Question: " + question.strip(); assistant turns .strip(); "Retrieved Document_{current_iter}: " + " ".join(documents).strip().
    assert.deepEqual(messages, [
      user('Question: who founded the city where the founder of geometry lived?'),
      assistant(m1),
      user('Retrieved Document_1: Euclid, sometimes called Euclid of Alexandria, was a Greek mathematician, often referred to as the "founder of geometry". The Elements is a mathematical treatise consisting of 13 books attributed to Euclid in Alexandria, Ptolemaic Egypt c. 300 BC.'),
      assistant(m2),
      user('Retrieved Document_2: Alexandria was founded around a small pharaonic town c. 332 BC by Alexander the Great. The city was founded by Alexander the Great in April 331 BC.'),
      assistant(m3),
    ]);
    assert.equal(autoRag.render(stateOf([], `  ${question}\n`))[1]!.content, `Question: ${question}`);
  });

  it('a passage is its last line (contents.split("\\n")[-1]); every passage seen leaves the document empty', () => {
    const seen = new Set<string>();
    assert.equal(autoRagDocument([doc('T', 'first line\nlast line', 7)], seen), 'last line');
    assert.equal(autoRagDocument([doc('T', 'first line\nlast line', 7)], seen), '');
    const text = autoRag.render({ ...stateOf([{ action: { type: 'search', query: 'x' }, raw: 'Initial Query: x', docs: [] }]) }).at(-1)!.content;
    assert.equal(text, 'Retrieved Document_1: ');
  });

  it('reads turns as the authors do: "query:" in any case searches (after the last "Query:", [Dense] dropped), before "final answer"', () => {
    const s = stateOf([]);
    assert.deepEqual(autoRag.parse('Initial Query: [Dense] Euclid birthplace ', s), { type: 'search', query: 'Euclid birthplace' });
    assert.deepEqual(autoRag.parse('Refined Query: a\nRefined Query: b', s), { type: 'search', query: 'b' });
    // "query:" without "Query:": split('Query:') leaves the whole turn, which is what the authors search.
    assert.deepEqual(autoRag.parse('Refined query: Euclid', s), { type: 'search', query: 'Refined query: Euclid' });
    // The query check comes first.
    assert.deepEqual(autoRag.parse('Final Answer: Paris\nRefined Query: capital of France', s), { type: 'search', query: 'capital of France' });
    assert.deepEqual(autoRag.parse('Intermediate Answer_3: done.\n\nfinal answer: Oslo', s), { type: 'answer', answer: 'Oslo' });
    // "final answer" with no colon: the split leaves the whole turn.
    assert.deepEqual(autoRag.parse('The final answer is Oslo', s), { type: 'answer', answer: 'The final answer is Oslo' });
    assert.equal(autoRag.parse('Refined Query:   ', s).type, 'invalid');
    assert.equal(autoRag.parse('Final Answer:', s).type, 'invalid');
    assert.equal(autoRag.parse('I am not sure what to do.', s).type, 'invalid');
  });

  it('a turn with neither marker is invalid and gets the notice; document numbers count searches only', () => {
    const messages = replay(autoRag, [
      { raw: 'Let me think.', action: { type: 'invalid', reason: 'neither a "Query:" nor a "Final Answer:"' } },
      { raw: m1, action: { type: 'search', query: 'founder of geometry' }, docs: euclid.slice(0, 1) },
    ]);
    assert.deepEqual(messages.slice(1), [assistant('Let me think.'), user(AUTO_RAG_RETRY), assistant(m1), user(`Retrieved Document_1: ${euclid[0]!.text}`)]);
  });

  it('format writes what parse reads back', () => {
    const s0 = stateOf([]);
    const search: Action = { type: 'search', query: 'founder of geometry' };
    assert.match(autoRag.format(search, s0), /^Analysis: [\s\S]*\n\nInitial Query: founder of geometry$/);
    assert.deepEqual(autoRag.parse(autoRag.format(search, s0), s0), search);
    const s1 = stateOf([{ action: search, raw: 'Initial Query: founder of geometry', docs: euclid }]);
    const answer: Action = { type: 'answer', answer: 'Alexander the Great' };
    assert.match(autoRag.format(answer, s1), /^Intermediate Answer_1: [\s\S]*\n\nFinal Answer: Alexander the Great$/);
    assert.deepEqual(autoRag.parse(autoRag.format(answer, s1), s1), answer);
    assert.deepEqual(autoRag.parse(autoRag.format({ type: 'search', query: 'Alexandria' }, s1), s1), { type: 'search', query: 'Alexandria' });
  });
});

describe('O²-Searcher: several <query>s in one <search>, "Search learnings: <learnings>…</learnings>."', () => {
  const m1 = '<think>I need the founder of geometry and the city where he lived.</think>\n<search>\n<query>founder of geometry</query>\n<query>Euclid city</query>\n</search>';
  const m2 = '<think>Euclid lived in Alexandria. Now who founded Alexandria?</think>\n<search>\n<query> who founded Alexandria </query>\n</search>';
  const m3 = '<think>Alexandria was founded by Alexander the Great.</think>\n<answer>Alexander the Great</answer>';
  const dropStop = (m: string) => m.replace(/<\/(search|answer)>$/, '');
  const contents = (d: RetrievedDoc) => `"${d.title}"\n${d.text}`; // wiki-18's `contents` field

  it("renders the loop's messages: each query's documents space-joined on their own line, repeats kept, stripped", () => {
    const both: Action = { type: 'search', query: 'founder of geometry; Euclid city', queries: ['founder of geometry', 'Euclid city'] };
    const messages = replay(o2Searcher, [
      // Query 2 returns Euclid's Elements again: the search service keeps it.
      { raw: dropStop(m1), action: both, docs: [euclid[0]!, euclid[1]!, euclid[1]!, alexandria[0]!], docsPerQuery: [2, 2] },
      { raw: dropStop(m2), action: { type: 'search', query: 'who founded Alexandria' }, docs: alexandria },
      { raw: dropStop(m3), action: { type: 'answer', answer: 'Alexander the Great' } },
    ]);
    // run_closedended.py: " ".join(contents of a query's docs), "\n".join over queries; generation.py:
    // extra_prompt.format(learning_str=result.strip()) = "Search learnings: <learnings>{…}</learnings>.\n".
    const l1 = 'Search learnings: <learnings>"Euclid"\nEuclid, sometimes called Euclid of Alexandria, was a Greek mathematician, often referred to as the "founder of geometry". "Euclid\'s Elements"\nThe Elements is a mathematical treatise consisting of 13 books attributed to Euclid in Alexandria, Ptolemaic Egypt c. 300 BC.\n"Euclid\'s Elements"\nThe Elements is a mathematical treatise consisting of 13 books attributed to Euclid in Alexandria, Ptolemaic Egypt c. 300 BC. "Alexandria"\nAlexandria was founded around a small pharaonic town c. 332 BC by Alexander the Great.</learnings>.\n';
    const l2 = `Search learnings: <learnings>${alexandria.map(contents).join(' ')}</learnings>.\n`;
    assert.ok(l2.startsWith('Search learnings: <learnings>"Alexandria"\nAlexandria was founded around'));
    assert.deepEqual(messages, [user(`Initial query: ${question}`), assistant(m1), user(l1), assistant(m2), user(l2), assistant(m3)]);
  });

  it('a turn is cut at its first </search> (else </answer>) as the loop cuts it; the first complete tag decides', () => {
    const messages = replay(o2Searcher, [
      { raw: `${m2}\n<learnings>made up</learnings>`, action: { type: 'search', query: 'who founded Alexandria' }, docs: [] },
      // An answer before a search ends the episode, and the kept text runs to the </search>, as the loop keeps it.
      { raw: '<answer>Alexander</answer> <search><query>x</query></search> more', action: { type: 'answer', answer: 'Alexander' } },
    ]);
    assert.deepEqual(messages.slice(1), [assistant(m2), user('Search learnings: <learnings></learnings>.\n'), assistant('<answer>Alexander</answer> <search><query>x</query></search>')]);
  });

  it('a turn with neither tag, or a <search> with no <query>, gets the loop\'s notice', () => {
    const messages = replay(o2Searcher, [
      { raw: '<think>hmm</think>', action: { type: 'invalid', reason: 'no <search> or <answer> tag' } },
      { raw: '<think>hmm</think>\n<search> Euclid </search>', action: { type: 'invalid', reason: 'no <query> in <search>' } },
      { raw: '<answer>', action: { type: 'invalid', reason: 'empty <answer>' } },
    ]);
    assert.deepEqual(messages.slice(1).map((m) => m.content), ['<think>hmm</think>', O2_INVALID_NOTICE, '<think>hmm</think>\n<search> Euclid </search>', O2_INVALID_NOTICE, '<answer>', O2_INVALID_NOTICE]);
    assert.ok(O2_INVALID_NOTICE.startsWith('The response you attempted before is invalid.') && O2_INVALID_NOTICE.endsWith('</answer> tags.\n'));
  });

  it('reads queries as the loop does: every <query> of the <search>, stripped, empty ones dropped; one query needs no list', () => {
    const s = stateOf([]);
    assert.deepEqual(o2Searcher.parse('<search><query> a </query><query></query><query>b</query>', s), { type: 'search', query: 'a; b', queries: ['a', 'b'] });
    assert.deepEqual(o2Searcher.parse('<search><query>a</query> <query>a</query></search>', s), { type: 'search', query: 'a; a', queries: ['a', 'a'] });
    assert.deepEqual(o2Searcher.parse('<search>\n<query>only</query>\n', s), { type: 'search', query: 'only' });
    assert.deepEqual(o2Searcher.parse('<answer> x <answer> y </answer>', s), { type: 'answer', answer: 'x <answer> y' });
    assert.deepEqual(o2Searcher.parse('<think>t</think>\n<answer>\n- finding one\n- finding two', s), { type: 'answer', answer: '- finding one\n- finding two' });
  });

  it('format writes what parse reads back, several queries included', () => {
    const s = stateOf([]);
    for (const a of [
      { type: 'search', query: 'a; b', queries: ['a', 'b'] },
      { type: 'search', query: 'a' },
      { type: 'answer', answer: 'Oslo' },
    ] as Action[]) assert.deepEqual(o2Searcher.parse(o2Searcher.format(a, s), s), a);
    assert.match(o2Searcher.format({ type: 'search', query: 'a; b', queries: ['a', 'b'] }, s), /^<think>[\s\S]*<\/think>\n<search>\n<query>a<\/query>\n<query>b<\/query>\n<\/search>$/);
  });

  it('groups a step\'s documents by query (one group without docsPerQuery)', () => {
    assert.deepEqual(queryGroups({ docs: euclid, docsPerQuery: [1, 0, 2] }), [[euclid[0]], [], [euclid[1], euclid[2]]]);
    assert.deepEqual(queryGroups({ docs: euclid }), [euclid]);
  });
});

// ----------------------------------------------------------------------------- the environment and end to end

const q1: Question = { id: 'q1', question: 'Where was the director of The Silent Harbor born?', answers: ['Oslo'] };

describe('RagEnv: a search of several queries', () => {
  it('retrieves each query on its own, in order, and concatenates the documents (repeats kept) with their counts', async () => {
    const retriever = new TableRetriever();
    const env = new RagEnv({ retriever, topK: 2, maxTurns: 3 });
    const s0 = env.reset(q1);
    const { state } = await env.step(s0, { action: { type: 'search', query: 'Harbor; Tolvik; x', queries: ['Harbor', 'Tolvik', 'x'] }, raw: '' });
    assert.deepEqual(retriever.queries, ['Harbor', 'Tolvik', 'x']);
    assert.equal(retriever.batches, 1);
    const step = state.steps[0]!;
    assert.deepEqual(step.docs!.map((d) => d.passageId), ['p1', 'p3', 'p2', 'p1', 'p3']);
    assert.deepEqual(step.docsPerQuery, [2, 2, 1]);
    assert.equal(state.searchesLeft, 2, 'one search step, whatever its number of queries');
    assert.ok(step.retrievalMs! >= 0);
  });

  it('a search of one query is as before: the query searched, no counts', async () => {
    const retriever = new TableRetriever();
    const env = new RagEnv({ retriever, topK: 2, maxTurns: 3 });
    const { state } = await env.step(env.reset(q1), { action: { type: 'search', query: 'Tolvik' }, raw: '' });
    assert.deepEqual([retriever.queries, retriever.batches], [['Tolvik'], 0]);
    assert.deepEqual(state.steps[0]!.docs!.map((d) => d.passageId), ['p2', 'p1']);
    assert.equal(state.steps[0]!.docsPerQuery, undefined);
    // An empty list of queries falls back to `query`.
    const again = await env.step(env.reset(q1), { action: { type: 'search', query: 'Harbor', queries: [] }, raw: '' });
    assert.deepEqual(again.state.steps[0]!.docs!.map((d) => d.passageId), ['p1', 'p3']);
  });

  it('over budget, a several-query search is invalid and retrieves nothing', async () => {
    const retriever = new TableRetriever();
    const env = new RagEnv({ retriever, topK: 2, maxTurns: 3, maxSearches: 0 });
    const { state } = await env.step(env.reset(q1), { action: { type: 'search', query: 'a; b', queries: ['a', 'b'] }, raw: '' });
    assert.equal(state.steps[0]!.action.type, 'invalid');
    assert.deepEqual(retriever.queries, []);
  });
});

async function run(p: Protocol, script: string[]) {
  const retriever = new TableRetriever();
  const llm = new ScriptedLLM(script);
  const env = new RagEnv({ retriever, topK: p.defaults.topK, maxTurns: p.defaults.maxTurns, maxSearches: p.defaults.maxSearches });
  const t = await runEpisode(env, new LlmPolicy(p, llm), q1);
  return { t, queries: retriever.queries, requests: llm.requests };
}

describe('end to end on a scripted model', () => {
  it('Auto-RAG: initial query, refined query, final answer; a passage shown once is not shown again', async () => {
    const { t, queries, requests } = await run(autoRag, [
      'Analysis: I need the director of The Silent Harbor, then where that person was born.\n\nInitial Query: The Silent Harbor director',
      'Intermediate Answer_1: Based on the Retrieved Document_1, the film was directed by Maren Tolvik. We need her birthplace.\n\nRefined Query: Maren Tolvik birthplace',
      'Intermediate Answer_2: Based on the Retrieved Document_2, Maren Tolvik was born in Oslo.\n\nFinal Answer: Oslo',
    ]);
    assert.deepEqual(queries, ['The Silent Harbor director', 'Maren Tolvik birthplace']);
    assert.equal(requests.length, 3);
    assert.deepEqual(requests[0]!.messages!.slice(1), [user('Question: Where was the director of The Silent Harbor born?')]);
    assert.equal(requests[0]!.maxTokens, 200);
    assert.equal(requests[1]!.messages!.at(-1)!.content, 'Retrieved Document_1: The Silent Harbor is a 1971 film directed by Maren Tolvik. Harbor Lights is a novel.');
    // The second search returns [Tolvik, Harbor]: Harbor was shown already, so only Tolvik is.
    assert.equal(requests[2]!.messages!.at(-1)!.content, 'Retrieved Document_2: Maren Tolvik was born in Oslo in 1930.');
    assert.equal(requests[2]!.messages!.at(-2)!.role, 'assistant');
    assert.equal(t.prediction, 'Oslo');
    assert.equal(t.retrievalCount, 2);
    assert.equal(t.formatFailures, 0);
  });

  it('O²-Searcher: two queries in one step, then the answer; the learnings come back one line per query', async () => {
    const { t, queries, requests } = await run(o2Searcher, [
      '<think>I need the director and where the director was born.</think>\n<search>\n<query>The Silent Harbor director</query>\n<query>Maren Tolvik birthplace</query>\n',
      '<think>The film was directed by Maren Tolvik, born in Oslo.</think>\n<answer>Oslo',
    ]);
    assert.deepEqual(queries, ['The Silent Harbor director', 'Maren Tolvik birthplace']);
    assert.deepEqual(requests[0]!.stop, ['</search>', '</answer>']);
    assert.deepEqual(requests[0]!.messages!.slice(1), [user('Initial query: Where was the director of The Silent Harbor born?')]);
    const last = requests[1]!.messages!;
    assert.equal(last.at(-2)!.content, '<think>I need the director and where the director was born.</think>\n<search>\n<query>The Silent Harbor director</query>\n<query>Maren Tolvik birthplace</query>\n</search>');
    assert.equal(
      last.at(-1)!.content,
      'Search learnings: <learnings>"The Silent Harbor"\nThe Silent Harbor is a 1971 film directed by Maren Tolvik. "Harbor Lights"\nHarbor Lights is a novel.\n"Maren Tolvik"\nMaren Tolvik was born in Oslo in 1930. "The Silent Harbor"\nThe Silent Harbor is a 1971 film directed by Maren Tolvik.</learnings>.\n',
    );
    assert.deepEqual(t.steps[0]!.action, { type: 'search', query: 'The Silent Harbor director; Maren Tolvik birthplace', queries: ['The Silent Harbor director', 'Maren Tolvik birthplace'] });
    assert.deepEqual(t.steps[0]!.docsPerQuery, [2, 2]);
    assert.equal(t.prediction, 'Oslo');
    assert.equal(t.retrievalCount, 1);
  });

  it('O²-Searcher: four searching turns, then one final turn whose search is not run', async () => {
    const turn = '<think>More.</think>\n<search>\n<query>Harbor</query>\n<query>Tolvik</query>\n';
    const { t, queries, requests } = await run(o2Searcher, [turn, turn, turn, turn, turn]);
    assert.equal(requests.length, 5);
    assert.equal(queries.length, 8, 'four steps of two queries');
    assert.equal(t.retrievalCount, 4);
    assert.ok(t.steps.at(-1)!.forced);
    assert.equal(t.finished, false);
  });
});
