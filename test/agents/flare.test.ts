/**
 * FLARE's control flow on a scripted LLM with scripted token log-probabilities and a table retriever,
 * traced by hand: which look-aheads are kept, which masked queries are searched, how many model calls
 * are made, and the answer. Two-hop question: "Where was the director of The Silent Harbor born?" —
 * Maren Tolvik, born in Oslo.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { firstFlareSentence, flare, flareProtocol, maskedQuery, readFlareAnswer } from '../../src/agents/flare.js';
import { LlmPolicy } from '../../src/agents/policy.js';
import type { Protocol } from '../../src/agents/protocol.js';
import { InputError } from '../../src/core/errors.js';
import type { Question } from '../../src/core/types.js';
import type { Action, Step } from '../../src/core/trajectory.js';
import { RagEnv, type State } from '../../src/env/env.js';
import { runEpisode } from '../../src/eval/run.js';
import { ScriptedLLM, type ScriptOutput } from '../../src/llm/scripted.js';
import type { Choice } from '../../src/llm/types.js';
import { harbor, TableRetriever } from '../fixtures/table-retriever.js';

const question: Question = { id: 'q1', question: 'Where was the director of The Silent Harbor born?', answers: ['Oslo'] };

/**
 * A generation with token log-probabilities: words and punctuation are the tokens (a leading space
 * kept on a word), each with probability 0.95 unless `low` gives its word another.
 */
function said(text: string, low: Record<string, number> = {}, finishReason = 'stop'): Choice {
  const tokens = text.match(/\s*[\w']+|\s*[^\w\s]|\s+$/g) ?? [];
  assert.equal(tokens.join(''), text);
  return { text, finishReason, logprobs: { tokens, logprobs: tokens.map((t) => Math.log(low[t.trim()] ?? 0.95)) } };
}

async function run(script: ScriptOutput[], env: { maxTurns?: number; maxSearches?: number } = {}, p: Protocol = flare) {
  const retriever = new TableRetriever();
  const llm = new ScriptedLLM((_req, call) => script[call] ?? 'unscripted call');
  const rag = new RagEnv({ retriever, topK: p.defaults.topK, maxTurns: env.maxTurns ?? p.defaults.maxTurns, maxSearches: env.maxSearches ?? p.defaults.maxSearches });
  const t = await runEpisode(rag, new LlmPolicy(p, llm), question);
  const user = llm.requests.map((r) => r.messages!.find((m) => m.role === 'user')!.content);
  return { t, queries: retriever.queries, user, requests: llm.requests };
}

const FIRST = 'The Silent Harbor was directed by Maren Tolvik.';

describe('FLARE (direct)', () => {
  it('every look-ahead confident: no retrieval after the question; the sentences are kept and the answer is read from the draft', async () => {
    const { t, queries, user, requests } = await run([
      said(`${FIRST} Maren Tolvik was born in Oslo.`),
      // A chat model restating the answer so far: the restated sentence (and its unsure "Silent") is passed over.
      said(`${FIRST} Maren Tolvik was born in Oslo.\nSo the answer is Oslo.`, { Silent: 0.1 }),
      said('So the answer is Oslo.'),
    ]);
    assert.deepEqual(queries, [question.question]);
    assert.equal(requests.length, 3);
    for (const r of requests) assert.deepEqual([r.logprobs, r.temperature, r.maxTokens, r.stop], [true, 0, 64, ['\n\n']]);
    // Each look-ahead sees the question's documents and the draft so far.
    assert.match(user[0]!, /^Documents:\nDoc 1 \(Title: The Silent Harbor\).*\nDoc 2 \(Title: Harbor Lights\)/);
    assert.match(user[0]!, /\nAnswer so far: \(nothing yet\)\n\nContinue the answer/);
    assert.match(user[1]!, new RegExp(`\\nAnswer so far: ${FIRST}\\n`));
    assert.match(user[2]!, new RegExp(`\\nAnswer so far: ${FIRST} Maren Tolvik was born in Oslo\\.\\n`));
    assert.equal(t.prediction, 'Oslo');
    assert.deepEqual(t.steps.map((s) => s.action.type), ['search', 'answer']);
    assert.equal(t.steps[0]!.summary, `FLARE: kept "${FIRST}" (min p 0.95); kept "Maren Tolvik was born in Oslo." (min p 0.95); kept "So the answer is Oslo." (min p 0.95); answer: Oslo`);
    // The answer step is fixed: its text is the whole draft, its cost the three look-aheads.
    assert.equal(t.steps[1]!.raw, `${FIRST} Maren Tolvik was born in Oslo. So the answer is Oslo.`);
    assert.ok(t.steps[1]!.usage!.completionTokens > 0 && t.steps[0]!.usage === undefined);
  });

  it('an unconfident look-ahead: the masked sentence is searched, the sentence regenerated over its documents and kept, then the answer', async () => {
    const { t, queries, user, requests } = await run([
      said(`${FIRST} She was born in Bergen.`),
      // "born" (0.6) is below θ = 0.8 but above β = 0.4: kept in the query; "Bergen" (0.2) is masked.
      said('Maren Tolvik was born in Bergen. So the answer is Bergen.', { born: 0.6, Bergen: 0.2 }),
      // The regeneration is kept without a check, however unsure.
      said('Maren Tolvik was born in Oslo. So the answer is Oslo.', { Oslo: 0.5 }),
      said('So the answer is Oslo.'),
    ]);
    assert.deepEqual(queries, [question.question, 'Maren Tolvik was born in .']);
    assert.equal(requests.length, 4);
    // The regeneration and the next look-ahead see the masked search's documents only, and the draft without the unconfident sentence.
    for (const u of user.slice(2)) {
      assert.match(u, /^Documents:\nDoc 1 \(Title: Maren Tolvik\).*\nDoc 2 \(Title: The Silent Harbor\)/);
      assert.doesNotMatch(u, /Harbor Lights/);
    }
    assert.match(user[2]!, new RegExp(`\\nAnswer so far: ${FIRST}\\n`));
    assert.match(user[3]!, new RegExp(`\\nAnswer so far: ${FIRST} Maren Tolvik was born in Oslo\\.\\n`));
    assert.equal(t.prediction, 'Oslo');
    assert.equal(t.retrievalCount, 2);
    assert.deepEqual(t.steps.map((s) => s.action), [
      { type: 'search', query: question.question },
      { type: 'search', query: 'Maren Tolvik was born in .' },
      { type: 'answer', answer: 'Oslo' },
    ]);
    assert.equal(t.steps[0]!.summary, `FLARE: kept "${FIRST}" (min p 0.95); unconfident "Maren Tolvik was born in Bergen." (min p 0.20 < θ 0.8): search "Maren Tolvik was born in ."`);
    assert.equal(t.steps[1]!.summary, 'FLARE: regenerated "Maren Tolvik was born in Oslo."; kept "So the answer is Oslo." (min p 0.95); answer: Oslo');
  });

  it('an unconfident look-ahead whose every token is masked is kept without a search', async () => {
    const { t, queries, requests } = await run([said('So the answer is Oslo.', { So: 0.3, the: 0.3, answer: 0.3, is: 0.3, Oslo: 0.3, '.': 0.3 })]);
    assert.deepEqual(queries, [question.question]);
    assert.equal(requests.length, 1);
    assert.equal(t.prediction, 'Oslo');
    assert.match(t.steps[0]!.summary!, /every token masked: no query/);
  });

  it('the search budget spent: an unconfident look-ahead ends the generation, and one call asks for the answer', async () => {
    const { t, queries, user, requests } = await run(
      [
        said(`${FIRST} She was born in Bergen.`, { Tolvik: 0.3 }),
        said(`${FIRST} Next.`),
        said('Maren Tolvik was born in Bergen. So the answer is Bergen.', { Bergen: 0.2 }),
        'Maren Tolvik was born in Oslo. So the answer is Oslo.',
      ],
      { maxSearches: 2 },
    );
    assert.deepEqual(queries, [question.question, 'The Silent Harbor was directed by Maren .']);
    assert.equal(requests.length, 4);
    // The fourth call is the policy's own: the concluding prompt, with the policy's budget, no logprobs asked.
    assert.match(user[3]!, new RegExp(`\\nAnswer so far: ${FIRST}\\n\\nNo more documents will be looked up\\. Finish the answer now`));
    assert.deepEqual([requests[3]!.logprobs, requests[3]!.maxTokens], [undefined, 128]);
    assert.equal(t.prediction, 'Oslo');
    assert.deepEqual(t.steps.map((s) => s.action.type), ['search', 'search', 'answer']);
    assert.equal(t.steps[1]!.summary, `FLARE: regenerated "${FIRST}"; unconfident "Maren Tolvik was born in Bergen." (min p 0.20 < θ 0.8), no searches left: asked for the answer`);
  });

  it('the turns spent: the env forces the answer, asked for without look-aheads; a reply without the phrase is still taken', async () => {
    const { t, queries, user, requests } = await run(
      [
        said(`${FIRST} She was born in Bergen.`),
        said('Maren Tolvik was born in Bergen.', { Bergen: 0.2 }),
        'She was born in Oslo.',
      ],
      { maxTurns: 2 },
    );
    assert.deepEqual(queries, [question.question, 'Maren Tolvik was born in .']);
    assert.equal(requests.length, 3);
    assert.match(user[2]!, /^Documents:\nDoc 1 \(Title: Maren Tolvik\)/);
    assert.match(user[2]!, new RegExp(`\\nAnswer so far: ${FIRST}\\n\\nNo more documents`));
    assert.equal(t.steps.length, 3);
    assert.equal(t.steps[2]!.forced, true);
    assert.equal(t.steps[2]!.formatError, 'forced answer did not parse (no "So the answer is")');
    assert.equal(t.prediction, 'She was born in Oslo.');
  });

  it('a draft that ends without "So the answer is" gets one concluding call', async () => {
    const { t, requests, user } = await run([said(FIRST), 'So the answer is Oslo.']);
    assert.equal(requests.length, 2);
    assert.match(user[1]!, /No more documents will be looked up/);
    assert.equal(t.prediction, 'Oslo');
    assert.match(t.steps[0]!.summary!, /draft ended without "So the answer is": asked for the answer$/);
  });

  it('a backend without token log-probabilities stops the run with one line naming the fix', async () => {
    const retriever = new TableRetriever();
    const llm = new ScriptedLLM([`${FIRST} So the answer is Oslo.`]);
    const env = new RagEnv({ retriever, topK: 2, maxTurns: 7, maxSearches: 6 });
    await assert.rejects(runEpisode(env, new LlmPolicy(flare, llm), question), (e: unknown) => {
      assert.ok(e instanceof InputError);
      assert.equal(e.message, 'agent flare needs token log-probabilities, but the model scripted:scripted returned none (serve it where token logprobs come back, e.g. vLLM; a llama.cpp server without them and node-llama-cpp give none)');
      assert.doesNotMatch(e.message, /\n/);
      return true;
    });
    assert.deepEqual(retriever.queries, [question.question]);
    assert.equal(llm.requests.length, 1);
    assert.match(flare.description, /token logprobs/);
  });

  it('θ and β are options', async () => {
    // With θ = 0.5 the 0.6 of "born" no longer triggers a search.
    const { queries, requests, t } = await run([said('Maren Tolvik was born in Oslo. So the answer is Oslo.', { born: 0.6 }), said('So the answer is Oslo.')], {}, flareProtocol({ theta: 0.5 }));
    assert.deepEqual([queries, requests.length, t.prediction], [[question.question], 2, 'Oslo']);
  });
});

describe('FLARE pieces', () => {
  const state = (steps: Step[] = [], extra: Partial<State> = {}): State => ({ question, steps, done: false, mustAnswer: false, turnsLeft: 5, searchesLeft: 5, ...extra });
  const searched: Step = { action: { type: 'search', query: 'Silent Harbor director' }, raw: 'Silent Harbor director', docs: [{ ...harbor }] };

  it('parse(format(a)) = a for searches and answers; parsers read "answer is" and never throw', () => {
    const actions: Action[] = [
      { type: 'search', query: 'Silent Harbor director' },
      { type: 'answer', answer: 'Maren Tolvik' },
      { type: 'answer', answer: 'Washington, D.C.' },
      { type: 'answer', answer: ':x' },
    ];
    for (const s of [state(), state([searched]), state([searched], { mustAnswer: true })]) {
      for (const a of actions) if (flare.allowed(s).includes(a.type)) assert.deepEqual(flare.parse(flare.format(a, s), s), a);
    }
    assert.equal(flare.format({ type: 'answer', answer: 'Oslo' }, state()), 'So the answer is Oslo.');
    const due = state([searched], { mustAnswer: true });
    assert.deepEqual(flare.parse('Tolvik was born in Oslo. So the answer is: W. A. Mozart.', due), { type: 'answer', answer: 'W. A. Mozart' });
    assert.deepEqual(flare.parse('So the answer is', due), { type: 'invalid', reason: 'empty answer after "answer is"' });
    assert.deepEqual(flare.parse('Thinking.', due), { type: 'invalid', reason: 'no "So the answer is"' });
    assert.deepEqual(flare.parse('\n  \n', state()), { type: 'invalid', reason: 'empty text' });
    assert.deepEqual(flare.allowed(state()), ['search']);
  });

  it('the first sentence of a generation and its tokens; the masked query', () => {
    const c = said('  W. A. Mozart was born in Salzburg. He wrote operas.', { Salzburg: 0.1 });
    const s = firstFlareSentence(c)!;
    assert.equal(s.text, 'W. A. Mozart was born in Salzburg.');
    assert.equal(s.tokens.join(''), '  W. A. Mozart was born in Salzburg.');
    assert.equal(s.last, false);
    assert.equal(maskedQuery(s), 'W. A. Mozart was born in .');
    assert.equal(firstFlareSentence(said('One sentence only.'))!.last, true);
    assert.equal(firstFlareSentence(said('Cut off', {}, 'length'))!.last, false);
    assert.equal(firstFlareSentence({ text: ' \n ', finishReason: 'stop' }), undefined);
    assert.equal(readFlareAnswer('so the ANSWER IS 1930.'), '1930');
    assert.equal(readFlareAnswer('No phrase here.'), undefined);
  });
});
