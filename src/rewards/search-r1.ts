/**
 * Search-R1's outcome rewards (which LWS builds on). The paper's reward is exact match of the
 * episode's final answer; `search-r1-format` adds the v0.3 format terms (structure, final format,
 * retrieval). Default mode scores the episode ragtrail parsed from the model's text; compat=authors
 * reproduces Search-R1's `verl/utils/reward_score/qa_em.py` and `qa_em_format.py`
 * (PeterGriffinJin/Search-R1 @a14dc3a) exactly, quirks included: they read prompt + response, need
 * two <answer> blocks (the prompt's example is the first), and take the last one.
 */
import { exactMatch, normalizeAnswer } from '../core/metrics.js';
import { PY_SPACE_CLASS, pyStrip } from '../core/text.js';

export interface SearchR1FormatWeights {
  /** Added for a well-formed episode whose answer is wrong (v0.3 scripts: 0.2); subtracted from a right answer in a malformed one. */
  structure: number;
  /** A wrong answer in a malformed episode (v0.3: 0.1). */
  finalFormat: number;
  /** Added when a well-formed, wrong episode retrieved a gold answer (v0.3: 0). */
  retrieval: number;
}

// ---------------------------------------------------------------- shared rules (both modes)

/** `compute_score_em`'s decision once the answer and format are known. */
export function searchR1EmScore(answer: string | undefined, golds: readonly string[], formatScore: number): number {
  if (answer === undefined) return 0;
  return exactMatch(answer, golds) ? 1 : formatScore;
}

/** qa_em_format's `compute_score_em` decision table. */
export function searchR1FormatScore(answer: string | undefined, golds: readonly string[], valid: boolean, retrievalCorrect: boolean, w: SearchR1FormatWeights): number {
  const correct = answer !== undefined && exactMatch(answer, golds) === 1;
  if (correct) return valid ? 1 : 1 - w.structure;
  if (valid) return w.structure + (retrievalCorrect ? w.retrieval : 0);
  return answer === undefined ? 0 : w.finalFormat;
}

/** Does some normalised gold answer occur in a normalised <information> block? (`is_retrieval_correct`) */
export function retrievalHasAnswer(blocks: readonly string[], golds: readonly string[]): boolean {
  return blocks.some((b) => golds.some((g) => normalizeAnswer(b).includes(normalizeAnswer(g))));
}

// ---------------------------------------------------------------- authors' code

/** `extract_solution`: the last of at least two <answer> blocks, stripped; undefined with fewer. */
export function searchR1AuthorsAnswer(solution: string): string | undefined {
  const all = [...solution.matchAll(/<answer>([\s\S]*?)<\/answer>/g)];
  return all.length <= 1 ? undefined : pyStrip(all[all.length - 1]![1]!);
}

const STRUCTURE_TAGS = ['think', 'search', 'information', 'answer'];
const MOVES: Record<string, Record<string, string>> = {
  '<think>': { start: 'in_think', information: 'in_think' },
  '</think>': { in_think: 'after_think' },
  '<search>': { after_think: 'in_search' },
  '</search>': { in_search: 'after_search' },
  '<information>': { after_search: 'in_information' },
  '</information>': { in_information: 'information' },
  '<answer>': { after_think: 'in_answer', after_reflect: 'in_answer' },
  '</answer>': { in_answer: 'end' },
  // Only with `reflect` (ragtrail's search-r1 protocol is LWS's format, which checks before answering).
  '<reflect>': { after_think: 'in_reflect' },
  '</reflect>': { in_reflect: 'after_reflect' },
};
const SPLIT = /(<\/?(?:think|search|information|answer)>)/;
const SPLIT_REFLECT = /(<\/?(?:think|search|information|answer|reflect)>)/;
const MARKER = new RegExp(`<\\|im_start\\|>assistant${PY_SPACE_CLASS}*`);
const INSIDE = ['in_think', 'in_search', 'in_information', 'in_answer', 'in_reflect'];
const BETWEEN = ['start', 'after_think', 'after_search', 'information', 'after_reflect'];

/** The structure think → (search → information → think)* → answer with only whitespace between blocks (the state machine of `is_valid_sequence`). */
export function searchR1Structure(content: string, opts: { reflect?: boolean } = {}): { valid: boolean; reason: string } {
  const tags = opts.reflect ? [...STRUCTURE_TAGS, 'reflect'] : STRUCTURE_TAGS;
  for (const tag of tags) {
    const open = content.split(`<${tag}>`).length - 1;
    const close = content.split(`</${tag}>`).length - 1;
    if (open !== close) return { valid: false, reason: `Mismatch in ${tag} tags: ${open} opening vs ${close} closing tags` };
  }
  let state = 'start';
  for (const part of content.split(opts.reflect ? SPLIT_REFLECT : SPLIT)) {
    if (pyStrip(part) === '') continue;
    // Object.hasOwn, not `in`: a block reading "constructor" or "toString" is text, not a tag (issue 45).
    if (Object.hasOwn(MOVES, part) && (opts.reflect || !part.includes('reflect'))) {
      const moves = MOVES[part]!;
      const next = Object.hasOwn(moves, state) ? moves[state] : undefined;
      if (!next) return { valid: false, reason: `Unexpected tag ${part} in state ${state}` };
      state = next;
    } else if (!INSIDE.includes(state)) {
      return { valid: false, reason: BETWEEN.includes(state) ? `Unexpected content '${pyStrip(part)}' between tags (state: ${state})` : `Unexpected content in state ${state}` };
    }
  }
  return state === 'end' ? { valid: true, reason: 'Valid sequence format' } : { valid: false, reason: `Incomplete sequence, ended in state ${state}` };
}

/** `is_valid_sequence`: the structure of the text after the first `<|im_start|>assistant`; without that marker, invalid. */
export function searchR1AuthorsValid(text: string): { valid: boolean; reason: string } {
  const marker = MARKER.exec(text);
  if (!marker) return { valid: false, reason: 'Missing assistant marker' };
  return searchR1Structure(text.slice(marker.index + marker[0].length));
}

/** Default mode: the structure of the response alone, end-of-turn tokens after the answer ignored, an optional <reflect> before the answer. */
export function searchR1Valid(response: string): { valid: boolean; reason: string } {
  return searchR1Structure(response.replace(/(?:\s|<\|im_end\|>|<\|endoftext\|>)+$/, ''), { reflect: true });
}

/** Every <information> block of the text, stripped (`extract_information_blocks`). */
export function informationBlocks(text: string): string[] {
  return [...text.matchAll(/<information>([\s\S]*?)<\/information>/g)].map((m) => pyStrip(m[1]!));
}

/** qa_em.py `compute_score_em(prompt + response, golds, format_score)`. */
export function searchR1AuthorsEm(solution: string, golds: readonly string[], formatScore = 0): { score: number; answer?: string } {
  const answer = searchR1AuthorsAnswer(solution);
  return { score: searchR1EmScore(answer, golds, formatScore), answer };
}

/** qa_em_format.py `compute_score_em(prompt + response, golds, …weights)`. */
export function searchR1AuthorsFormat(solution: string, golds: readonly string[], w: SearchR1FormatWeights): { score: number; valid: boolean; reason: string; retrievalCorrect: boolean; answer?: string } {
  const { valid, reason } = searchR1AuthorsValid(solution);
  const retrievalCorrect = valid && retrievalHasAnswer(informationBlocks(solution), golds);
  const answer = searchR1AuthorsAnswer(solution);
  return { score: searchR1FormatScore(answer, golds, valid, retrievalCorrect, w), valid, reason, retrievalCorrect, answer };
}
