/**
 * R1-Searcher (Song et al., 2025; RUCAIBox/R1-Searcher), in the format its released checkpoints were
 * trained on (OpenRLHF-RAG's `_generate_vllm_with_retrieve`, evaluation/eval_search_loacl.py): the model
 * thinks in <think>, writes a keyword query as `<|begin_of_query|> … <|end_of_query|>` — generation
 * stops at `<|end_of_query|>`, which the environment writes back — and the environment inserts
 * `\n\n<|begin_of_documents|>\n(1)…\n(2)…\n<|end_of_documents|>\n\n`; the answer is the text between
 * the last `<answer>` and the `</answer>` after it. The markers are plain text, not added tokens.
 * The query is read as the authors read it: the text after the last begin marker, double quotes removed,
 * whitespace collapsed. Documents are numbered `(N)` lines `Title: T Text:  text`, the layout of the
 * HotpotQA-abstract corpus the checkpoints retrieved from (two spaces after "Text:", as in that file).
 * Differences: the authors end a trajectory whose turn has no query and no answer; the environment here
 * asks again (an invalid step) until its budget ends. Prompts in this project's words; the authors' exact
 * completion prompt (ending "Assistant: <think>") loads with `--prompt-template FILE`.
 */
import type { Action, Message, RetrievedDoc } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import { invalid, isBlank, type Protocol, systemThenQuestion, thoughtFor } from './protocol.js';

export const BEGIN_QUERY = '<|begin_of_query|>';
export const END_QUERY = '<|end_of_query|>';
export const BEGIN_DOCS = '<|begin_of_documents|>';
export const END_DOCS = '<|end_of_documents|>';

const INSTRUCTIONS = `You solve the user's question by thinking it through and then answering. Put the thinking inside <think> </think> and the final answer inside <answer> </answer>, as "<think> reasoning here </think>\n\n<answer> final answer here </answer>". While thinking, you may look up facts you are unsure of by writing "${BEGIN_QUERY} keywords ${END_QUERY}": keywords only, and one fact (one subject, relation, object) per query. The search results come back as "${BEGIN_DOCS} ...results... ${END_DOCS}". Begin your reply with <think>.`;

/** The environment's text after a query turn: the end marker written back, then the numbered documents. */
export function r1SearcherObservation(docs: readonly RetrievedDoc[]): string {
  const body = docs.length ? docs.map((d, j) => `(${j + 1})Title: ${d.title} Text:  ${d.text}\n`).join('') : 'None';
  return `${END_QUERY}\n\n${BEGIN_DOCS}\n${body}${END_DOCS}\n\n`;
}

/** The query of a turn as the rollout reads it: after the last begin marker, up to the end marker; quotes dropped, whitespace collapsed. */
export function r1SearcherQuery(text: string): string {
  const after = text.split(BEGIN_QUERY).at(-1)!.split(END_QUERY)[0]!;
  return after.replace(/"/g, '').trim().split(/\s+/).filter(Boolean).join(' ');
}

export const r1Searcher: Protocol = {
  name: 'r1-searcher',
  description: 'R1-Searcher: <think>, <|begin_of_query|> … <|end_of_query|> → <|begin_of_documents|> (1)… <|end_of_documents|>, <answer>',
  // Top 5 and at most 8 retrievals, as its evaluation script runs the released checkpoints.
  defaults: { maxTurns: 9, maxSearches: 8, topK: 5, maxTokens: 512, stop: [END_QUERY, '</answer>'] },
  allowed: (state) => (state.mustAnswer ? ['answer'] : ['search', 'answer']),
  render(state: State): Message[] {
    const messages = systemThenQuestion(INSTRUCTIONS, state);
    for (const step of state.steps) {
      if (step.action.type === 'search') {
        // A query turn as the rollout keeps it: stripped, and the end marker (a stop string the backend
        // dropped) written back by the environment, at the head of its reply.
        const turn = step.raw.trim();
        messages.push({ role: 'assistant', content: turn.endsWith(END_QUERY) ? turn.slice(0, -END_QUERY.length) : turn });
        messages.push({ role: 'user', content: r1SearcherObservation(step.docs ?? []) });
      } else if (step.action.type === 'answer') {
        // Its evaluation stops at </answer> and writes it back.
        messages.push({ role: 'assistant', content: step.raw.includes('</answer>') ? step.raw : `${step.raw}</answer>` });
      } else {
        messages.push({ role: 'assistant', content: step.raw });
        messages.push({ role: 'user', content: `Write either a query between ${BEGIN_QUERY} and ${END_QUERY} or the answer between <answer> and </answer>.` });
      }
    }
    return messages;
  },
  template: {
    kinds: { main: { description: 'the instructions (system) and the question (user); the turns after them are the rollout\'s', fields: { question: { required: true, description: 'the question' } } } },
    fill: (state) => ({ kind: 'main', values: { question: state.question.question }, continuation: r1Searcher.render(state).slice(2) }),
  },
  /** A query when the turn opens one before any answer (generation stops at its end marker); else the last <answer>…</answer>. */
  parse(text: string): Action {
    const q = text.indexOf(BEGIN_QUERY);
    const a = text.indexOf('<answer>');
    if (q >= 0 && (a < 0 || q < a)) {
      const query = r1SearcherQuery(text);
      return isBlank(query) ? invalid('empty query') : { type: 'search', query };
    }
    if (a >= 0) {
      const answer = text.split('<answer>').at(-1)!.split('</answer>')[0]!.trim();
      return isBlank(answer) ? invalid('empty <answer>') : { type: 'answer', answer };
    }
    return invalid(`no ${BEGIN_QUERY} query and no <answer>`);
  },
  format(action: Action, state: State): string {
    const first = state.steps.length === 0 ? '<think> ' : '';
    if (action.type === 'search') return `${first}${thoughtFor(action, state)}\n\n${BEGIN_QUERY} ${action.query}${END_QUERY}`;
    if (action.type === 'answer') return `${first}${thoughtFor(action, state)} </think>\n\n<answer> ${action.answer} </answer>`;
    return first;
  },
};
