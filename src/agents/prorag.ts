/**
 * ProRAG's step-tag format: each step group is <step>plan</step><subquery>keywords</subquery>, the
 * environment's <retrieval>documents</retrieval>, then <step>…</step><subanswer>intermediate
 * conclusion</subanswer>; the episode ends with <step>…</step><answer>…</answer>. A sub-answer is an
 * `extract` action of the outer MDP. Tag order is not enforced here: the ProRAG format rewards judge it.
 */
import type { Action, Message } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import { firstTag, formatDocs, invalid, type Protocol, type RenderOptions, thoughtFor } from './protocol.js';

/**
 * ProRAG's user prompt (prorag/utils/prompts.py `build_user_prompt`; the paper's §3.1 step schema), in
 * ragtrail's words: a step explains the reasoning that moves toward the answer; a sub-query is a clear,
 * answerable question (not keywords); the retrieval block is the environment's; a sub-answer is the
 * most direct short answer to the sub-query that the retrieval gives; the answer combines the steps
 * and sub-answers.
 */
const INSTRUCTIONS = `Answer the question by reasoning in steps, and write your whole response with these tags:
- <step>…</step>: the reasoning of one step, which should bring you closer to the answer.
- <subquery>…</subquery>: a clear, answerable question (or sub-question) that must be answered to go on; it is searched for you.
- <retrieval>…</retrieval>: the information found for the sub-query; the system writes this block, not you.
- <subanswer>…</subanswer>: the answer to the sub-query just asked, as direct and short as the retrieved information allows.
- <answer>…</answer>: the final answer to the question, combining your steps and sub-answers.
Every <subquery>, <subanswer> and <answer> comes right after a <step> of its own: a step and a sub-query, then after the retrieval a step and the sub-answer, and so on, ending with a step and the answer.`;

const RETRY = 'Your last turn had no <subquery>, <subanswer> or <answer>. Continue with a <step> followed by one of them.';
const FORCE = 'No more searches are allowed. Write a final <step> and then the short answer between <answer> and </answer>.';

function close(raw: string, action: Action): string {
  const t = raw.trimEnd();
  const tag = action.type === 'search' ? 'subquery' : action.type === 'extract' ? 'subanswer' : action.type === 'answer' ? 'answer' : '';
  return tag && !t.endsWith(`</${tag}>`) ? `${t}</${tag}>` : t;
}

export const prorag: Protocol = {
  name: 'prorag',
  description: 'ProRAG step tags: <step> + <subquery> → <retrieval>, <step> + <subanswer>, …, <step> + <answer>',
  defaults: { maxTurns: 10, maxSearches: 5, topK: 3, maxTokens: 384, stop: ['</subquery>', '</subanswer>', '</answer>'] },
  allowed(state) {
    if (state.mustAnswer) return ['answer'];
    const last = state.steps[state.steps.length - 1];
    return last?.action.type === 'search' ? ['extract'] : ['search', 'answer'];
  },
  render(state: State, opts: RenderOptions = {}): Message[] {
    const messages: Message[] = [{ role: 'user', content: `${INSTRUCTIONS}\n\nQuestion: ${state.question.question}` }];
    for (const step of state.steps) {
      messages.push({ role: 'assistant', content: close(step.raw, step.action) });
      if (step.action.type === 'search') messages.push({ role: 'user', content: `<retrieval>\n${formatDocs(step.docs ?? [])}\n</retrieval>` });
      else if (step.action.type === 'invalid') messages.push({ role: 'user', content: RETRY });
    }
    if (opts.forced) messages.push({ role: 'user', content: FORCE });
    return messages;
  },
  template: {
    kinds: { main: { description: 'the opening user message (instructions and question); the turns after it are the protocol\'s', fields: { question: { required: true, description: 'the question' } } } },
    fill: (state, opts) => ({ kind: 'main', values: { question: state.question.question }, continuation: prorag.render(state, opts).slice(1) }),
  },
  parse(text: string): Action {
    const hit = firstTag(text, ['subquery', 'subanswer', 'answer']);
    if (!hit) return invalid('no <subquery>, <subanswer> or <answer>');
    if (hit.content === '') return invalid(`empty <${hit.tag}>`);
    if (hit.tag === 'subquery') return { type: 'search', query: hit.content };
    if (hit.tag === 'subanswer') return { type: 'extract', evidence: hit.content };
    return { type: 'answer', answer: hit.content };
  },
  format(action: Action, state: State): string {
    const step = `<step>${thoughtFor(action, state)}</step>`;
    if (action.type === 'search') return `${step}\n<subquery>${action.query}</subquery>`;
    if (action.type === 'extract') return `${step}\n<subanswer>${action.evidence}</subanswer>`;
    if (action.type === 'answer') return `${step}\n<answer>${action.answer}</answer>`;
    return step;
  },
};
