/**
 * ProRAG's stages in the gym engine: the control-weighted warm-up SFT (hand-computed losses, λ = 1 equal to
 * plain SFT bit for bit, gradients against finite differences) and PRM-filtered rejection sampling (RFT)
 * on a scripted case where the kept episodes are known in advance.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Rng } from '../../src/core/rng.js';
import type { Action } from '../../src/core/trajectory.js';
import type { Question } from '../../src/core/types.js';
import { getProtocol } from '../../src/agents/registry.js';
import { RagEnv, type State } from '../../src/env/env.js';
import type { GymCandidate } from '../../src/learn/gym/candidates.js';
import { controlSftLoss, type Demonstration, logTypeProb, sftLoss } from '../../src/learn/gym/objective.js';
import { type Choice, GymPolicy } from '../../src/learn/gym/policy.js';
import { RFT_DEFAULTS, rftKeptSteps, rftSelect, trainRft } from '../../src/learn/gym/rft.js';
import { sampleEpisode } from '../../src/learn/gym/rollout.js';
import { trainSft } from '../../src/learn/gym/train.js';
import { ScoreModel } from '../../src/prm/model.js';
import type { Candidate, PRM } from '../../src/prm/types.js';
import type { Retriever } from '../../src/retrieval/types.js';
import { gradientError } from './gradient-check.js';

const candidate = (action: Action): GymCandidate => ({ action, source: 'given', sentenceOverlap: 0 });
const search = (query: string) => candidate({ type: 'search', query });
const answer = (a: string) => candidate({ type: 'answer', answer: a });

describe('control-weighted warm-up SFT (ProRAG §3.1, λ)', () => {
  // Scores = the feature: (0, ln 2, ln 3) → π = (1/6, 2/6, 3/6). Types: search, search, answer.
  const model = new ScoreModel({ kind: 'linear', dim: 1, hidden: 0, params: [1], mean: [0], std: [1] });
  const choice: Choice = { candidates: [search('a'), search('b'), answer('c')], features: [0, Math.log(2), Math.log(3)].map((x) => Float64Array.from([x])) };

  it('λ = 2 on a 3-candidate choice: 2·(−log P(type)) + (−log P(action | type)), by hand', () => {
    // Target 0 (a search): P(search) = 1/6 + 2/6 = 1/2, P(a | search) = (1/6)/(1/2) = 1/3 → 2 ln 2 + ln 3 = ln 12.
    assert.ok(Math.abs(controlSftLoss(model, [{ choice, target: 0 }], 2) - Math.log(12)) < 1e-12);
    // Target 2 (the only answer): P(answer) = 1/2, P(c | answer) = 1 → 2 ln 2 = ln 4 (plain SFT: ln 2).
    assert.ok(Math.abs(controlSftLoss(model, [{ choice, target: 2 }], 2) - Math.log(4)) < 1e-12);
    // A batch is the mean; λ = 0 leaves only the choice within the type: (ln 3 + 0) / 2.
    assert.ok(Math.abs(controlSftLoss(model, [{ choice, target: 0 }, { choice, target: 2 }], 2) - (Math.log(12) + Math.log(4)) / 2) < 1e-12);
    assert.ok(Math.abs(controlSftLoss(model, [{ choice, target: 0 }, { choice, target: 2 }], 0) - Math.log(3) / 2) < 1e-12);
    assert.ok(Math.abs(logTypeProb(model, choice, 1) - Math.log(0.5)) < 1e-12);
  });

  it('λ = 1 equals today’s SFT loss and gradient exactly (bit for bit), linear and MLP', () => {
    const rng = new Rng('lambda-1');
    for (const kind of ['linear', 'mlp'] as const) {
      const m = ScoreModel.init(kind, 4, 5, new Float64Array(4), new Float64Array(4).fill(1), rng);
      for (let i = 0; i < m.params.length; i++) m.params[i] = rng.next() * 2 - 1;
      const batch: Demonstration[] = Array.from({ length: 6 }, (_, b) => {
        const cands = [search('x'), answer('y'), search('z'), candidate({ type: 'extract', evidence: 'e' }), answer('w')];
        return { choice: { candidates: cands, features: cands.map(() => Float64Array.from({ length: 4 }, () => rng.next() * 4 - 2)) }, target: b % 5 };
      });
      for (const tau of [1, 0.7]) {
        const [g1, g2] = [new Float64Array(m.params.length), new Float64Array(m.params.length)];
        assert.equal(controlSftLoss(m, batch, 1, g1, tau), sftLoss(m, batch, g2, tau));
        assert.deepEqual([...g1], [...g2]);
      }
      assert.ok(gradientError(m, (g) => controlSftLoss(m, batch, 2.5, g, 0.8)) < 1e-5, `${kind}: gradient at λ = 2.5`);
      assert.ok(gradientError(m, (g) => controlSftLoss(m, batch, 0, g)) < 1e-5, `${kind}: gradient at λ = 0`);
    }
  });
});

// ------------------------------------------------------------------------------------------- RFT

/**
 * A scripted world: every query retrieves the same passage, so the gym's candidates are the question
 * itself, its entities with its relation words, the passage's names as queries and as answers
 * (Ostrava, Lake Verno, Mila Brandt) and "unknown" when nothing was retrieved yet.
 */
const hits = (query: string, k: number) => [{ passageId: `p:${query}`, title: 'Lake Verno', text: 'Ostrava lies near Lake Verno. Mila Brandt guarded it.', score: 1 }].slice(0, k);
const scriptedRetriever: Retriever = {
  name: 'scripted',
  search: async (query, k) => hits(query, k),
  searchBatch: async (queries, k) => queries.map((q) => hits(q, k)),
};

describe('PRM-filtered rejection-sampling fine-tuning (ProRAG §3.3)', () => {
  const protocol = getProtocol('search-r1');
  const env = new RagEnv({ retriever: scriptedRetriever, topK: 1, maxTurns: 3, maxSearches: 2 });
  const questions: Question[] = [
    { id: 'q1', question: 'Which city lies near Lake Verno?', answers: ['Ostrava'] },
    { id: 'q2', question: 'Who guarded Lake Verno?', answers: ['Mila Brandt'] },
  ];
  // The PRM's logit: −1 for searching with the whole question, +2 for every other step.
  const prm: PRM = {
    name: 'scripted',
    async score(_s: State, cs: readonly Candidate[]) {
      return cs.map((c) => (c.action.type === 'search' && c.action.query.endsWith('?') ? -1 : 2));
    },
  };

  it('the filter: every step at or above the threshold (episode) or each passing step (step); wrong episodes keep nothing', () => {
    assert.deepEqual(rftKeptSteps(true, [0.9, 0.5, 0.7], 0.5, 'episode'), [0, 1, 2]);
    assert.deepEqual(rftKeptSteps(true, [0.9, 0.49, 0.7], 0.5, 'episode'), []);
    assert.deepEqual(rftKeptSteps(true, [0.9, 0.49, 0.7], 0.5, 'step'), [0, 2]);
    assert.deepEqual(rftKeptSteps(false, [0.9, 0.9], 0.5, 'step'), []);
  });

  it('the episode filter keeps exactly the correct episodes whose every step the PRM passes, and fine-tunes on their steps', async () => {
    const policy = GymPolicy.fresh(protocol);
    const config = { samples: 8, temperature: 1, seed: 2, epochs: 5, filter: 'episode' as const };
    // What should pass, worked out from the same seeded episodes: correct (EM) and sigmoid(logit) ≥ 0.5 at every step.
    const expected: string[] = [];
    let correct = 0;
    for (const q of questions) {
      for (let k = 0; k < config.samples; k++) {
        const ep = await sampleEpisode(env, policy, q, config.temperature, `${config.seed}/rft/${k}`);
        if (ep.trajectory.metrics!.em !== 1) continue;
        correct++;
        const logits = await Promise.all(ep.trajectory.steps.map((s, i) => prm.score(ep.decisions[i]!.state, [{ action: s.action, raw: s.raw }])));
        if (logits.every(([l]) => l! >= 0)) expected.push(`${q.id}/${k}`);
      }
    }
    const lines: number[] = [];
    const r = await trainRft(policy, { env, questions, prm, onLog: (e) => lines.push(e.step) }, config);
    const kept = r.verdicts.filter((v) => v.keptSteps.length > 0).map((v) => `${v.questionId}/${v.sample}`);
    assert.deepEqual(kept, expected);
    // The scripted case exercises every branch: some wrong, some right but vetoed by the PRM, some kept.
    assert.ok(correct > expected.length && expected.length > 0 && correct < 16, `${correct} correct, ${expected.length} kept of 16`);
    assert.deepEqual([correct, expected.length], [4, 2]); // seed 2: 4 of 16 correct, 2 of them searched with the whole question
    assert.deepEqual(r.counts, { questions: 2, sampled: 16, correct, kept: expected.length, keptSteps: r.data.length, keptQuestions: new Set(expected.map((k) => k.split('/')[0])).size });
    // Correct episodes carry the sigmoid of their steps' logits (2 → 0.8808, −1 → 0.2689); wrong ones are not scored.
    for (const v of r.verdicts) assert.ok(v.correct ? v.scores.length > 0 && v.scores.every((s) => [2, -1].some((l) => Math.abs(s - 1 / (1 + Math.exp(-l))) < 1e-12)) : v.scores.length === 0);
    // Logged: the counts on the first line, then one line per epoch; the policy moved.
    assert.deepEqual(lines, [0, 1, 2, 3, 4, 5]);
    assert.deepEqual([r.log[0]!['sampled'], r.log[0]!['kept']], [16, expected.length]);
    assert.ok(r.log.at(-1)!.loss < r.log[0]!.loss);
    assert.ok(policy.model.params.some((p) => p !== 0));
    // No whole-question search is ever demonstrated, and every demonstrated answer is right.
    assert.ok(r.data.every((d) => !(d.action.type === 'search' && d.action.query.endsWith('?'))));
    assert.ok(r.data.every((d) => d.action.type !== 'answer' || d.state.question.answers.includes(d.action.answer)));
  });

  it('step filter and F1 correctness widen what is kept; a threshold above every score keeps nothing and trains nothing', async () => {
    const policy = GymPolicy.fresh(protocol);
    const base = { samples: 8, temperature: 1, seed: 2, filter: 'episode' as const };
    const byEpisode = await rftSelect(policy, { env, questions, prm }, base);
    const byStep = await rftSelect(policy, { env, questions, prm }, { ...base, filter: 'step' });
    assert.equal(RFT_DEFAULTS.filter, 'step', "the paper's and the authors' filter is the default");
    assert.ok(byStep.counts.keptSteps > byEpisode.counts.keptSteps, `${byStep.counts.keptSteps} > ${byEpisode.counts.keptSteps}`);
    const f1 = await rftSelect(policy, { env, questions, prm }, { ...base, correct: 'f1', f1Threshold: 0.5 });
    assert.ok(f1.counts.correct >= byEpisode.counts.correct);
    const none = await trainRft(policy, { env, questions, prm }, { ...base, threshold: 0.99 });
    assert.deepEqual([none.counts.kept, none.log.length], [0, 0]);
    assert.ok(policy.model.params.every((p) => p === 0), 'nothing kept: the policy is unchanged');
  });

  it('λ reaches the SFT of RFT and of trainSft (controlWeight)', async () => {
    const a = GymPolicy.fresh(protocol);
    const b = GymPolicy.fresh(protocol);
    const ra = await trainRft(a, { env, questions, prm }, { samples: 8, seed: 2, epochs: 2 });
    const rb = await trainRft(b, { env, questions, prm }, { samples: 8, seed: 2, epochs: 2, controlWeight: 3 });
    assert.deepEqual(ra.data.map((d) => d.action), rb.data.map((d) => d.action));
    assert.notDeepEqual([...a.model.params], [...b.model.params]);
    const c = GymPolicy.fresh(protocol);
    trainSft(c, ra.data, { epochs: 2, controlWeight: 1 });
    const d = GymPolicy.fresh(protocol);
    trainSft(d, ra.data, { epochs: 2 });
    assert.deepEqual([...c.model.params], [...d.model.params]);
    assert.throws(() => trainSft(d, ra.data, { controlWeight: -1 }), /controlWeight/);
  });
});
