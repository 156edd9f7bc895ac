/** The gym policy's trainers: gradients against finite differences, hand-computed losses, and learning on a tiny world. */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Rng } from '../../src/core/rng.js';
import type { Question } from '../../src/core/types.js';
import { normalizeAnswer } from '../../src/core/text.js';
import { loadDatasetAll } from '../../src/corpus/dataset.js';
import { generateWorld, writeWorld } from '../../src/corpus/world/index.js';
import { getProtocol } from '../../src/agents/registry.js';
import { RagEnv, type State } from '../../src/env/env.js';
import { preferencePairs, type StateAction } from '../../src/learn/gym/data.js';
import { CandidateTeacher } from '../../src/learn/gym/teacher.js';
import { gymFeatureNames } from '../../src/learn/gym/features.js';
import { clippedPolicyLoss, type ClipOptions, logProb, type SampledStep, sftLoss, stepDpoLoss } from '../../src/learn/gym/objective.js';
import { type Choice, GymPolicy } from '../../src/learn/gym/policy.js';
import { sampleEpisode } from '../../src/learn/gym/rollout.js';
import { proragStepScores, type RlAlgo, trainDpo, trainRl, trainSft } from '../../src/learn/gym/train.js';
import { ScoreModel } from '../../src/prm/model.js';
import type { Candidate, PRM } from '../../src/prm/types.js';
import { annotateQuestion } from '../../src/process/annotate.js';
import { UCT_DEFAULTS } from '../../src/process/mcts.js';
import type { SavedTree } from '../../src/process/tree.js';
import { buildIndex, openRetriever } from '../../src/retrieval/index-dir.js';
import { createEmbedder } from '../../src/retrieval/embedders/embedder.js';
import { composeScheme } from '../../src/rewards/schemes.js';
import { tempDir } from '../helpers.js';
import { gradientError } from './gradient-check.js';

// ------------------------------------------------------------------------------ finite differences

function randomModel(kind: 'linear' | 'mlp', dim: number, seed: string): ScoreModel {
  const rng = new Rng(seed);
  const mean = Float64Array.from({ length: dim }, () => rng.next() - 0.5);
  const std = Float64Array.from({ length: dim }, () => 0.5 + rng.next());
  const m = ScoreModel.init(kind, dim, 5, mean, std, rng);
  for (let i = 0; i < m.params.length; i++) m.params[i] = rng.next() * 2 - 1;
  return m;
}

function randomChoice(n: number, dim: number, rng: Rng): Choice {
  return { candidates: [], features: Array.from({ length: n }, () => Float64Array.from({ length: dim }, () => rng.next() * 4 - 2)) };
}

describe('gym objectives: gradients match finite differences', () => {
  const dim = 6;
  for (const kind of ['linear', 'mlp'] as const) {
    const rng = new Rng(`fd-${kind}`);
    const model = randomModel(kind, dim, `model-${kind}`);
    const choices = Array.from({ length: 4 }, () => randomChoice(5, dim, rng));

    it(`${kind}: log π and SFT`, () => {
      assert.ok(gradientError(model, (g) => logProb(model, choices[0]!, 2, 0.7, g)) < 1e-5);
      const batch = choices.map((c, i) => ({ choice: c, target: i % 5 }));
      assert.ok(gradientError(model, (g) => sftLoss(model, batch, g)) < 1e-5);
    });

    it(`${kind}: step DPO, with and without the reference`, () => {
      const pairs = choices.map((c, i) => ({ choice: c, chosen: i % 5, rejected: (i + 2) % 5, refChosen: -1.2 - 0.1 * i, refRejected: -1.9 + 0.2 * i }));
      assert.ok(gradientError(model, (g) => stepDpoLoss(model, pairs, 0.5, g)) < 1e-5);
      const free = pairs.map(({ choice, chosen, rejected }) => ({ choice, chosen, rejected }));
      assert.ok(gradientError(model, (g) => stepDpoLoss(model, free, 2, g)) < 1e-5);
    });

    for (const kl of ['k1', 'k2', 'k3'] as const) {
      for (const aggregate of ['token', 'sequence'] as const) {
        it(`${kind}: clipped objective, ${kl} KL, ${aggregate} averaging (inside and outside the clip range)`, () => {
          // logpOld offsets put some ratios inside [0.8, 1.28] and some outside, with both advantage signs.
          const cur = (c: Choice, i: number) => logProb(model, c, i);
          const episodes: SampledStep[][] = [
            [
              { choice: choices[0]!, action: 1, logpOld: cur(choices[0]!, 1) + 0.05, logpRef: cur(choices[0]!, 1) - 0.3, advantage: 1.3 },
              { choice: choices[1]!, action: 3, logpOld: cur(choices[1]!, 3) - 0.6, logpRef: cur(choices[1]!, 3) + 0.2, advantage: 0.7 },
            ],
            [{ choice: choices[2]!, action: 0, logpOld: cur(choices[2]!, 0) + 0.7, logpRef: cur(choices[2]!, 0) - 0.1, advantage: -0.9 }],
            [{ choice: choices[3]!, action: 4, logpOld: cur(choices[3]!, 4) - 0.1, logpRef: cur(choices[3]!, 4) + 0.4, advantage: -1.1 }],
          ];
          const opts: ClipOptions = { epsLow: 0.2, epsHigh: 0.28, beta: 0.3, kl, aggregate, tau: 1 };
          assert.ok(gradientError(model, (g) => clippedPolicyLoss(model, episodes, opts, g)) < 1e-5);
        });
      }
    }
  }
});

describe('gym objectives: hand-computed values', () => {
  // A linear model with weights (1, 0) on standardised features (mean 0, std 1): scores = first feature.
  const model = new ScoreModel({ kind: 'linear', dim: 2, hidden: 0, params: [1, 0], mean: [0, 0], std: [1, 1] });
  const choice: Choice = { candidates: [], features: [Float64Array.from([0, 5]), Float64Array.from([Math.log(3), -1])] };
  // π = softmax(0, ln 3) = (1/4, 3/4).
  it('log π of a two-candidate softmax', () => {
    assert.ok(Math.abs(logProb(model, choice, 0) - Math.log(0.25)) < 1e-12);
    assert.ok(Math.abs(logProb(model, choice, 1) - Math.log(0.75)) < 1e-12);
  });

  it('DPO starts at ln 2 against itself; its value follows −log σ(β m)', () => {
    const pair = { choice, chosen: 0, rejected: 1, refChosen: Math.log(0.25), refRejected: Math.log(0.75) };
    assert.ok(Math.abs(stepDpoLoss(model, [pair], 1) - Math.log(2)) < 1e-12);
    // Reference-free: m = ln(1/4) − ln(3/4) = −ln 3; −log σ(−ln 3) = ln(1 + 3) = ln 4.
    assert.ok(Math.abs(stepDpoLoss(model, [{ choice, chosen: 0, rejected: 1 }], 1) - Math.log(4)) < 1e-12);
  });

  it('ρ at the sampling temperature: 1 before any update at T = 0.9 (τ = 1 on the new side gave 0.971 / 1.097)', () => {
    // π_0.9 = softmax((0, ln 3) / 0.9): π(1) = 3^(1/0.9) / (1 + 3^(1/0.9)) = 3.38958 / 4.38958 = 0.772187…
    const p1 = 3 ** (1 / 0.9) / (1 + 3 ** (1 / 0.9));
    const opts = { epsLow: 0.2, epsHigh: 0.28, beta: 0, kl: 'k3' as const, aggregate: 'token' as const };
    for (const [action, pOld, oldBugRho] of [
      [1, p1, 0.75 / p1],
      [0, 1 - p1, 0.25 / (1 - p1)],
    ] as const) {
      const steps = [[{ choice, action, logpOld: Math.log(pOld), advantage: 1 }]];
      const at = { ratio: 0, clipped: 0 };
      clippedPolicyLoss(model, steps, { ...opts, tau: 0.9 }, undefined, at);
      assert.ok(Math.abs(at.ratio - 1) < 1e-12, `ρ ${at.ratio}`);
      const wrong = { ratio: 0, clipped: 0 };
      clippedPolicyLoss(model, steps, { ...opts, tau: 1 }, undefined, wrong);
      assert.ok(Math.abs(wrong.ratio - oldBugRho) < 1e-12);
      assert.equal(Number(wrong.ratio.toFixed(3)), action === 1 ? 0.971 : 1.097);
    }
  });

  it('the clipped objective: ρ = 1 gives −mean A; sequence vs token averaging', () => {
    const s = (advantage: number): SampledStep => ({ choice, action: 1, logpOld: Math.log(0.75), advantage });
    const episodes = [[s(1), s(1), s(1)], [s(-1)]];
    const none = { epsLow: 0.2, epsHigh: 0.28, beta: 0, kl: 'k3' as const, tau: 1 };
    // token: (−1 −1 −1 +1) / 4 = −0.5; sequence: mean(−1, +1) = 0.
    assert.ok(Math.abs(clippedPolicyLoss(model, episodes, { ...none, aggregate: 'token' }) + 0.5) < 1e-12);
    assert.ok(Math.abs(clippedPolicyLoss(model, episodes, { ...none, aggregate: 'sequence' })) < 1e-12);
    // ρ = 0.75 / 0.5 = 1.5 > 1.28 with A = 1: the clipped term 1.28 is the minimum.
    const high = [[{ choice, action: 1, logpOld: Math.log(0.5), advantage: 1 }]];
    assert.ok(Math.abs(clippedPolicyLoss(model, high, { ...none, aggregate: 'token' }) + 1.28) < 1e-12);
    // k3 with π_ref = 0.5, π = 0.75: ρ' = 2/3, KL = 2/3 − 1 − ln(2/3); β = 0.1 on top of −1.
    const withKl = [[{ ...s(1), logpRef: Math.log(0.5) }]];
    const k3 = 2 / 3 - 1 - Math.log(2 / 3);
    assert.ok(Math.abs(clippedPolicyLoss(model, withKl, { ...none, beta: 0.1, aggregate: 'token' }) - (-1 + 0.1 * k3)) < 1e-12);
  });
});

// ------------------------------------------------------------------------------ a tiny fixed world

describe('gym trainers on a tiny world', () => {
  const tmp = tempDir();
  const protocol = getProtocol('reasonrag');
  let env: RagEnv;
  let train: Question[];
  let trees: SavedTree[];

  // The expected EM RL raises: the mean over 4 episodes per question sampled at τ = 1 (fixed seeds), a
  // smoother measure on 40 questions than the greedy choice, which a few updates need not flip.
  const sampledEm = async (p: GymPolicy, qs: readonly Question[]) => {
    let s = 0;
    for (const q of qs) for (let k = 0; k < 4; k++) s += (await sampleEpisode(env, p, q, 1, `eval-${k}`)).trajectory.metrics!.em;
    return s / (4 * qs.length);
  };

  before(async () => {
    await writeWorld(join(tmp.dir, 'world'), generateWorld({ seed: 3, entities: 1200, questions: 80 }));
    await buildIndex(join(tmp.dir, 'world', 'corpus.jsonl'), join(tmp.dir, 'index'), { quiet: true });
    const retriever = await openRetriever(join(tmp.dir, 'index'));
    env = new RagEnv({ retriever, topK: 3, maxTurns: protocol.defaults.maxTurns, maxSearches: protocol.defaults.maxSearches });
    train = (await loadDatasetAll(join(tmp.dir, 'world', 'questions.jsonl'))).questions.slice(0, 40);
    const base = GymPolicy.fresh(protocol);
    trees = [];
    for (const [i, q] of train.entries()) trees.push(await annotateQuestion({ method: 'mcts-spre', env, policy: base, mcts: { ...UCT_DEFAULTS, simulations: 12 } }, q, i));
  });
  after(() => tmp.cleanup());

  it('SFT lowers the NLL of the demonstrated steps (the gym teacher\'s episodes)', async () => {
    const teacher = new CandidateTeacher(protocol, env.config.retriever, 3, 1);
    const demos: StateAction[] = [];
    for (const q of train) {
      let state = env.reset(q);
      while (!state.done) {
        const [move] = await teacher.propose(state, { seed: 0 });
        demos.push({ state, action: move!.action, questionId: q.id });
        state = (await env.step(state, move!)).state;
      }
    }
    assert.ok(demos.length >= 10, `${demos.length} demonstrations`);
    const log = trainSft(GymPolicy.fresh(protocol), demos, { epochs: 15 });
    assert.ok(log.at(-1)!.loss < log[0]!.loss - 0.3, `${log[0]!.loss} → ${log.at(-1)!.loss}`);
  });

  it('step DPO starts at ln 2 and lowers the loss; the chosen steps become more likely', () => {
    const pairs = preferencePairs(trees);
    assert.ok(pairs.length >= 20, `${pairs.length} pairs`);
    const log = trainDpo(GymPolicy.fresh(protocol), pairs, { epochs: 15 });
    assert.ok(Math.abs(log[0]!.loss - Math.log(2)) < 1e-9);
    // The untrained policy ties every pair: chance (a tie counts 0.5), not 0.
    assert.equal(log[0]!['pairAccuracy'], 0.5);
    assert.ok(log.at(-1)!.loss < Math.log(2) - 0.05, `final loss ${log.at(-1)!.loss}`);
    assert.ok(log.at(-1)!['pairAccuracy']! > 0.55, `pair accuracy ${log.at(-1)!['pairAccuracy']}`);
  });

  it('is deterministic for a seed, and a saved policy loads back with the same choices', async () => {
    const pairs = preferencePairs(trees);
    const a = GymPolicy.fresh(protocol);
    const b = GymPolicy.fresh(protocol);
    trainDpo(a, pairs, { epochs: 3, seed: 7 });
    trainDpo(b, pairs, { epochs: 3, seed: 7 });
    assert.deepEqual([...a.model.params], [...b.model.params]);
    const path = join(tmp.dir, 'policy.json');
    a.save(path, [{ algo: 'dpo' }]);
    const loaded = GymPolicy.load(path);
    const q = train[0]!;
    assert.deepEqual((await sampleEpisode(env, loaded, q, 0, 0)).trajectory.steps.map((s) => s.action), (await sampleEpisode(env, a, q, 0, 0)).trajectory.steps.map((s) => s.action));
  });

  // A stand-in PRM for ProRAG's step rewards: an answer step scores 1 when it is a gold answer, 0 otherwise; other steps 0.5.
  const goldPrm: PRM = {
    name: 'gold-evidence (test)',
    async score(state: State, candidates: readonly Candidate[]) {
      return candidates.map((c) => {
        const a = c.action;
        if (a.type === 'answer') return state.question.answers.some((g) => normalizeAnswer(g) === normalizeAnswer(a.answer)) ? 1 : 0;
        return 0.5;
      });
    },
  };

  for (const algo of ['grpo', 'dapo', 'prorag'] as RlAlgo[]) {
    it(`${algo}: training raises the policy's expected EM on its questions`, async () => {
      const policy = GymPolicy.fresh(protocol);
      const before = await sampledEm(policy, train);
      const log = await trainRl(policy, { env, questions: train, prm: algo === 'prorag' ? goldPrm : undefined }, { algo, epochs: 4, questionsPerBatch: 10, groupSize: 6 });
      const after = await sampledEm(policy, train);
      assert.ok(log.length > 0 && log.every((e) => Number.isFinite(e.loss)));
      assert.ok(after > before, `${algo}: EM ${before} → ${after}`);
    });
  }

  it('on-policy RL at T = 0.9 starts every batch at ρ = 1 (old and new log-probabilities at one temperature)', async () => {
    const policy = GymPolicy.fresh(protocol);
    const rng = new Rng(7);
    policy.model.params.forEach((_, i) => (policy.model.params[i] = rng.next() - 0.5)); // a non-uniform policy
    const log = await trainRl(policy, { env, questions: train.slice(0, 10) }, { algo: 'grpo', epochs: 1, questionsPerBatch: 5, groupSize: 4, updatesPerBatch: 2, temperature: 0.9 });
    assert.equal(log.length, 2);
    for (const e of log) assert.ok(Math.abs(e['ratio']! - 1) < 1e-9, `batch ${e.step}: mean ρ ${e['ratio']}`);
  });

  it('ProRAG step rewards: the PRM output plus the step-format term (code: sigmoid + 1; spec: PRM + λ_f)', async () => {
    const prorag = getProtocol('prorag');
    const penv = new RagEnv({ retriever: env.config.retriever, topK: 3, maxTurns: 6 });
    const ep = await sampleEpisode(penv, GymPolicy.fresh(prorag), train[0]!, 1, 3);
    const logit3: PRM = { name: 'ln3', score: async (_s, cs) => cs.map(() => Math.log(3)) };
    const n = ep.decisions.length;
    assert.ok(n >= 1);
    // The gym writes well-formed steps: sigmoid(ln 3) = 0.75, + 1 for the schema.
    assert.deepEqual(await proragStepScores(logit3, ep), Array(n).fill(1.75));
    assert.deepEqual(await proragStepScores(logit3, ep, 'spec', 0.5), Array(n).fill(Math.log(3) + 0.5));
  });

  it('reward options reach every stage of the trainer (--option), and a bad one is refused before any rollout', async () => {
    const run = async (rewardOptions: string[]) =>
      (await trainRl(GymPolicy.fresh(protocol), { env, questions: train.slice(0, 8) }, { algo: 'lws', epochs: 1, questionsPerBatch: 4, groupSize: 4, updatesPerBatch: 1, dynamicSampling: false, stageSwitch: 0.5, rewardOptions })).map((e) => e['reward']!);
    const plain = await run([]);
    // Stage 1 wrong answers earn −1 + β·RC: with β = 0 the sampled rewards can only fall (or stay).
    const noBeta = await run(['beta=0']);
    assert.equal(plain.length, 2);
    assert.ok(noBeta[0]! < plain[0]!, `stage 1: ${noBeta[0]} < ${plain[0]}`);
    await assert.rejects(trainRl(GymPolicy.fresh(protocol), { env, questions: train }, { algo: 'lws', rewardOptions: ['nope=1'] }), /no scheme/);
  });

  it("lws: stage 2's reward rises and the policy learns to retrieve less (LWS's aim)", async () => {
    // LWS's search and answer terms penalise searching more than the answer needs.
    const stage2 = composeScheme('lws-stage2');
    const embedder = await createEmbedder('hash:512');
    // Means over 2 episodes per question sampled at τ = 1 (fixed seeds): what the staged rewards optimise.
    const measure = async (p: GymPolicy) => {
      let reward = 0;
      let rc = 0;
      for (const q of train) {
        for (let k = 0; k < 2; k++) {
          const t = (await sampleEpisode(env, p, q, 1, `eval-${k}`)).trajectory;
          reward += (await stage2.compute({ trajectory: t, embedder })).total / (2 * train.length);
          rc += t.retrievalCount / (2 * train.length);
        }
      }
      return { reward, rc };
    };
    // An over-searcher to start from, as LWS does (agents trained on outcome rewards search too much):
    // the untrained policy with a weight of 3 on "this step is a search".
    const policy = GymPolicy.fresh(protocol);
    policy.model.params[gymFeatureNames(protocol).indexOf('is_search')] = 3;
    const before = await measure(policy);
    assert.ok(before.rc > 3, `the starting policy searches ${before.rc} times`);
    // Stage 2 from the start (stageSwitch 0): the stage whose search terms target over-search. With the
    // default switch (0.5), stage 1's reward for searching after a wrong answer pushes the other way on
    // this world — measured, and reported in docs/papers/lws.md.
    await trainRl(policy, { env, questions: train }, { algo: 'lws', epochs: 10, questionsPerBatch: 10, groupSize: 6, stageSwitch: 0 });
    const after = await measure(policy);
    assert.ok(after.reward > before.reward, `stage-2 reward ${before.reward} → ${after.reward}`);
    assert.ok(after.rc < before.rc, `retrievals ${before.rc} → ${after.rc}`);
  });
});
