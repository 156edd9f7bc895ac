/**
 * ReSearch (Chen et al., 2025; Agent-RL/ReSearch, the `re-search` branch of the ReCall repository), in
 * the format its released checkpoints were trained on (vLLMRolloutWithSearch, re_search.py): reasoning in
 * <think>, a query in <search> — generation stops at `</search>`, which stays in the text — and the
 * environment glues ` <result>\n…\n</result>` right after it, the documents as the corpus holds them
 * (`"Title"\ntext`) separated by a blank line. The answer is the `\boxed{…}` (the last one, braces
 * balanced) inside the first <answer>…</answer>; an <answer> without it scores nothing there, and is a
 * format failure here. The query is the text between the last <search> and the last </search>.
 * (RAG-Gym's ReSearch agent, a different design, is `research`.) Differences: the authors have no notice
 * for a turn with neither tag (the episode simply ends at EOS); the environment here asks again.
 * Prompt in this project's words; the authors' exact system prompt loads with `--prompt-template FILE`.
 */
import type { Action, Message, RetrievedDoc } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import { invalid, isBlank, type Protocol, systemThenQuestion, thoughtFor } from './protocol.js';

const INSTRUCTIONS = String.raw`You answer the question step by step, and may use a Wikipedia search tool while you think. Think first, inside <think> </think>; to look something up, write the query inside <search> </search>, and the results come back inside <result> </result>. Then think again, and so on. Finish with the answer inside <answer> </answer>, ending with the exact final answer in LaTeX \boxed{}, for example <think> reasoning </think> <search> query </search> <result> results </result> <think> reasoning </think> <answer> The final answer is \[ \boxed{answer here} \] </answer>.`;

/** The environment's text after a search: glued to the turn's </search>, with no newline after </result>. */
export function reSearchObservation(docs: readonly RetrievedDoc[]): string {
  return ` <result>\n${docs.map((d) => `"${d.title}"\n${d.text}\n\n`).join('').trim()}\n</result>`;
}

/** The content of the last \boxed{…} in `s`, braces balanced (`\boxed x` without braces also counts), or undefined. */
export function lastBoxed(s: string): string | undefined {
  const at = s.lastIndexOf('\\boxed');
  if (at < 0) return undefined;
  const rest = s.slice(at + '\\boxed'.length);
  if (rest.startsWith(' ')) return rest.slice(1).split('$')[0]!.trim();
  if (!rest.startsWith('{')) return undefined;
  let depth = 0;
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === '{') depth++;
    else if (rest[i] === '}' && --depth === 0) return rest.slice(1, i);
  }
  return undefined;
}

export const reSearch: Protocol = {
  name: 're-search',
  description: 'ReSearch (Agent-RL): <think>, <search> → " <result>…</result>", <answer> with \\boxed{}',
  // top_n 5 in its training and evaluation configs; the authors bound episodes by length only.
  defaults: { maxTurns: 10, topK: 5, maxTokens: 512, stop: ['</search>'] },
  allowed: (state) => (state.mustAnswer ? ['answer'] : ['search', 'answer']),
  render(state: State): Message[] {
    const messages = systemThenQuestion(INSTRUCTIONS, state);
    for (const step of state.steps) {
      // The stop string stays in the authors' text: written back where the backend dropped it.
      const turn = step.action.type === 'search' && !step.raw.trimEnd().endsWith('</search>') ? `${step.raw}</search>` : step.raw;
      messages.push({ role: 'assistant', content: turn });
      if (step.action.type === 'search') messages.push({ role: 'user', content: reSearchObservation(step.docs ?? []) });
      else if (step.action.type === 'invalid') messages.push({ role: 'user', content: ' Continue with <search> </search> or finish with <answer> </answer> and \\boxed{}.' });
    }
    return messages;
  },
  template: {
    kinds: { main: { description: 'the instructions (system) and the question (user); the turns after them are the rollout\'s', fields: { question: { required: true, description: 'the question' } } } },
    fill: (state) => ({ kind: 'main', values: { question: state.question.question }, continuation: reSearch.render(state).slice(2) }),
  },
  /**
   * A search when the turn ends in one (generation stops at </search>, or was cut inside it): the text
   * between the last <search> and </search>. Otherwise the first <answer>…</answer>'s last \boxed{}.
   */
  parse(text: string): Action {
    const open = text.lastIndexOf('<search>');
    const close = text.lastIndexOf('</search>');
    if (open >= 0 && (close < open || text.slice(close + 9).trim() === '')) {
      const query = (close > open ? text.slice(open + 8, close) : text.slice(open + 8)).trim();
      return isBlank(query) ? invalid('empty <search>') : { type: 'search', query };
    }
    const answer = /<answer>([\s\S]*?)<\/answer>/.exec(text)?.[1] ?? (text.includes('<answer>') ? text.slice(text.indexOf('<answer>') + 8) : undefined);
    if (answer === undefined) return invalid('no <search> or <answer>');
    const boxed = lastBoxed(answer);
    return boxed === undefined ? invalid('no \\boxed{} in <answer>') : isBlank(boxed) ? invalid('empty \\boxed{}') : { type: 'answer', answer: boxed.trim() };
  },
  format(action: Action, state: State): string {
    const lead = state.steps.length ? ' ' : '';
    const think = `${lead}<think> ${thoughtFor(action, state)} </think>`;
    if (action.type === 'search') return `${think} <search> ${action.query} </search>`;
    if (action.type === 'answer') return `${think} <answer> The final answer is \\[ \\boxed{${action.answer}} \\] </answer>`;
    return think;
  },
};
