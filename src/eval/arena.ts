/**
 * ARENA's evaluation as its code computes it (ren258/ARENA @53f9569e), for reproducing the numbers it
 * reports (`compat=authors`): the rule-based means of src/evaluate.py (`eval_jsonl_rulebase`: EM, F1,
 * format, accuracy, relevance, bonus) and the LLM-judge accuracy of src/gpt_eval.py, with their answer
 * normalisation, F1 and judge-reply parse. ragtrail's own scoring (eval/score.ts, rewards/judge.ts) differs
 * on purpose; test/fixtures/parity-rl/arena_{f1,eval_averages,judge_parse}/SOURCE.md list where.
 */
import { PyError } from '../core/pyjson.js';
import { pyLower, pySplit } from '../core/text.js';
import { arenaAuthorsExtract, arenaAuthorsRewards, arenaNormalize } from '../rewards/arena.js';
import { tokenF1 } from '../core/metrics.js';

/** `exact_match_score`: 1 when the prediction normalises (ARENA's `normalize_answer`) like some gold answer. */
export function arenaAuthorsExactMatch(prediction: string, golds: readonly string[]): number {
  const p = arenaNormalize(prediction);
  return golds.some((g) => arenaNormalize(g) === p) ? 1 : 0;
}

/**
 * `f1_score`: the best token F1 over the gold answers after ARENA's normalisation (punctuation becomes a
 * space, "_" too). Unlike SQuAD / HotpotQA's F1 there is no yes/no/noanswer rule, and a pair with no token
 * in common (two empty texts included) scores 0; no gold answers score 0.
 */
export function arenaAuthorsF1(prediction: string, golds: readonly string[]): number {
  const p = pySplit(arenaNormalize(prediction));
  return golds.reduce((best, g) => Math.max(best, tokenF1(p, pySplit(arenaNormalize(g))).f1), 0);
}

/**
 * `get_score` of a judge's reply, lower-cased (Python's `str.lower`): 1 when "yes" occurs anywhere in it
 * (so "yesterday" and "eyes" count), else 0 when "no" does ("not", "know", "None"), else 0.5. `variant:
 * 'reward'` is src/rewards.py's copy (its LLM-judge reward, commented out in training), which first looks
 * at how the reply starts: "no, yes" is 0 there and 1 in the evaluation. A missing reply (`None`, what
 * `openai_call` returns after 30 failed calls) raises AttributeError, as `None.lower()` does.
 */
export function arenaAuthorsJudgeScore(reply: string | null, variant: 'eval' | 'reward' = 'eval'): number {
  if (reply === null) throw new PyError("'NoneType' object has no attribute 'lower'", 'AttributeError');
  const r = pyLower(reply);
  if (variant === 'reward') {
    if (r.startsWith('yes')) return 1;
    if (r.startsWith('no')) return 0;
  }
  return r.includes('yes') ? 1 : r.includes('no') ? 0 : 0.5;
}

/** One line of ARENA's prediction file (`results/vllm_inference_results/<name>/<run>.jsonl`) as parsed JSON. */
export interface ArenaPredictionItem {
  prompt?: unknown;
  model_response?: unknown;
  answers?: readonly string[];
  supporting_ids?: readonly unknown[];
}

/** `eval_jsonl_rulebase`'s output: the means over the scored items and each one's six scores. */
export interface ArenaRulebaseReport {
  total: number;
  em_score: number;
  f1_score: number;
  format_score: number;
  accuracy_score: number;
  relevance_score: number;
  bonus_score: number;
  /** Per scored item: em, f1, format, accuracy, relevance, bonus. */
  details: number[][];
}

/** Python's name of a JSON value's type, as its error messages give it. */
function pyTypeName(v: unknown): string {
  if (v === null || v === undefined) return 'NoneType';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (typeof v === 'string') return 'str';
  return Array.isArray(v) ? 'list' : 'dict';
}

/** `re.search(pattern, x)` on a non-string raises before anything is extracted. */
function requireStr(x: unknown): string {
  if (typeof x !== 'string') throw new PyError(`expected string or bytes-like object, got '${pyTypeName(x)}'`, 'TypeError');
  return x;
}

function keyOf<T>(item: object, key: string): T {
  if (!Object.hasOwn(item, key)) throw new PyError(`'${key}'`, 'KeyError');
  return (item as Record<string, T>)[key]!;
}

/**
 * `eval_jsonl_rulebase` (src/evaluate.py): the numbers `run_evaluate_rulebase.sh` reports for one dataset.
 * An item whose `model_response` is null is skipped — left out of the denominator, not scored 0 — and each
 * metric is the plain mean over the rest (summed in file order, no rounding). A missing `supporting_ids`
 * is []; a missing `prompt`, `answers` or `model_response` key raises KeyError, a non-string response
 * TypeError, and a file with nothing scored ZeroDivisionError, as the script does.
 */
export function arenaAuthorsRulebaseReport(items: readonly ArenaPredictionItem[], bonus = 10): ArenaRulebaseReport {
  const sums = [0, 0, 0, 0, 0, 0];
  const details: number[][] = [];
  for (const item of items) {
    const prediction = keyOf<unknown>(item, 'model_response');
    if (prediction === null) continue;
    const golds = keyOf<readonly string[]>(item, 'answers');
    const support = item.supporting_ids ?? [];
    const answer = arenaAuthorsExtract(requireStr(prediction)).answer;
    const r = arenaAuthorsRewards(prediction as string, golds, support, bonus);
    const row = [arenaAuthorsExactMatch(answer, golds), arenaAuthorsF1(answer, golds), r.format, r.accuracy, r.relevance, r.bonus];
    keyOf<unknown>(item, 'prompt');
    details.push(row);
    row.forEach((x, i) => (sums[i]! += x));
  }
  if (details.length === 0) throw new PyError('division by zero', 'ZeroDivisionError');
  const [em, f1, format, accuracy, relevance, b] = sums.map((s) => s / details.length) as [number, number, number, number, number, number];
  return { total: details.length, em_score: em, f1_score: f1, format_score: format, accuracy_score: accuracy, relevance_score: relevance, bonus_score: b, details };
}

/** What src/gpt_eval.py writes: the judge's scores summed, counted, averaged, and each item's score. */
export interface ArenaJudgeReport {
  correct: number;
  total: number;
  accuracy: number;
  scores: number[];
}

/**
 * The LLM-judge accuracy of src/gpt_eval.py (its `__main__`): over the first `limit` items (a Python
 * slice, so a negative limit drops items from the end), the answer inside <answer>…</answer> is sent to the
 * judge with the gold answers, and the reply scored by {@link arenaAuthorsJudgeScore}. An empty answer
 * scores 0 without a call; any error on an item (no `model_response` or `answers` key, a null response, a
 * null reply) scores 0 too, and every item counts in the denominator. accuracy = Σ scores / items, so a
 * reply with neither yes nor no adds 0.5; no items raise ZeroDivisionError. `judge` gets the extracted
 * answer and the item's `answers` and returns the reply (null for the authors' failed call).
 */
export async function arenaAuthorsJudgeAccuracy(
  items: readonly Record<string, unknown>[],
  judge: (answer: string, answers: unknown) => Promise<string | null> | string | null,
  limit = 10_000_000,
): Promise<ArenaJudgeReport> {
  const scores: number[] = [];
  let correct = 0;
  for (const item of items.slice(0, limit)) {
    let score: number;
    try {
      const answer = arenaAuthorsExtract(requireStr(keyOf<unknown>(item, 'model_response'))).answer;
      score = answer === '' ? 0 : arenaAuthorsJudgeScore(await judge(answer, keyOf<unknown>(item, 'answers')));
    } catch (e) {
      if (!(e instanceof PyError)) throw e;
      score = 0;
    }
    scores.push(score);
    correct += score;
  }
  if (scores.length === 0) throw new PyError('division by zero', 'ZeroDivisionError');
  return { correct, total: scores.length, accuracy: correct / scores.length, scores };
}
