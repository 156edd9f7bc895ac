/** RL math (GRPO, DAPO, KL estimators, DPO, ProRAG's dual advantage) with hand-computed values. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Rng } from '../../src/core/rng.js';
import {
  aggregateLoss, bradleyTerryLoss, clippedSurrogate, decoupledClipSurrogate, dpoImplicitReward, dpoLoss, dualGranularityAdvantages,
  dynamicSamplingKeep, grpoAdvantages, grpoTokenLoss, klEstimate, negLogSigmoid,
} from '../../src/rewards/rl.js';

const close = (a: number, b: number, tol = 1e-9) => assert.ok(Math.abs(a - b) <= tol, `${a} vs ${b}`);

describe('GRPO advantages', () => {
  it('normalise by the group: rewards [1,0,1,0] → ±0.5 / (√(1/3) + 1e-4) = ±0.865875', () => {
    // mean 0.5; unbiased std √((4 · 0.25) / 3) = 0.577350
    const a = grpoAdvantages([1, 0, 1, 0]);
    close(a[0]!, 0.8658754297607016);
    close(a[1]!, -0.8658754297607016);
  });
  it('are all 0 when every reward is equal (std = 0)', () => {
    assert.deepEqual(grpoAdvantages([0.7, 0.7, 0.7]), [0, 0, 0]);
    assert.deepEqual(grpoAdvantages([1]), [0]);
  });
  it('use the population std when asked: [2, 0] → ±1 / (1 + 1e-4)', () => {
    const a = grpoAdvantages([2, 0], { unbiased: false });
    close(a[0]!, 1 / 1.0001);
  });
  it('DAPO dynamic sampling drops groups whose rewards are all equal', () => {
    assert.deepEqual(dynamicSamplingKeep([[1, 1], [0, 1], [0.5, 0.5, 0.5], [], [-1, 2]]), [1, 4]);
  });
});

describe('clipped surrogates', () => {
  it('clip at 1 ± 0.2, taking the pessimistic side', () => {
    close(clippedSurrogate(1.5, 1), 1.2); // min(1.5, 1.2)
    close(clippedSurrogate(0.5, -1), -0.8); // min(−0.5, 0.8 · −1)
    close(clippedSurrogate(0.5, 1), 0.5); // min(0.5, 0.8): below the clip with A > 0 the ratio itself
    close(clippedSurrogate(1.5, -1), -1.5); // min(−1.5, −1.2)
  });
  it('DAPO decouples the clip: ε_high 0.28 lets a good token rise further, ε_low 0.2 is unchanged', () => {
    close(clippedSurrogate(1.25, 1), 1.2); // symmetric: clipped at 1.2
    close(decoupledClipSurrogate(1.25, 1), 1.25); // within 1.28
    close(decoupledClipSurrogate(1.5, 1), 1.28);
    close(decoupledClipSurrogate(0.5, -1), -0.8); // 1 − 0.2, as before
  });
  it('token losses average over all tokens (DAPO) or per sequence first (GRPO)', () => {
    const losses = [[1, 2, 3], [4]];
    assert.equal(aggregateLoss(losses, [[1, 1, 1], [1]], 'token'), 2.5); // 10 / 4
    assert.equal(aggregateLoss(losses, [[1, 1, 1], [1]], 'sequence'), 3); // (2 + 4) / 2
    close(aggregateLoss(losses, [[1, 0, 1], [1]], 'token'), 8 / 3); // masked token excluded
    assert.equal(aggregateLoss(losses, [[1, 0, 1], [1]], 'sequence'), 3); // (2 + 4) / 2
  });
  it('the GRPO token loss is −surrogate + β·KL', () => {
    // ρ = e^(−1 − (−1.2)) = e^0.2 = 1.221403 > 1.2 → surrogate 1.2 · 2 = 2.4; k3 with log ρ_ref = −0.5 − (−1) ... see below
    const loss = grpoTokenLoss({ logp: -1, logpOld: -1.2, logpRef: -1.5, advantage: 2 }, { beta: 0.04, kl: 'k2' });
    // k2 = ½ (−1.5 − (−1))² = 0.125 → 0.04 · 0.125 = 0.005
    close(loss, -2.4 + 0.005);
  });
});

describe('KL estimators (ρ = π_ref / π_θ)', () => {
  it('on log π = −1, log π_ref = −2: k1 = 1, k2 = 0.5, k3 = e^−1 − 1 + 1 = 0.367879', () => {
    close(klEstimate(-1, -2, 'k1'), 1);
    close(klEstimate(-1, -2, 'k2'), 0.5);
    close(klEstimate(-1, -2, 'k3'), 0.36787944117144233);
    assert.equal(klEstimate(-3, -3, 'k3'), 0);
  });
  it('k2 and k3 are never negative; k1 can be (property test on random log-probabilities)', () => {
    const rng = new Rng('kl');
    let k1Negative = 0;
    for (let i = 0; i < 5000; i++) {
      const [lp, lr] = [-rng.next() * 12, -rng.next() * 12];
      assert.ok(klEstimate(lp, lr, 'k2') >= 0);
      assert.ok(klEstimate(lp, lr, 'k3') >= 0, `${lp} ${lr}`);
      if (klEstimate(lp, lr, 'k1') < 0) k1Negative++;
    }
    assert.ok(k1Negative > 1000);
  });
});

describe('ProRAG dual-granularity advantages', () => {
  it('broadcasts group-normalised outcome and step advantages to tokens; retrieval tokens are masked', () => {
    // Trajectory A: outcome 1, 3 steps with rewards [1, 0, 2]; tokens: step 0 ×2, retrieval ×2 (masked), step 1 ×1, step 2 ×2.
    // Trajectory B: outcome 0, 1 step with reward 0; tokens: step 0 ×2.
    // A_out = ±0.5 / (√0.5 + 1e-4) = ±0.707007 (unbiased std of [1, 0]).
    // Step rewards over the group's valid tokens: [1,1,0,2,2,0,0]: mean 6/7 = 0.857143, unbiased std 0.899735;
    //   norm(1) = 0.158759, norm(0) = −0.952555, norm(2) = 1.270074 (each / (std + 1e-4)).
    // A_token = A_out + 0.3 · norm(step reward):
    //   A: 0.707007 + 0.047628 = 0.754635 (step 0); 0.707007 − 0.285767 = 0.421240 (step 1); 0.707007 + 0.381022 = 1.088029 (step 2)
    //   B: −0.707007 − 0.285767 = −0.992773
    const [a, b] = dualGranularityAdvantages([
      { outcome: 1, stepRewards: [1, 0, 2], tokenSteps: [0, 0, -1, -1, 1, 2, 2] },
      { outcome: 0, stepRewards: [0], tokenSteps: [0, 0] },
    ]);
    const want = [0.754634552959626, 0.754634552959626, 0, 0, 0.42124024952902833, 1.0880288563902236, 1.0880288563902236];
    a!.advantages.forEach((x, i) => close(x, want[i]!));
    assert.deepEqual(a!.mask, [1, 1, 0, 0, 1, 1, 1]);
    b!.advantages.forEach((x) => close(x, -0.9927733411243385));
  });
  it('w = 0 leaves only the outcome advantage', () => {
    const [a] = dualGranularityAdvantages([{ outcome: 1, stepRewards: [5], tokenSteps: [0] }, { outcome: 0, stepRewards: [1], tokenSteps: [0] }], { w: 0 });
    close(a!.advantages[0]!, 0.7070067953266834);
  });
});

describe('preference losses', () => {
  it('DPO with a reference: margin (−10 + 11) − (−12 + 11) = 2, β 0.1 → −log σ(0.2) = 0.598139', () => {
    close(dpoLoss({ chosen: -10, rejected: -12, refChosen: -11, refRejected: -11 }, 0.1), 0.5981388693815918);
    // reference moving the other way: (−10 + 9) − (−12 + 13) = −2 → −log σ(−0.2) = 0.798139
    close(dpoLoss({ chosen: -10, rejected: -12, refChosen: -9, refRejected: -13 }, 0.1), 0.7981388693815917);
  });
  it('reference-free DPO (ReasonRAG): −log σ(β(log π(y_w) − log π(y_l)))', () => {
    close(dpoLoss({ chosen: -10, rejected: -12 }, 0.1), 0.5981388693815918);
  });
  it('implicit reward β (log π − log π_ref)', () => {
    close(dpoImplicitReward(-10, -9, 0.1), -0.1);
    close(dpoImplicitReward(-10, undefined, 0.3), -3);
  });
  it('Bradley–Terry: −log σ(2 − 0.5) = 0.201413, stable for large margins', () => {
    close(bradleyTerryLoss(2, 0.5), 0.20141327798275246);
    close(bradleyTerryLoss(0, 0), Math.log(2));
    assert.ok(Number.isFinite(negLogSigmoid(-1000)) && Math.abs(negLogSigmoid(-1000) - 1000) < 1e-9);
    assert.ok(negLogSigmoid(1000) >= 0 && negLogSigmoid(1000) < 1e-300);
  });
});
