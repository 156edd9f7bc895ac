/**
 * Self-RAG's short-form inference (agents/self-rag.ts) on a scripted model whose replies carry top
 * log-probabilities, traced by hand: the retrieval decision, the per-passage scores with the authors'
 * formula (run_short_form.py), which generation answers, and the error lines of a server that cannot
 * serve it. Question: "Where was Maren Tolvik born?" — Oslo.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OraclePolicy } from '../../src/agents/oracle.js';
import { LlmPolicy } from '../../src/agents/policy.js';
import { parsePromptTemplate, withPromptTemplate } from '../../src/agents/prompt-template.js';
import { retrievalDecision, scorePassage, selfRag, selfRagAnswer, selfRagProtocol } from '../../src/agents/self-rag.js';
import { InputError } from '../../src/core/errors.js';
import type { Action, Step } from '../../src/core/trajectory.js';
import type { Question } from '../../src/core/types.js';
import { RagEnv, type State } from '../../src/env/env.js';
import { runEpisode } from '../../src/eval/run.js';
import { ScriptedLLM } from '../../src/llm/scripted.js';
import { type Choice, type GenerateRequest, messagesToPrompt } from '../../src/llm/types.js';
import type { Hit } from '../../src/retrieval/types.js';
import { harbor, noise, TableRetriever, tolvik } from '../fixtures/table-retriever.js';

/** The same three passages for every query, the best one second. */
const allThree = () => [harbor, tolvik, noise];

const question: Question = { id: 'q1', question: 'Where was Maren Tolvik born?', answers: ['Oslo'] };
/**
 * A question object of its own: the protocol keeps each question's retrieval decision (by the model's
 * spec, and every scripted model here is "scripted:scripted") for the rest of its episodes.
 */
const fresh = (): Question => ({ ...question });

const ln = Math.log;
/** A scripted greedy generation: its tokens with their log-probabilities, and the top alternatives at each position. */
function gen(tokens: string[], probs: number[], top: Record<string, number>[]): Choice {
  return {
    text: tokens.join(''),
    finishReason: 'stop',
    logprobs: { tokens, logprobs: probs.map(ln), top: top.map((t) => Object.fromEntries(Object.entries(t).map(([k, p]) => [k, ln(p)]))) },
  };
}

const PROMPT = '### Instruction:\nWhere was Maren Tolvik born?\n\n### Response:\n';
const paragraph = (h: Hit) => `[Retrieval]<paragraph>${h.title}\n${h.text}</paragraph>`;
/** The text a request sends: its raw prompt, or its messages as a completion backend joins them. */
const sent = (r: GenerateRequest) => r.prompt ?? messagesToPrompt(r.messages ?? []);

// The three passages' generations (hand-traced below).
const onHarbor = gen(
  ['[Relevant]', 'Bergen', '[No support / Contradictory]', '[Utility:2]'],
  [0.7, 0.4, 0.5, 0.6],
  [{ '[Relevant]': 0.7, '[Irrelevant]': 0.3 }, { Bergen: 0.4, Oslo: 0.35 }, { '[No support / Contradictory]': 0.5, '[Partially supported]': 0.3, '[Fully supported]': 0.1 }, { '[Utility:2]': 0.6, '[Utility:3]': 0.3, '[Utility:1]': 0.1 }],
);
const onTolvik = gen(
  ['[Relevant]', 'Oslo', '[Fully supported]', '[Utility:5]'],
  [0.9, 0.8, 0.8, 0.5],
  [{ '[Relevant]': 0.9, '[Irrelevant]': 0.1 }, { Oslo: 0.8 }, { '[Fully supported]': 0.8, '[Partially supported]': 0.15, '[No support / Contradictory]': 0.05 }, { '[Utility:5]': 0.5, '[Utility:4]': 0.4, '[Utility:3]': 0.1 }],
);
const onNoise = gen(['[Irrelevant]', 'Bergen', '[Utility:1]'], [0.8, 0.5, 0.9], [{ '[Irrelevant]': 0.8, '[Relevant]': 0.2 }, { Bergen: 0.5 }, { '[Utility:1]': 0.9, '[Utility:2]': 0.1 }]);

/** A model that decides with `decision`, answers the [No Retrieval] prompt with `plain`, and each passage prompt with its generation. */
function selfRagModel(decision: Choice, plain = 'Oslo[Utility:5]') {
  return new ScriptedLLM((req) => {
    const text = sent(req);
    if (text === PROMPT) return decision;
    if (text === PROMPT + '[No Retrieval]') return plain;
    if (text === PROMPT + paragraph(harbor)) return onHarbor;
    if (text === PROMPT + paragraph(tolvik)) return onTolvik;
    if (text === PROMPT + paragraph(noise)) return onNoise;
    throw new Error(`unexpected prompt ${JSON.stringify(text)}`);
  });
}

async function run(llm: ScriptedLLM) {
  const retriever = new TableRetriever(allThree);
  const env = new RagEnv({ retriever, topK: selfRag.defaults.topK, maxTurns: selfRag.defaults.maxTurns, maxSearches: selfRag.defaults.maxSearches });
  const t = await runEpisode(env, new LlmPolicy(selfRag, llm), fresh());
  return { t, queries: retriever.queries };
}

describe('Self-RAG (short-form)', () => {
  it('no retrieval: P([Retrieval]) / (P([Retrieval]) + P([No Retrieval])) = 0.15 / (0.15 + 0.85) = 0.15 ≤ δ 0.2, so one generation after [No Retrieval] answers', async () => {
    const llm = selfRagModel(gen(['[No Retrieval]'], [0.85], [{ '[No Retrieval]': 0.85, '[Retrieval]': 0.15 }]));
    const { t, queries } = await run(llm);
    assert.deepEqual(queries, []);
    assert.equal(llm.requests.length, 2);
    // Call 1, the decision: the bare prompt, one greedy token, the top 20 alternatives.
    assert.deepEqual(llm.requests[0], { prompt: PROMPT, temperature: 0, topP: 1, maxTokens: 1, topLogprobs: 20 });
    // Call 2, the policy's own: the prompt with [No Retrieval] as the start of the model's turn.
    assert.equal(sent(llm.requests[1]!), PROMPT + '[No Retrieval]');
    assert.equal(llm.requests[1]!.maxTokens, 100);
    assert.equal(t.steps.length, 1);
    assert.equal(t.steps[0]!.raw, 'Oslo[Utility:5]');
    // The decision not to retrieve is recorded on the answer step, the episode's only one.
    assert.equal(t.steps[0]!.summary, 'Self-RAG retrieval decision: P([Retrieval]) 0.15, P([No Retrieval]) 0.85, ratio 0.15 ≤ δ 0.2: answer without retrieval');
    assert.equal(t.prediction, 'Oslo');
    assert.equal(t.retrievalCount, 0);
  });

  it('retrieval: one generation per passage, the best score (the second passage, not the first) answers', async () => {
    // Decision: 0.6 / (0.6 + 0.3) = 0.667 > δ 0.2 → retrieve (the question itself, 10 passages asked, 3 returned).
    const llm = selfRagModel(gen(['[Retrieval]'], [0.6], [{ '[Retrieval]': 0.6, '[No Retrieval]': 0.3, The: 0.05 }]));
    const { t, queries } = await run(llm);
    assert.deepEqual(queries, [question.question]);
    // The decision, then the three passages: prompt + "[Retrieval]<paragraph>{title}\n{text}</paragraph>".
    assert.equal(llm.requests.length, 4);
    assert.deepEqual(llm.requests.slice(1).map(sent), [harbor, tolvik, noise].map((h) => PROMPT + paragraph(h)));
    for (const r of llm.requests.slice(1)) assert.deepEqual({ ...r, prompt: '' }, { prompt: '', temperature: 0, topP: 1, maxTokens: 100, topLogprobs: 20 });
    // score = exp(cumulative log-prob / tokens) + w_rel·rel + w_sup·sup + w_use·use, w = (1, 1, 1), each
    // probability e^−100 when absent from the top-k (the authors' −100):
    //   rel = P[Relevant] / (P[Irrelevant] + P[Relevant])                     at the first position
    //   sup = P[Fully] / Σ + 0.5·P[Partially] / Σ                              where the first support token was generated
    //   use = Σ_i u_i·P[Utility:i] / Σ, u = (−1, −0.5, 0, 0.5, 1)              where the first utility token was generated
    // [1] Harbor: (0.7·0.4·0.5·0.6)^(1/4) = 0.5384; rel 0.7/1.0 = 0.7; sup 0.1/0.9 + 0.5·0.3/0.9 = 0.2778;
    //     use (−1·0.1 − 0.5·0.6 + 0·0.3)/1.0 = −0.4                              → 1.1161
    // [2] Tolvik: (0.9·0.8·0.8·0.5)^(1/4) = 0.7326; rel 0.9; sup 0.8 + 0.5·0.15 = 0.875;
    //     use 0·0.1 + 0.5·0.4 + 1·0.5 = 0.7                                       → 3.2076  (best)
    // [3] Noise: (0.8·0.5·0.9)^(1/3) = 0.7114; rel 0.2/1.0 = 0.2; no support token → 0;
    //     use −1·0.9 − 0.5·0.1 = −0.95                                            → −0.0386
    assert.equal(t.steps.length, 2);
    assert.deepEqual(t.steps.map((s) => s.action), [
      { type: 'search', query: question.question },
      { type: 'answer', answer: 'Oslo' },
    ]);
    const summary = t.steps[0]!.summary!;
    assert.match(summary, /^Self-RAG retrieval decision: P\(\[Retrieval\]\) 0\.6, P\(\[No Retrieval\]\) 0\.3, ratio 0\.6667 > δ 0\.2: retrieve\./);
    assert.match(summary, /\[1\] p1: 1\.116 \(seq 0\.5384, relevance 0\.7, support 0\.2778, utility -0\.4\) "Bergen"; \[2\] p2: 3\.208 \(seq 0\.7326, relevance 0\.9, support 0\.875, utility 0\.7\) "Oslo"; \[3\] p3: -0\.03862 /);
    assert.match(summary, /Best: \[2\]\.$/);
    assert.equal(t.prediction, 'Oslo');
    assert.equal(t.retrievalCount, 1);
  });

  it("a passage's score to 1e-9 (the first passage above, each part)", () => {
    const s = scorePassage(onHarbor);
    // seq = 0.084^(1/4) = 0.5383563270955; rel = 0.7; sup = 0.25/0.9 = 0.2777777777778;
    // use = (−0.1 − 0.3 + 0 + 0.5·e^−100 + e^−100) / (1 + 2·e^−100) = −0.4 (to 1e-43)
    assert.ok(Math.abs(s.seq - 0.5383563270955) < 1e-9);
    assert.ok(Math.abs(s.relevance - 0.7) < 1e-9);
    assert.ok(Math.abs(s.support - 0.2777777777778) < 1e-9);
    assert.ok(Math.abs(s.utility - -0.4) < 1e-9);
    assert.ok(Math.abs(s.score - 1.1161341048733) < 1e-9, String(s.score));
    // The weights and switches apply as the authors' flags do: w_use 0.5 (the paper's), no sequence score, no grounding.
    const t = scorePassage(onHarbor, { wRel: 1, wSup: 1, wUse: 0.5, useSeqScore: false, useGroundness: false, useUtility: true, topLogprobs: 20 });
    assert.ok(Math.abs(t.score - (0.7 + 0.5 * -0.4)) < 1e-9);
  });

  it('a server without top log-probabilities: one error line naming the fix', async () => {
    await assert.rejects(run(new ScriptedLLM(['[Retrieval]'])), (e: unknown) => {
      assert.ok(e instanceof InputError);
      assert.equal(
        e.message,
        'self-rag: the model server returned no top log-probabilities, which Self-RAG reads its reflection tokens from (serve the released Self-RAG model (e.g. selfrag/selfrag_llama2_7b) with vLLM --max-logprobs 20 or more, and run with --llm-mode completion)',
      );
      assert.ok(!e.message.includes('\n'));
      return true;
    });
  });

  it('a server that decodes the special tokens as "" is refused; whitespace around a token string is ignored', () => {
    const skipped: Choice = { text: '', finishReason: 'length', logprobs: { tokens: [''], logprobs: [-0.1], top: [{ '': -0.1, The: -3 }] } };
    assert.throws(() => retrievalDecision(skipped), (e: unknown) => e instanceof InputError && /decodes Self-RAG's special tokens as ""/.test(e.message) && !e.message.includes('\n'));
    const spaced = gen([' [No Retrieval]'], [0.9], [{ ' [No Retrieval]': 0.9, ' [Retrieval]': 0.1 }]);
    const d = retrievalDecision(spaced);
    assert.equal(d.retrieve, false);
    assert.ok(Math.abs(d.ratio! - 0.1) < 1e-12);
  });

  it("the authors' literal rule divides log-probabilities (run_short_form.py:74–81), which ranks the other way", () => {
    // P[Retrieval] 0.15: ln 0.15 / (ln 0.15 + ln 0.85) = 0.9211 > 0.2 → retrieve; P[Retrieval] 0.9: ln 0.9 / (ln 0.9 + ln 0.1) = 0.0438 → not.
    const low = gen(['[No Retrieval]'], [0.85], [{ '[No Retrieval]': 0.85, '[Retrieval]': 0.15 }]);
    const high = gen(['[Retrieval]'], [0.9], [{ '[Retrieval]': 0.9, '[No Retrieval]': 0.1 }]);
    const literal = { threshold: 0.2, decisionRule: 'logprob-ratio' as const, topLogprobs: 20 };
    assert.equal(retrievalDecision(low, literal).retrieve, true);
    assert.ok(Math.abs(retrievalDecision(low, literal).ratio! - 0.921093484706) < 1e-9);
    assert.equal(retrievalDecision(high, literal).retrieve, false);
    assert.equal(retrievalDecision(low).retrieve, false);
    assert.equal(retrievalDecision(high).retrieve, true);
  });

  it('answers lose reflection tokens, </s>, line breaks and one leading # or :; parse(format(a)) = a', () => {
    assert.equal(selfRagAnswer('[Relevant]Oslo[Fully supported][Utility:5]</s>'), 'Oslo');
    assert.equal(selfRagAnswer('[No Retrieval]: Oslo, Nor\nway'), 'Oslo, Norway');
    assert.equal(selfRagAnswer('##2'), '#2');
    const s: State = { question, steps: [], done: false, mustAnswer: false, turnsLeft: 2, searchesLeft: 1 };
    for (const answer of ['Oslo', '#2', ': x', 'Maren Tolvik']) {
      const a: Action = { type: 'answer', answer };
      assert.deepEqual(selfRag.parse(selfRag.format(a, s), s), a);
    }
    assert.deepEqual(selfRag.parse('[Utility:1]</s>', s), { type: 'invalid', reason: 'empty reply' });
    assert.deepEqual(selfRag.allowed(s), ['answer']);
  });

  it('a non-LLM policy (no decision) retrieves once with the question, then answers', async () => {
    const retriever = new TableRetriever(allThree);
    const env = new RagEnv({ retriever, topK: 3, maxTurns: 2, maxSearches: 1 });
    const t = await runEpisode(env, new OraclePolicy(selfRag), fresh());
    assert.deepEqual(retriever.queries, [question.question]);
    assert.deepEqual(t.steps.map((s) => s.action.type), ['search', 'answer']);
    assert.equal(t.prediction, 'Oslo');
  });

  it("a --prompt-template replaces the instruction in every call, the model's turn stays the protocol's", async () => {
    const templated = withPromptTemplate(selfRag, parsePromptTemplate('@user\nQ: {question}', 't.txt'));
    const llm = new ScriptedLLM((req) => (req.maxTokens === 1 ? gen(['[Retrieval]'], [0.9], [{ '[Retrieval]': 0.9 }]) : onTolvik));
    const env = new RagEnv({ retriever: new TableRetriever(allThree), topK: 1, maxTurns: 2, maxSearches: 1 });
    const t = await runEpisode(env, new LlmPolicy(templated, llm), fresh());
    assert.deepEqual(llm.requests.map(sent), ['Q: Where was Maren Tolvik born?\n', `Q: Where was Maren Tolvik born?\n${paragraph(harbor)}`]);
    assert.equal(t.prediction, 'Oslo');
    const searched: Step = t.steps[0]!;
    const after: State = { question, steps: [searched], done: false, mustAnswer: true, turnsLeft: 1, searchesLeft: 0 };
    assert.equal(messagesToPrompt(templated.render(after)), `Q: Where was Maren Tolvik born?\n${paragraph(harbor)}`);
    assert.equal(messagesToPrompt(selfRag.render(after)), PROMPT + paragraph(harbor));
  });

  it("mode always skips the decision call; mode never answers without searching", async () => {
    const always = selfRagProtocol({ mode: 'always' });
    const llm = new ScriptedLLM((req) => (sent(req) === PROMPT + paragraph(harbor) ? onHarbor : onTolvik));
    const env = new RagEnv({ retriever: new TableRetriever(allThree), topK: 2, maxTurns: 2, maxSearches: 1 });
    const t = await runEpisode(env, new LlmPolicy(always, llm), fresh());
    assert.equal(llm.requests.length, 2);
    assert.equal(t.prediction, 'Oslo');
    assert.match(t.steps[0]!.summary!, /^Self-RAG: retrieval \(mode always\)\. /);
    const never = selfRagProtocol({ mode: 'never' });
    const llm2 = new ScriptedLLM(['Bergen']);
    const t2 = await runEpisode(new RagEnv({ retriever: new TableRetriever(allThree), topK: 2, maxTurns: 2, maxSearches: 1 }), new LlmPolicy(never, llm2), fresh());
    assert.deepEqual(llm2.requests.map(sent), [PROMPT + '[No Retrieval]']);
    assert.equal(t2.prediction, 'Bergen');
  });
});
