/**
 * Trainers of the gym policy, each following the reference maths of rewards/rl.ts:
 *
 *   sft     NLL of demonstrated actions (the best-path steps of annotated trees); `controlWeight` λ
 *           weights the choice of the action's type as ProRAG's warm-up weights its control tokens
 *   dpo     step-level DPO on mined preference pairs against the frozen starting policy (ReasonRAG)
 *   grpo    on-policy groups of G episodes per question, outcome reward, group-normalised advantages,
 *           clip 0.2, k3 KL to the starting policy, per-episode averaging
 *   dapo    decoupled clip 0.2 / 0.28, no KL, step-level ("token") averaging, dynamic sampling (LWS)
 *   lws     dapo with LWS's staged rewards: lws-stage1 first, lws-stage2 after `stageSwitch`
 *   prorag  GRPO with the dual-granularity advantage: outcome (prorag-outcome) + w · PRM step reward
 *   rft     ProRAG's PRM-filtered rejection-sampling fine-tuning: sample, keep correct episodes whose
 *           every step the PRM passes, SFT on their steps (rft.ts)
 *
 * All are seeded and deterministic; the optimiser is Adam over the score model's parameters.
 */
import { Rng } from '../../core/rng.js';
import type { Question } from '../../core/types.js';
import type { RagEnv } from '../../env/env.js';
import { Adam, pairCredit, type ScoreModel } from '../../prm/model.js';
import type { PRM } from '../../prm/types.js';
import { contextFor } from '../../rewards/apply.js';
import { type ProragForm, proragStepRewards } from '../../rewards/prorag.js';
import { dualGranularityAdvantages, grpoAdvantages, mean } from '../../rewards/rl.js';
import { composeScheme, type ComposedScheme } from '../../rewards/schemes.js';
import type { Judge } from '../../rewards/judge.js';
import { createEmbedder, type Embedder } from '../../retrieval/embedders/embedder.js';
import { choiceWith, type StateAction, type StatePair } from './data.js';
import { clippedPolicyLoss, type ClipOptions, controlSftLoss, type Demonstration, logProb, type RatioStats, type SampledStep, type StepPair, stepDpoLoss } from './objective.js';
import type { GymPolicy } from './policy.js';
import { type Episode, sampleEpisode } from './rollout.js';

/** Trainers of the gym policy (see the module header): offline sft and dpo, online grpo, dapo, lws and prorag, and ProRAG's rft. */
export const GYM_ALGOS = ['sft', 'dpo', 'grpo', 'dapo', 'lws', 'prorag', 'rft'] as const;
/** One of {@link GYM_ALGOS}. */
export type GymAlgo = (typeof GYM_ALGOS)[number];
/** The online RL algorithms, run by {@link trainRl}. */
export type RlAlgo = Exclude<GymAlgo, 'sft' | 'dpo' | 'rft'>;

/** One line of a training log (per epoch for sft/dpo, per iteration for RL). */
export interface LogEntry {
  step: number;
  loss: number;
  [metric: string]: number;
}

// ------------------------------------------------------------------------------------- offline

/** Settings of the offline trainers (SFT, step-DPO) of the gym policy; defaults in {@link OFFLINE_DEFAULTS}. */
export interface OfflineConfig {
  epochs: number;
  lr: number;
  batch: number;
  l2: number;
  seed: number;
  /** DPO temperature β. */
  beta: number;
  /** DPO without the reference policy (ReasonRAG's written form). */
  referenceFree: boolean;
  /**
   * SFT: λ, the weight of the action-type ("control") decision in the NLL (ProRAG §3.1, eq. 1);
   * 1 is plain SFT. See objective.ts `controlSftLoss`.
   */
  controlWeight: number;
}

/** Step-DPO's β: ReasonRAG's (its DPO script: 0.3), the paper whose method step-DPO is; TRL's own default is 0.1. */
export const DPO_BETA = 0.3;

/**
 * Defaults of the offline trainers: 20 epochs of Adam at lr 0.05, batch 32, L2 1e-4, DPO β = 0.3
 * against a reference, plain SFT (λ = 1).
 */
export const OFFLINE_DEFAULTS: OfflineConfig = { epochs: 20, lr: 0.05, batch: 32, l2: 1e-4, seed: 0, beta: DPO_BETA, referenceFree: false, controlWeight: 1 };

function batches<T>(items: readonly T[], size: number, rng: Rng): T[][] {
  const order = items.map((_, i) => i);
  rng.shuffle(order);
  const out: T[][] = [];
  for (let s = 0; s < order.length; s += size) out.push(order.slice(s, s + size).map((i) => items[i]!));
  return out;
}

export function toDemonstrations(policy: GymPolicy, data: readonly StateAction[]): Demonstration[] {
  return data.map((d) => {
    const { choice, indices } = choiceWith(d.state, policy.protocol, [d.action]);
    return { choice, target: indices[0]! };
  });
}

/** Step pairs with the reference log-probabilities of the policy as it is now (the frozen π_ref). */
export function toStepPairs(policy: GymPolicy, data: readonly StatePair[], referenceFree = false): StepPair[] {
  return data.map((p) => {
    const { choice, indices } = choiceWith(p.state, policy.protocol, [p.chosen, p.rejected]);
    const [chosen, rejected] = indices as [number, number];
    const pair: StepPair = { choice, chosen, rejected };
    if (!referenceFree) {
      pair.refChosen = logProb(policy.model, choice, chosen);
      pair.refRejected = logProb(policy.model, choice, rejected);
    }
    return pair;
  });
}

/** Called after each epoch with its number (from 1), the policy as it stands: where a caller keeps checkpoints (`ragtrail sweep --vary checkpoint`). */
export type OnEpoch = (epoch: number) => void;

function offlineLoop<T>(policy: GymPolicy, items: readonly T[], cfg: OfflineConfig, loss: (batch: readonly T[], grad?: Float64Array) => number, onLog?: (e: LogEntry) => void, onEpoch?: OnEpoch): LogEntry[] {
  const rng = new Rng(cfg.seed);
  const adam = new Adam(policy.model.params, cfg.lr, cfg.l2);
  const log: LogEntry[] = [{ step: 0, loss: loss(items) }];
  onLog?.(log[0]!);
  for (let epoch = 1; epoch <= cfg.epochs; epoch++) {
    for (const b of batches(items, cfg.batch, rng)) {
      const grad = new Float64Array(policy.model.params.length);
      loss(b, grad);
      adam.step(grad);
    }
    const entry = { step: epoch, loss: loss(items) };
    log.push(entry);
    onLog?.(entry);
    onEpoch?.(epoch);
  }
  return log;
}

/**
 * SFT: minimises −log π(a* | s) over the demonstrations; with `controlWeight` λ ≠ 1, ProRAG's
 * format-aware form λ·(−log P(type of a* | s)) + (−log P(a* | its type, s)) (identical at λ = 1).
 */
export function trainSft(policy: GymPolicy, data: readonly StateAction[], config: Partial<OfflineConfig> = {}, onLog?: (e: LogEntry) => void, onEpoch?: OnEpoch): LogEntry[] {
  const cfg = { ...OFFLINE_DEFAULTS, ...config };
  if (!(cfg.controlWeight >= 0) || !Number.isFinite(cfg.controlWeight)) throw new Error(`controlWeight must be a finite number ≥ 0, got ${cfg.controlWeight}`);
  const demos = toDemonstrations(policy, data);
  return offlineLoop(policy, demos, cfg, (b, g) => controlSftLoss(policy.model, b, cfg.controlWeight, g), onLog, onEpoch);
}

/**
 * Pair accuracy of a policy head on step pairs: the mean over pairs of 1 where the chosen step has the
 * higher log-probability, 0 where the rejected one has, 0.5 on a tie ({@link pairCredit}, as the PRM's
 * pair accuracy counts); 0 for no pairs.
 */
export function stepPairAccuracy(model: ScoreModel, pairs: readonly StepPair[]): number {
  return pairs.length ? mean(pairs.map((p) => pairCredit(logProb(model, p.choice, p.chosen), logProb(model, p.choice, p.rejected)))) : 0;
}

/**
 * Step-level DPO against the policy as it was before training (or reference-free). Each log entry
 * carries `pairAccuracy`: the share of pairs whose chosen step the policy gives the higher
 * log-probability, a tie counting 0.5 as in the PRM's pair accuracy ({@link pairCredit}), so that the
 * untrained policy (all weights zero: every candidate equally likely) starts at 0.5, not 0.
 */
export function trainDpo(policy: GymPolicy, data: readonly StatePair[], config: Partial<OfflineConfig> = {}, onLog?: (e: LogEntry) => void, onEpoch?: OnEpoch): LogEntry[] {
  const cfg = { ...OFFLINE_DEFAULTS, ...config };
  const pairs = toStepPairs(policy, data, cfg.referenceFree);
  return offlineLoop(
    policy,
    pairs,
    cfg,
    (b, g) => stepDpoLoss(policy.model, b, cfg.beta, g),
    (e) => {
      e['pairAccuracy'] = stepPairAccuracy(policy.model, pairs);
      onLog?.(e);
    },
    onEpoch,
  );
}

// ------------------------------------------------------------------------------------ online RL

/** Settings of {@link trainRl}; {@link rlDefaults} gives each algorithm's. */
export interface RlConfig extends ClipOptions {
  algo: RlAlgo;
  /** Passes over the training questions. */
  epochs: number;
  /** Questions per update batch (groups). */
  questionsPerBatch: number;
  /** G: episodes per question. */
  groupSize: number;
  /** μ: gradient steps per batch of samples (1: strictly on-policy). */
  updatesPerBatch: number;
  lr: number;
  l2: number;
  seed: number;
  /** Sampling temperature of the rollouts. */
  temperature: number;
  /** Outcome reward scheme (an expression of rewards/schemes.ts). */
  reward: string;
  /** `k=v` options of the reward schemes (as `ragtrail reward --option`), for every stage. */
  rewardOptions: string[];
  /** LWS: the stage-2 scheme and the share of training after which it replaces `reward`. */
  stage2Reward?: string;
  stageSwitch: number;
  /** DAPO: drop groups whose rewards are all equal, drawing further questions to fill the batch. */
  dynamicSampling: boolean;
  /** ProRAG: weight of the step advantage. */
  w: number;
  /** ProRAG: step reward form (code: sigmoid(PRM) ± format; spec: PRM + λ_f·format) and λ_f. */
  stepForm: ProragForm;
  lambdaF: number;
}

/**
 * Defaults of an RL algorithm: all take 3 epochs of 16 questions × 8 episodes, 2 updates per
 * batch, T = 1. grpo: clip 0.2, k3 KL β = 0.04, per-episode averaging, EM reward. dapo: clip 0.2/0.28,
 * no
 * KL, per-step averaging, dynamic sampling. lws: dapo with β = 1e-4 and the staged LWS rewards.
 * prorag:
 * grpo's settings with the prorag-outcome reward and PRM step advantages (w = 0.3).
 */
export function rlDefaults(algo: RlAlgo): RlConfig {
  const base = { algo, epochs: 3, questionsPerBatch: 16, groupSize: 8, updatesPerBatch: 2, lr: 0.05, l2: 1e-4, seed: 0, temperature: 1, tau: 1, kl: 'k3' as const, stageSwitch: 0.5, w: 0.3, rewardOptions: [], stepForm: 'code' as const, lambdaF: 1 };
  switch (algo) {
    case 'grpo':
      return { ...base, epsLow: 0.2, epsHigh: 0.2, beta: 0.04, aggregate: 'sequence', reward: 'em', dynamicSampling: false };
    case 'dapo':
      return { ...base, epsLow: 0.2, epsHigh: 0.28, beta: 0, aggregate: 'token', reward: 'em', dynamicSampling: true };
    case 'lws':
      // LWS trains with verl's KL loss (low-variance form, k3) at 1e-4 (its released training setup);
      // DAPO itself has none.
      return { ...base, epsLow: 0.2, epsHigh: 0.28, beta: 1e-4, aggregate: 'token', reward: 'lws-stage1', stage2Reward: 'lws-stage2', dynamicSampling: true };
    case 'prorag':
      return { ...base, epsLow: 0.2, epsHigh: 0.2, beta: 0.04, aggregate: 'sequence', reward: 'prorag-outcome', dynamicSampling: false };
  }
}

/**
 * ARENA's GRPO on the gym policy (ARENA §3.2–3.3 and the authors' released settings): reward scheme
 * `arena` (format + accuracy + relevance + bonus 10), k2 KL estimator at β = 0.04, 7 episodes per
 * question; the rest as `rlDefaults('grpo')`.
 * `relevance: false` is the control without the relevance reward (`relevance_weight=0`: relevance is
 * neither in the sum nor in the bonus condition). Spread it into `trainRl`'s config and override what
 * you like: `trainRl(policy, ctx, { ...arenaGrpoConfig(), epochs: 3, seed })`.
 */
export function arenaGrpoConfig(opts: { relevance?: boolean } = {}): Partial<RlConfig> & { algo: 'grpo' } {
  return { algo: 'grpo', reward: 'arena', rewardOptions: opts.relevance === false ? ['relevance_weight=0'] : [], kl: 'k2', beta: 0.04, groupSize: 7 };
}

/** What {@link trainRl} trains on: the environment, the training questions, and the PRM (prorag) or embedder its rewards need. */
export interface RlContext {
  env: RagEnv;
  questions: readonly Question[];
  /** ProRAG: the process reward model scoring each step. */
  prm?: PRM;
  /** Embedder of reward schemes that embed (LWS's query similarity); default the lexical hash:512. */
  embedder?: Embedder;
  /** The LLM judge of `judge` and `correct=judge` rewards (LWS trains with one). */
  judge?: Judge;
  /** Called with each batch's log entry as it is made (loss, mean reward and EM, groups kept and dropped, ratio statistics). */
  onLog?: (e: LogEntry) => void;
}

interface Group {
  episodes: Episode[];
  rewards: number[];
  advantages: number[][];
}

/**
 * ProRAG's step rewards of an episode: the PRM's output for each step plus the step-format term —
 * code form sigmoid(PRM logit) + (+1 / −2), spec form PRM + λ_f·1[schema] (ProRAG eq. 5;
 * rewards/prorag.ts).
 */
export async function proragStepScores(prm: PRM, ep: Episode, form: ProragForm = 'code', lambdaF = 1): Promise<number[]> {
  const raw = await episodePrmScores(prm, ep);
  // Decision k is the episode's step k.
  return proragStepRewards({ steps: ep.trajectory.steps.slice(0, raw.length) }, raw, form, lambdaF);
}

/**
 * The PRM's output (a logit for the trained PRM) for each step of an episode, in the state it was taken
 * in; the candidate's text is the step as the episode wrote it (decision k is the episode's step k).
 */
export async function episodePrmScores(prm: PRM, ep: Episode): Promise<number[]> {
  const out: number[] = [];
  for (const [k, d] of ep.decisions.entries()) {
    const c = d.choice.candidates[d.action]!;
    out.push((await prm.score(d.state, [{ action: c.action, raw: ep.trajectory.steps[k]?.raw ?? '' }]))[0]!);
  }
  return out;
}

/**
 * Online RL of the gym policy in place: per batch, G episodes per question, rewards by the scheme,
 * group-normalised advantages (ProRAG: dual-granularity with PRM step rewards), then clipped
 * policy-gradient updates with Adam, KL to a frozen copy of the starting policy when β > 0. Seeded and
 * deterministic; returns one log entry per batch. Writes nothing.
 */
export async function trainRl(policy: GymPolicy, ctx: RlContext, config: Partial<RlConfig> & { algo: RlAlgo }, onEpoch?: OnEpoch): Promise<LogEntry[]> {
  const cfg: RlConfig = { ...rlDefaults(config.algo), ...config };
  // ρ = π_θ/π_old must compare one distribution: π_old was recorded at the sampling temperature
  // (greedy rollouts record τ = 1), so the new log-probabilities are taken at that temperature too.
  cfg.tau = cfg.temperature > 0 ? cfg.temperature : 1;
  if (cfg.algo === 'prorag' && !ctx.prm) throw new Error('prorag needs a PRM for the step rewards');
  if (ctx.questions.length === 0) throw new Error('no training questions');
  const rng = new Rng(cfg.seed);
  const reference = policy.clone('reference');
  const adam = new Adam(policy.model.params, cfg.lr, cfg.l2);
  const embedder: Embedder = ctx.embedder ?? (await createEmbedder('hash:512'));
  const schemes = new Map<string, ComposedScheme>();
  const scheme = (expr: string) => schemes.get(expr) ?? (schemes.set(expr, composeScheme(expr, cfg.rewardOptions)), schemes.get(expr)!);
  // Check every stage's scheme and options before the first rollout.
  scheme(cfg.reward);
  if (cfg.stage2Reward) scheme(cfg.stage2Reward);

  const totalBatches = cfg.epochs * Math.ceil(ctx.questions.length / cfg.questionsPerBatch);
  const log: LogEntry[] = [];
  let batchNo = 0;
  for (let epoch = 0; epoch < cfg.epochs; epoch++) {
    const order = ctx.questions.map((_, i) => i);
    rng.shuffle(order);
    let cursor = 0;
    while (cursor < order.length) {
      const rewardExpr = cfg.stage2Reward && batchNo >= cfg.stageSwitch * totalBatches ? cfg.stage2Reward : cfg.reward;
      const groups: Group[] = [];
      let drawn = 0;
      let dropped = 0;
      const sampledRewards: number[] = [];
      const sampledEm: number[] = [];
      let decisions = 0;
      // Fill the batch; dynamic sampling keeps drawing questions (within this epoch) past uninformative groups.
      while (groups.length < cfg.questionsPerBatch && cursor < order.length) {
        const q = ctx.questions[order[cursor++]!]!;
        drawn++;
        const episodes: Episode[] = [];
        for (let g = 0; g < cfg.groupSize; g++) episodes.push(await sampleEpisode(ctx.env, policy, q, cfg.temperature, `${cfg.seed}/${batchNo}/${g}`));
        const rewards: number[] = [];
        for (const ep of episodes) rewards.push((await scheme(rewardExpr).compute({ ...contextFor(ep.trajectory, {}), embedder, judge: ctx.judge })).total);
        sampledRewards.push(...rewards);
        sampledEm.push(...episodes.map((e) => e.trajectory.metrics?.em ?? 0));
        decisions += episodes.reduce((n, e) => n + e.decisions.length, 0);
        let advantages: number[][];
        if (cfg.algo === 'prorag') {
          const steps = await Promise.all(episodes.map((e) => proragStepScores(ctx.prm!, e, cfg.stepForm, cfg.lambdaF)));
          advantages = dualGranularityAdvantages(
            episodes.map((e, i) => ({ outcome: rewards[i]!, stepRewards: steps[i]!, tokenSteps: e.decisions.map((_, k) => k) })),
            { w: cfg.w },
          ).map((a) => a.advantages);
        } else {
          const a = grpoAdvantages(rewards);
          advantages = episodes.map((e, i) => e.decisions.map(() => a[i]!));
        }
        const informative = advantages.some((a) => a.some((x) => x !== 0));
        if (cfg.dynamicSampling && !informative) {
          dropped++;
          continue;
        }
        groups.push({ episodes, rewards, advantages });
      }
      const samples: SampledStep[][] = groups.flatMap((g) =>
        g.episodes.map((ep, i) =>
          ep.decisions.map((d, k) => ({ choice: d.choice, action: d.action, logpOld: d.logp, logpRef: cfg.beta > 0 ? logProb(reference.model, d.choice, d.action, cfg.tau) : undefined, advantage: g.advantages[i]![k]! })),
        ),
      );
      let loss = 0;
      const first: RatioStats = { ratio: 0, clipped: 0 };
      for (let u = 0; u < cfg.updatesPerBatch && samples.length > 0; u++) {
        const grad = new Float64Array(policy.model.params.length);
        const l = clippedPolicyLoss(policy.model, samples, cfg, grad, u === 0 ? first : undefined);
        if (u === 0) loss = l;
        adam.step(grad);
      }
      batchNo++;
      // ratio: mean ρ at the batch's first update (1 on-policy); clipped: share of steps outside the clip.
      const entry: LogEntry = { step: batchNo, loss, reward: mean(sampledRewards), em: mean(sampledEm), groups: groups.length, dropped, questions: drawn, decisions, ratio: first.ratio, clipped: first.clipped };
      log.push(entry);
      ctx.onLog?.(entry);
    }
    onEpoch?.(epoch + 1);
  }
  return log;
}
