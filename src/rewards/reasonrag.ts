/**
 * ReasonRAG's terminal reward: the value of a finished rollout, F1 of its answer decayed by the
 * number of steps, F1 · β^step (β 0.95 while searching, as the authors' released code has it). Default
 * mode scores the answer ragtrail's reasonrag protocol parsed; compat=authors reproduces
 * `ReasonRAGPipeline.get_reward` with the module's `extract_answer` (wlzhang2020/ReasonRAG @225e249) and
 * FlashRAG's token F1: the text after "So the answer is", the last single-line <answer>, tag fragments
 * deleted, and the answer cut at its first "." ("St. Louis" → "St").
 */
import { f1Score } from '../core/metrics.js';
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
