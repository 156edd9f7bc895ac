/**
 * Iter-RetGen (Shao et al., Findings of EMNLP 2023, "Enhancing Retrieval-Augmented Large Language
 * Models with Iterative Retrieval-Generation Synergy"), a baseline of ReasonRAG's, LWS's and ARENA's
 * tables. A fixed number of iterations (the searches budget, 3 by default as in the paper's and
 * FlashRAG's runs): retrieve with the question joined to the previous iteration's whole generation
 * (the question alone at first), then generate an answer from those documents only. The last
 * iteration's answer is the answer.
 *
 * In the step model: the first search is fixed (the question); every generation but the last is
 * taken as the next search, `question + " " + generation`; the last (no searches left) is read for its
 * "Answer:" line. So parse(format(search q)) = search q only for queries that start with the question.
 */
import type { Action, Message } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import { answerDue, invalid, isBlank, latestSearchDocs, type Protocol } from './protocol.js';
import { parseAnswerLine, SYSTEM } from './rag-gym.js';

const RULES = 'Using the documents, think it through briefly. End with a line of the form "Answer: <short answer>".';

// Each iteration generates from its own retrieval only (the latest search's documents); the generation
// with no searches left is the last.
const latestDocs = latestSearchDocs;
const final = answerDue;

export const iterRetGen: Protocol = {
  name: 'iter-retgen',
  description: 'Iter-RetGen: retrieve with the question plus the last generation, generate from those documents; the last of 3 iterations answers',
  defaults: { maxTurns: 4, maxSearches: 3, topK: 5, maxTokens: 256 },
  allowed: (state) => (final(state) ? ['answer'] : ['search']),
  fixedAction: (state) => (state.steps.length === 0 && !state.mustAnswer ? { type: 'search', query: state.question.question } : undefined),
  render: (state: State): Message[] => [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: `Documents:\n${latestDocs(state)}\n\nQuestion: ${state.question.question}\n${RULES}` },
  ],
  template: {
    kinds: { main: { description: 'the whole prompt (the same in every iteration)', fields: { question: { required: true, description: 'the question' }, documents: { required: true, description: 'this iteration\'s documents, "Doc 1 (Title: …) text" lines' } } } },
    fill: (state) => ({ kind: 'main', values: { question: state.question.question, documents: latestDocs(state) }, continuation: [] }),
  },
  /** The last iteration: its "Answer:" line. Before it: the whole generation, after the question, is the next query. */
  parse(text: string, state: State): Action {
    if (final(state)) return parseAnswerLine(text);
    return isBlank(text) ? invalid('empty generation') : { type: 'search', query: `${state.question.question} ${text.trim()}` };
  },
  format(action: Action, state: State): string {
    const q = state.question.question;
    if (action.type === 'search') return action.query.startsWith(`${q} `) ? action.query.slice(q.length + 1) : action.query;
    return action.type === 'answer' ? `Answer: ${action.answer}` : '';
  },
};
