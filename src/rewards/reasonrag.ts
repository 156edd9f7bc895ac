/**
 * ReasonRAG's terminal reward: the value of a finished rollout, F1 of its answer decayed by the
 * number of steps, F1 · β^step (β 0.95 while searching, as the authors' released code has it). Default
 * mode scores the answer ragtrail's reasonrag protocol parsed; compat=authors reproduces
 * `ReasonRAGPipeline.get_reward` with the module's `extract_answer` (wlzhang2020/ReasonRAG @225e249) and
 * FlashRAG's token F1: the text after "So the answer is", the last single-line <answer>, tag fragments
 * deleted, and the answer cut at its first "." ("St. Louis" → "St").
 */
import { f1Score } from '../core/metrics.js';
import { PyError } from '../core/pyjson.js';
import { pyStrip } from '../core/text.js';

const PREFIX = 'So the answer is';

/** The pipeline's module-level `extract_answer(pred)`. */
export function reasonragAuthorsAnswer(response: string): string {
  let pred = response;
  // str.split(prefix)[1]: the text between the first and a second occurrence.
  if (pred.includes(PREFIX)) pred = pyStrip(pred.split(PREFIX)[1]!);
  // No DOTALL: "." stops at "\n" only (Python), so the class is [^\n], not JS's ".".
  const matches = [...pred.matchAll(/<answer>([^\n]*?)<\/answer>/g)];
  if (matches.length) pred = matches[matches.length - 1]![1]!;
  pred = pred.replace(/<answer[\s\S]*?>[\s\S]*?<\/answer>|<query[\s\S]*?>[\s\S]*?<\/query>|answer>|<answer/g, '');
  return pred.includes('.') ? pyStrip(pred.split('.')[0]!) : pyStrip(pred);
}

/** `get_reward`: FlashRAG token F1 of the extracted answer × β^step. */
export function reasonragAuthorsTerminal(response: string, golds: readonly string[], step: number, beta = 0.95): { reward: number; f1: number; prediction: string } {
  const prediction = reasonragAuthorsAnswer(response);
  const f1 = f1Score(prediction, golds).f1;
  return { reward: f1 * beta ** step, f1, prediction };
}

/** The handlers' `process_text`, applied to a raw model reply before the pipeline stores it as the node's response. */
export function reasonragProcessText(text: string): string {
  // Python's `$` without MULTILINE also matches before a final "\n": (?=\n?$) in JS.
  const next = /So the next (?:query )?is ([\s\S]*?)(?= So the answer is|\n?$)/.exec(text);
  if (next) {
    let content = pyStrip(next[1]!).replace(/[."]+$/, '').replaceAll('"', '');
    if (content.startsWith('\u201c') && content.endsWith('\u201d')) content = content.slice(1, -1);
    if (!/<query>[^\n]*<\/query>/.test(content)) content = `<query>${content}</query>`;
    text = text.replaceAll(next[1]!, () => content);
  }
  // finditer runs over the text as it was before these replacements.
  const source = text;
  for (const m of source.matchAll(/So the answer is ([\s\S]*?)(?= So the answer is|\n?$)/g)) {
    let content = pyStrip(m[1]!).replace(/[."]+$/, '');
    if (content.startsWith('\u201c') && content.endsWith('\u201d')) content = content.slice(1, -1);
    if (!/<answer>[^\n]*<\/answer>/.test(content)) content = `<answer>${content}</answer>`;
    text = text.replaceAll(m[1]!, () => content);
  }
  return text;
}

// Decimal digits added in Unicode 15–17: Node's \p{Nd} has them, Python 3.11's `\d` (Unicode 14) does not
// (every code point compared); the judge parse skips them as the authors' code does.
const NEWER_DIGIT = '\\u{10D40}-\\u{10D49}\\u{116D0}-\\u{116E3}\\u{11BF0}-\\u{11BF9}\\u{11DE0}-\\u{11DE9}\\u{11F50}-\\u{11F59}\\u{16130}-\\u{16139}\\u{16D70}-\\u{16D79}\\u{1CCF0}-\\u{1CCF9}\\u{1E4F0}-\\u{1E4F9}\\u{1E5F1}-\\u{1E5FA}';
const PY_INTEGER = new RegExp(`[+-]?(?:(?![${NEWER_DIGIT}])\\p{Nd})+`, 'gu');
const ND = /\p{Nd}/u;

/** A decimal digit's value: Unicode lays each script's digits out as runs 0–9, so it is the offset in its run, mod 10. */
function digitValue(cp: number): number {
  let start = cp;
  while (ND.test(String.fromCodePoint(start - 1))) start--;
  return (cp - start) % 10;
}

/**
 * ReasonRAG's judge-score parse (`evaluate_thoughts` in pipeline/reasonrag_pipeline.py @225e249:
 * `extract_last_number`, then `float(Q) / 100`): the last run of decimal digits in the reply, with a sign
 * just before it, divided by 100 — not clamped, so "150" is 1.5, "-20" −0.2, "85.5" 0.05 (the digits after
 * the point), and 400 nines Infinity. Digits are Python's `\d`, any script's decimal digits ("٨٥" is 0.85)
 * known to Unicode 14. A reply with no digits raises TypeError there (`float(None)`), thrown here as a
 * PyError naming it. ragtrail's own judge (`process/values.ts`) reads "score is X" and clamps to [0, 1].
 */
export function reasonragAuthorsJudgeScore(reply: string): number {
  const last = [...reply.matchAll(PY_INTEGER)].pop();
  if (!last) throw new PyError("float() argument must be a string or a real number, not 'NoneType'", 'TypeError');
  let ascii = '';
  for (const ch of last[0]) ascii += ch === '+' || ch === '-' ? ch : String(digitValue(ch.codePointAt(0)!));
  return Number(ascii) / 100;
}

/**
 * ReasonRAG's evaluation answer (`reason_rag_pred_parse` in pipeline/reasonrag_pipeline.py @225e249), the
 * answer its reported EM/F1 are computed on: the text after the first "So the answer is" (up to a second
 * one), stripped; the last `<answer…>…</answer>` in it whose content has no "<" (across lines) — or, when
 * there is none, the whole reply again, prefix included; tag fragments deleted; runs of spaces made one;
 * cut at the first "." and stripped. It differs from `reasonragAuthorsAnswer` (the rollouts' reward) in
 * that fallback, the multi-line contents and the spaces: "So the answer is Paris" → "So the answer is
 * Paris" here, "Paris" there.
 */
export function reasonragAuthorsEvalAnswer(pred: string): string {
  let answer = pred.includes(PREFIX) ? pyStrip(pred.split(PREFIX)[1]!) : pred;
  const matches = [...answer.matchAll(/<answer[\s\S]*?>([^<]*)<\/answer>/g)];
  answer = matches.length ? matches[matches.length - 1]![1]! : pred;
  answer = answer.replace(/<answer[\s\S]*?>[\s\S]*?<\/answer>|<query[\s\S]*?>[\s\S]*?<\/query>|answer>|<answer/g, '').replace(/  +/g, ' ');
  return answer.includes('.') ? pyStrip(answer.split('.')[0]!) : pyStrip(answer);
}
