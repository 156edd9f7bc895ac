/**
 * RAG-Gym's Search-o1: ReAct over summarised history — before reasoning, the documents of each past
 * query are condensed into an answer to that query (summarize.ts), and the agent sees query/answer
 * pairs. Actions as in ReAct: `Action: search[q]` or `Action: finish[a]`.
 */
import type { Message } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import { type Protocol, type RenderOptions } from './protocol.js';
import { parseReactAction, REACT_FORCED, REACT_RULES, reactFormat } from './rag-gym.js';
import { summarizedHistory, summarizeSearches } from './summarize.js';

export const searchO1: Protocol = {
  name: 'search-o1',
  description: 'RAG-Gym Search-o1: ReAct whose history is query/answer pairs (documents summarised per query)',
  defaults: { maxTurns: 10, topK: 5, maxTokens: 512, stop: ['\nObservation'] },
  allowed: (state) => (state.mustAnswer ? ['answer'] : ['search', 'answer']),
  prepare: summarizeSearches,
  render(state: State, opts: RenderOptions = {}): Message[] {
    return [
      { role: 'system', content: 'You are a careful assistant answering questions. Final answers are short: a name, a date, a number, yes or no, or a brief phrase.' },
      { role: 'user', content: `Question: ${state.question.question}\n\nWhat your searches found so far:\n${summarizedHistory(state)}\n\n${opts.forced ? REACT_FORCED : REACT_RULES}` },
    ];
  },
  template: {
    kinds: { main: { description: 'the whole prompt', fields: { question: { required: true, description: 'the question' }, history: { required: true, description: 'the searches so far as "Query i: … / Answer i: …" pairs (documents summarised per query)' } } } },
    fill: (state, opts) => ({ kind: 'main', values: { question: state.question.question, history: summarizedHistory(state) }, continuation: [], ...(opts.forced ? { forcedNote: REACT_FORCED } : {}) }),
  },
  parse: parseReactAction,
  format: reactFormat,
};
