/**
 * The losses of the gym trainers with their gradients, in one place (CleanRL style). The policy is
 * π(i | s) = softmax_j(r_θ(x_j) / τ); every loss below is a function of log π of a chosen candidate, so
 * one identity carries all the gradients:
 *
 *   ∇_θ log π(i | s) = (1/τ) · (∇r(x_i) − Σ_j π(j | s) ∇r(x_j)).
 *
 * Each function returns the loss and adds its gradient into `grad` (the caller owns the buffer and the
 * optimiser). The reference maths they follow is rewards/rl.ts (which cites each paper); tests check the
 * gradients against finite differences.
 */
import type { ScoreModel } from '../../prm/model.js';
import { decoupledClipSurrogate, dpoLoss, klEstimate, negLogSigmoid } from '../../rewards/rl.js';
import { type Choice, logSoftmax } from './policy.js';

/** log π(i | s), and, with `grad`, adds scale · ∇ log π(i | s). */
export function logProb(model: ScoreModel, choice: Choice, i: number, tau = 1, grad?: Float64Array, scale = 1): number {
  const scores = choice.features.map((x) => model.forward(x));
  const lp = logSoftmax(scores, tau);
  if (grad && scale !== 0) {
    const t = tau > 0 ? tau : 1;
    choice.features.forEach((x, j) => {
      const coef = (scale / t) * ((j === i ? 1 : 0) - Math.exp(lp[j]!));
      if (coef !== 0) model.forward(x, grad, coef);
    });
  }
  return lp[i]!;
}

// ----------------------------------------------------------------------------------------- SFT

export interface Demonstration {
  choice: Choice;
  /** Index of the demonstrated action among the candidates. */
  target: number;
}

/** SFT, the negative log-likelihood of demonstrated actions: L = −(1/B) Σ log π(a* | s). */
export function sftLoss(model: ScoreModel, batch: readonly Demonstration[], grad?: Float64Array, tau = 1): number {
  let loss = 0;
  for (const d of batch) loss -= logProb(model, d.choice, d.target, tau, grad, -1 / batch.length);
  return loss / batch.length;
}

/**
 * The action type of each candidate (search / answer / extract…): the "control" decision that
 * ProRAG's tags (<subquery>, <subanswer>, <answer>) carry in the text.
 */
export function candidateTypes(choice: Choice): string[] {
  return choice.candidates.map((c) => c.action.type);
}

/**
 * log P(T | s) of the target's action type T, P(T | s) = Σ_{j: type j = T} π(j | s), and, with `grad`,
 * adds scale · ∇ log P(T | s), where
 *   ∇ log P(T | s) = (1/τ) · Σ_j (1[j ∈ T] π(j | T) − π(j | s)) ∇r(x_j),   π(j | T) = π(j | s) / P(T | s).
 */
export function logTypeProb(model: ScoreModel, choice: Choice, i: number, tau = 1, grad?: Float64Array, scale = 1): number {
  const types = candidateTypes(choice);
  if (types.length !== choice.features.length) throw new Error('logTypeProb: the choice has no candidate actions to read types from');
  const scores = choice.features.map((x) => model.forward(x));
  const lp = logSoftmax(scores, tau);
  const type = types[i];
  const inType = lp.filter((_, j) => types[j] === type);
  const m = Math.max(...inType);
  const logPT = m + Math.log(inType.reduce((acc, x) => acc + Math.exp(x - m), 0));
  if (grad && scale !== 0) {
    const t = tau > 0 ? tau : 1;
    choice.features.forEach((x, j) => {
      const p = Math.exp(lp[j]!);
      const coef = (scale / t) * ((types[j] === type ? Math.exp(lp[j]! - logPT) : 0) - p);
      if (coef !== 0) model.forward(x, grad, coef);
    });
  }
  return logPT;
}

/**
 * ProRAG's format-aware warm-up (§3.1, eq. 1: control tokens weighted by λ), as the gym has it. The NLL
 * of a demonstrated action factorises into the choice of its type T and the choice within the type,
 *   −log π(a* | s) = −log P(T | s) − log P(a* | T, s),
 * and the control decision is weighted by λ (`controlWeight`):
 *   L = (1/B) Σ [λ · (−log P(T | s)) + (−log P(a* | T, s))] = (1/B) Σ [−log π(a* | s) + (λ − 1) · (−log P(T | s))].
 * The second form is what is computed: at λ = 1 the added term is exactly 0, so the loss and its
 * gradient are those of `sftLoss` bit for bit. Where a state allows one type only, P(T | s) = 1.
 */
export function controlSftLoss(model: ScoreModel, batch: readonly Demonstration[], controlWeight: number, grad?: Float64Array, tau = 1): number {
  let loss = 0;
  const extra = controlWeight - 1;
  for (const d of batch) {
    loss -= logProb(model, d.choice, d.target, tau, grad, -1 / batch.length);
    loss -= extra * logTypeProb(model, d.choice, d.target, tau, grad, -extra / batch.length);
  }
  return loss / batch.length;
}

// ----------------------------------------------------------------------------------------- DPO

export interface StepPair {
  choice: Choice;
  chosen: number;
  rejected: number;
  /** log π_ref of both sides (the frozen starting policy); absent → the reference-free form. */
  refChosen?: number;
  refRejected?: number;
}

/**
 * Step-level DPO (ReasonRAG §2.3, eq. 3, with the reference model of DPO's eq. 7), mean over the batch:
 *   L = −log σ(β m),  m = (log π(a⁺|s) − log π_ref(a⁺|s)) − (log π(a⁻|s) − log π_ref(a⁻|s)),
 *   ∂L/∂m = −β σ(−β m).
 */
export function stepDpoLoss(model: ScoreModel, batch: readonly StepPair[], beta: number, grad?: Float64Array, tau = 1): number {
  let loss = 0;
  for (const p of batch) {
    const lc = logProb(model, p.choice, p.chosen, tau);
    const lr = logProb(model, p.choice, p.rejected, tau);
    const args = { chosen: lc, rejected: lr, refChosen: p.refChosen, refRejected: p.refRejected };
    loss += dpoLoss(args, beta);
    if (grad) {
      const m = lc - (p.refChosen ?? 0) - (lr - (p.refRejected ?? 0));
      const dm = (-beta * Math.exp(-negLogSigmoid(-beta * m))) / batch.length; // −β σ(−βm) / B
      logProb(model, p.choice, p.chosen, tau, grad, dm);
      logProb(model, p.choice, p.rejected, tau, grad, -dm);
    }
  }
  return loss / batch.length;
}

// ------------------------------------------------------------------------- clipped policy gradient

/** One sampled step of an episode, as the policy-gradient losses see it. */
export interface SampledStep {
  choice: Choice;
  action: number;
  /** log π_old of the action when it was sampled. */
  logpOld: number;
  /** log π_ref of the action (for the KL term). */
  logpRef?: number;
  advantage: number;
}

export interface ClipOptions {
  epsLow: number;
  epsHigh: number;
  /** KL coefficient β (0: no KL term, as DAPO). */
  beta: number;
  kl: 'k1' | 'k2' | 'k3';
  /**
   * "token" (DAPO): mean over every step of the batch; "sequence" (GRPO): mean over each episode's
   * steps, then over episodes. A step of the gym policy is one decision, its "token".
   */
  aggregate: 'token' | 'sequence';
  /**
   * Softmax temperature of log π in ρ and the KL: the rollouts' sampling temperature, so that
   * π_old (recorded while sampling) and π_θ are the same distribution before any update.
   */
  tau: number;
}

/**
 * The GRPO/DAPO objective on sampled steps (GRPO: Shao et al. 2024; DAPO's decoupled clip: LWS eq. 3):
 *   ℓ = −min(ρA, clip(ρ, 1−ε_low, 1+ε_high) A) + β · KL_est,  ρ = π_θ(a|s) / π_old(a|s),
 * averaged per `aggregate`. Gradients: the surrogate's is −ρA ∇log π where the unclipped term is
 * the minimum, 0 where the clipped one is; k1: ∇log π; k2: −log(π_ref/π) ∇log π; k3: (1 − π_ref/π) ∇log π.
 */
/** Ratio statistics of one evaluation of the objective: mean ρ and the share of steps whose ρ was clipped. */
export interface RatioStats {
  ratio: number;
  clipped: number;
}

export function clippedPolicyLoss(model: ScoreModel, episodes: readonly (readonly SampledStep[])[], opts: ClipOptions, grad?: Float64Array, stats?: RatioStats): number {
  const totalSteps = episodes.reduce((n, e) => n + e.length, 0);
  const nonEmpty = episodes.filter((e) => e.length > 0).length;
  if (totalSteps === 0) return 0;
  let loss = 0;
  for (const ep of episodes) {
    if (ep.length === 0) continue;
    const weight = opts.aggregate === 'token' ? 1 / totalSteps : 1 / (nonEmpty * ep.length);
    for (const s of ep) {
      const lp = logProb(model, s.choice, s.action, opts.tau);
      const rho = Math.exp(lp - s.logpOld);
      if (stats) {
        stats.ratio += rho / totalSteps;
        if (rho < 1 - opts.epsLow || rho > 1 + opts.epsHigh) stats.clipped += 1 / totalSteps;
      }
      const surrogate = decoupledClipSurrogate(rho, s.advantage, opts.epsLow, opts.epsHigh);
      const useKl = opts.beta > 0 && s.logpRef !== undefined;
      const kl = useKl ? klEstimate(lp, s.logpRef!, opts.kl) : 0;
      loss += weight * (-surrogate + opts.beta * kl);
      if (!grad) continue;
      // ∂ℓ/∂log π for this step.
      let d = 0;
      if (rho * s.advantage <= surrogate) d -= rho * s.advantage; // the unclipped term is the minimum
      if (useKl) {
        const logRho = s.logpRef! - lp;
        d += opts.beta * (opts.kl === 'k1' ? 1 : opts.kl === 'k2' ? -logRho : 1 - Math.exp(logRho));
      }
      if (d !== 0) logProb(model, s.choice, s.action, opts.tau, grad, weight * d);
    }
  }
  return loss;
}
