/**
 * RAG-Gym's baseline agents (its appendix C): Direct answers at once; CoT reasons then answers; RAG
 * searches the question itself, then reasons over the documents and answers; ReAct reasons and then
 * either searches or answers, seeing each query with its documents. (Search-o1 and ReSearch, which
 * summarise documents per query, are in their own modules.)
 */
import type { Action, Message } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import { formatDocs, invalid, isBlank, type Protocol, type RenderOptions, thoughtFor } from './protocol.js';

/** The system message of RAG-Gym's baselines (and of the inference-time baselines beside them). */
export const SYSTEM = 'You are a careful assistant answering questions. Final answers are short: a name, a date, a number, yes or no, or a brief phrase.';

/** Template kinds of a prompt that carries the question only (Direct, CoT). */
const QUESTION_ONLY = { main: { description: 'the whole prompt', fields: { question: { required: true, description: 'the question' } } } };

/** "Answer: X" on its own line, last one wins (RAG, CoT, Iter-RetGen). */
export function parseAnswerLine(text: string): Action {
  const lines = text.trim().split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = /^\s*(?:final\s+)?answer\s*[:：]\s*(.*)$/i.exec(lines[i]!);
    if (m) return isBlank(m[1]) ? invalid('empty answer') : { type: 'answer', answer: m[1]!.trim() };
  }
  return invalid('no "Answer:" line');
}

function retrievedBlock(state: State): string {
  return state.steps
    .filter((s) => s.action.type === 'search')
    .map((s) => `Search: ${(s.action as { query: string }).query}\n${formatDocs(s.docs ?? [])}`)
    .join('\n\n');
}

export const direct: Protocol = {
  name: 'direct',
  description: 'RAG-Gym Direct: answer at once, no reasoning, no search',
  defaults: { maxTurns: 1, maxSearches: 0, topK: 5, maxTokens: 64 },
  allowed: () => ['answer'],
  render: (state) => [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: `Question: ${state.question.question}\nReply with the answer only, no explanation.` },
  ],
  template: { kinds: QUESTION_ONLY, fill: (state) => ({ kind: 'main', values: { question: state.question.question }, continuation: [] }) },
  parse(text: string): Action {
    // The first line with text once an "Answer:" label is dropped: a bare "Answer:" is no answer.
    const line = text
      .split('\n')
      .map((l) => l.replace(/^\s*(?:final\s+)?answer\s*[:：]\s*/i, '').trim())
      .find((l) => l !== '');
    if (isBlank(line)) return invalid('empty reply');
    return { type: 'answer', answer: line };
  },
  format: (action) => (action.type === 'answer' ? action.answer : ''),
};

export const cot: Protocol = {
  name: 'cot',
  description: 'RAG-Gym CoT: reason step by step, then "Answer: …"',
  defaults: { maxTurns: 1, maxSearches: 0, topK: 5, maxTokens: 512 },
  allowed: () => ['answer'],
  render: (state) => [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: `Question: ${state.question.question}\nThink it through step by step. End with a line of the form "Answer: <short answer>".` },
  ],
  template: { kinds: QUESTION_ONLY, fill: (state) => ({ kind: 'main', values: { question: state.question.question }, continuation: [] }) },
  parse: parseAnswerLine,
  format: (action, state) => (action.type === 'answer' ? `${thoughtFor(action, state)}\nAnswer: ${action.answer}` : ''),
};

/** RAG's answer prompt over `documents` (also the compressors' in compressed-rag.ts, over the compressed text). */
export function ragUserPrompt(question: string, documents: string): string {
  return `Documents:\n${documents}\n\nQuestion: ${question}\nUsing the documents, think it through step by step. End with a line of the form "Answer: <short answer>".`;
}

export const rag: Protocol = {
  name: 'rag',
  description: 'RAG-Gym RAG: search the question itself, then reason over the documents and answer',
  defaults: { maxTurns: 2, maxSearches: 1, topK: 5, maxTokens: 512 },
  allowed: (state) => (state.steps.some((s) => s.action.type === 'search') || state.mustAnswer ? ['answer'] : ['search']),
  fixedAction: (state) => (state.steps.length === 0 && !state.mustAnswer ? { type: 'search', query: state.question.question } : undefined),
  render: (state) => [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: ragUserPrompt(state.question.question, retrievedBlock(state) || '(none)') },
  ],
  template: {
    kinds: { main: { description: 'the whole prompt', fields: { question: { required: true, description: 'the question' }, documents: { required: true, description: 'the documents retrieved for the question, "Doc 1 (Title: …) text" lines' } } } },
    fill: (state) => ({ kind: 'main', values: { question: state.question.question, documents: retrievedBlock(state) || '(none)' }, continuation: [] }),
  },
  parse: parseAnswerLine,
  format: (action, state) => (action.type === 'search' ? action.query : action.type === 'answer' ? `${thoughtFor(action, state)}\nAnswer: ${action.answer}` : ''),
};

/** ReAct's action line: `Action: search[query]` or `Action: finish[answer]`. */
export function parseReactAction(text: string): Action {
  // The first action head followed by a "]" somewhere: if the first head has none after it, no
  // later one has (a lazy regex over the whole text rescanned to the end from every head: quadratic).
  const m = /Action\s*:\s*(search|finish)\s*\[/i.exec(text);
  const end = m ? text.indexOf(']', m.index + m[0].length) : -1;
  if (!m || end < 0) return invalid('no "Action: search[…]" or "Action: finish[…]"');
  const arg = text.slice(m.index + m[0].length, end).trim();
  if (arg === '') return invalid(`empty ${m[1]}[]`);
  return m[1]!.toLowerCase() === 'search' ? { type: 'search', query: arg } : { type: 'answer', answer: arg };
}

export function reactFormat(action: Action, state: State): string {
  const thought = `Thought: ${thoughtFor(action, state)}`;
  if (action.type === 'search') return `${thought}\nAction: search[${action.query}]`;
  if (action.type === 'answer') return `${thought}\nAction: finish[${action.answer}]`;
  return thought;
}

export const REACT_RULES =
  'First write "Thought:" with your reasoning about what is known and what is missing. Then write exactly one action line: "Action: search[<query>]" to look something up (never a query you have already searched), or "Action: finish[<short answer>]" when you can answer.';
export const REACT_FORCED = 'You cannot search any more. Write "Thought:" and then "Action: finish[<short answer>]".';

/** ReAct's steps so far: each turn as written, a search's with its documents as the observation. */
function reactHistory(state: State): string {
  return state.steps
    .map((s) => {
      if (s.action.type === 'search') return `${s.raw.trim()}\nObservation:\n${formatDocs(s.docs ?? [])}`;
      if (s.action.type === 'invalid') return `${s.raw.trim()}\nObservation: that output had no valid action line.`;
      return s.raw.trim();
    })
    .join('\n\n');
}

export const react: Protocol = {
  name: 'react',
  description: 'RAG-Gym ReAct: Thought, then Action: search[q] or finish[a]; history of queries with documents',
  defaults: { maxTurns: 10, topK: 5, maxTokens: 512, stop: ['\nObservation'] },
  allowed: (state) => (state.mustAnswer ? ['answer'] : ['search', 'answer']),
  render(state: State, opts: RenderOptions = {}): Message[] {
    const history = reactHistory(state);
    return [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: `Question: ${state.question.question}\n\n${history ? `Your steps so far:\n${history}\n\n` : ''}${opts.forced ? REACT_FORCED : REACT_RULES}` },
    ];
  },
  template: {
    kinds: { main: { description: 'the whole prompt', fields: { question: { required: true, description: 'the question' }, history: { required: true, description: 'the steps so far: each Thought / Action, a search\'s followed by "Observation:" and its documents ("(nothing yet)" before the first)' } } } },
    fill: (state, opts) => ({ kind: 'main', values: { question: state.question.question, history: reactHistory(state) || '(nothing yet)' }, continuation: [], ...(opts.forced ? { forcedNote: REACT_FORCED } : {}) }),
  },
  parse: parseReactAction,
  format: reactFormat,
};

