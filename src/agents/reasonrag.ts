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

/*
 * The three prompts follow ReasonRAG's appendix F (Figures 12 and 13) and its pipeline's
 * BEGIN_REASONING / REASONING / DOCUMENT_ANALYSIS / ANSWER_GENERATION prompts, in ragtrail's words.
 * The conclusion phrases are format, not wording, and carry over exactly: a reasoning turn ends
 * "So the answer is <answer>…</answer>" or "So the next query is <query>…</query>", a grounding turn
 * "Based on the query, the relevant evidence is <evidence>…</evidence>" (or <evidence>None</evidence>):
 * the authors' reader (reasonrag_pipeline.py `extract_answer`, and ragtrail's reasonrag-terminal
 * compat mode) looks for "So the answer is".
 */
const CONCLUDE = 'End with exactly one of these two lines. To answer: So the answer is <answer>short answer</answer>. To search: So the next query is <query>query</query>.';

/** The reasoning prompt (Figure 12): error reflection, information sufficiency, conciseness, conclusion. */
const REASONING_SYSTEM = `You answer questions with the help of a retrieval tool, reasoning briefly and accurately.
- If an earlier thought contains a mistake, point it out and correct it; otherwise skip this.
- Judge whether the information gathered so far is enough to answer the question fully and correctly. If it is not, break the question down and write the next query; never repeat a query already made. If no useful new query is left, say why and answer from what you have.
- Keep queries and answers short: nouns or brief phrases wherever you can.
${CONCLUDE}`;

/** The first reasoning turn (the pipeline's BEGIN_REASONING prompt): decompose, and decide what needs retrieval. */
const BEGIN_SYSTEM = `You answer questions with the help of a retrieval tool.
- Break the question into smaller sub-questions so that no part of it is missed.
- For each part, decide whether you can answer it confidently from what you already know, or whether it needs to be looked up or checked.
- Keep queries and answers short: nouns or brief phrases wherever you can.
${CONCLUDE}`;

/** The grounding prompt (Figure 13): extract the evidence for the latest query. */
const GROUNDING_SYSTEM = `You extract evidence from retrieved documents for the latest search query.
- Find the key terms and concepts of the query.
- Look through the documents for the passages that support an answer to it.
- If you find relevant evidence, reply: Based on the query, the relevant evidence is <evidence>the evidence</evidence>. If nothing is relevant, reply: <evidence>None</evidence>.`;

/** The forced last turn (the pipeline's ANSWER_GENERATION prompt). */
const ANSWER_SYSTEM = 'You answer questions with the help of a retrieval tool, and no searches are left. Give a precise, very short final answer with no explanation, ending with: So the answer is <answer>short answer</answer>.';

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
        { role: 'system', content: GROUNDING_SYSTEM },
        { role: 'user', content: `Question: ${q}\n\nSearches and evidence so far:\n${history(state)}\n\nLatest query: ${query}\n\nDocuments:\n${formatDocs(search.docs ?? [])}` },
      ];
    }
    const system = opts.forced ? ANSWER_SYSTEM : state.steps.length === 0 ? BEGIN_SYSTEM : REASONING_SYSTEM;
    return [
      { role: 'system', content: system },
      { role: 'user', content: state.steps.length === 0 ? `Question: ${q}` : `Question: ${q}\n\nSearches and evidence so far:\n${history(state)}` },
    ];
  },

  template: {
    kinds: {
      reasoning: {
        description: 'a reasoning turn, ending in a <query> or an <answer>',
        fields: { question: { required: true, description: 'the question' }, history: { required: true, description: 'the searches so far, each with the evidence kept from it ("(nothing yet)" before the first)' } },
      },
      grounding: {
        description: 'a grounding turn, keeping <evidence> from the latest search\'s documents',
        fields: {
          question: { required: true, description: 'the question' },
          query: { required: true, description: 'the latest search query' },
          documents: { required: true, description: 'its documents, "Doc 1 (Title: …) text" lines' },
          history: { required: false, description: 'the searches so far with their evidence' },
        },
      },
    },
    fill(state, opts) {
      const search = lastSearch(state);
      const values = { question: state.question.question, history: history(state) };
      if (search && !opts.forced) {
        return { kind: 'grounding', values: { ...values, query: search.action.type === 'search' ? search.action.query : '', documents: formatDocs(search.docs ?? []) }, continuation: [] };
      }
      return { kind: 'reasoning', values, continuation: [], ...(opts.forced ? { forcedNote: ANSWER_SYSTEM } : {}) };
    },
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
        return `${thoughtFor(action, state)}\nSo the next query is <query>${action.query}</query>`;
      case 'extract':
        return action.evidence === 'None' ? '<evidence>None</evidence>' : `Based on the query, the relevant evidence is <evidence>${action.evidence}</evidence>`;
      case 'answer':
        return `${thoughtFor(action, state)}\nSo the answer is <answer>${action.answer}</answer>`;
      default:
        return '';
    }
  },
};
