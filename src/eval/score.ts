/**
 * Scoring a prediction set against a dataset, the way the official HotpotQA script does it: every
 * question of the dataset counts, and a question without a prediction scores 0.
 */
import type { Question } from '../core/types.js';
import { type AnswerScores, type NormalizeOptions, scoreAnswer } from './metrics.js';
import type { Predictions } from './predictions.js';
import { bootstrapCI, type BootstrapOptions, type MeanCI, pairedBootstrap, pairedTTest, type PairedBootstrap, type PairedTTest } from './stats.js';

/** The answer metrics every score report carries: exact match, token F1 and accuracy (cover match). */
export const ANSWER_METRICS = ['em', 'f1', 'acc'] as const;
/** One of {@link ANSWER_METRICS}. */
export type AnswerMetric = (typeof ANSWER_METRICS)[number];

/** One question's scores in a {@link ScoreReport}; `missing` (and scored 0) when the predictions have no answer for it. */
export interface QuestionScore extends AnswerScores {
  id: string;
  missing: boolean;
}

/**
 * Scores of a prediction set against a dataset: per-question EM/F1/Acc, their means with 95% bootstrap
 * CIs (by default), and which ids were missing or unknown.
 */
export interface ScoreReport {
  n: number;
  means: Record<AnswerMetric, number>;
  ci: Record<AnswerMetric, MeanCI>;
  perQuestion: QuestionScore[];
  /** Dataset questions with no prediction (scored 0). */
  missing: string[];
  /** Prediction ids that are not in the dataset (ignored). */
  unknown: string[];
}

/**
 * Scores predictions as the official HotpotQA script does: every dataset question counts, one without
 * a
 * prediction scores 0, predictions for unknown ids are ignored (and listed).
 */
export function scorePredictions(questions: readonly Question[], predictions: Predictions, opts: NormalizeOptions & BootstrapOptions = {}): ScoreReport {
  const perQuestion: QuestionScore[] = [];
  const missing: string[] = [];
  const known = new Set<string>();
  for (const q of questions) {
    known.add(q.id);
    const pred = predictions.get(q.id);
    if (pred === undefined) {
      missing.push(q.id);
      perQuestion.push({ id: q.id, em: 0, f1: 0, acc: 0, missing: true });
    } else {
      perQuestion.push({ id: q.id, ...scoreAnswer(pred, q.answers, q.choices, opts), missing: false });
    }
  }
  const unknown = [...predictions.keys()].filter((id) => !known.has(id));
  const ci = {} as Record<AnswerMetric, MeanCI>;
  const means = {} as Record<AnswerMetric, number>;
  for (const m of ANSWER_METRICS) {
    ci[m] = bootstrapCI(perQuestion.map((s) => s[m]), opts);
    means[m] = ci[m].mean;
  }
  return { n: questions.length, means, ci, perQuestion, missing, unknown };
}

/** System a against system b on one metric: a paired t-test and a paired bootstrap over the same questions. */
export interface PairedComparison {
  metric: AnswerMetric;
  tTest: PairedTTest;
  bootstrap: PairedBootstrap;
}

/** Paired tests of `a` against `b`, question by question (both scored on the same dataset). */
export function comparePaired(a: ScoreReport, b: ScoreReport, opts: BootstrapOptions = {}): PairedComparison[] {
  const bById = new Map(b.perQuestion.map((s) => [s.id, s]));
  const pairs = a.perQuestion.filter((s) => bById.has(s.id));
  return ANSWER_METRICS.map((metric) => {
    const xa = pairs.map((s) => s[metric]);
    const xb = pairs.map((s) => (bById.get(s.id) as QuestionScore)[metric]);
    return { metric, tTest: pairedTTest(xa, xb), bootstrap: pairedBootstrap(xa, xb, opts) };
  });
}
