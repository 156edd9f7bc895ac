/**
 * HiPRAG (hierarchical process rewards for agentic RAG; qualidea1217/HiPRAG, a Search-R1 fork), in the
 * format its checkpoints were trained on: one <think> block of <step>s, each `<reasoning>` then either
 * `<search>` → `<context>` → `<conclusion>` or just `<conclusion>`, then `<answer>`. The harness opens
 * the first step for the model ("\n<think>\n<step>\n    <reasoning>"), cuts a turn after its first
 * </search> (or </answer>), and answers a search with "\n    <context>docs</context>\n    <conclusion>" —
 * opening the conclusion the model then writes; documents as Search-R1's (`Doc 1(Title: "T") text`). A
 * turn with neither tag gets HiPRAG's own notice. The answer is the last <answer>…</answer>, stripped.
 * The opening the harness writes is shown in the transcript of past turns; a chat backend cannot be made
 * to continue it for the first turn, so the prompt asks the model to begin that way (a completion
 * backend with `--prompt-template` can end the prompt with it). Prompt in this project's words.
 */
import type { Action, Message } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import { firstTag, invalid, type Protocol, thoughtFor } from './protocol.js';
import { keptTurn, observation, searchR1DocLine } from './search-r1-family.js';

/** What the harness writes before the model's first word. */
export const HIPRAG_OPENING = '\n<think>\n<step>\n    <reasoning>';
/** HiPRAG's notice after a turn with neither a search nor an answer (its training loop's). */
export const HIPRAG_INVALID_NOTICE =
  '\nMy previous action is invalid. If I want to search, I should put the query between <search> and </search>. If I want to use my own knowledge and previous search results, I should directly give the <conclusion>. If I want to give the final answer, I should put the answer between <answer> and </answer>. Let me try again.\n';

const INSTRUCTIONS = `Answer the question by thinking step by step inside one <think> block made of <step> blocks. Each step starts with <reasoning>. If the step needs knowledge you lack, search with <search>query</search>; the results come back in <context>; then close the step with its <conclusion>. A step that needs no search has only <reasoning> and <conclusion>. After </think>, give the final answer in <answer></answer> at once. Keep every tag well formed, for example:
<think>
<step>
    <reasoning>what is known and what is missing</reasoning>
    <search>query</search>
    <context>results</context>
    <conclusion>what the results settle</conclusion>
</step>
<step>
    <reasoning>putting it together</reasoning>
    <conclusion>the answer</conclusion>
</step>
</think>
<answer>short answer</answer>
Begin your reply with <think>, <step> and <reasoning>.`;

/** The environment's reply to a search: the documents in <context>, and the step's <conclusion> opened. */
export function hipragObservation(docs: Parameters<typeof observation>[1]): string {
  const body = observation('context', docs, searchR1DocLine).slice(2, -2); // the documents without Search-R1's surrounding blank lines
  return `\n    ${body}\n    <conclusion>`;
}

export const hiprag: Protocol = {
  name: 'hiprag',
  description: 'HiPRAG: <think> of <step>s (<reasoning>, <search> → <context>, <conclusion>), then <answer>',
  // Its training script: max_turns 4 (and the loop's final turn), retriever top 3.
  defaults: { maxTurns: 5, maxSearches: 4, topK: 3, maxTokens: 512, stop: ['</search>', '</answer>'] },
  allowed: (state) => (state.mustAnswer ? ['answer'] : ['search', 'answer']),
  render(state: State): Message[] {
    const messages: Message[] = [{ role: 'user', content: `${INSTRUCTIONS}\nUser Question: ${state.question.question}` }];
    state.steps.forEach((step, i) => {
      messages.push({ role: 'assistant', content: `${i === 0 ? HIPRAG_OPENING : ''}${keptTurn(step.raw, step.action)}` });
      if (step.action.type === 'search') messages.push({ role: 'user', content: hipragObservation(step.docs ?? []) });
      else if (step.action.type === 'invalid') messages.push({ role: 'user', content: HIPRAG_INVALID_NOTICE });
    });
    return messages;
  },
  template: {
    kinds: { main: { description: "the opening user message (instructions and question); the turns after it are the harness's", fields: { question: { required: true, description: 'the question' } } } },
    fill: (state) => ({ kind: 'main', values: { question: state.question.question }, continuation: hiprag.render(state).slice(1) }),
  },
  /** The first complete <search>…</search> (or one cut at its stop string), else the last <answer>…</answer>. */
  parse(text: string): Action {
    const hit = firstTag(text, ['search', 'answer']);
    if (!hit) return invalid('no <search> or <answer> tag');
    if (hit.tag === 'search') return hit.content === '' ? invalid('empty <search>') : { type: 'search', query: hit.content };
    const last = text.lastIndexOf('<answer>');
    const close = text.indexOf('</answer>', last);
    const answer = (close < 0 ? text.slice(last + 8) : text.slice(last + 8, close)).trim();
    return answer === '' ? invalid('empty <answer>') : { type: 'answer', answer };
  },
  format(action: Action, state: State): string {
    const first = state.steps.length === 0;
    const lead = first ? '' : '</conclusion>\n</step>\n<step>\n    <reasoning>';
    const after = state.steps.at(-1)?.action.type === 'search' ? `${thoughtFor(action, state) || 'The context settles this step.'}` : '';
    if (action.type === 'search') return `${after}${lead}${thoughtFor(action, state) || 'I need to look this up.'}</reasoning>\n    <search>${action.query}</search>`;
    if (action.type === 'answer') return `${after}${first ? '' : '</conclusion>\n</step>\n'}</think>\n<answer>${action.answer}</answer>`;
    return after;
  },
};
