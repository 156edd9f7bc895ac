/**
 * Self-Ask (Press et al., Findings of EMNLP 2023, "Measuring and Narrowing the Compositionality Gap in
 * Language Models"), with retrieval as FlashRAG runs it and as ReasonRAG's and ProRAG's tables report
 * it. The model decomposes the question into follow-up questions: it writes "Follow up: …", generation
 * stops at "Intermediate answer:", the follow-up is searched, and the model, shown that search's
 * documents, writes the intermediate answer and then either the next follow-up or "So the final
 * answer is: …". The first documents are the question's own (a fixed first search).
 *
 * One model call per follow-up: the call after a search writes that search's intermediate answer and
 * the next decision together (the original paper let a search engine write the intermediate answer;
 * FlashRAG spends a second call on it).
 */
import type { Action, Message } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import { groundingQuote } from './gold.js';
import { answerDue, invalid, isBlank, latestSearchDocs, type Protocol, type RenderOptions } from './protocol.js';

export const FOLLOW_UP = 'Follow up:';
export const INTERMEDIATE = 'Intermediate answer:';
export const FINAL_ANSWER = 'So the final answer is:';

const SYSTEM = `You answer questions by asking yourself simpler follow-up questions. Each "${FOLLOW_UP}" question is looked up, and you then write what the context says as the "${INTERMEDIATE}". When you know enough, write "${FINAL_ANSWER} <short answer>". Final answers are short: a name, a date, a number, yes or no, or a brief phrase.

Example:
Question: In which city was the architect of the Corven Library born?
Are follow up questions needed here: Yes.
${FOLLOW_UP} Who was the architect of the Corven Library?
${INTERMEDIATE} The Corven Library was designed by Ilsa Marrow.
${FOLLOW_UP} In which city was Ilsa Marrow born?
${INTERMEDIATE} Ilsa Marrow was born in Tessary.
${FINAL_ANSWER} Tessary`;

const FORCED = `No more follow-up questions can be looked up. Write the intermediate answer if one is due, then "${FINAL_ANSWER} <short answer>".`;

/** Whether the step is one the model wrote (the first search, the question's, is fixed). */
const written = (state: State) => state.steps.slice(1);

/**
 * The decomposition so far, as the model wrote it: each turn up to its follow-up line, and after a
 * follow-up that was searched, "Intermediate answer:" for the model to continue from.
 */
export function selfAskTranscript(state: State): string {
  let out = '';
  for (const s of written(state)) {
    const text = s.raw.trim();
    const follow = /^.*follow up:.*$/im.exec(text);
    const turn = follow ? text.slice(0, follow.index + follow[0].length) : text;
    out += (out.endsWith(INTERMEDIATE) ? ' ' : out ? '\n' : '') + turn;
    if (s.action.type === 'search') out += `\n${INTERMEDIATE}`;
  }
  return out;
}

// Each follow-up's retrieval replaces the last (as FlashRAG shows them); with no searches left the answer is due.
const context = latestSearchDocs;
const mustAnswer = answerDue;

export const selfAsk: Protocol = {
  name: 'self-ask',
  description: 'Self-Ask: "Follow up:" questions searched one by one, "Intermediate answer:" from their documents, "So the final answer is:"',
  defaults: { maxTurns: 6, maxSearches: 5, topK: 5, maxTokens: 256, stop: [INTERMEDIATE] },
  allowed: (state) => (mustAnswer(state) ? ['answer'] : ['search', 'answer']),
  fixedAction: (state) => (state.steps.length === 0 && !state.mustAnswer ? { type: 'search', query: state.question.question } : undefined),
  render(state: State, opts: RenderOptions = {}): Message[] {
    const transcript = selfAskTranscript(state);
    return [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: `Context:\n${context(state)}\n\nQuestion: ${state.question.question}\nAre follow up questions needed here: Yes.${transcript ? `\n${transcript}` : ''}${opts.forced || mustAnswer(state) ? `\n\n${FORCED}` : ''}` },
    ];
  },
  template: {
    kinds: {
      main: {
        description: 'the whole prompt',
        fields: {
          question: { required: true, description: 'the question' },
          context: { required: true, description: 'the latest search\'s documents, "Doc 1 (Title: …) text" lines' },
          transcript: { required: true, description: 'the follow-ups and intermediate answers so far, ending in "Intermediate answer:" after a search (empty before the first)' },
        },
      },
    },
    fill: (state, opts) => ({ kind: 'main', values: { question: state.question.question, context: context(state), transcript: selfAskTranscript(state) }, continuation: [], ...(opts.forced || mustAnswer(state) ? { forcedNote: FORCED } : {}) }),
  },
  /** "So the final answer is: X" → answer X; else the first "Follow up: q" → search q. */
  parse(text: string, state: State): Action {
    const fin = /so the final answer is:\s*(.*)/i.exec(text);
    if (fin) {
      const answer = (fin[1] ?? '').trim();
      return isBlank(answer) ? invalid(`empty answer after "${FINAL_ANSWER}"`) : { type: 'answer', answer };
    }
    if (mustAnswer(state)) return invalid(`no "${FINAL_ANSWER}"`);
    const follow = /follow up:\s*(.*)/i.exec(text);
    if (!follow) return invalid(`no "${FOLLOW_UP}" or "${FINAL_ANSWER}"`);
    return isBlank(follow[1]) ? invalid('empty follow-up question') : { type: 'search', query: follow[1]!.trim() };
  },
  /** After a searched follow-up, the intermediate answer first: the sentence the next step rests on, when the gold plan finds one. */
  format(action: Action, state: State): string {
    const afterFollowUp = written(state).at(-1)?.action.type === 'search';
    const intermediate = afterFollowUp ? `${groundingQuote(action, state) ?? 'The context does not say.'}\n` : '';
    if (action.type === 'search') return `${intermediate}${FOLLOW_UP} ${action.query}`;
    return action.type === 'answer' ? `${intermediate}${FINAL_ANSWER} ${action.answer}` : '';
  },
};
