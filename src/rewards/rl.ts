/**
 * The RL math of the five papers as plain functions over arrays: the reference that ragtrail's
 * TypeScript trainers and the exported TRL/verl setups must agree with. Each function names the
 * method and the paper it follows.
 * Conventions: log-probabilities are natural logs of per-token probabilities; a "group" is the G
 * samples drawn for one question; masks are 1 for tokens the policy generated, 0 for tokens the
 * environment inserted (retrieved documents), which carry no loss.
 */

// ------------------------------------------------------------------------------------ advantages

export interface GroupNormOptions {
  /** Added to the standard deviation (TRL, ARENA and ProRAG code: 1e-4). */
  eps?: number;
  /** Standard deviation with n − 1 (torch.std's default, as TRL computes it; default) or n. */
  unbiased?: boolean;
}

export function mean(xs: readonly number[]): number {
  return xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0;
}

export function std(xs: readonly number[], unbiased = true): number {
  const n = xs.length;
  if (n < (unbiased ? 2 : 1)) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / (unbiased ? n - 1 : n));
}

/**
 * GRPO: A_i = (r_i − mean(r)) / (std(r) + ε) over the group. When every reward is equal the
 * numerator is 0 for all i, so every advantage is 0 (the group teaches nothing; DAPO drops it).
 */
export function grpoAdvantages(rewards: readonly number[], opts: GroupNormOptions = {}): number[] {
  // Checked exactly: the floating-point mean of equal values can differ from them in the last bit.
  if (rewards.every((r) => r === rewards[0])) return rewards.map(() => 0);
  const m = mean(rewards);
  const s = std(rewards, opts.unbiased ?? true);
  const eps = opts.eps ?? 1e-4;
  return rewards.map((r) => (r - m) / (s + eps));
}

/** DAPO dynamic sampling: keep only groups whose rewards are not all equal. Returns the kept indices. */
export function dynamicSamplingKeep(groupRewards: readonly (readonly number[])[]): number[] {
  return groupRewards.flatMap((g, i) => (g.length > 0 && g.some((r) => r !== g[0]) ? [i] : []));
}

// ------------------------------------------------------------------------------ policy objective

/** PPO / GRPO clipped surrogate for one token: min(ρA, clip(ρ, 1 − ε, 1 + ε)·A). Maximised. */
export function clippedSurrogate(ratio: number, advantage: number, eps = 0.2): number {
  return decoupledClipSurrogate(ratio, advantage, eps, eps);
}

/** DAPO's decoupled clip: min(ρA, clip(ρ, 1 − ε_low, 1 + ε_high)·A), ε_low 0.2 and ε_high 0.28 (LWS). */
export function decoupledClipSurrogate(ratio: number, advantage: number, epsLow = 0.2, epsHigh = 0.28): number {
  const clipped = Math.min(Math.max(ratio, 1 - epsLow), 1 + epsHigh);
  return Math.min(ratio * advantage, clipped * advantage);
}

/** ρ = π_θ(token) / π_old(token) from log-probabilities. */
export function ratioFromLogprobs(logp: number, logpOld: number): number {
  return Math.exp(logp - logpOld);
}

/**
 * Averaging per-token losses over a group of sequences.
 *   "token" (DAPO): Σ over every unmasked token of the group / number of such tokens — long answers
 *   weigh by their length.
 *   "sequence" (original GRPO): mean over each sequence's tokens, then mean over sequences.
 */
export function aggregateLoss(perToken: readonly (readonly number[])[], masks: readonly (readonly number[])[], mode: 'token' | 'sequence'): number {
  if (mode === 'token') {
    let sum = 0;
    let count = 0;
    perToken.forEach((seq, i) => seq.forEach((l, j) => {
      if (masks[i]![j]) {
        sum += l;
        count++;
      }
    }));
    return count ? sum / count : 0;
  }
  const perSeq = perToken.map((seq, i) => {
    let sum = 0;
    let count = 0;
    seq.forEach((l, j) => {
      if (masks[i]![j]) {
        sum += l;
        count++;
      }
    });
    return count ? sum / count : 0;
  });
  return mean(perSeq);
}

// -------------------------------------------------------------------------------- KL estimators

/**
 * Estimators of KL(π_θ ‖ π_ref) from one sample drawn from π_θ, with ρ = π_ref / π_θ (Schulman 2020):
 *   k1 = −log ρ                    unbiased, can be negative
 *   k2 = ½ (log ρ)²                non-negative; ARENA's choice (its gradient matches the KL's in expectation)
 *   k3 = ρ − 1 − log ρ             unbiased, non-negative; standard GRPO's
 */
export function klEstimate(logp: number, logpRef: number, kind: 'k1' | 'k2' | 'k3'): number {
  const logRho = logpRef - logp;
  if (kind === 'k1') return -logRho;
  if (kind === 'k2') return 0.5 * logRho * logRho;
  return Math.exp(logRho) - 1 - logRho;
}

/**
 * The GRPO per-token loss: −clipped surrogate + β·KL (ARENA: k2 with β 0.04; standard: k3).
 */
export function grpoTokenLoss(
  args: { logp: number; logpOld: number; logpRef?: number; advantage: number },
  opts: { epsLow?: number; epsHigh?: number; beta?: number; kl?: 'k1' | 'k2' | 'k3' } = {},
): number {
  const rho = ratioFromLogprobs(args.logp, args.logpOld);
  const surrogate = decoupledClipSurrogate(rho, args.advantage, opts.epsLow ?? 0.2, opts.epsHigh ?? opts.epsLow ?? 0.2);
  const kl = args.logpRef === undefined || !opts.beta ? 0 : opts.beta * klEstimate(args.logp, args.logpRef, opts.kl ?? 'k3');
  return -surrogate + kl;
}

// ----------------------------------------------------------------- ProRAG dual-granularity advantage

/**
 * One trajectory of a GRPO group for {@link dualGranularityAdvantages}: its outcome reward, one reward
 * per step, and the step each token belongs to.
 */
export interface DualSample {
  /** Outcome reward of the whole trajectory. */
  outcome: number;
  /** One reward per step. */
  stepRewards: readonly number[];
  /** For each token, the index of its step, or −1 for environment tokens (masked). */
  tokenSteps: readonly number[];
}

/** Per-token advantages of one trajectory and the loss mask (0 for environment tokens, whose advantage is 0). */
export interface DualAdvantage {
  advantages: number[];
  mask: number[];
}

/**
 * ProRAG's dual-granularity advantage: outcome rewards normalised over the group,
 *   A_out(i) = (r_i − mean) / (std + ε);
 * step rewards normalised group-wise — by default over every valid token of the group, as the authors'
 * code does (each step's score copied to its tokens), or over the steps ("steps", a reading of ProRAG
 * eq. 7); then
 *   A_token = A_out(i) + w · A_step(step of the token),  w = 0.3,
 * with environment tokens masked (advantage 0, mask 0).
 */
export function dualGranularityAdvantages(group: readonly DualSample[], opts: { w?: number; eps?: number; unbiased?: boolean; stepNorm?: 'tokens' | 'steps' } = {}): DualAdvantage[] {
  const w = opts.w ?? 0.3;
  const eps = opts.eps ?? 1e-4;
  const unbiased = opts.unbiased ?? true;
  const aOut = grpoAdvantages(group.map((g) => g.outcome), { eps, unbiased });
  const pool: number[] = [];
  for (const g of group) {
    if ((opts.stepNorm ?? 'tokens') === 'steps') pool.push(...g.stepRewards);
    else for (const s of g.tokenSteps) if (s >= 0) pool.push(g.stepRewards[s]!);
  }
  const m = mean(pool);
  const sd = std(pool, unbiased);
  const constant = pool.every((r) => r === pool[0]);
  const norm = (r: number) => (constant ? 0 : (r - m) / (sd + eps));
  return group.map((g, i) => {
    const advantages = g.tokenSteps.map((s) => (s < 0 ? 0 : aOut[i]! + w * norm(g.stepRewards[s]!)));
    return { advantages, mask: g.tokenSteps.map((s) => (s < 0 ? 0 : 1)) };
  });
}

// ------------------------------------------------------------------------- preference losses

/** −log σ(x), computed without overflow: softplus(−x). */
export function negLogSigmoid(x: number): number {
  return x >= 0 ? Math.log1p(Math.exp(-x)) : -x + Math.log1p(Math.exp(x));
}

/**
 * DPO (Rafailov et al. 2023, eq. 7):
 *   −log σ(β[(log π(y_w|x) − log π_ref(y_w|x)) − (log π(y_l|x) − log π_ref(y_l|x))]).
 * Without reference log-probabilities it is the reference-free form ReasonRAG writes: −log σ(β[log π(y_w|x) − log π(y_l|x)]).
 */
export function dpoLoss(args: { chosen: number; rejected: number; refChosen?: number; refRejected?: number }, beta = 0.1): number {
  const margin = args.chosen - (args.refChosen ?? 0) - (args.rejected - (args.refRejected ?? 0));
  return negLogSigmoid(beta * margin);
}

/** DPO's implicit reward of a response: β (log π(y|x) − log π_ref(y|x)); reference-free: β log π(y|x). */
export function dpoImplicitReward(logp: number, logpRef = 0, beta = 0.1): number {
  return beta * (logp - logpRef);
}

/** Bradley–Terry PRM loss: −log σ(r(s, a⁺) − r(s, a⁻)). */
export function bradleyTerryLoss(rewardChosen: number, rewardRejected: number): number {
  return negLogSigmoid(rewardChosen - rewardRejected);
}
