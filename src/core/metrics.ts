/**
 * Answer metrics exactly as the reference scripts compute them (SQuAD v1.1 / HotpotQA
 * `hotpot_evaluate_v1.py` / FlashRAG's evaluator; ReasonRAG App. D, eq. 8–11). Each takes the maximum
 * over gold answers. In core because rewards, search trees and simulated agents score answers too; eval
 * re-exports them.
 */
import { normalizeAnswer, type NormalizeOptions, pySplit } from './text.js';

export { normalizeAnswer, type NormalizeOptions, pySplit };

function golds(answers: string | readonly string[]): readonly string[] {
  return typeof answers === 'string' ? [answers] : answers;
}

/** EM: 1 when the normalised prediction equals some normalised gold answer. */
export function exactMatch(prediction: string, answers: string | readonly string[], opts?: NormalizeOptions): number {
  const p = normalizeAnswer(prediction, opts);
  return golds(answers).some((g) => normalizeAnswer(g, opts) === p) ? 1 : 0;
}

/** Acc (FlashRAG "acc", cover-EM): 1 when some normalised gold answer is a substring of the normalised prediction. */
export function coverMatch(prediction: string, answers: string | readonly string[], opts?: NormalizeOptions): number {
  const p = normalizeAnswer(prediction, opts);
  return golds(answers).some((g) => p.includes(normalizeAnswer(g, opts))) ? 1 : 0;
}

/** Token-level answer F1 with its precision and recall, each in [0, 1] (SQuAD's answer F1 over normalised tokens). */
export interface F1Result {
  f1: number;
  precision: number;
  recall: number;
}

const SPECIAL = new Set(['yes', 'no', 'noanswer']);

/** Token F1 of two token lists (Counter intersection, as the reference scripts count it). */
export function tokenF1(predTokens: readonly string[], goldTokens: readonly string[]): F1Result {
  const zero = { f1: 0, precision: 0, recall: 0 };
  const counts = new Map<string, number>();
  for (const t of goldTokens) counts.set(t, (counts.get(t) ?? 0) + 1);
  let same = 0;
  for (const t of predTokens) {
    const c = counts.get(t) ?? 0;
    if (c > 0) {
      same++;
      counts.set(t, c - 1);
    }
  }
  if (same === 0) return zero;
  const precision = same / predTokens.length;
  const recall = same / goldTokens.length;
  return { f1: (2 * precision * recall) / (precision + recall), precision, recall };
}

/** Token F1 against one gold answer, with HotpotQA's rule: yes/no/noanswer must match exactly. */
function f1Single(pred: string, gold: string): F1Result {
  if ((SPECIAL.has(pred) || SPECIAL.has(gold)) && pred !== gold) return { f1: 0, precision: 0, recall: 0 };
  return tokenF1(pySplit(pred), pySplit(gold));
}

/** Token-level F1, precision and recall, each maximised over gold answers independently (as FlashRAG does). */
export function f1Score(prediction: string, answers: string | readonly string[], opts?: NormalizeOptions): F1Result {
  const p = normalizeAnswer(prediction, opts);
  const best = { f1: 0, precision: 0, recall: 0 };
  for (const g of golds(answers)) {
    const r = f1Single(p, normalizeAnswer(g, opts));
    best.f1 = Math.max(best.f1, r.f1);
    best.precision = Math.max(best.precision, r.precision);
    best.recall = Math.max(best.recall, r.recall);
  }
  return best;
}

/**
 * The answer metrics of one prediction, each 0 or 1 except F1: exact match, token F1, and accuracy
 * (a normalised gold answer occurs in the normalised prediction).
 */
export interface AnswerScores {
  em: number;
  f1: number;
  acc: number;
}

/**
 * The option a prediction picks among lettered choices: a leading letter ("B", "(B)", "B. Aspirin",
 * "B) …"), else "answer is B" / "option B", else the one option whose text the prediction states (its
 * normalised text equal to, or the only option contained in, the normalised prediction).
 */
export function readChoice(prediction: string, choices: Readonly<Record<string, string>>): string | undefined {
  const letters = Object.keys(choices);
  const isLetter = (x: string | undefined) => (x !== undefined && letters.includes(x.toUpperCase()) ? x.toUpperCase() : undefined);
  const t = prediction.trim();
  const lead = isLetter(/^\(?([A-Za-z])\)?(?:[.):\s]|$)/.exec(t)?.[1]);
  if (lead) return lead;
  const named = isLetter(/\b(?:answer|option|choice)\s*(?:is|:)?\s*\(?([A-Za-z])\)?(?![\w])/i.exec(t)?.[1]);
  if (named) return named;
  const p = normalizeAnswer(t);
  if (!p) return undefined;
  const equal = letters.filter((l) => normalizeAnswer(choices[l]!) === p);
  if (equal.length === 1) return equal[0];
  const inside = letters.filter((l) => {
    const o = normalizeAnswer(choices[l]!);
    return o !== '' && ` ${p} `.includes(` ${o} `);
  });
  return inside.length === 1 ? inside[0] : undefined;
}

/**
 * Multiple-choice scoring (MedQA, as RAG-Gym reports it): 1 when the picked option is the gold letter;
 * EM, F1 and Acc are all that accuracy ("accuracy being considered as both EM and F1").
 */
export function choiceScores(prediction: string, choices: Readonly<Record<string, string>>, gold: string): AnswerScores {
  const right = readChoice(prediction, choices) === gold.trim().toUpperCase() ? 1 : 0;
  return { em: right, f1: right, acc: right };
}

/** The answer metrics of a prediction: by option for multiple choice (`choices` given), else EM, F1 and Acc. */
export function scoreAnswer(prediction: string, answers: string | readonly string[], choices?: Readonly<Record<string, string>>, opts?: NormalizeOptions): AnswerScores {
  const gold = typeof answers === 'string' ? answers : answers[0];
  return choices && gold !== undefined ? choiceScores(prediction, choices, gold) : answerScores(prediction, answers, opts);
}

/** EM, F1 and Acc of one prediction. */
export function answerScores(prediction: string, answers: string | readonly string[], opts?: NormalizeOptions): AnswerScores {
  return {
    em: exactMatch(prediction, answers, opts),
    f1: f1Score(prediction, answers, opts).f1,
    acc: coverMatch(prediction, answers, opts),
  };
}

/**
 * Token F1 as ReasonRAG's labeller computes it (`preference_data_generatoin.py` `compute_f1_multiple_gt`):
 * lowercase, ASCII punctuation removed, whitespace collapsed — articles are kept, unlike SQuAD's
 * normalisation — with the yes/no/noanswer rule, maximised over gold answers.
 */
export function f1KeepingArticles(prediction: string, answers: string | readonly string[]): number {
  const p = normalizeAnswer(prediction, { keepArticles: true });
  return Math.max(...golds(answers).map((g) => f1Single(p, normalizeAnswer(g, { keepArticles: true })).f1));
}
