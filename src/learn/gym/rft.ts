/**
 * ProRAG's PRM-guided reasoning refinement (ProRAG §3.3): step-level rejection-sampling
 * fine-tuning of the gym policy between the warm-up SFT and RL.
 *
 *   1. sample K episodes per training question from the current policy (temperature T);
 *   2. keep the correct ones — EM (the authors' filter_em), or F1 ≥ a threshold;
 *   3. score every step with the PRM in the state it was taken in, read as a logit through the sigmoid
 *      (the authors' filter_prm keeps logit ≥ 0, i.e. sigmoid ≥ 0.5): a step passes when
 *      sigmoid(PRM) ≥ `threshold`;
 *   4. `filter: 'step'` (default: the paper's wording — a (context, action) pair is kept iff its score
 *      passes — and the authors' code, which filter pairs one by one): keep each passing step of every
 *      correct episode; `filter: 'episode'` (a strict reading: whole trajectories whose every step
 *      passes): keep the steps of correct episodes whose every step passes. With a weak PRM the episode
 *      filter keeps almost only one-step episodes (k steps pass together with probability ~p^k), so RFT
 *      then teaches answering without searching: measured in the ProRAG recipe (README, Papers);
 *   5. SFT on the kept pairs (trainSft, so `controlWeight` applies as in the warm-up).
 *
 * Sampling is seeded per (seed, question, sample), so a run is deterministic for a seed.
 */
import type { Question } from '../../core/types.js';
import type { RagEnv } from '../../env/env.js';
import type { PRM } from '../../prm/types.js';
import { sigmoid } from '../../rewards/prorag.js';
import type { StateAction } from './data.js';
import type { GymPolicy } from './policy.js';
import { type Episode, sampleEpisode } from './rollout.js';
import { episodePrmScores, type LogEntry, OFFLINE_DEFAULTS, type OfflineConfig, trainSft } from './train.js';

/**
 * Which steps of correct episodes RFT keeps: each step that passes the PRM ('step'), or all steps of
 * episodes whose every step passes ('episode'); see the module header.
 */
export type RftFilter = 'episode' | 'step';

/** Settings of ProRAG's PRM-filtered rejection-sampling fine-tuning; defaults in {@link RFT_DEFAULTS}. */
export interface RftConfig extends OfflineConfig {
  /** K: episodes sampled per training question. */
  samples: number;
  /** Sampling temperature of the episodes (the authors' code samples at 0.8). */
  temperature: number;
  /** A step passes when sigmoid(PRM output) ≥ this (0.5: the authors' logit ≥ 0). */
  threshold: number;
  /** What counts as a correct episode: exact match, or F1 ≥ `f1Threshold`. */
  correct: 'em' | 'f1';
  f1Threshold: number;
  filter: RftFilter;
}

/**
 * K = 4 samples per question at T = 0.8 (the authors' code), EM correctness, steps kept when
 * sigmoid(PRM) ≥ 0.5, filtered step by step; SFT as {@link OFFLINE_DEFAULTS}.
 */
export const RFT_DEFAULTS: RftConfig = { ...OFFLINE_DEFAULTS, samples: 4, temperature: 0.8, threshold: 0.5, correct: 'em', f1Threshold: 0.5, filter: 'step' };

/** What {@link trainRft} samples and filters with. */
export interface RftContext {
  env: RagEnv;
  /** The training questions (with their gold answers). */
  questions: readonly Question[];
  /** The process reward model whose scores filter the steps (its output read as a logit). */
  prm: PRM;
  /** Receives the SFT trainer's log entries. */
  onLog?: (e: LogEntry) => void;
}

/** What happened to one sampled episode. */
export interface RftVerdict {
  questionId: string;
  /** Which of the K samples of its question. */
  sample: number;
  correct: boolean;
  /** sigmoid(PRM) of each step (scored for correct episodes only; [] otherwise). */
  scores: number[];
  /** Indices of the steps kept for SFT. */
  keptSteps: number[];
}

/** Tallies of one RFT round: what was sampled, what was correct, what was kept. */
export interface RftCounts {
  questions: number;
  /** Episodes sampled (questions × K). */
  sampled: number;
  correct: number;
  /** Episodes that gave at least one kept step (filter 'episode': the episodes kept whole). */
  kept: number;
  /** (state, action) pairs kept for SFT. */
  keptSteps: number;
  /** Questions with at least one kept step. */
  keptQuestions: number;
}

/**
 * What an RFT round did: the SFT log, counts of sampled, correct and kept episodes and steps, each
 * episode's verdict, and the kept data.
 */
export interface RftResult {
  /** The SFT log (its step-0 entry carries the counts); empty when nothing was kept and nothing trained. */
  log: LogEntry[];
  counts: RftCounts;
  verdicts: RftVerdict[];
  /** The kept demonstrations the policy was fine-tuned on. */
  data: StateAction[];
}

function isCorrect(ep: Episode, cfg: RftConfig): boolean {
  const m = ep.trajectory.metrics;
  if (!m) return false;
  return cfg.correct === 'em' ? m.em === 1 : m.f1 >= cfg.f1Threshold;
}

/** The steps of an episode kept by the filter, given whether it is correct and its steps' sigmoid scores. */
export function rftKeptSteps(correct: boolean, scores: readonly number[], threshold: number, filter: RftFilter): number[] {
  if (!correct) return [];
  const passing = scores.flatMap((s, k) => (s >= threshold ? [k] : []));
  if (filter === 'step') return passing;
  return passing.length === scores.length ? passing : [];
}

/** Steps 1–4: sample, judge and select; the policy is not changed. */
export async function rftSelect(policy: GymPolicy, ctx: Omit<RftContext, 'onLog'>, config: Partial<RftConfig> = {}): Promise<Omit<RftResult, 'log'>> {
  const cfg: RftConfig = { ...RFT_DEFAULTS, ...config };
  if (!Number.isInteger(cfg.samples) || cfg.samples < 1) throw new Error(`rft: samples must be a whole number ≥ 1, got ${cfg.samples}`);
  if (ctx.questions.length === 0) throw new Error('rft: no training questions');
  const verdicts: RftVerdict[] = [];
  const data: StateAction[] = [];
  for (const q of ctx.questions) {
    for (let k = 0; k < cfg.samples; k++) {
      const ep = await sampleEpisode(ctx.env, policy, q, cfg.temperature, `${cfg.seed}/rft/${k}`);
      const correct = isCorrect(ep, cfg);
      const scores = correct ? (await episodePrmScores(ctx.prm, ep)).map(sigmoid) : [];
      const keptSteps = rftKeptSteps(correct, scores, cfg.threshold, cfg.filter);
      for (const s of keptSteps) {
        const d = ep.decisions[s]!;
        data.push({ state: d.state, action: d.choice.candidates[d.action]!.action, questionId: q.id });
      }
      verdicts.push({ questionId: q.id, sample: k, correct, scores, keptSteps });
    }
  }
  const keptBy = verdicts.filter((v) => v.keptSteps.length > 0);
  const counts: RftCounts = {
    questions: ctx.questions.length,
    sampled: verdicts.length,
    correct: verdicts.filter((v) => v.correct).length,
    kept: keptBy.length,
    keptSteps: data.length,
    keptQuestions: new Set(keptBy.map((v) => v.questionId)).size,
  };
  return { counts, verdicts, data };
}

/**
 * RFT: samples from the policy, keeps what passes (see the header), and fine-tunes the same policy on
 * it with SFT. When nothing passes the policy is left as it was and the log is empty.
 */
export async function trainRft(policy: GymPolicy, ctx: RftContext, config: Partial<RftConfig> = {}): Promise<RftResult> {
  const cfg: RftConfig = { ...RFT_DEFAULTS, ...config };
  const selected = await rftSelect(policy, ctx, cfg);
  if (selected.data.length === 0) return { ...selected, log: [] };
  const { questions, sampled, correct, kept, keptSteps } = selected.counts;
  const log = trainSft(policy, selected.data, cfg, (e) => {
    if (e.step === 0) Object.assign(e, { questions, sampled, correct, kept, keptSteps });
    ctx.onLog?.(e);
  });
  return { ...selected, log };
}
