/** The papers' reward functions (LWS, ARENA, ProRAG, ReasonRAG, RAG-Gym) with hand-computed values. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Step, Trajectory } from '../../src/core/trajectory.js';
import type { Embedder } from '../../src/retrieval/embedders/embedder.js';
import { ScriptedLLM } from '../../src/llm/scripted.js';
import { arenaRewards, goldReferenceNumbers, relevanceReward } from '../../src/rewards/arena.js';
import { arenaFormat, lwsFormat, proragStepFormat, proragWorkflow, tagSequence } from '../../src/rewards/format.js';
import { Judge, parseVerdict } from '../../src/rewards/judge.js';
import { averageSimilarity, isConcise, lwsAnswerReward, lwsSearchReward } from '../../src/rewards/lws.js';
import { discountedReturn, spreValue } from '../../src/rewards/outcome.js';
import { proragOutcome, proragStepRewards } from '../../src/rewards/prorag.js';
import { composeScheme } from '../../src/rewards/schemes.js';

const close = (a: number, b: number, tol = 1e-9) => assert.ok(Math.abs(a - b) <= tol, `${a} vs ${b}`);
const doc = { passageId: 'd', title: 'T', text: 'x', score: 1 };
const search = (query: string, raw = `<think>t</think><search> ${query} </search>`): Step => ({ action: { type: 'search', query }, raw, docs: [doc] });
const answer = (a: string, raw = `<think>t</think><reflect>r</reflect><answer> ${a} </answer>`, citations?: number[]): Step => ({ action: citations ? { type: 'answer', answer: a, citations } : { type: 'answer', answer: a }, raw });
function traj(steps: Step[], prediction: string, answers: string[] = ['Paris'], extra: Partial<Trajectory> = {}): Trajectory {
  return {
    id: 't', question: 'Q?', answers, agent: 'search-r1', policy: 'test', steps, prediction, finished: true,
    retrievalCount: steps.filter((s) => s.action.type === 'search').length, formatFailures: 0, usage: { promptTokens: 0, completionTokens: 0, requests: 0 }, latencyMs: 0, source: 'native', ...extra,
  };
}
/** Unit vectors chosen so the cosines are known: a·b = 0.6, a·c = 0, b·c = 0.8. */
const fixed: Embedder = {
  spec: 'fixed', lexical: false, dim: 2,
  embed: async (texts) => texts.map((t) => Float32Array.from(t.startsWith('a') ? [1, 0] : t.startsWith('b') ? [0.6, 0.8] : [0, 1])),
};

describe('LWS answer reward, stage 1 vs stage 2 (β = 0.3)', () => {
  // Stage 1: correct → 1; wrong → −1 + 0.3·RC.   Stage 2: correct → 1 − 0.3·RC; wrong → −1.
  const table: [boolean, number, number, number][] = [
    [true, 0, 1, 1], [true, 1, 1, 0.7], [true, 2, 1, 0.4], [true, 3, 1, 0.1],
    [false, 0, -1, -1], [false, 1, -0.7, -1], [false, 2, -0.4, -1], [false, 3, -0.1, -1],
  ];
  for (const [correct, rc, s1, s2] of table) {
    it(`${correct ? 'correct' : 'wrong'}, RC ${rc}: stage 1 ${s1}, stage 2 ${s2}`, () => {
      close(lwsAnswerReward(correct, rc, 1), s1);
      close(lwsAnswerReward(correct, rc, 2), s2);
    });
  }
});

describe('LWS search reward', () => {
  it('RC ≤ 1: 0 for a concise query (or none), −1 for a wordy one', async () => {
    assert.equal(await lwsSearchReward(traj([answer('Paris')], 'Paris'), fixed), 0);
    assert.equal(await lwsSearchReward(traj([search('Silent Harbor director'), answer('x')], 'x'), fixed), 0);
    assert.equal(await lwsSearchReward(traj([search('who is the director of the film'), answer('x')], 'x'), fixed), -1);
  });
  it('conciseness rules: no question words, ≤ 2 function words, ≤ 8 words, no question mark', () => {
    assert.equal(isConcise('Silent Harbor 1971 film director'), true);
    assert.equal(isConcise('capital of the country of Vardia'), false); // of, the, of: 3 function words
    assert.equal(isConcise('capital of Vardia'), true);
    assert.equal(isConcise('Silent Harbor director?'), false);
    assert.equal(isConcise('one two three four five six seven eight nine'), false);
  });
  it('RC > 1: −avg_sim, the mean pairwise cosine (or eq. 8’s N(N−1) variant)', async () => {
    // queries a, b, c: cos(a,b) = 0.6, cos(a,c) = 0, cos(b,c) = 0.8 → Σ = 1.4
    const t = traj([search('a1'), search('b1'), search('c1'), answer('x')], 'x');
    // (float32 vectors: equal to 1e-6)
    close(await lwsSearchReward(t, fixed), -1.4 / 3, 1e-6); // mean over 3 pairs
    close(await lwsSearchReward(t, fixed, { variant: 'paper' }), -1.4 / 6, 1e-6); // / N(N−1) = 6
    close(averageSimilarity(await fixed.embed(['a', 'b'], 'query')), 0.6, 1e-6);
  });
});

describe('LWS format reward', () => {
  it('accepts think-reflect-answer and (think|search|information|reflect)+ answer', () => {
    assert.equal(lwsFormat(traj([answer('Paris')], 'Paris')), 1);
    assert.equal(lwsFormat(traj([search('q', '<think>a</think>\n<search> q'), answer('Paris')], 'Paris')), 1); // stopped before </search>
    assert.equal(lwsFormat(traj([search('q'), search('r'), answer('Paris', '<think>t</think><answer>Paris</answer>')], 'Paris')), 1);
  });
  it('rejects other shapes with −1', () => {
    assert.equal(lwsFormat(traj([answer('Paris', '<answer>Paris</answer>')], 'Paris')), -1); // no think
    assert.equal(lwsFormat(traj([answer('Paris', '<think>t</think><answer>Paris</answer><think>more</think>')], 'Paris')), -1); // answer not last
    assert.equal(lwsFormat(traj([answer('Paris', '<think>t<answer>Paris</answer></think>')], 'Paris')), -1); // nested
    assert.equal(lwsFormat(traj([{ action: { type: 'invalid', reason: 'x' }, raw: 'just text' }, answer('Paris')], 'Paris')), -1);
  });
  it('a preamble outside the tags fails only in strict mode', () => {
    const t = traj([answer('Paris', "Let me think. <think>t</think><reflect>r</reflect><answer>Paris</answer>")], 'Paris');
    assert.equal(lwsFormat(t), 1);
    assert.equal(lwsFormat(t, true), -1);
  });
});

describe('ARENA rewards', () => {
  const good = '<relevance>[1, 3]</relevance><analysis>[1] and [3] say so.</analysis><answer>Paris</answer>';
  it('format is 1 only for the three sections once each, in order', () => {
    assert.equal(arenaFormat(good), 1);
    assert.equal(arenaFormat('<analysis>a</analysis><relevance>[1]</relevance><answer>x</answer>'), 0);
    assert.equal(arenaFormat('<relevance>[1]</relevance><analysis>a</analysis><answer>x</answer><answer>y</answer>'), 0);
    assert.equal(arenaFormat('<relevance>[1]</relevance><analysis>a<answer>x</answer></analysis>'), 0);
    assert.equal(arenaFormat(`Sure! ${good}`), 0);
  });
  it('relevance: equal 1, overlapping 0.5, disjoint 0', () => {
    assert.equal(relevanceReward([1, 3], [3, 1]), 1);
    assert.equal(relevanceReward([1, 2], [1, 3]), 0.5);
    assert.equal(relevanceReward([2], [1, 3]), 0);
    assert.equal(relevanceReward(undefined, [1]), 0);
    assert.equal(relevanceReward([], []), 1);
    assert.deepEqual(goldReferenceNumbers(['a', 'b', 'c', 'd'], ['c', 'a']), [1, 3]);
  });
  it('bonus 10 only when format, accuracy and relevance are all 1', () => {
    const t = (raw: string, cites: number[] | undefined, pred: string) => traj([answer(pred, raw, cites)], pred);
    // all three → 1 + 1 + 1 + 10 = 13
    assert.deepEqual(arenaRewards(t(good, [1, 3], 'Paris'), [1, 3]), { format: 1, accuracy: 1, relevance: 1, bonus: 10 });
    // partial relevance → 1 + 1 + 0.5, no bonus
    assert.deepEqual(arenaRewards(t(good, [1, 2], 'Paris'), [1, 3]), { format: 1, accuracy: 1, relevance: 0.5, bonus: 0 });
    // wrong answer → no bonus
    assert.deepEqual(arenaRewards(t(good, [1, 3], 'Lyon'), [1, 3]), { format: 1, accuracy: 0, relevance: 1, bonus: 0 });
    // bad format → no bonus
    assert.deepEqual(arenaRewards(t(`x ${good}`, [1, 3], 'Paris'), [1, 3]), { format: 0, accuracy: 1, relevance: 1, bonus: 0 });
    // ARENA maps "_" to a space before matching
    assert.equal(arenaRewards(t(good, [1, 3], 'New_York'), [1, 3]).accuracy, 0);
    assert.equal(arenaRewards(traj([answer('New_York', good, [1, 3])], 'New_York', ['New York']), [1, 3]).accuracy, 1);
  });
  it('bonusNeedsRelevance: false pays the bonus on format and accuracy alone', () => {
    const t = traj([answer('Paris', good, [2])], 'Paris');
    assert.deepEqual(arenaRewards(t, [1, 3]), { format: 1, accuracy: 1, relevance: 0, bonus: 0 });
    assert.deepEqual(arenaRewards(t, [1, 3], { bonusNeedsRelevance: false }), { format: 1, accuracy: 1, relevance: 0, bonus: 10 });
    assert.equal(arenaRewards(traj([answer('Lyon', good, [1, 3])], 'Lyon'), [1, 3], { bonusNeedsRelevance: false }).bonus, 0);
  });
  it('scheme option relevance_weight: 1 by default; w weighs relevance in the total; 0 also drops it from the bonus condition', async () => {
    // Gold references [1, 3] (supporting a, c among the references a, b, c of the question's context).
    const ctx = (cites: number[], pred = 'Paris') => ({ trajectory: traj([answer(pred, good, cites)], pred), supporting: ['a', 'c'], contextIds: ['a', 'b', 'c'] });
    const total = async (options: string[], cites: number[], pred?: string) => (await composeScheme('arena', options).compute(ctx(cites, pred))).total;
    // Partial citation, right answer: 1 + 1 + w·0.5, no bonus (while relevance counts).
    assert.equal(await total([], [1]), 2.5);
    assert.equal(await total(['relevance_weight=1'], [1]), 2.5);
    assert.equal(await total(['relevance_weight=2'], [1]), 3);
    assert.equal(await total(['relevance_weight=0.5'], [1, 3]), 1 + 1 + 0.5 + 10);
    // w = 0: the total ignores the citations altogether; the bonus needs format and accuracy only.
    for (const cites of [[], [2], [1], [1, 3], [1, 2, 3]]) assert.equal(await total(['relevance_weight=0'], cites), 12);
    assert.equal(await total(['relevance_weight=0'], [1, 3], 'Lyon'), 1);
    // The relevance component is still reported as measured.
    const r = await composeScheme('arena', ['relevance_weight=0']).compute(ctx([1]));
    assert.deepEqual(r.components, { format: 1, accuracy: 1, relevance: 0.5, bonus: 10 });
    // Refused: a negative weight, and any weight other than 1 with compat=authors (the authors' reward has none).
    await assert.rejects(async () => composeScheme('arena', ['relevance_weight=-1']).compute(ctx([1])), /relevance_weight must be a number ≥ 0/);
    await assert.rejects(async () => composeScheme('arena', ['relevance_weight=0', 'compat=authors']).compute(ctx([1])), /no counterpart in the authors' reward/);
  });
});

describe('SPRE and discounted returns', () => {
  it('SPRE with α = 0.9: rollouts (1, 2 steps), (0.5, 3), (0, 1), (1, 4) → (0.81 + 0.3645 + 0 + 0.6561) / 4 = 0.45765', () => {
    close(spreValue([{ score: 1, steps: 2 }, { score: 0.5, steps: 3 }, { score: 0, steps: 1 }, { score: 1, steps: 4 }], 0.9), 0.45765);
    assert.equal(spreValue([], 0.9), 0);
    assert.throws(() => spreValue([{ score: 1, steps: 1 }], 0), /α in \(0, 1\]/);
  });
  it('RAG-Gym eq. 4: Σ γ^(t−1) r_t', () => {
    close(discountedReturn([0, 0, 1], 0.9), 0.81);
    close(discountedReturn([1, 0.5, 2], 0.5), 1 + 0.25 + 0.5);
  });
});

describe('ProRAG rewards', () => {
  const s = (raw: string, type: 'search' | 'extract' | 'answer'): Step => ({ action: type === 'search' ? { type, query: 'q' } : type === 'extract' ? { type, evidence: 'e' } : { type, answer: 'Paris' }, raw, docs: type === 'search' ? [doc] : undefined });
  const valid = [s('<step>p</step><subquery>q', 'search'), s('<step>r</step><subanswer>e</subanswer>', 'extract'), s('<step>f</step><answer>Paris</answer>', 'answer')];
  it('step schema and whole workflow', () => {
    assert.deepEqual(valid.map(proragStepFormat), [true, true, true]);
    assert.equal(proragWorkflow(traj(valid, 'Paris')), true);
    assert.equal(proragWorkflow(traj([valid[0]!, valid[2]!], 'Paris')), false); // no sub-answer after the retrieval
    assert.equal(proragStepFormat(s('<subquery>q</subquery>', 'search')), false);
  });
  it('outcome, code form: (0 if F1 < 0.2 else 2·F1) ± 1; spec form: F1 + λ_o·1[workflow]', () => {
    assert.deepEqual(proragOutcome(traj(valid, 'Paris'), 'code'), { answer: 2, workflow: 1, total: 3 });
    // F1 of "Paris France" vs "Paris" = 2/3 → 4/3; invalid workflow → −1
    const r = proragOutcome(traj([valid[2]!, valid[2]!], 'Paris France'), 'code');
    close(r.answer, 4 / 3);
    assert.equal(r.workflow, -1);
    // "Paris" among 10 tokens: P = 0.1, R = 1, F1 = 0.2 / 1.1 = 0.18 < 0.2 → 0
    assert.equal(proragOutcome(traj(valid, 'w1 w2 w3 w4 w5 w6 w7 w8 w9 Paris'), 'code').answer, 0);
    // 5 tokens: F1 = 2 · 0.2 · 1 / 1.2 = 1/3 ≥ 0.2 → 2/3
    close(proragOutcome(traj(valid, 'Lyon Paris Nice Rome Oslo'), 'code').answer, 2 / 3);
    assert.deepEqual(proragOutcome(traj(valid, 'Paris'), 'spec', 0.5), { answer: 1, workflow: 0.5, total: 1.5 });
  });
  it('step rewards, code form: sigmoid(PRM logit) + (+1 valid / −2 invalid)', () => {
    const steps = [...valid, s('no tags', 'answer')];
    assert.deepEqual(proragStepRewards(traj(steps, 'Paris'), [0, Math.log(3), 0, 0]), [1.5, 1.75, 1.5, -1.5]); // sigmoid(ln 3) = 0.75
    assert.deepEqual(proragStepRewards(traj(steps, 'Paris')), [1, 1, 1, -2]);
    assert.deepEqual(proragStepRewards(traj(steps, 'Paris'), [0.2, 0.2, 0.2, 0.2], 'spec', 0.5), [0.7, 0.7, 0.7, 0.2]);
  });
});

describe('tag sequences', () => {
  it('reads top-level elements, nesting and stray text', () => {
    assert.deepEqual(tagSequence('<a>x</a> <b>y</b>'), { tags: ['a', 'b'], wellFormed: true, hasOutsideText: false });
    assert.deepEqual(tagSequence('hi <a><b>x</b></a>'), { tags: ['a'], wellFormed: false, hasOutsideText: true });
    assert.equal(tagSequence('<a>x</b>').wellFormed, false);
    assert.equal(tagSequence('<a>x').wellFormed, false);
  });
});

describe('LLM judge', () => {
  it('reads YES/NO, treats other replies as NO and counts them', async () => {
    assert.deepEqual(parseVerdict('YES.'), { correct: true, malformed: false });
    assert.deepEqual(parseVerdict(' no'), { correct: false, malformed: false });
    assert.deepEqual(parseVerdict('maybe'), { correct: false, malformed: true });
    const llm = new ScriptedLLM(['YES', 'Perhaps']);
    const judge = new Judge(llm);
    assert.equal((await judge.verdict('Q?', ['Paris'], 'the city of Paris')).correct, true);
    assert.equal((await judge.verdict('Q?', ['Paris'], 'Lyon')).correct, false);
    assert.equal(judge.malformed, 1);
    assert.equal(llm.requests[0]!.temperature, 0);
    assert.match(llm.requests[0]!.messages![0]!.content, /Reference answer\(s\): "Paris"\nCandidate answer: "the city of Paris"/);
  });
});

describe('scheme composition', () => {
  it('sums weighted schemes, prefixes components, and routes options', async () => {
    const s = composeScheme('0.5*f1+lws-stage2', ['beta=0.5', 'lws-stage2.embedder=hash:64']);
    assert.deepEqual(s.components, ['f1.f1', 'lws-stage2.format', 'lws-stage2.search', 'lws-stage2.answer']);
    const t = traj([search('Paris capital'), answer('Paris')], 'Paris');
    const r = await s.compute({ trajectory: t });
    // f1 = 1; LWS stage 2: format 1, search 0 (one concise query), answer 1 − 0.5·1 = 0.5 → 1.5
    assert.deepEqual(r.components, { 'f1.f1': 1, 'lws-stage2.format': 1, 'lws-stage2.search': 0, 'lws-stage2.answer': 0.5 });
    close(r.total, 0.5 * 1 + 1.5);
  });
  it("the LWS embedder option wins over the caller's embedder; without it the caller's is used", async () => {
    // The fixed embedder makes cos(a,b) = 0.6 between the two queries; hash:64 embeds them otherwise.
    const t = traj([search('a1'), search('b1'), answer('x')], 'x');
    const byCaller = await composeScheme('lws-stage1').compute({ trajectory: t, embedder: fixed });
    close(byCaller.components['search']!, -0.6, 1e-6);
    const byOption = await composeScheme('lws-stage1', ['embedder=hash:64']).compute({ trajectory: t, embedder: fixed });
    const hashed = await composeScheme('lws-stage1', ['embedder=hash:64']).compute({ trajectory: t });
    assert.equal(byOption.components['search'], hashed.components['search']);
    assert.notEqual(byOption.components['search'], byCaller.components['search']);
  });
  it('rejects unknown schemes and options with the alternatives', () => {
    assert.throws(() => composeScheme('lws'), /unknown reward scheme "lws".*lws-stage1/);
    assert.throws(() => composeScheme('f1', ['beta=1']), /no scheme in "f1" has that option/);
    assert.throws(() => composeScheme('arena', ['oops']), /expected key=value/);
  });
});
