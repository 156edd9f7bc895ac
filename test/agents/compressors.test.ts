/**
 * The context compressors of ReasonRAG's "Summary" rows (RECOMP, LongLLMLingua, Selective-Context) as
 * standard RAG over compressed documents, on a scripted model and a table retriever, with compressions
 * worked out by hand from scripted log-probabilities and a keyword embedder.
 * Two-hop question: "Where was the director of The Silent Harbor born?" — Maren Tolvik, born in Oslo.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { alignTokens, NO_CONTEXT, type ScoredToken, scoreText } from '../../src/agents/compressed-rag.js';
import { coarseBudget, contrastThreshold, dynamicRatios, LLMLINGUA_RESTRICTION, longLlmLingua, longLlmLinguaProtocol, type RankedDoc } from '../../src/agents/longllmlingua.js';
import { LlmPolicy } from '../../src/agents/policy.js';
import type { Protocol } from '../../src/agents/protocol.js';
import { recompAbstractive, recompExtractive, recompSentences, topSentences } from '../../src/agents/recomp.js';
import { keepInformative, nanPercentile, phraseUnits, scSentences, selectiveContext, selectiveContextProtocol, unitSelfInfo } from '../../src/agents/selective-context.js';
import { InputError } from '../../src/core/errors.js';
import type { Question } from '../../src/core/types.js';
import { RagEnv } from '../../src/env/env.js';
import { runEpisode } from '../../src/eval/run.js';
import { ScriptedLLM } from '../../src/llm/scripted.js';
import type { Choice, GenerateRequest } from '../../src/llm/types.js';
import type { EmbedKind, Embedder } from '../../src/retrieval/embedders/base.js';
import type { Hit } from '../../src/retrieval/types.js';
import { harbor, noise, TableRetriever, tolvik } from '../fixtures/table-retriever.js';

const question: Question = { id: 'q1', question: 'Where was the director of The Silent Harbor born?', answers: ['Oslo'] };

const ANSWER = 'Maren Tolvik directed it; she was born in Oslo.\nAnswer: Oslo';

/** An echo reply: the prompt's tokens with log-probabilities −info (null where info is null). */
function echo(tokens: readonly string[], info: readonly (number | null)[]): Choice {
  return { text: '', finishReason: 'length', promptLogprobs: { tokens: [...tokens], logprobs: info.map((x) => (x === null ? null : -x)) } };
}

/** Runs one episode of `p` with `llm` as the agent's model over `hits`; the answer call's user message too. */
async function run(p: Protocol, llm: ScriptedLLM, hits: Hit[]) {
  const retriever = new TableRetriever(() => hits);
  const env = new RagEnv({ retriever, topK: hits.length, maxTurns: p.defaults.maxTurns, maxSearches: p.defaults.maxSearches });
  const t = await runEpisode(env, new LlmPolicy(p, llm), question);
  const chat = llm.requests.filter((r) => !r.echo && r.messages);
  const answerPrompt = chat.at(-1)?.messages?.find((m) => m.role === 'user')?.content ?? '';
  return { t, queries: retriever.queries, answerPrompt };
}

// ------------------------------------------------------------------------------ Selective-Context

/** The one sentence of the Tolvik document as the scorer tokenizes it, with each token's self-information (nats). */
const SC_TOKENS: [string, number | null][] = [
  ['Doc', null], [' 1', 0.4], ['(', 0.3], ['Title', 0.2], [':', 0.1], [' "', 0.15], ['Maren', 5.0], [' Tolvik', 3.0], ['")', 0.5],
  [' Maren', 0.6], [' Tolvik', 0.2], [' was', 1.2], [' born', 2.5], [' in', 0.7], [' Oslo', 6.0], [' in', 0.9], [' 1930', 4.0], ['.', 0.8],
];
const SC_SENTENCE = SC_TOKENS.map(([t]) => t).join('');

const scoredTokens = (pairs: [string, number | null][]): ScoredToken[] => {
  const spans = alignTokens(pairs.map(([t]) => t).join(''), pairs.map(([t]) => t));
  return pairs.map(([token, info], i) => ({ token, ...spans[i]!, logprob: info === null ? null : -info }));
};

describe('token alignment', () => {
  it('a character split over byte tokens ("�" pieces) covers its text; the tokens after it stay in place', async () => {
    const text = '1940 – February 11.';
    const spans = alignTokens(text, ['1940', ' �', '�', ' Feb', 'ruary', ' 11', '.']);
    assert.deepEqual(spans.map((x) => text.slice(x.start, x.end)), ['1940', ' –', '', ' Feb', 'ruary', ' 11', '.']);
    // With the server's character offsets (text_offset) they decide.
    const byOffsets = alignTokens(text, ['1940', ' �', '�', ' Feb', 'ruary', ' 11', '.'], [0, 4, 6, 6, 10, 15, 18]);
    assert.deepEqual(byOffsets.map((x) => text.slice(x.start, x.end)), ['1940', ' –', '', ' Feb', 'ruary', ' 11', '.']);
    // The later piece covers nothing but still counts as a token of its document (as the references count it).
    const { rankDocuments } = await import('../../src/agents/longllmlingua.js');
    const scorer = new ScriptedLLM((req) => echo(['A', ' �', '�', ' b', 'Who', '?', ' We', ' can'], [null, 1, 1, 1, 2, 2, 2, 2]));
    const { ranked, questionTokens } = await rankDocuments('Who?', ['A é b'], scorer);
    assert.deepEqual([ranked[0]!.tokens, questionTokens, ranked[0]!.perplexity], [4, 2, 2]);
    // Offsets that do not fit the tokens (vLLM sums token lengths: an echoed <s> shifts them by 3) are not used.
    const shifted = alignTokens('The film', ['<s>', 'The', ' film'], [0, 3, 6]);
    assert.deepEqual(shifted, [{ start: 0, end: 0 }, { start: 0, end: 3 }, { start: 3, end: 8 }]);
  });
});

describe('Selective-Context', () => {
  it('splits the documents into sentences after "." or "?" (not after an initialism), and a sentence into phrase units', () => {
    // FlashRAG's refiners' document line: `Doc 1(Title: "T") text`.
    assert.equal(SC_SENTENCE, 'Doc 1(Title: "Maren Tolvik") Maren Tolvik was born in Oslo in 1930.');
    assert.deepEqual(scSentences('Born in the U.S. in 1930. Is it? Yes! It is.'), ['Born in the U.S. in 1930.', 'Is it?', 'Yes! It is.']);
    assert.deepEqual(phraseUnits(SC_SENTENCE), ['Doc 1', '(', 'Title', ':', ' "', 'Maren Tolvik', '"', ')', ' Maren Tolvik', ' was', ' born', ' in', ' Oslo', ' in', ' 1930', '.']);
    // Python's \w is Unicode: "É.U." is an initialism, as "U.S." is.
    assert.deepEqual(scSentences('Il vit aux É.U. depuis 1990. Fin.'), ['Il vit aux É.U. depuis 1990.', 'Fin.']);
    assert.deepEqual(phraseUnits('The Silent Harbor is a 1971 film directed by an American director.'), ['The Silent Harbor', ' is', ' a 1971 film', ' directed', ' by', ' an American director', '.']);
    for (const s of [SC_SENTENCE, 'He said: "no", twice — then left.']) assert.equal(phraseUnits(s).join(''), s);
  });

  it("a unit's self-information is the mean of its tokens' (the first token, unscored, left out); a token over k units gives each 1/k", () => {
    const infos = unitSelfInfo(phraseUnits(SC_SENTENCE), scoredTokens(SC_TOKENS));
    // "Doc 1" = mean(0.4) (Doc has none); "Maren Tolvik" = (5 + 3) / 2, then (0.6 + 0.2) / 2 when repeated;
    // the token '")' lies over two units, '"' and ')': 0.5 / 2 each.
    assert.deepEqual(infos.map((x) => Math.round(x * 1000) / 1000), [0.4, 0.3, 0.2, 0.1, 0.15, 4, 0.25, 0.25, 0.4, 1.2, 2.5, 0.7, 6, 0.9, 4, 0.8]);
    const split = unitSelfInfo(['Maren Tolvik', ' was'], scoredTokens([['Maren', null], [' Tolvik was', 2]]));
    assert.deepEqual(split, [1, 1]);
    assert.ok(Number.isNaN(unitSelfInfo(['Doc', ' 1'], scoredTokens([['Doc', null], [' 1', 1]]))[0]));
  });

  it("drops the units below numpy's nanpercentile at the ratio (linear interpolation); unscored units stay", () => {
    const infos = [0.4, 0.3, 0.2, 0.1, 4, 0.5, 0.4, 1.2, 2.5, 0.7, 6, 0.9, 4, 0.8];
    // Sorted: 0.1 0.2 0.3 0.4 0.4 0.5 0.7 0.8 … ; rank 0.5·13 = 6.5 → 0.7 + (0.8 − 0.7)·0.5 = 0.75.
    assert.ok(Math.abs(nanPercentile(infos, 50) - 0.75) < 1e-12);
    // Rank 0.35·13 = 4.55 → 0.4 + (0.5 − 0.4)·0.55 = 0.455.
    assert.ok(Math.abs(nanPercentile(infos, 35) - 0.455) < 1e-12);
    assert.deepEqual(keepInformative([Number.NaN, 1, 2, 3], 0.5), [true, false, true, true]);
  });

  it('ratio 0.5: the title label and the repeated name go; the answer prompt shows the rest (one echo request a sentence, to the scorer)', async () => {
    const scorer = new ScriptedLLM((req) => {
      assert.equal(req.prompt, SC_SENTENCE);
      assert.equal(req.echo, true);
      assert.equal(req.maxTokens, 1);
      return echo(SC_TOKENS.map(([t]) => t), SC_TOKENS.map(([, x]) => x));
    }, 'gpt2');
    const llm = new ScriptedLLM([ANSWER]);
    const { t, queries, answerPrompt } = await run(selectiveContext({ scorer }), llm, [tolvik]);
    assert.deepEqual(queries, [question.question]);
    assert.equal(scorer.requests.length, 1);
    assert.equal(llm.requests.length, 1); // the answer only: scoring went to the scorer
    // 16 units; the 50th percentile, rank 7.5 of the sorted values, is (0.4 + 0.7) / 2 = 0.55. Kept (≥ 0.55): "Maren Tolvik"
    // (4), was (1.2), born (2.5), in (0.7), Oslo (6), in (0.9), 1930 (4), "." (0.8).
    assert.equal(t.steps[0]!.summary, 'Maren Tolvik was born in Oslo in 1930.');
    assert.ok(answerPrompt.startsWith('Documents:\nMaren Tolvik was born in Oslo in 1930.\n\nQuestion: Where was the director of The Silent Harbor born?\n'));
    assert.equal(t.prediction, 'Oslo');
    assert.equal(t.steps.length, 2);
  });

  it("the paper's other units: whole sentences by mean self-information; single tokens", async () => {
    // Two sentences: "Harbor Lights is a novel." (mean 0.5) and the Tolvik one (mean 2.0); ratio 0.5 → threshold 1.25.
    const sentences: Record<string, [string, number | null][]> = {
      'Doc 1(Title: "Harbor Lights") Harbor Lights is a novel.': [['Doc 1(Title: "Harbor Lights")', null], [' Harbor Lights', 0.5], [' is a novel.', 0.5]],
      'Doc 2(Title: "Maren Tolvik") Maren Tolvik was born in Oslo in 1930.': [['Doc 2(Title: "Maren Tolvik")', null], [' Maren Tolvik was born', 1], [' in Oslo in 1930.', 3]],
    };
    const scorer = new ScriptedLLM((req) => {
      const pairs = sentences[req.prompt!]!;
      return echo(pairs.map(([x]) => x), pairs.map(([, x]) => x));
    });
    const bySentence = await run(selectiveContext({ scorer, unit: 'sentence' }), new ScriptedLLM([ANSWER]), [noise, tolvik]);
    assert.equal(bySentence.t.steps[0]!.summary, 'Doc 2(Title: "Maren Tolvik") Maren Tolvik was born in Oslo in 1930.');
    // Tokens: 0.5 0.5 1 3 (the unscored ones stay); 50th percentile 0.75 → the two 0.5 tokens go.
    const byToken = await run(selectiveContext({ scorer, unit: 'token' }), new ScriptedLLM([ANSWER]), [noise, tolvik]);
    assert.equal(byToken.t.steps[0]!.summary, 'Doc 1(Title: "Harbor Lights") Doc 2(Title: "Maren Tolvik") Maren Tolvik was born in Oslo in 1930.');
  });

  it('refuses a ratio outside 0–1', () => {
    assert.throws(() => selectiveContext({ ratio: 1.5 }), InputError);
    assert.throws(() => longLlmLingua({ rate: 0 }), InputError);
  });

  it('a scorer that gives no prompt log-probabilities fails with one InputError line saying how to fix it', async () => {
    await assert.rejects(
      () => run(selectiveContextProtocol, new ScriptedLLM([ANSWER]), [tolvik]),
      (e: Error) => e instanceof InputError && /^Selective-Context scores text by the log-probabilities of its tokens, and the model scripted:scripted returned none for its prompt \(serve the scoring model with vLLM or SGLang/.test(e.message) && !e.message.includes('\n'),
    );
  });

  it('with a prefix (GPT-2\'s <|endoftext|>), the prefix is sent and not scored: the first word is scored too', async () => {
    const prefix = '<|endoftext|>';
    const scorer = new ScriptedLLM((req) => {
      assert.ok(req.prompt!.startsWith(prefix));
      return echo([prefix, ...SC_TOKENS.map(([t]) => t)], [null, 0.45, ...SC_TOKENS.slice(1).map(([, x]) => x)]);
    });
    const { t } = await run(selectiveContext({ scorer, prefix }), new ScriptedLLM([ANSWER]), [tolvik]);
    // "Doc 1" = mean(0.45, 0.4) = 0.425 — still below the threshold (now (0.425 + 0.7) / 2 = 0.5625): dropped.
    assert.equal(t.steps[0]!.summary, 'Maren Tolvik was born in Oslo in 1930.');
  });
});

// ---------------------------------------------------------------------------------- LongLLMLingua

const Q = question.question;
const LINES = {
  harbor: 'Doc 1(Title: "The Silent Harbor") The Silent Harbor is a 1971 film directed by Maren Tolvik.',
  tolvik: 'Doc 2(Title: "Maren Tolvik") Maren Tolvik was born in Oslo in 1930.',
  noise: 'Doc 3(Title: "Harbor Lights") Harbor Lights is a novel.',
};
/** The scripted scorer's tokens: a run of line breaks, or a word with the space before it. */
const words = (text: string) => text.match(/\n+| ?\S+/g) ?? [];
/** The question's mean −log p given each document (coarse ranking): Tolvik < Harbor < noise. */
const QUESTION_PPL: Record<string, number> = { 'Doc 1': 2.0, 'Doc 2': 1.5, 'Doc 3': 3.0 };
/**
 * Contrastive scores (−log p alone − −log p after the question) of the kept context's tokens: the
 * Tolvik document (first, 12 tokens), the blank line, then the Harbor one (16 tokens). The first token
 * has no score alone (null).
 */
const CONTRAST = [
  Number.NaN, 0.02, 0.5, 0.4, 0.3, 0.35, 0.2, 0.9, 0.05, 1.5, 0.03, 0.6,
  0,
  0.04, 0.07, 0.08, 0.7, 0.65, 0.09, 0.25, 0.45, 0.1, 0.11, 0.12, 0.15, 0.8, 0.13, 1.0, 0.95,
];

function lingua(req: GenerateRequest): Choice {
  const p = req.prompt!;
  const tokens = words(p);
  if (p.endsWith(LLMLINGUA_RESTRICTION)) {
    // Ranking: the document's words score 1, the question's and the restriction's its perplexity.
    const docWords = words(p.slice(0, p.indexOf(Q))).length;
    return echo(tokens, tokens.map((_, i) => (i === 0 ? null : i < docWords ? 1 : QUESTION_PPL[p.slice(0, 5)]!)));
  }
  if (p.startsWith(`${Q}\n\n`)) {
    const lead = words(`${Q}\n\n`).length;
    return echo(tokens, tokens.map((_, i) => (i < lead ? 1 : 2 - (Number.isNaN(CONTRAST[i - lead]!) ? 0 : CONTRAST[i - lead]!))));
  }
  return echo(tokens, tokens.map((_, i) => (i === 0 ? null : 2)));
}

describe('LongLLMLingua', () => {
  it('coarse budget: (L_q + ΣL)·rate − L_q tokens plus 100; documents in ranked order until it is spent; dynamic ratios τ ± 0.3', () => {
    const ranked: RankedDoc[] = [{ index: 1, tokens: 13, perplexity: 1.5 }, { index: 0, tokens: 17, perplexity: 2 }, { index: 2, tokens: 10, perplexity: 3 }];
    // (9 + 40)·0.55 − 9 = 17.95; +100 leaves 77.95 after all three: all kept.
    const all = coarseBudget(ranked, 9, 0.55, 100);
    assert.ok(Math.abs(all.target - 17.95) < 1e-9);
    assert.deepEqual(all.kept.map((d) => d.index), [1, 0, 2]);
    // Without the bonus: 17.95 − 13 = 4.95, − 17 < 0: the second is kept and the third is not.
    assert.deepEqual(coarseBudget(ranked, 9, 0.55, 0).kept.map((d) => d.index), [1, 0]);
    // τ = 17.95 / (15 + 19 + 12 + 1) = 0.3819…; three documents: τ + 0.3, τ, τ − 0.3.
    const r = dynamicRatios(ranked, 17.95, 0.3);
    const tau = 17.95 / 47;
    assert.deepEqual(r.map((x) => x.toFixed(6)), [tau + 0.3, tau, tau - 0.3].map((x) => x.toFixed(6)));
    assert.deepEqual(dynamicRatios([ranked[0]!], 30, 0.3), [1]); // clipped
    // Threshold: the ⌊n·r⌋-th highest; r = 1 keeps everything.
    assert.equal(contrastThreshold([5, 1, 4, 2, 3], 0.5), 4);
    assert.equal(contrastThreshold([5, 1, 4], 1), Number.NEGATIVE_INFINITY);
  });

  it('ranks the documents by the question\'s perplexity given each, keeps them to budget, cuts tokens by contrastive score; the answer prompt shows the result', async () => {
    const scorer = new ScriptedLLM(lingua, 'llama-2-7b');
    const llm = new ScriptedLLM([ANSWER]);
    const { t, answerPrompt } = await run(longLlmLingua({ scorer, budget: 0 }), llm, [harbor, tolvik, noise]);
    const prompts = scorer.requests.map((r) => r.prompt!);
    // Three ranking requests: document, question, restrictive statement.
    assert.deepEqual(prompts.slice(0, 3), [LINES.harbor, LINES.tolvik, LINES.noise].map((l) => `${l}${Q} ${LLMLINGUA_RESTRICTION}`));
    // Order Tolvik (1.5) < Harbor (2.0) < noise (3.0); lengths 12, 16, 9 words, the question 8 more (its first word is
    // written onto the document's last, "1930.Where", a document token here): target (8 + 37)·0.55 − 8 = 16.75,
    // Tolvik leaves 4.75, Harbor overspends it (kept) → noise dropped.
    const context = `${LINES.tolvik}\n\n${LINES.harbor}`;
    assert.deepEqual(prompts.slice(3).sort(), [context, `${Q}\n\n${context}`].sort());
    // τ = 16.75 / (14 + 18 + 1) = 0.5076: Tolvik keeps τ + 0.3 = 0.8076 (⌊27·0.8076⌋ = 21st highest of 27 scores, 0.09:
    // in and in and 2(Title: go), Harbor τ − 0.3 = 0.2076 (5th highest, 0.8: strictly above it only Maren, Tolvik.).
    const compressed = 'Doc "Maren Tolvik") Maren Tolvik was born Oslo 1930.\nMaren Tolvik.';
    assert.equal(t.steps[0]!.summary, compressed);
    assert.ok(answerPrompt.startsWith(`Documents:\n${compressed}\n\nQuestion: ${Q}\n`));
    assert.equal(t.prediction, 'Oslo');
    assert.equal(llm.requests.length, 1);
  });

  it('with the default +100 budget all three documents stay, most relevant first', async () => {
    const scorer = new ScriptedLLM((req) => {
      const p = req.prompt!;
      const tokens = words(p);
      if (p.endsWith(LLMLINGUA_RESTRICTION)) return lingua(req);
      return echo(tokens, tokens.map((_, i) => (i === 0 ? null : 1))); // no contrast anywhere: every token ties
    });
    const { t } = await run(longLlmLingua({ scorer }), new ScriptedLLM([ANSWER]), [harbor, tolvik, noise]);
    const fine = scorer.requests.map((r) => r.prompt!).filter((p) => !p.endsWith(LLMLINGUA_RESTRICTION));
    assert.ok(fine.includes(`${LINES.tolvik}\n\n${LINES.harbor}\n\n${LINES.noise}`));
    // All scores 0: nothing is strictly above the threshold; only the unscored first token stays.
    assert.equal(t.steps[0]!.summary, 'Doc');
  });

  it('a scorer without prompt log-probabilities fails with one InputError line', async () => {
    await assert.rejects(() => run(longLlmLinguaProtocol, new ScriptedLLM([ANSWER]), [harbor, tolvik]), (e: Error) => e instanceof InputError && /^LongLLMLingua .*vLLM or SGLang/.test(e.message) && !e.message.includes('\n'));
  });
});

// ------------------------------------------------------------------------------------------ RECOMP

const FEATURES = ['born', 'direct', 'silent harbor', 'oslo', 'novel'];
/** A dual encoder over keyword counts, recording what it embedded as what. */
class KeywordEmbedder implements Embedder {
  readonly spec = 'keywords';
  readonly lexical = true;
  readonly dim = FEATURES.length;
  readonly calls: { texts: string[]; kind: EmbedKind }[] = [];
  async embed(texts: readonly string[], kind: EmbedKind): Promise<Float32Array[]> {
    this.calls.push({ texts: [...texts], kind });
    return texts.map((t) => Float32Array.from(FEATURES.map((f) => t.toLowerCase().split(f).length - 1)));
  }
}

const tolvik2: Hit = { ...tolvik, text: 'Maren Tolvik was born in Oslo in 1930. She directed eleven films.' };
const noise2: Hit = { ...noise, text: 'Harbor Lights is a novel. It won no prize. Ok.' };

describe('RECOMP', () => {
  it('extractive: sentences of the texts (over 5 characters), scored by inner product with the question; top n in document order', async () => {
    const docs: Hit[] = [harbor, tolvik2, noise2];
    assert.deepEqual(recompSentences(docs), [harbor.text, 'Maren Tolvik was born in Oslo in 1930.', 'She directed eleven films.', 'Harbor Lights is a novel.', 'It won no prize.']);
    // An initialism does not end a sentence ("U.S." split the first of these in two before).
    const usa: Hit = { passageId: 'u', title: 'U', text: 'Tolvik moved to the U.S. in 1962. Dr. Hale met her there.', score: 1 };
    assert.deepEqual(recompSentences([usa]), ['Tolvik moved to the U.S. in 1962.', 'Dr. Hale met her there.']);
    assert.deepEqual(topSentences(['a', 'b', 'c'], [1, 3, 3], 2), ['b', 'c']);
    assert.deepEqual(topSentences(['a', 'b', 'c'], [2, 1, 1], 2), ['a', 'b']); // a tie goes to the earlier
    // Question features born, direct, silent harbor → scores 2, 1, 1, 0, 0.
    const embedder = new KeywordEmbedder();
    const { t, queries, answerPrompt } = await run(recompExtractive({ embedder }), new ScriptedLLM([ANSWER]), docs);
    assert.deepEqual(queries, [Q]);
    assert.deepEqual(embedder.calls.map((c) => c.kind), ['query', 'passage']);
    assert.deepEqual(embedder.calls[0]!.texts, [Q]);
    const two = 'The Silent Harbor is a 1971 film directed by Maren Tolvik. Maren Tolvik was born in Oslo in 1930.';
    assert.equal(t.steps[0]!.summary, two);
    assert.ok(answerPrompt.startsWith(`Documents:\n${two}\n\nQuestion: `));
    const one = await run(recompExtractive({ embedder: new KeywordEmbedder(), topN: 1 }), new ScriptedLLM([ANSWER]), docs);
    assert.equal(one.t.steps[0]!.summary, harbor.text);
  });

  it('extractive with an embedder spec (hash) picks the sentence sharing the question\'s words', async () => {
    const { t } = await run(recompExtractive({ embedder: 'hash:256', topN: 1 }), new ScriptedLLM([ANSWER]), [noise2, harbor]);
    assert.equal(t.steps[0]!.summary, harbor.text);
    assert.throws(() => recompExtractive({ topN: 0 }), InputError);
  });

  it("abstractive: the agent's model summarises the documents for the question (at temperature 0); the answer prompt shows the summary", async () => {
    const summary = 'The Silent Harbor was directed by Maren Tolvik, who was born in Oslo.';
    const llm = new ScriptedLLM([summary, ANSWER]);
    const { t, answerPrompt } = await run(recompAbstractive(), llm, [harbor, tolvik]);
    assert.equal(llm.requests.length, 2);
    const ask = llm.requests[0]!;
    assert.equal(ask.temperature, 0);
    assert.equal(ask.maxTokens, 512);
    assert.match(ask.messages![0]!.content, /^Documents:\nDoc 1 \(Title: The Silent Harbor\) .*\nDoc 2 \(Title: Maren Tolvik\) .*\n\nQuestion: Where was the director of The Silent Harbor born\?\nIn at most two sentences/);
    assert.equal(t.steps[0]!.summary, summary);
    assert.ok(answerPrompt.startsWith(`Documents:\n${summary}\n\nQuestion: `));
    assert.equal(t.prediction, 'Oslo');
  });

  it('abstractive: a trained compressor gets its training input as a raw prompt; "NONE" leaves no documents (selective augmentation)', async () => {
    const summarizer = new ScriptedLLM(['  NONE. ']);
    const llm = new ScriptedLLM([ANSWER]);
    const { t, answerPrompt } = await run(recompAbstractive({ summarizer, trained: true }), llm, [harbor, tolvik]);
    assert.equal(summarizer.requests[0]!.prompt, `Question: ${Q}\n Document: ${harbor.text}\n${tolvik.text}\n Summary: `);
    assert.equal(t.steps[0]!.summary, '');
    assert.ok(answerPrompt.startsWith(`Documents:\n${NO_CONTEXT}\n\nQuestion: `));
    assert.equal(llm.requests.length, 1);
  });
});

describe('compressed RAG', () => {
  it('compresses once per search step: a second proposal from the same state reuses the summary', async () => {
    const summarizer = new ScriptedLLM(['Born in Oslo.']);
    const p = recompAbstractive({ summarizer });
    const env = new RagEnv({ retriever: new TableRetriever(() => [tolvik]), topK: 1, maxTurns: 2, maxSearches: 1 });
    const policy = new LlmPolicy(p, new ScriptedLLM([ANSWER]));
    let state = env.reset(question);
    const [search] = await policy.propose(state);
    state = (await env.step(state, search!)).state;
    await Promise.all([policy.propose(state), policy.propose(state)]);
    await policy.propose(state);
    assert.equal(summarizer.requests.length, 1);
    assert.equal(state.steps[0]!.summary, 'Born in Oslo.');
    // Before any compression (a policy that makes no calls) the prompt shows the documents themselves.
    const fresh = (await env.step(env.reset(question), search!)).state;
    assert.match(p.render(fresh)[1]!.content, /^Documents:\nDoc 1 \(Title: Maren Tolvik\) Maren Tolvik was born in Oslo in 1930\.\n\nQuestion: /);
    assert.deepEqual(p.template!.fill(state, {}).values, { question: Q, documents: 'Born in Oslo.' });
  });

  it('scoring by echo: one request for one token at temperature 0; text the tokens leave uncovered at the end is one unscored token', async () => {
    const scorer = new ScriptedLLM(() => echo(['<s>', 'Born', ' in'], [null, 1, 2]));
    const tokens = await scoreText(scorer, 'Born in Oslo', 'test');
    assert.deepEqual(scorer.requests[0], { prompt: 'Born in Oslo', echo: true, maxTokens: 1, temperature: 0 });
    assert.deepEqual(tokens, [
      { token: '<s>', start: 0, end: 0, logprob: null },
      { token: 'Born', start: 0, end: 4, logprob: -1 },
      { token: ' in', start: 4, end: 7, logprob: -2 },
      { token: ' Oslo', start: 7, end: 12, logprob: null },
    ]);
  });

  it('token placement: byte-level and SentencePiece markers read as spaces, special tokens cover nothing', () => {
    assert.deepEqual(alignTokens('Hi there', ['<s>', 'Hi', '▁there']), [{ start: 0, end: 0 }, { start: 0, end: 2 }, { start: 2, end: 8 }]);
    assert.deepEqual(alignTokens('a b', ['a', 'Ġb']), [{ start: 0, end: 1 }, { start: 1, end: 3 }]);
  });
});
