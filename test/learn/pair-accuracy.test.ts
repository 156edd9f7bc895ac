/**
 * Pair accuracy counts a tie as 0.5, the same way for the PRM (evaluatePairs, TrainedPRM.evaluate) and
 * the step-DPO training curve (stepPairAccuracy): the untrained gym policy, whose weights are all zero,
 * gives every candidate the same log-probability and so stands at chance, 0.5, not at 0 (issue 47: the
 * report's step-DPO accuracy curve started at 0). Hand-computed cases.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Rng } from '../../src/core/rng.js';
import type { Choice } from '../../src/learn/gym/policy.js';
import { stepPairAccuracy } from '../../src/learn/gym/train.js';
import type { StepPair } from '../../src/learn/gym/objective.js';
import { evaluatePairs, pairCredit, ScoreModel } from '../../src/prm/model.js';

/** A linear head over one feature, r(x) = w·x (mean 0, std 1: no standardisation). */
function linear(w: number): ScoreModel {
  const m = ScoreModel.init('linear', 1, 1, Float64Array.of(0), Float64Array.of(1), new Rng(0));
  m.params[0] = w;
  return m;
}
const x = (v: number) => Float64Array.of(v);

describe('pair accuracy: a tie counts 0.5', () => {
  it('pairCredit: 1 above, 0 below, 0.5 equal', () => {
    assert.equal(pairCredit(1, 0), 1);
    assert.equal(pairCredit(-2, 3), 0);
    assert.equal(pairCredit(0.3, 0.3), 0.5);
    assert.equal(pairCredit(-Math.log(3), -Math.log(3)), 0.5);
  });

  it('the PRM (evaluatePairs): r = x on four pairs — right, tie, wrong, tie — is 0.5 (ties as wrong gave 0.25)', () => {
    const pairs = [
      { chosen: x(2), rejected: x(1) }, // 2 > 1: 1
      { chosen: x(1), rejected: x(1) }, // tie: 0.5
      { chosen: x(0), rejected: x(3) }, // 0 < 3: 0
      { chosen: x(-1), rejected: x(-1) }, // tie: 0.5
    ];
    assert.equal(evaluatePairs(linear(1), pairs).accuracy, 2 / 4);
    // All weights zero: every pair a tie.
    assert.equal(evaluatePairs(linear(0), pairs).accuracy, 0.5);
  });

  it('the step-DPO curve (stepPairAccuracy): log-probabilities of a softmax over three candidates', () => {
    // Candidates with features 0, 1, 1: with w = 2 the scores are 0, 2, 2, so candidates 1 and 2 tie.
    const choice: Choice = { candidates: [], features: [x(0), x(1), x(1)] };
    const pairs: StepPair[] = [
      { choice, chosen: 1, rejected: 0 }, // log p 2 − lse > 0 − lse: 1
      { choice, chosen: 1, rejected: 2 }, // equal: 0.5
      { choice, chosen: 0, rejected: 2 }, // lower: 0
      { choice, chosen: 2, rejected: 0 }, // higher: 1
    ];
    assert.equal(stepPairAccuracy(linear(2), pairs), (1 + 0.5 + 0 + 1) / 4);
    // The untrained policy (all weights zero): uniform over the candidates, every pair a tie — chance.
    assert.equal(stepPairAccuracy(linear(0), pairs), 0.5);
    assert.equal(stepPairAccuracy(linear(2), []), 0);
  });
});
