/**
 * ARENA's structured generator: given the question and numbered references, one pass writes
 * <relevance>[ids]</relevance> (a JSON list of the useful references), <analysis>…</analysis>
 * (reasoning citing references by number) and <answer>…</answer>. The references are the dataset's
 * own context passages when the question has them (ARENA trains on HotpotQA / 2Wiki / MuSiQue
 * contexts); otherwise the question is searched once and the hits are the references.
 */
import type { Passage } from '../core/types.js';
import type { Action, Message } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import { invalid, type Protocol, tagContent } from './protocol.js';

/** The references shown to the generator, in their numbered order. */
export function arenaReferences(state: State): Passage[] {
  if (state.question.context?.length) return state.question.context;
  const search = state.steps.find((s) => s.action.type === 'search');
  return (search?.docs ?? []).map((d) => ({ id: d.passageId, title: d.title, text: d.text }));
}

function needsSearch(state: State): boolean {
  return !state.question.context?.length && !state.steps.some((s) => s.action.type === 'search');
}

/**
 * Reference numbers of a <relevance> block: a JSON list such as [1, 5]; undefined when malformed. A number
 * past 2^53 is no reference number and JSON.parse would round it (2^53 + 1 to 2^53), so such a list is
 * malformed too.
 */
export function parseRelevance(text: string | undefined): number[] | undefined {
  if (text === undefined) return undefined;
  try {
    const v = JSON.parse(text.trim()) as unknown;
    if (Array.isArray(v) && v.every((x) => Number.isSafeInteger(x))) return v as number[];
  } catch {
    // fall through
  }
  return undefined;
}

/** The references as the generator sees them: "1. Title: text", one per line. */
export function numberedReferences(state: State): string {
  return arenaReferences(state)
    .map((p, i) => `${i + 1}. ${p.title ? `${p.title}: ` : ''}${p.text}`)
    .join('\n');
}

export const arena: Protocol = {
  name: 'arena',
  description: 'ARENA generator: <relevance>[ids]</relevance><analysis>…</analysis><answer>…</answer> over numbered references',
  // ARENA generates at most 256 completion tokens (the limit in the authors' released GRPO and
  // evaluation settings).
  defaults: { maxTurns: 2, maxSearches: 1, topK: 5, maxTokens: 256 },
  allowed: (state) => (needsSearch(state) && !state.mustAnswer ? ['search'] : ['answer']),
  fixedAction: (state) => (needsSearch(state) && !state.mustAnswer ? { type: 'search', query: state.question.question } : undefined),
  references: arenaReferences,
  render(state: State): Message[] {
    const refs = numberedReferences(state);
    return [
      {
        role: 'system',
        // ARENA's prompt (src/data_generator.py `prompt_template`), in ragtrail's words: answer from the
        // references; exactly three sections; relevance lists only the useful references' numbers;
        // the analysis combines them and says which reference supports each claim; the answer is a
        // short phrase or a single word, with no explanation.
        content:
          'You answer a question from the numbered references you are given. Reply with exactly three sections, once each and in this order: <relevance> with a JSON list of the numbers of only those references that give useful information (for example [1, 5]); <analysis> where you combine what the relevant references say into the answer, naming the reference behind each claim; <answer> with just a short phrase or a single word, no explanation.',
      },
      { role: 'user', content: `<question>${state.question.question}</question>\n<references>\n${refs}\n</references>` },
    ];
  },
  template: {
    kinds: { main: { description: 'the whole prompt', fields: { question: { required: true, description: 'the question' }, references: { required: true, description: 'the numbered references, "1. Title: text" one per line' } } } },
    fill: (state) => ({ kind: 'main', values: { question: state.question.question, references: numberedReferences(state) }, continuation: [] }),
  },
  parse(text: string): Action {
    const answer = tagContent(text, 'answer');
    if (answer === undefined || answer === '') return invalid(answer === undefined ? 'no <answer>' : 'empty <answer>');
    const citations = parseRelevance(tagContent(text, 'relevance'));
    return citations ? { type: 'answer', answer, citations } : { type: 'answer', answer };
  },
  format(action: Action): string {
    if (action.type === 'search') return action.query;
    if (action.type !== 'answer') return '';
    const cited = action.citations ?? [];
    return `<relevance>${JSON.stringify(cited)}</relevance>\n<analysis>${cited.length ? `References ${cited.join(' and ')} give the facts needed.` : 'The references give the facts needed.'}</analysis>\n<answer>${action.answer}</answer>`;
  },
};

/**
 * ARENA's SFT-direct baseline (appendix E): the same numbered references, the answer alone — no
 * relevance list, no analysis (the model fine-tuned on question + references → short answer). Its data:
 * `ragtrail arena-sft --mode direct` (process/arena-sft.ts).
 */
export const arenaDirect: Protocol = {
  ...arena,
  name: 'arena-direct',
  description: 'ARENA SFT-direct: the numbered references, then the short answer alone (no relevance, no analysis)',
  defaults: { ...arena.defaults, maxTokens: 64 },
  render(state: State): Message[] {
    return [
      { role: 'system', content: 'You answer a question from the numbered references you are given. Reply with the answer alone: a short phrase or a single word, no explanation.' },
      { role: 'user', content: `<question>${state.question.question}</question>\n<references>\n${numberedReferences(state)}\n</references>` },
    ];
  },
  parse(text: string): Action {
    const line = text.split('\n').map((l) => l.replace(/^\s*(?:final\s+)?answer\s*[:：]\s*/i, '').trim()).find((l) => l !== '');
    return line === undefined ? invalid('empty reply') : { type: 'answer', answer: line };
  },
  format: (action: Action) => (action.type === 'search' ? action.query : action.type === 'answer' ? action.answer : ''),
};
