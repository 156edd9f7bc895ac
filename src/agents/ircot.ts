/**
 * IRCoT (Trivedi et al., ACL 2023, "Interleaving Retrieval with Chain-of-Thought Reasoning for
 * Knowledge-Intensive Multi-Step Questions"), a baseline of ReasonRAG's and LWS's tables. Retrieve
 * with the question; then, in turn, the model writes the next sentence of its chain of thought over
 * every paragraph retrieved so far, and that sentence — the first of the reply — is the next query (the
 * paper's "reason" and "retrieve" steps) — until a sentence says "So the answer is:" or the budget ends. Paragraphs
 * accumulate across steps, deduplicated, at most {@link IRCOT_MAX_PARAGRAPHS} (the paper caps the
 * reader's paragraphs too).
 */
import type { Action, Message, RetrievedDoc } from '../core/trajectory.js';
import { proseSentences } from '../core/text.js';
import type { State } from '../env/env.js';
import { answerDue, invalid, isBlank, type Protocol, type RenderOptions } from './protocol.js';
import { SYSTEM } from './rag-gym.js';

/** The phrase that ends an IRCoT chain (the paper's and its demonstrations'). */
export const IRCOT_ANSWER_CUE = 'So the answer is:';
/** Paragraphs shown at most, in the order they were first retrieved. */
export const IRCOT_MAX_PARAGRAPHS = 15;

const RULES = `Reason towards the answer one step at a time. Write only the next sentence of your reasoning; it will be used to look up more paragraphs. When a sentence can give the final answer, write it as "${IRCOT_ANSWER_CUE} <short answer>."`;
const FORCED = `No more paragraphs will be looked up. Write one sentence: "${IRCOT_ANSWER_CUE} <short answer>."`;

/** The first sentence of a line (core/text.ts proseSentences: initials and abbreviations do not end one). */
export function firstSentence(line: string): string {
  return proseSentences(line)[0] ?? '';
}

/** Every paragraph retrieved so far, once each, in the order first seen, at most IRCOT_MAX_PARAGRAPHS. */
export function ircotParagraphs(state: State): RetrievedDoc[] {
  const seen = new Set<string>();
  const out: RetrievedDoc[] = [];
  for (const d of state.steps.flatMap((s) => s.docs ?? [])) {
    if (seen.has(d.passageId) || out.length >= IRCOT_MAX_PARAGRAPHS) continue;
    seen.add(d.passageId);
    out.push(d);
  }
  return out;
}

/** The chain of thought so far: the sentences the model wrote (every search after the first, which is the question). */
function chain(state: State): string {
  return state.steps.slice(1).flatMap((s) => (s.action.type === 'search' ? [s.action.query] : [])).join(' ');
}

const paragraphBlock = (state: State) => ircotParagraphs(state).map((d) => `Title: ${d.title}\n${d.text}`).join('\n\n') || '(none)';

/** The answer is due: forced, or no searches left (a further thought could not be looked up). */
const mustAnswer = answerDue;

export const ircot: Protocol = {
  name: 'ircot',
  description: 'IRCoT: each next sentence of the chain of thought is the next query; paragraphs accumulate; ends at "So the answer is:"',
  defaults: { maxTurns: 6, maxSearches: 5, topK: 5, maxTokens: 128 },
  allowed: (state) => (mustAnswer(state) ? ['answer'] : ['search', 'answer']),
  fixedAction: (state) => (state.steps.length === 0 && !state.mustAnswer ? { type: 'search', query: state.question.question } : undefined),
  render(state: State, opts: RenderOptions = {}): Message[] {
    const so = chain(state);
    return [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: `Paragraphs:\n${paragraphBlock(state)}\n\nQuestion: ${state.question.question}\nReasoning so far: ${so || '(nothing yet)'}\n\n${opts.forced || mustAnswer(state) ? FORCED : RULES}` },
    ];
  },
  template: {
    kinds: {
      main: {
        description: 'the whole prompt',
        fields: {
          question: { required: true, description: 'the question' },
          paragraphs: { required: true, description: 'every paragraph retrieved so far, "Title: …" then its text, once each' },
          chain: { required: true, description: 'the sentences of reasoning written so far, space-separated ("(nothing yet)" before the first)' },
        },
      },
    },
    fill: (state, opts) => ({ kind: 'main', values: { question: state.question.question, paragraphs: paragraphBlock(state), chain: chain(state) || '(nothing yet)' }, continuation: [], ...(opts.forced || mustAnswer(state) ? { forcedNote: FORCED } : {}) }),
  },
  /**
   * The paper's step: the first sentence generated. When it carries "So the answer is:" (any case), the
   * rest of its line is the answer (EM's normalisation drops a final period); otherwise that sentence is
   * the next query. A reply that goes on past its first sentence — a whole chain at once — is cut there, so
   * the next hop is still retrieved for. Once the answer is due, the cue anywhere in the reply counts.
   */
  parse(text: string, state: State): Action {
    const line = text.split('\n').map((l) => l.trim()).find((l) => l !== '') ?? '';
    const first = firstSentence(line);
    const cue = (s: string) => s.toLowerCase().indexOf(IRCOT_ANSWER_CUE.toLowerCase());
    const due = mustAnswer(state);
    const scope = due ? text : line;
    const at = cue(due ? text : first) >= 0 ? cue(scope) : -1;
    if (at >= 0) {
      const answer = (scope.slice(at + IRCOT_ANSWER_CUE.length).split('\n')[0] ?? '').trim();
      return isBlank(answer) ? invalid(`empty answer after "${IRCOT_ANSWER_CUE}"`) : { type: 'answer', answer };
    }
    if (due) return invalid(`no "${IRCOT_ANSWER_CUE}"`);
    return isBlank(first) ? invalid('empty reasoning step') : { type: 'search', query: first };
  },
  format: (action) => (action.type === 'search' ? action.query : action.type === 'answer' ? `${IRCOT_ANSWER_CUE} ${action.answer}` : ''),
};
