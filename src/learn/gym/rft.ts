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
import { type PrmDtype, roundToDtype, sigmoid } from '../../rewards/prorag.js';
import { pyLower, pyStrip } from '../../core/text.js';
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
  return { counts: rftCounts(ctx.questions.length, verdicts), verdicts, data };
}

/** The tallies of an RFT round from its verdicts (any policy's: the gym's, or a served model's). */
export function rftCounts(questions: number, verdicts: readonly RftVerdict[]): RftCounts {
  const keptBy = verdicts.filter((v) => v.keptSteps.length > 0);
  return {
    questions,
    sampled: verdicts.length,
    correct: verdicts.filter((v) => v.correct).length,
    kept: keptBy.length,
    keptSteps: verdicts.reduce((n, v) => n + v.keptSteps.length, 0),
    keptQuestions: new Set(keptBy.map((v) => v.questionId)).size,
  };
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

// ------------------------------------------------------------------------------ authors' code
// ProRAG's RFT filters (prorag/rft/filter_em.py and filter_prm.py, lilinwz/ProRAG @c7a6411), for
// `--option compat=authors` and the parity sets. They work on the text episodes of the authors' scripts, not
// on the gym's; where ragtrail's own filter (above) differs on purpose:
//   - correctness: the authors compare `final_answer.lower() == answer.lower()` (no normalisation, one gold
//     string; an episode without an answer has the final answer "Max hops reached"); ragtrail uses the
//     normalised EM (or F1) of its metrics against every gold answer;
//   - the PRM test: the authors keep a step whose logit, read from a bfloat16 model, is >= 0; ragtrail keeps
//     sigmoid(score) >= threshold in float64 (sigmoid(−1e-17) is 0.5 in float64: kept here, not there).

/** One step of an authors' RFT episode: the prompt the model saw and what it wrote. */
export interface ProragAuthorsRftStep {
  input: string;
  output: string;
}

/** An episode of filter_em.py: its steps, the final answer it scores, whether it matched, and what is kept. */
export interface ProragAuthorsEmEpisode {
  steps: ProragAuthorsRftStep[];
  finalAnswer: string;
  em: boolean;
  /** Every step when `em`, none otherwise. */
  kept: ProragAuthorsRftStep[];
}

/**
 * filter_em.py `main` for one sample: `prompt` is its first prompt, `outputs[k]` what the model wrote at hop k
 * ("" past the end), `search` the retriever. A hop whose text contains "</answer>" ends the episode (its first
 * <answer>…</answer>, stripped, is the final answer); one with "</subquery>" searches its first
 * <subquery>…</subquery> (stripped; an empty result reads "No relevant documents found.", an unparsable query
 * "Error in query parsing"); any other hop opens a new step. At most `maxIter` hops (13 in the script).
 */
export function proragAuthorsEmEpisode(prompt: string, outputs: readonly string[], search: (query: string) => string, gold: string, maxIter = 13): ProragAuthorsEmEpisode {
  const steps: ProragAuthorsRftStep[] = [];
  let finalAnswer = '';
  for (let hop = 0; hop < maxIter; hop++) {
    const text = outputs[hop] ?? '';
    steps.push({ input: prompt, output: text });
    prompt += text;
    if (text.includes('</answer>')) {
      const m = /<answer>([\s\S]*?)<\/answer>/u.exec(text);
      if (m) finalAnswer = pyStrip(m[1]!);
      break;
    }
    if (text.includes('</subquery>')) {
      const m = /<subquery>([\s\S]*?)<\/subquery>/u.exec(text);
      if (!m) prompt += '\n<retrieval>Error in query parsing</retrieval>\n<step>\n';
      else {
        const docs = search(pyStrip(m[1]!));
        prompt += `\n<retrieval>\n${pyStrip(docs) ? docs : 'No relevant documents found.'}\n</retrieval>\n<step>\n`;
      }
    } else prompt += '\n<step>\n';
  }
  if (!finalAnswer) finalAnswer = 'Max hops reached';
  const em = pyLower(finalAnswer) === pyLower(gold);
  return { steps, finalAnswer, em, kept: em ? steps : [] };
}

/** One (input, output) step for {@link proragAuthorsPrmFilter}, with the fields it carries. */
export interface ProragAuthorsPrmItem {
  input: string;
  output: string;
  [field: string]: unknown;
}

/**
 * filter_prm.py `main`: the steps it appends to the output file, each with its `prm_score` (the logit as the
 * model returned it, in its dtype). Steps whose input + output is already in the output file (`existing`) are
 * skipped; the rest are scored in batches of `batchSize` and kept when the score is >= 0 (−0 is; NaN is not).
 * As in the script, the last partial batch is scored only when the file's last step is not a skipped one: when
 * it is, the steps of that batch are dropped. `logit(i)` is the model's logit for step i.
 */
export function proragAuthorsPrmFilter(items: readonly ProragAuthorsPrmItem[], existing: readonly ProragAuthorsPrmItem[], batchSize: number, logit: (i: number) => number, dtype: PrmDtype = 'bfloat16'): ProragAuthorsPrmItem[] {
  const seen = new Set(existing.map((it) => it.input + it.output));
  const written: ProragAuthorsPrmItem[] = [];
  let batch: number[] = [];
  items.forEach((item, i) => {
    if (seen.has(item.input + item.output)) return;
    batch.push(i);
    if (batch.length === batchSize || i === items.length - 1) {
      for (const j of batch) {
        const score = roundToDtype(logit(j), dtype);
        if (score >= 0) written.push({ ...items[j]!, prm_score: score });
      }
      batch = [];
    }
  });
  return written;
}
