/**
 * The released RL agents' formats against transcripts assembled the way their authors' rollout code
 * assembles them (Search-R1 search_r1/llm_agent/generation.py; ZeroSearch's fork of it; AutoRefine's;
 * R1-Searcher OpenRLHF-RAG experience_maker.py; ReSearch vLLMRolloutWithSearch) — test vectors built by
 * re-running their string joins, not ragtrail's own `format`. Each model turn, as a backend returns it
 * (the stop string dropped), parses to the authors' action; the steps rendered back give the authors'
 * running text after the prompt, character for character.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PROTOCOLS } from '../../src/agents/registry.js';
import { lastBoxed } from '../../src/agents/re-search.js';
import type { Action, RetrievedDoc, Step } from '../../src/core/trajectory.js';
import type { State } from '../../src/env/env.js';
import { alexandria, doc, euclid, question } from '../fixtures/euclid.js';

interface Turn {
  /** What the backend returns (stop string dropped). */
  raw: string;
  action: Action;
  docs?: RetrievedDoc[];
}

/** Parses each turn in the state before it, checks the action, and returns the rendered continuation after the prompt. */
function replay(agent: keyof typeof PROTOCOLS, turns: Turn[], promptMessages: number): string {
  const p = PROTOCOLS[agent];
  const steps: Step[] = [];
  for (const t of turns) {
    const state: State = { question: { id: 'q', question, answers: [] }, steps: [...steps], done: false, mustAnswer: false, turnsLeft: 9, searchesLeft: 9 };
    assert.deepEqual(p.parse(t.raw, state), t.action, `${agent}: ${JSON.stringify(t.raw)}`);
    steps.push({ action: t.action, raw: t.raw, ...(t.docs && { docs: t.docs }) });
  }
  const messages = p.render({ question: { id: 'q', question, answers: [] }, steps, done: true, mustAnswer: false, turnsLeft: 0, searchesLeft: 0 });
  assert.deepEqual(messages.slice(promptMessages).map((m) => m.role), turns.flatMap((t) => (t.docs || t.action.type === 'invalid' ? ['assistant', 'user'] : ['assistant'])));
  return messages.slice(promptMessages).map((m) => m.content).join('');
}

describe('Search-R1 family: the running text of the authors\' loop', () => {
  const m1 = '<think> I need to find who is considered the founder of geometry and where he lived. </think>\n<search> founder of geometry </search>';
  const m2 = '<think> Euclid, the founder of geometry, lived in Alexandria. Now I need who founded Alexandria. </think>\n<search> who founded Alexandria </search>';
  const m3 = '<think> Alexandria was founded by Alexander the Great. </think>\n<answer> Alexander the Great </answer>';
  const dropStop = (m: string) => m.replace(/<\/(search|answer)>$/, '');
  const turns = (docs1 = euclid, docs2 = alexandria): Turn[] => [
    { raw: dropStop(m1), action: { type: 'search', query: 'founder of geometry' }, docs: docs1 },
    { raw: dropStop(m2), action: { type: 'search', query: 'who founded Alexandria' }, docs: docs2 },
    { raw: dropStop(m3), action: { type: 'answer', answer: 'Alexander the Great' } },
  ];

  it('search-r1-released: <information> with "Doc N(Title: \\"T\\") text" lines, between "\\n\\n"s', () => {
    const env1 = '\n\n<information>Doc 1(Title: "Euclid") Euclid, sometimes called Euclid of Alexandria, was a Greek mathematician, often referred to as the "founder of geometry".\nDoc 2(Title: "Euclid\'s Elements") The Elements is a mathematical treatise consisting of 13 books attributed to Euclid in Alexandria, Ptolemaic Egypt c. 300 BC.\nDoc 3(Title: "Geometry") Geometry is one of the oldest branches of mathematics.</information>\n\n';
    const env2 = '\n\n<information>Doc 1(Title: "Alexandria") Alexandria was founded around a small pharaonic town c. 332 BC by Alexander the Great.\nDoc 2(Title: "History of Alexandria") The city was founded by Alexander the Great in April 331 BC.\nDoc 3(Title: "Alexander the Great") Alexander III of Macedon, commonly known as Alexander the Great, was a king of Macedon.</information>\n\n';
    assert.equal(replay('search-r1-released', turns(), 1), m1 + env1 + m2 + env2 + m3);
    // A backend that keeps the stop string gives the same text; a turn with text after </search> is cut there, as the loop cuts it.
    const kept: Turn[] = turns().map((t, i) => ({ ...t, raw: [m1, `${m2}\n<information>made up</information>`, m3][i]! }));
    assert.equal(replay('search-r1-released', kept, 1), m1 + env1 + m2 + env2 + m3);
  });

  it('search-r1-released: a turn with neither tag gets Search-R1\'s notice, and the episode goes on', () => {
    const text = replay('search-r1-released', [{ raw: '<think> hmm </think>', action: { type: 'invalid', reason: 'no <search> or <answer> tag' } }, turns()[2]!], 1);
    assert.equal(text, '<think> hmm </think>\nMy previous action is invalid. If I want to search, I should put the query between <search> and </search>. If I want to give the final answer, I should put the answer between <answer> and </answer>. Let me try again.\n' + m3);
  });

  it('zerosearch: the same loop, documents as "Doc N: text"', () => {
    const env1 = `\n\n<information>${euclid.map((d, i) => `Doc ${i + 1}: ${d.text}`).join('\n')}</information>\n\n`;
    const env2 = `\n\n<information>${alexandria.map((d, i) => `Doc ${i + 1}: ${d.text}`).join('\n')}</information>\n\n`;
    assert.ok(env1.startsWith('\n\n<information>Doc 1: Euclid, sometimes called'));
    assert.equal(replay('zerosearch', turns(), 1), m1 + env1 + m2 + env2 + m3);
  });

  it('autorefine: <documents>, and the model\'s <refine> kept as written', () => {
    const a1 = '<think> I need the birth dates of both people. First Cameron Mitchell the singer. </think>\n<search> Cameron Mitchell singer birth date </search>';
    const a2 = '<refine> Cameron Mitchell the singer was born October 4, 1991. </refine>\n<think> Now I need Léopold de Saussure\'s birth date. </think>\n<search> Léopold de Saussure birth date </search>';
    const a3 = '<refine> Léopold de Saussure was born in 1866, long before 1991. </refine>\n<think> 1866 is earlier than 1991. </think>\n<answer> Léopold De Saussure </answer>';
    const d1 = [doc('Cameron Mitchell (singer)', 'Cameron Mitchell (born October 4, 1991) is an American singer ...', 0), doc('Cameron Mitchell', 'Cameron Mitchell (November 4, 1918 – July 6, 1994) was an American actor ...', 1)];
    const d2 = [doc('Léopold de Saussure', 'Léopold de Saussure (1866–1925) was a French naval officer and sinologist ...', 2)];
    const text = replay('autorefine', [
      { raw: a1.replace(/<\/search>$/, ''), action: { type: 'search', query: 'Cameron Mitchell singer birth date' }, docs: d1 },
      { raw: a2.replace(/<\/search>$/, ''), action: { type: 'search', query: 'Léopold de Saussure birth date' }, docs: d2 },
      { raw: a3.replace(/<\/answer>$/, ''), action: { type: 'answer', answer: 'Léopold De Saussure' } },
    ], 1);
    const e1 = '\n\n<documents>Doc 1(Title: "Cameron Mitchell (singer)") Cameron Mitchell (born October 4, 1991) is an American singer ...\nDoc 2(Title: "Cameron Mitchell") Cameron Mitchell (November 4, 1918 – July 6, 1994) was an American actor ...</documents>\n\n';
    const e2 = '\n\n<documents>Doc 1(Title: "Léopold de Saussure") Léopold de Saussure (1866–1925) was a French naval officer and sinologist ...</documents>\n\n';
    assert.equal(text, a1 + e1 + a2 + e2 + a3);
  });
});

describe('R1-Searcher: query markers, the end marker written back, numbered documents', () => {
  it('renders the rollout\'s text after "Assistant: <think>"', () => {
    const m1 = 'To answer this, I first need the founder of geometry and where he lived.\n\n<|begin_of_query|> founder of geometry';
    const m2 = 'Euclid lived in Alexandria. Now I need who founded Alexandria.\n\n<|begin_of_query|> Alexandria founder';
    const m3 = ' Alexandria was founded by Alexander the Great. </think>\n\n<answer> Alexander the Great </answer>';
    const text = replay('r1-searcher', [
      // vLLM drops the stop string; the model's space before the query's end is stripped by the rollout.
      { raw: ` ${m1} `, action: { type: 'search', query: 'founder of geometry' }, docs: euclid },
      { raw: m2, action: { type: 'search', query: 'Alexandria founder' }, docs: alexandria },
      { raw: m3.replace(/<\/answer>$/, ''), action: { type: 'answer', answer: 'Alexander the Great' } },
    ], 2);
    const env = (docs: RetrievedDoc[]) => `<|end_of_query|>\n\n<|begin_of_documents|>\n${docs.map((d, j) => `(${j + 1})Title: ${d.title} Text:  ${d.text}\n`).join('')}<|end_of_documents|>\n\n`;
    assert.ok(env(euclid).startsWith('<|end_of_query|>\n\n<|begin_of_documents|>\n(1)Title: Euclid Text:  Euclid, sometimes'));
    assert.equal(text, m1 + env(euclid) + m2 + env(alexandria) + m3);
  });

  it('reads the query as the rollout does: after the last begin marker, quotes dropped, whitespace collapsed', () => {
    const s: State = { question: { id: 'q', question, answers: [] }, steps: [], done: false, mustAnswer: false, turnsLeft: 9, searchesLeft: 9 };
    assert.deepEqual(PROTOCOLS['r1-searcher'].parse('x <|begin_of_query|> a <|begin_of_query|> "Euclid"   birthplace\t<|end_of_query|>', s), { type: 'search', query: 'Euclid birthplace' });
    assert.deepEqual(PROTOCOLS['r1-searcher'].parse('<answer> one </answer> <answer> two </answer>', s), { type: 'answer', answer: 'two' });
  });
});

describe('ReSearch (Agent-RL): " <result>" glued after </search>, the answer in \\boxed{}', () => {
  it('renders the rollout\'s text after the chat prompt', () => {
    const m1 = '<think> I need to know who the founder of geometry is and where he lived. </think> <search> founder of geometry </search>';
    const m2 = ' <think> Euclid lived in Alexandria. Next, who founded Alexandria? </think> <search> founder of Alexandria </search>';
    const m3 = ' <think> Alexandria was founded by Alexander the Great. </think> <answer> The final answer is \\[ \\boxed{Alexander the Great} \\] </answer>';
    const two = (docs: RetrievedDoc[]) => docs.slice(0, 2);
    const text = replay('re-search', [
      { raw: m1.replace(/<\/search>$/, ''), action: { type: 'search', query: 'founder of geometry' }, docs: two(euclid) },
      { raw: m2, action: { type: 'search', query: 'founder of Alexandria' }, docs: two(alexandria) },
      { raw: m3, action: { type: 'answer', answer: 'Alexander the Great' } },
    ], 2);
    const e1 = ' <result>\n"Euclid"\nEuclid, sometimes called Euclid of Alexandria, was a Greek mathematician, often referred to as the "founder of geometry".\n\n"Euclid\'s Elements"\nThe Elements is a mathematical treatise consisting of 13 books attributed to Euclid in Alexandria, Ptolemaic Egypt c. 300 BC.\n</result>';
    const e2 = ' <result>\n"Alexandria"\nAlexandria was founded around a small pharaonic town c. 332 BC by Alexander the Great.\n\n"History of Alexandria"\nThe city was founded by Alexander the Great in April 331 BC.\n</result>';
    // The authors' stored text ends with the EOS token (<|im_end|>), which a backend does not return.
    assert.equal(text, m1 + e1 + m2 + e2 + m3);
  });

  it('takes the last \\boxed{} of the first <answer>, braces balanced; an <answer> without one is a format failure', () => {
    assert.equal(lastBoxed('\\boxed{a} then \\boxed{\\frac{1}{2}}'), '\\frac{1}{2}');
    assert.equal(lastBoxed('\\boxed 42$'), '42');
    assert.equal(lastBoxed('no box'), undefined);
    const s: State = { question: { id: 'q', question, answers: [] }, steps: [], done: false, mustAnswer: false, turnsLeft: 9, searchesLeft: 9 };
    assert.deepEqual(PROTOCOLS['re-search'].parse('<answer> \\boxed{x} </answer> <answer> \\boxed{y} </answer>', s), { type: 'answer', answer: 'x' });
    assert.equal(PROTOCOLS['re-search'].parse('<answer> Paris </answer>', s).type, 'invalid');
  });
});

describe('HiPRAG: <step>s inside one <think>, the harness opening the first step and each conclusion', () => {
  it('renders the harness\'s running text after the chat prompt', () => {
    const m1 = 'I need to know who directed Jaws and when he was born.</reasoning>\n    <search>Jaws 1975 film director birth date</search>';
    const m2 = 'Jaws was directed by Steven Spielberg, born December 18, 1946.</conclusion>\n</step>\n<step>\n    <reasoning>Now I need the US president in December 1946.</reasoning>\n    <search>US president in December 1946</search>';
    const m3 = 'Harry S. Truman was president in December 1946.</conclusion>\n</step>\n</think>\n<answer>Harry S. Truman</answer>';
    const jaws = [doc('Jaws (film)', 'Jaws is a 1975 American thriller film directed by Steven Spielberg ...', 0), doc('Steven Spielberg', 'Steven Allan Spielberg (born December 18, 1946) is an American filmmaker ...', 1)];
    const truman = [doc('Harry S. Truman', 'Harry S. Truman ... 33rd president of the United States from 1945 to 1953 ...', 2)];
    const text = replay('hiprag', [
      { raw: m1.replace(/<\/search>$/, ''), action: { type: 'search', query: 'Jaws 1975 film director birth date' }, docs: jaws },
      { raw: m2, action: { type: 'search', query: 'US president in December 1946' }, docs: truman },
      { raw: m3.replace(/<\/answer>$/, ''), action: { type: 'answer', answer: 'Harry S. Truman' } },
    ], 1);
    const opening = '\n<think>\n<step>\n    <reasoning>';
    const e1 = '\n    <context>Doc 1(Title: "Jaws (film)") Jaws is a 1975 American thriller film directed by Steven Spielberg ...\nDoc 2(Title: "Steven Spielberg") Steven Allan Spielberg (born December 18, 1946) is an American filmmaker ...</context>\n    <conclusion>';
    const e2 = '\n    <context>Doc 1(Title: "Harry S. Truman") Harry S. Truman ... 33rd president of the United States from 1945 to 1953 ...</context>\n    <conclusion>';
    assert.equal(text, opening + m1 + e1 + m2 + e2 + m3);
  });
});

describe('SimpleDeepSearcher: query markers kept, the reader\'s analysis spliced in, \\boxed{} read as its evaluation reads it', () => {
  it("renders the harness's running text; the analysis comes from the reader's reply after **Final Information**, newlines removed", async () => {
    const { readerAnalysis, simpleDeepSearcherAnswer, REPEATED_QUERY } = await import('../../src/agents/simple-deep-searcher.js');
    const p = PROTOCOLS['simple-deep-searcher'];
    const m1 = 'Okay, I need to find who directed Parasite, then where he studied.\n\n<|begin_search_query|>Parasite 2019 film director<|end_search_query|>';
    const m2 = 'So the director is Bong Joon-ho. Now I need his education.\n\n<|begin_search_query|>Bong Joon-ho university education<|end_search_query|>';
    const m3 = 'Bong Joon-ho attended Yonsei University (sociology).\n\n**Final Answer**\n\\boxed{Yonsei University}';
    const a1 = readerAnalysis("**Modified Reasoning Steps**\nStep 1 ...\n**Final Information**\nParasite (2019) was directed by Bong Joon-ho, a South Korean filmmaker;\n it won the Palme d'Or and the Academy Award for Best Picture.");
    assert.equal(a1, "Parasite (2019) was directed by Bong Joon-ho, a South Korean filmmaker; it won the Palme d'Or and the Academy Award for Best Picture.");
    const a2 = 'Bong Joon-ho graduated from Yonsei University with a degree in sociology and later studied at the Korean Academy of Film Arts.';
    const s0: State = { question: { id: 'q', question: 'Which university did the director of the film Parasite attend?', answers: [] }, steps: [], done: false, mustAnswer: false, turnsLeft: 9, searchesLeft: 9 };
    // The backend drops the stop string; the turn is read as a search, and shown back with it.
    assert.deepEqual(p.parse(m1.replace('<|end_search_query|>', ''), s0), { type: 'search', query: 'Parasite 2019 film director' });
    const steps: Step[] = [
      { action: { type: 'search', query: 'Parasite 2019 film director' }, raw: m1.replace('<|end_search_query|>', ''), docs: [], summary: a1 },
      { action: { type: 'search', query: 'Bong Joon-ho university education' }, raw: m2, docs: [], summary: a2 },
      { action: { type: 'answer', answer: 'Yonsei University' }, raw: m3 },
    ];
    assert.deepEqual(p.parse(m3, { ...s0, steps: steps.slice(0, 2) }), { type: 'answer', answer: 'Yonsei University' });
    const text = p.render({ ...s0, steps }).slice(1).map((m) => m.content).join('');
    assert.equal(text, `${m1}\n\n<|begin_search_result|>${a1}<|end_search_result|>\n\n${m2}\n\n<|begin_search_result|>${a2}<|end_search_result|>\n\n${m3}`);
    // A repeated query gets the harness's notice, not a second analysis.
    const again = p.render({ ...s0, steps: [steps[0]!, { ...steps[0]!, summary: undefined }] });
    assert.equal(again.at(-1)!.content, REPEATED_QUERY);
    // \boxed{} as evaluate.extract_answer reads it: greedy to the line's last "}", \text{} unwrapped, parentheses stripped.
    assert.equal(simpleDeepSearcherAnswer('\\boxed{A} then\n\\boxed{\\text{(Yonsei University)}}'), 'Yonsei University');
  });
});
