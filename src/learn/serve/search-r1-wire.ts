/**
 * Search-R1's own text on the wire, byte for byte, for trainers whose models learnt it (Search-R1,
 * LWS through verl-tool). Reproduces, from search_r1/llm_agent/generation.py:
 * - `_passages2string`: each document's `contents` ("Title"\ntext, protocol.ts) split at its first
 *   newline into `Doc i(Title: <first line>) <rest>\n`;
 * - `execute_predictions`: a search is answered `\n\n<information>{that string, stripped}</information>\n\n`,
 *   so no hits give `\n\n<information></information>\n\n`;
 * - `postprocess_predictions`: the first complete `<search>…</search>` or `<answer>…</answer>` pair
 *   (regex `<(search|answer)>(.*?)</\1>`, DOTALL), its content stripped; an empty pair is a valid
 *   action, an unclosed tag is none.
 * Deliberate differences, both documented in the README: the feedback after an invalid turn is
 * ragtrail's own sentence (in the same `\n…\n` frame), and verl-tool's search tool, which takes the
 * *last* `<search>` pair, is not followed — its agent loop cuts each turn at the first stop tag, so
 * a turn it sends holds one closing tag and both rules pick the same pair.
 */
import type { RetrievedDoc } from '../../core/trajectory.js';
import { joinContents } from '../../corpus/corpus.js';
import { pyStrip } from '../../core/text.js';

export function passagesToString(docs: readonly Pick<RetrievedDoc, 'passageId' | 'title' | 'text'>[]): string {
  let out = '';
  docs.forEach((d, i) => {
    const content = joinContents({ id: d.passageId, title: d.title, text: d.text });
    const lines = content.split('\n');
    out += `Doc ${i + 1}(Title: ${lines[0]}) ${lines.slice(1).join('\n')}\n`;
  });
  return out;
}

export function informationBlock(docs: readonly Pick<RetrievedDoc, 'passageId' | 'title' | 'text'>[]): string {
  return `\n\n<information>${pyStrip(passagesToString(docs))}</information>\n\n`;
}

/** `postprocess_predictions`: the turn reader lives with the protocol (agents/search-r1.ts). */
export { parseSearchR1Turn as parsePrediction } from '../../agents/search-r1.js';

/**
 * After a complete search the environment refused because the search budget is spent: the turn was well
 * formed, so saying it had no complete pair (INVALID_FEEDBACK) would teach the model the wrong thing.
 */
export const BUDGET_FEEDBACK = '\nNo searches are left, so that search was not run. Give the final answer between <answer> and </answer>.\n';

/** After a turn with neither tag pair (ragtrail's words, Search-R1's framing). */
export const INVALID_FEEDBACK = '\nThat turn had no complete <search>…</search> or <answer>…</answer>. To look something up, put a query between <search> and </search>; to finish, put the answer between <answer> and </answer>.\n';
