/** Every protocol: prompts, parsing of good, malformed and truncated text, and parse(format(a)) = a. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Question } from '../../src/core/types.js';
import type { Action, Step } from '../../src/core/trajectory.js';
import { Rng } from '../../src/core/rng.js';
import { AGENT_NAMES } from '../../src/agents/protocol.js';
import { PROTOCOLS } from '../../src/agents/registry.js';
import { extractDecision } from '../../src/agents/research.js';
import { parseInformation } from '../../src/agents/search-r1.js';
import { searchR1Turns } from '../../src/agents/transcript.js';
import { summarizeSearches } from '../../src/agents/summarize.js';
import type { State } from '../../src/env/env.js';
import { ScriptedLLM } from '../../src/llm/scripted.js';

const question: Question = { id: 'q1', question: 'Who directed The Silent Harbor?', answers: ['Maren Tolvik'] };
const docs = [{ passageId: 'p1', title: 'The Silent Harbor', text: 'The Silent Harbor is a 1971 film directed by Maren Tolvik.', score: 3.2 }];
function state(steps: Step[] = [], extra: Partial<State> = {}): State {
  return { question, steps, done: false, mustAnswer: false, turnsLeft: 5, searchesLeft: 5, ...extra };
}
const searched = (query = 'Silent Harbor director'): Step => ({ action: { type: 'search', query }, raw: `<search>${query}</search>`, docs });

describe('parse(format(action)) = action for every allowed action of every protocol', () => {
  const actions: Action[] = [
    { type: 'search', query: 'Silent Harbor director' },
    { type: 'extract', evidence: 'The Silent Harbor is a 1971 film directed by Maren Tolvik.' },
    { type: 'answer', answer: 'Maren Tolvik' },
  ];
  for (const name of AGENT_NAMES) {
    it(name, () => {
      const p = PROTOCOLS[name];
      for (const s of [state(), state([searched()]), state([searched()], { mustAnswer: true })]) {
        for (const type of p.allowed(s)) {
          let action = actions.find((a) => a.type === type)!;
          if (name === 'arena' && action.type === 'answer') action = { ...action, citations: [1] };
          if (name === 'rag' && action.type === 'search') action = { type: 'search', query: question.question };
          if ((name === 'arena' || name === 'arena-direct') && action.type === 'search') continue; // ARENA's search is the fixed retrieval step
          if ((name === 'rag' || name === 'skr' || name === 'sure') && action.type === 'search') continue; // SKR routes to rag until a model decides
          if (action.type === 'search' && p.fixedAction?.(s)?.type === 'search') continue; // a search the protocol takes itself has no text form (the compressors' rag)
          // Iter-RetGen's searches are the question joined to a generation.
          if (name === 'iter-retgen' && action.type === 'search') action = { type: 'search', query: `${question.question} Silent Harbor director` };
          assert.deepEqual(p.parse(p.format(action, s), s), action, `${name} ${type}`);
        }
      }
    });
  }
});

describe('parsers never throw and keep malformed text as invalid', () => {
  const rng = new Rng(9);
  const samples = [
    '',
    '<search>',
    '<answer></answer>',
    '{"predicted_answer": ',
    '<relevance>[1,</relevance><analysis>x',
    'Action: search[',
    'random words without any structure',
    '<think>long thought</think>',
    '\u0000\uffff<<<>>>',
  ];
  for (const name of AGENT_NAMES) {
    it(name, () => {
      const p = PROTOCOLS[name];
      const good = p.format({ type: 'answer', answer: 'Maren Tolvik', citations: [1] }, state()) + p.format({ type: 'search', query: 'q' }, state());
      const truncations = Array.from({ length: 40 }, () => good.slice(0, rng.int(good.length + 1)));
      for (const s of [state(), state([searched()]), state([searched()], { mustAnswer: true })]) {
        for (const text of [...samples, ...truncations]) {
          const a = p.parse(text, s);
          assert.ok(['search', 'extract', 'answer', 'invalid'].includes(a.type), `${name}: ${JSON.stringify(text)}`);
          if (a.type === 'invalid') assert.ok(a.reason.length > 0);
        }
      }
    });
  }
});

describe('search-r1', () => {
  const p = PROTOCOLS['search-r1'];
  it("tells the model to search only as a last resort (LWS appendix B.4), never 'as often as it needs'", () => {
    const first = p.render(state())[0]!.content;
    assert.match(first, /searching is a last resort, not the default/);
    assert.match(first, /If what you know is enough, .*Do not search in that case\./);
    assert.match(first, /a few keywords .* not a question in full sentences/);
    assert.doesNotMatch(first, /as often as you need/);
  });
  it('takes the first action tag, accepts a query cut off at the stop string, rejects empty tags', () => {
    assert.deepEqual(p.parse('<think>x</think> <search> who wrote it </search> <answer>no</answer>', state()), { type: 'search', query: 'who wrote it' });
    assert.deepEqual(p.parse('<think>x</think>\n<search> Silent Harbor director', state()), { type: 'search', query: 'Silent Harbor director' });
    assert.deepEqual(p.parse('<think>ok</think><reflect>fine</reflect><answer> 1971 </answer>', state()), { type: 'answer', answer: '1971' });
    assert.equal(p.parse('<search>   </search>', state()).type, 'invalid');
    assert.equal(p.parse('I think the answer is 1971.', state()).type, 'invalid');
  });
  it('renders multi-turn chat: the question, closed model turns, <information> blocks, retry and force notes', () => {
    const steps: Step[] = [
      { action: { type: 'search', query: 'Silent Harbor director' }, raw: '<think>a</think><search>Silent Harbor director', docs },
      { action: { type: 'invalid', reason: 'x' }, raw: 'hmm' },
    ];
    const m = p.render(state(steps), { forced: true });
    assert.equal(m[0]!.role, 'user');
    assert.match(m[0]!.content, /Question: Who directed The Silent Harbor\?/);
    assert.equal(m[1]!.content, '<think>a</think><search>Silent Harbor director</search>');
    assert.match(m[2]!.content, /<information>Doc 1 \(Title: The Silent Harbor\) The Silent Harbor is a 1971 film/);
    assert.match(m[4]!.content, /neither a <search> query nor an <answer>/);
    assert.match(m[5]!.content, /final answer now/);
    assert.deepEqual(p.defaults.stop, ['</search>', '</answer>']);
  });
  it('shows a turn cut at its stop string as the backends that keep the stop string do', () => {
    const cut = { action: { type: 'search', query: 'q' }, raw: '<think>a</think>\n<search> q ', docs } as Step;
    const kept = { ...cut, raw: '<think>a</think>\n<search> q </search>' } as Step;
    assert.equal(p.render(state([cut]))[1]!.content, '<think>a</think>\n<search> q </search>');
    assert.equal(p.render(state([kept]))[1]!.content, p.render(state([cut]))[1]!.content);
  });
  it('splits a whole transcript and its FlashRAG document lines', () => {
    const t = '<think>a</think> <search> q1 </search>\n\n<information>Doc 1(Title: "A B") first text\nDoc 2(Title: C (film)) second</information>\n\n<answer> X </answer>';
    const parts = searchR1Turns(t);
    assert.equal(parts.length, 2);
    assert.equal(parts[0]!.query, 'q1');
    assert.deepEqual(parseInformation(parts[0]!.information!), [{ title: 'A B', text: 'first text' }, { title: 'C (film)', text: 'second' }]);
    assert.equal(parts[1]!.text.trim(), '<answer> X </answer>');
  });
});

describe('demonstration thoughts quote the retrieved sentence an action rests on', () => {
  const twoHop: Question = {
    id: 'q2', question: 'When was the director of The Silent Harbor born?', answers: ['1932'],
    decomposition: [
      { question: 'Who directed The Silent Harbor?', answer: 'Maren Tolvik', passageId: 'p1' },
      { question: 'When was Maren Tolvik born?', answer: '1932', passageId: 'p2' },
    ],
  };
  const harbor = { passageId: 'p1', title: 'The Silent Harbor', text: 'The Silent Harbor is a 1971 film. It was directed by Maren Tolvik. It premiered in Oslo.', score: 3 };
  const maren = { passageId: 'p2', title: 'Maren Tolvik', text: 'Maren Tolvik (1932–2001) was a Norwegian director. She was born in Bergen.', score: 3 };
  const hop = (query: string, found: typeof docs): Step => ({ action: { type: 'search', query }, raw: `<search>${query}</search>`, docs: found });
  const at = (steps: Step[]): State => ({ question: twoHop, steps, done: false, mustAnswer: false, turnsLeft: 5, searchesLeft: 5 });
  const p = PROTOCOLS['search-r1'];
  it('a search on the bridge entity quotes where the entity was read; an answer quotes the sentence stating it', () => {
    const first = p.format({ type: 'search', query: 'Who directed The Silent Harbor?' }, at([]));
    assert.equal(first, '<think> To answer this I first need to know: Who directed The Silent Harbor? </think>\n<search> Who directed The Silent Harbor? </search>');
    const second = p.format({ type: 'search', query: 'When was Maren Tolvik born?' }, at([hop('Who directed The Silent Harbor?', [harbor])]));
    assert.match(second, /^<think> "The Silent Harbor" says: It was directed by Maren Tolvik\. Next I need: When was Maren Tolvik born\? <\/think>/);
    const answer = p.format({ type: 'answer', answer: '1932' }, at([hop('Who directed The Silent Harbor?', [harbor]), hop('When was Maren Tolvik born?', [harbor, maren])]));
    assert.match(answer, /^<think> "Maren Tolvik" says: Maren Tolvik \(1932–2001\) was a Norwegian director\. That answers the question\. <\/think>/);
  });
  it('falls back to a plain thought when nothing retrieved states it (whole words only)', () => {
    const wrong = p.format({ type: 'answer', answer: '193' }, at([hop('When was Maren Tolvik born?', [maren])]));
    assert.match(wrong, /^<think> The information gathered is enough to answer\. <\/think>/);
  });
});

describe('reasonrag', () => {
  const p = PROTOCOLS.reasonrag;
  it('alternates reasoning and grounding; carries evidence, not documents', () => {
    const grounding = p.render(state([searched()]));
    // ReasonRAG's grounding prompt (appendix F, Figure 13): evidence for the latest query.
    assert.match(grounding[0]!.content, /Based on the query, the relevant evidence is <evidence>/);
    assert.match(grounding[1]!.content, /Latest query: Silent Harbor director/);
    assert.match(grounding[1]!.content, /Doc 1 \(Title: The Silent Harbor\)/);
    assert.deepEqual(p.parse('<evidence>directed by Maren Tolvik</evidence>', state([searched()])), { type: 'extract', evidence: 'directed by Maren Tolvik' });
    assert.deepEqual(p.parse('<evidence>None</evidence>', state([searched()])), { type: 'extract', evidence: 'None' });
    assert.equal(p.parse('<query>more</query>', state([searched()])).type, 'invalid');
    const afterEvidence = state([searched(), { action: { type: 'extract', evidence: 'directed by Maren Tolvik' }, raw: '' }]);
    const reasoning = p.render(afterEvidence)[1]!.content;
    assert.match(reasoning, /Search 1: Silent Harbor director\nEvidence: directed by Maren Tolvik/);
    assert.doesNotMatch(reasoning, /1971 film/);
    assert.deepEqual(p.allowed(afterEvidence), ['search', 'answer']);
    assert.deepEqual(p.parse('so\n<query>Maren Tolvik birth', afterEvidence), { type: 'search', query: 'Maren Tolvik birth' });
  });
  it('asks for the paper\'s conclusion phrases and writes them (appendix F, Figure 12; the pipeline\'s prompts)', () => {
    const first = p.render(state());
    assert.match(first[0]!.content, /Break the question into smaller sub-questions/);
    assert.equal(first[1]!.content, 'Question: Who directed The Silent Harbor?');
    const later = p.render(state([searched(), { action: { type: 'extract', evidence: 'x' }, raw: '' }]));
    assert.match(later[0]!.content, /never repeat a query already made/);
    for (const m of [first, later]) assert.match(m[0]!.content, /So the answer is <answer>short answer<\/answer>\. To search: So the next query is <query>query<\/query>\./);
    assert.match(p.render(state(), { forced: true })[0]!.content, /ending with: So the answer is <answer>/);
    assert.equal(p.format({ type: 'answer', answer: 'Maren Tolvik' }, state()), 'The information gathered is enough to answer.\nSo the answer is <answer>Maren Tolvik</answer>');
    assert.equal(p.format({ type: 'extract', evidence: 'directed by Maren Tolvik' }, state([searched()])), 'Based on the query, the relevant evidence is <evidence>directed by Maren Tolvik</evidence>');
    assert.equal(p.format({ type: 'extract', evidence: 'None' }, state([searched()])), '<evidence>None</evidence>');
  });
});

describe('RAG-Gym agents', () => {
  it('direct takes the first line; cot and rag need an "Answer:" line', () => {
    assert.deepEqual(PROTOCOLS.direct.parse('  Maren Tolvik\nbecause…', state()), { type: 'answer', answer: 'Maren Tolvik' });
    assert.deepEqual(PROTOCOLS.direct.parse('Answer: Maren Tolvik', state()), { type: 'answer', answer: 'Maren Tolvik' });
    assert.deepEqual(PROTOCOLS.cot.parse('It was made in 1971.\nAnswer: Maren Tolvik', state()), { type: 'answer', answer: 'Maren Tolvik' });
    assert.equal(PROTOCOLS.cot.parse('It was made in 1971 by Maren Tolvik.', state()).type, 'invalid');
  });
  it('rag searches the question itself first, without a model call', () => {
    assert.deepEqual(PROTOCOLS.rag.fixedAction?.(state()), { type: 'search', query: question.question });
    assert.equal(PROTOCOLS.rag.fixedAction?.(state([searched()])), undefined);
    assert.match(PROTOCOLS.rag.render(state([searched()]))[1]!.content, /Doc 1 \(Title: The Silent Harbor\)/);
  });
  it('react reads Action: search[…] / finish[…]', () => {
    const p = PROTOCOLS.react;
    assert.deepEqual(p.parse('Thought: need it\nAction: search[Silent Harbor]\nObservation: …', state()), { type: 'search', query: 'Silent Harbor' });
    assert.deepEqual(p.parse('Thought: done\naction: FINISH[Maren Tolvik]', state()), { type: 'answer', answer: 'Maren Tolvik' });
    assert.equal(p.parse('Thought: hmm\nAction: lookup[x]', state()).type, 'invalid');
    assert.match(p.render(state([searched()]))[1]!.content, /Observation:\nDoc 1/);
  });
  it('search-o1 and research summarise each query once, deterministically, and show query/answer pairs', async () => {
    const llm = new ScriptedLLM(['Maren Tolvik directed it.']);
    const s = state([searched()]);
    await summarizeSearches(s, llm);
    await summarizeSearches(s, llm);
    assert.equal(llm.requests.length, 1);
    assert.equal(llm.requests[0]!.temperature, 0);
    assert.equal(s.steps[0]!.summary, 'Maren Tolvik directed it.');
    for (const name of ['search-o1', 'research'] as const) {
      const text = PROTOCOLS[name].render(s)[1]!.content;
      assert.match(text, /Query 1: Silent Harbor director\nAnswer 1: Maren Tolvik directed it\./);
      assert.doesNotMatch(text, /1971 film/);
    }
  });
  it('research reads the last JSON decision; "None" means answer', () => {
    const p = PROTOCOLS.research;
    const reply = (o: object) => `### Reasoning\nx {not json}\n### Output\n\`\`\`json\n${JSON.stringify(o)}\n\`\`\``;
    assert.deepEqual(p.parse(reply({ predicted_answer: 'Maren Tolvik', generated_query: 'None' }), state()), { type: 'answer', answer: 'Maren Tolvik' });
    assert.deepEqual(p.parse(reply({ predicted_answer: 'x', generated_query: 'Silent Harbor director' }), state()), { type: 'search', query: 'Silent Harbor director' });
    assert.deepEqual(p.parse(reply({ predicted_answer: 'x', generated_query: 'q' }), state([], { mustAnswer: true })), { type: 'answer', answer: 'x' });
    assert.deepEqual(extractDecision('{"a": {"b": 1}} then {"predicted_answer": "y", "generated_query": null}'), { predicted_answer: 'y', generated_query: null });
    assert.equal(p.parse('{"predicted_answer": "y", ', state()).type, 'invalid');
  });
});

describe('prorag and arena', () => {
  it('prorag maps subquery / subanswer / answer to search / extract / answer and shows <retrieval>', () => {
    const p = PROTOCOLS.prorag;
    assert.deepEqual(p.parse('<step>find the director</step><subquery>Silent Harbor director', state()), { type: 'search', query: 'Silent Harbor director' });
    assert.deepEqual(p.parse('<step>read</step><subanswer>Maren Tolvik directed it</subanswer>', state([searched()])), { type: 'extract', evidence: 'Maren Tolvik directed it' });
    assert.match(p.render(state([searched()]))[2]!.content, /^<retrieval>\nDoc 1/);
    assert.deepEqual(p.allowed(state([searched()])), ['extract']);
  });
  it('arena numbers the dataset references, reads relevance ids, and searches only without context', () => {
    const p = PROTOCOLS.arena;
    const withContext: State = { ...state(), question: { ...question, context: [{ id: 'a', title: 'A', text: 'alpha' }, { id: 'b', title: 'B', text: 'beta' }] } };
    assert.equal(p.fixedAction?.(withContext), undefined);
    assert.match(p.render(withContext)[1]!.content, /<references>\n1\. A: alpha\n2\. B: beta\n<\/references>/);
    assert.deepEqual(p.fixedAction?.(state()), { type: 'search', query: question.question });
    assert.deepEqual(p.parse('<relevance>[2]</relevance><analysis>per [2]</analysis><answer>beta</answer>', withContext), { type: 'answer', answer: 'beta', citations: [2] });
    assert.deepEqual(p.parse('<relevance>two</relevance><analysis>…</analysis><answer>beta</answer>', withContext), { type: 'answer', answer: 'beta' });
    assert.equal(p.parse('<relevance>[2]</relevance><analysis>…</analysis>', withContext).type, 'invalid');
  });
});
