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
  /**
   * A group of one sample: 'zero' (default: one sample says nothing about the others); 'unit', the rule of
   * Search-R1's verl (`compute_grpo_outcome_advantage` gives a lone sample mean 0 and std 1), A = r / (1 + ε);
   * or 'verl', that rule as its code computes it: the stand-in std is a float32 tensor, so 1 + ε is rounded to
   * float32 (1 + 1e-6 → 1.0000009536743164) before the division; or 'nan', as TRL-style code that takes
   * torch.std of one value (n − 1 = 0) gets (ARENA's trainer with num_generations 1).
   */
  single?: 'zero' | 'unit' | 'verl' | 'nan';
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
  const eps = opts.eps ?? 1e-4;
  if (rewards.length === 1 && opts.single === 'unit') return [rewards[0]! / (1 + eps)];
  if (rewards.length === 1 && opts.single === 'verl') return [rewards[0]! / Math.fround(1 + eps)];
  if (rewards.length === 1 && opts.single === 'nan') return [NaN];
  // Checked exactly: the floating-point mean of equal values can differ from them in the last bit.
  if (rewards.every((r) => r === rewards[0])) return rewards.map(() => 0);
  const m = mean(rewards);
  const s = std(rewards, opts.unbiased ?? true);
  return rewards.map((r) => (r - m) / (s + eps));
}

/** The options that reproduce Search-R1's verl GRPO advantage (core_algos.compute_grpo_outcome_advantage). */
export const SEARCH_R1_GRPO: GroupNormOptions = Object.freeze({ eps: 1e-6, unbiased: true, single: 'verl' });

/**
 * The options that reproduce ARENA's GRPO advantage (its copy of TRL's GRPOTrainer,
 * `_generate_and_score_completions`): ε 1e-4 on the unbiased std of each block of num_generations rewards.
 */
export const ARENA_GRPO: GroupNormOptions = Object.freeze({ eps: 1e-4, unbiased: true, single: 'nan' });

/**
 * GRPO outcome advantages over a batch laid out as verl holds it (Search-R1): one row of token rewards per
 * response, a row of the loss mask, and the id of the question each response answers. A response's score is
 * the sum of its row — every token, masked or not, as the authors' code sums every non-zero entry — the
 * scores are normalised within each question's group (rows need not be adjacent), and each row's advantage
 * is copied to its tokens and multiplied by the mask. Defaults are Search-R1's ({@link SEARCH_R1_GRPO}).
 */
export function grpoOutcomeAdvantages(
  tokenRewards: readonly (readonly number[])[],
  mask: readonly (readonly number[])[],
  index: readonly string[],
  opts: GroupNormOptions = SEARCH_R1_GRPO,
): number[][] {
  if (index.length !== tokenRewards.length || mask.length !== tokenRewards.length) {
    throw new Error(`grpoOutcomeAdvantages: ${tokenRewards.length} reward rows, ${mask.length} mask rows and ${index.length} ids; give one of each per response`);
  }
  const scores = tokenRewards.map((row) => row.reduce((s, x) => s + x, 0));
  // A Map, not an object: a question id such as "constructor" or "__proto__" is a key like any other.
  const groups = new Map<string, number[]>();
  index.forEach((id, i) => {
    const g = groups.get(id);
    if (g) g.push(i);
    else groups.set(id, [i]);
  });
  const adv = new Array<number>(scores.length);
  for (const rows of groups.values()) {
    const a = grpoAdvantages(rows.map((i) => scores[i]!), opts);
    rows.forEach((i, k) => (adv[i] = a[k]!));
  }
  return tokenRewards.map((row, i) => row.map((_, j) => adv[i]! * mask[i]![j]!));
}

// ------------------------------------------------------------------------------------------- GAE

/**
 * Generalised advantage estimation (Schulman et al. 2016) as PPO in Search-R1's verl computes it
 * (core_algos.compute_gae_advantage_return): per row, backwards over every position of the response,
 *   δ_t = r_t + γ V_{t+1} − V_t (V past the end is 0),  A_t = δ_t + γλ A_{t+1};
 * returns R_t = A_t + V_t (before whitening); then the advantages are whitened over the whole batch with the
 * masked mean and the masked variance with Bessel's correction, (A − mean) / √(var + 1e-8). The recursion
 * runs over masked positions too and the whitened values of masked positions are kept (the loss masks them).
 * Whitening needs two valid tokens in the batch: with fewer verl raises ValueError, and so does this.
 */
export function gaeAdvantages(
  rewards: readonly (readonly number[])[],
  values: readonly (readonly number[])[],
  mask: readonly (readonly number[])[],
  gamma: number,
  lam: number,
): { advantages: number[][]; returns: number[][] } {
  const raw = rewards.map((row, i) => {
    const v = values[i]!;
    const out = new Array<number>(row.length);
    let last = 0;
    for (let t = row.length - 1; t >= 0; t--) {
      const next = t < row.length - 1 ? v[t + 1]! : 0;
      last = row[t]! + gamma * next - v[t]! + gamma * lam * last;
      out[t] = last;
    }
    return out;
  });
  const returns = raw.map((row, i) => row.map((a, t) => a + values[i]![t]!));
  let count = 0;
  let sum = 0;
  raw.forEach((row, i) => row.forEach((a, t) => {
    count += mask[i]![t]!;
    sum += a * mask[i]![t]!;
  }));
  if (count < 2) {
    throw new Error(`GAE whitening needs at least 2 valid tokens in the batch, got ${count} (verl's masked_var raises ValueError here); use a larger batch`);
  }
  const m = sum / count;
  let sq = 0;
  raw.forEach((row, i) => row.forEach((a, t) => (sq += (a - m) ** 2 * mask[i]![t]!)));
  const variance = (sq / count) * (count / (count - 1));
  const scale = 1 / Math.sqrt(variance + 1e-8);
  return { advantages: raw.map((row) => row.map((a) => (a - m) * scale)), returns };
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

/** The KL penalties of Search-R1's verl (core_algos.kl_penalty), per token; "low_var_kl" is k3 clamped to [−10, 10]. */
export type VerlKlKind = 'kl' | 'abs' | 'mse' | 'low_var_kl';

/**
 * Search-R1's verl KL penalty for one token: "kl" = log π − log π_ref (k1), "abs" its absolute value,
 * "mse" = ½ (log π − log π_ref)² (k2), "low_var_kl" = k3 clamped to [−10, 10] (the clamp bounds the ratio's
 * blow-up where π_ref ≫ π), computed in the authors' order, ρ − log ρ − 1. Any other name throws, as verl
 * raises NotImplementedError (its "full" needs whole-vocabulary logits).
 */
export function klPenalty(logp: number, logpRef: number, kind: VerlKlKind): number {
  if (kind === 'kl') return logp - logpRef;
  if (kind === 'abs') return Math.abs(logp - logpRef);
  if (kind === 'mse') return 0.5 * (logp - logpRef) ** 2;
  if (kind === 'low_var_kl') {
    const logRho = logpRef - logp;
    return Math.min(Math.max(Math.exp(logRho) - logRho - 1, -10), 10);
  }
  throw new Error(`unknown KL penalty "${String(kind)}" (verl raises NotImplementedError); use kl, abs, mse or low_var_kl`);
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

/**
 * ProRAG's advantage as its code computes it (prorag/rl/trainer.py `RAGTrainer._generate_and_score_completions`,
 * lilinwz/ProRAG @c7a6411), for `--option compat=authors`: one group, each row's tokens padded with masked ones
 * (`tokenSteps` −1) to the batch's width. Where {@link dualGranularityAdvantages} differs on purpose:
 *   - the step statistics are the population mean and variance of the group's masked-in token scores, and
 *     std = √(var + 1e-8) with no ε added (1 when the group has at most one such token; no test for a constant
 *     pool, whose advantages come out 0 anyway);
 *   - the outcome advantage goes on every token, environment and padding tokens included (the loss masks them
 *     later); their step term is (0 − mean) / std × 0, which is 0 unless the group's mean is not finite;
 *   - w is `prm_beta` (the code's default 0.5, its run script scripts/rl.sh 0.3); with w ≤ 0 the step term is
 *     not computed at all;
 *   - a group of one has no unbiased std: its outcome advantage is NaN (torch.std of one value).
 * A batch whose completions are all empty makes the code's `view(-1, G, 0)` raise; so does this (RangeError).
 */
export function proragAuthorsDualAdvantages(group: readonly DualSample[], beta = 0.5): number[][] {
  const aOut = grpoAdvantages(group.map((g) => g.outcome), ARENA_GRPO);
  if (!(beta > 0)) return group.map((g, i) => g.tokenSteps.map(() => aOut[i]!));
  if (group.every((g) => g.tokenSteps.length === 0)) throw new RangeError('cannot reshape tensor of 0 elements (every completion is empty)');
  // Sums over every position, s × m, as the code multiplies by the mask (masked positions hold score 0).
  const score = (g: DualSample, s: number) => (s < 0 ? 0 : g.stepRewards[s]!);
  let count = 0;
  let sum = 0;
  for (const g of group) for (const s of g.tokenSteps) { count += s < 0 ? 0 : 1; sum += score(g, s) * (s < 0 ? 0 : 1); }
  const m = sum / Math.max(count, 1);
  let sq = 0;
  for (const g of group) for (const s of g.tokenSteps) sq += (score(g, s) - m) ** 2 * (s < 0 ? 0 : 1);
  const sd = count <= 1 ? 1 : Math.sqrt(sq / Math.max(count, 1) + 1e-8);
  return group.map((g, i) => g.tokenSteps.map((s) => aOut[i]! + beta * (((score(g, s) - m) / sd) * (s < 0 ? 0 : 1))));
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
