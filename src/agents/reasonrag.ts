/**
 * ReasonRAG's staged format: Reasoning → (Grounding → Reasoning)* → Terminal. A reasoning turn ends
 * in <query>…</query> (search) or <answer>…</answer>; after a search, a grounding turn reads that
 * query's documents and keeps only the useful spans in <evidence>…</evidence> (or <evidence>None
 * </evidence>). Only evidence, never raw documents, is carried forward in the context. Top 3
 * documents, up to 5 rounds (paper); action types Q, E, A.
 */
import type { Action, Message, Step } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import { firstTag, formatDocs, invalid, type Protocol, type RenderOptions, tagContent, thoughtFor } from './protocol.js';

const SYSTEM = 'You answer questions by reasoning step by step and searching a knowledge base when you lack a fact. Rely only on the evidence you have collected, not on memory.';

function lastSearch(state: State): Step | undefined {
  const last = state.steps[state.steps.length - 1];
  return last?.action.type === 'search' ? last : undefined;
}

/** The rounds so far as text: each query with the evidence kept from it. */
function history(state: State): string {
  const lines: string[] = [];
  let round = 0;
  for (const step of state.steps) {
    if (step.action.type === 'search') lines.push(`Search ${++round}: ${step.action.query}`);
    else if (step.action.type === 'extract') lines.push(`Evidence: ${step.action.evidence}`);
    else if (step.action.type === 'invalid') lines.push('(an output that did not follow the format was ignored)');
  }
  return lines.length ? lines.join('\n') : '(nothing yet)';
}

export const reasonrag: Protocol = {
  name: 'reasonrag',
  description: 'ReasonRAG: reasoning ends in <query> or <answer>; grounding keeps <evidence> from each search',
  defaults: { maxTurns: 10, maxSearches: 5, topK: 3, maxTokens: 512, stop: ['</query>', '</evidence>', '</answer>'] },
  allowed: (state) => (lastSearch(state) && !state.mustAnswer ? ['extract'] : state.mustAnswer ? ['answer'] : ['search', 'answer']),

  render(state: State, opts: RenderOptions = {}): Message[] {
    const q = state.question.question;
    const search = lastSearch(state);
    if (search && !opts.forced) {
      const query = search.action.type === 'search' ? search.action.query : '';
      return [
        { role: 'system', content: SYSTEM },
        {
          role: 'user',
          content: `Question: ${q}\n\nYou searched for: ${query}\n\nDocuments:\n${formatDocs(search.docs ?? [])}\n\nCopy the sentences of these documents that help answer the search, and nothing else, between <evidence> and </evidence>. If none of them help, write <evidence>None</evidence>.`,
        },
      ];
    }
    const ask = opts.forced
      ? 'You cannot search any more. Reason briefly over the evidence, then give the final short answer between <answer> and </answer>.'
      : 'Reason step by step about what is known and what is missing. Then either write one search query between <query> and </query>, or, if the evidence is enough, write the final short answer between <answer> and </answer>.';
    return [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: `Question: ${q}\n\nSearches and evidence so far:\n${history(state)}\n\n${ask}` },
    ];
  },

  parse(text: string, state: State): Action {
    if (lastSearch(state) && !state.mustAnswer) {
      const evidence = tagContent(text, 'evidence');
      if (evidence === undefined) return invalid('grounding turn without <evidence>');
      return { type: 'extract', evidence: evidence === '' ? 'None' : evidence };
    }
    const hit = firstTag(text, state.mustAnswer ? ['answer'] : ['query', 'answer']);
    if (!hit) return invalid(state.mustAnswer ? 'no <answer> tag' : 'no <query> or <answer> tag');
    if (hit.content === '') return invalid(`empty <${hit.tag}>`);
    return hit.tag === 'query' ? { type: 'search', query: hit.content } : { type: 'answer', answer: hit.content };
  },

  format(action: Action, state: State): string {
    switch (action.type) {
      case 'search':
        return `${thoughtFor(action, state)}\n<query>${action.query}</query>`;
      case 'extract':
        return `<evidence>${action.evidence}</evidence>`;
      case 'answer':
        return `${thoughtFor(action, state)}\n<answer>${action.answer}</answer>`;
      default:
        return '';
    }
  },
};
