/**
 * The Search-R1 tag format, as LWS trains it: reasoning in <think>, a query in <search> (the
 * environment answers with <information>), a check in <reflect> before <answer>. Valid shapes
 * (LWS §3.3, "Format Reward"): think, reflect, answer — or (think | search | information | reflect)+
 * answer. Multi-turn chat: each model turn is an assistant message, each <information> block a user
 * message; flattened for a completion backend this is exactly Search-R1's single running transcript.
 */
import type { Action, Message } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import { pyStrip } from '../core/text.js';
import { firstTag, formatDocs, invalid, type Protocol, type RenderOptions, thoughtFor } from './protocol.js';

/**
 * LWS's instruction to the trained model (appendix B.4, "Instruction for Trained RLM"), in ragtrail's
 * words: think first from what the model already knows; answer through <reflect> and <answer> with no
 * search when that is enough; search only when it is not, with a short keyword query; after
 * <information>, reflect and answer, or explain the gap in <reflect> and search again; searching is
 * the last resort, never the default (the paper's point: the multi-stage reward of §3.3 couples the
 * answer's quality with the number of retrievals).
 */
const INSTRUCTIONS = `Answer the question below, following these steps.
1. Start with <think> and </think>: sketch your reasoning briefly, relying on what you already know. Do not assume you need to look anything up.
2. If what you know is enough, summarise your reasoning between <reflect> and </reflect> and then give the final answer between <answer> and </answer>. Do not search in that case.
3. Only if what you know is truly not enough, write a search query between <search> and </search>: a few keywords carrying the key facts (names, dates, places, concepts), not a question in full sentences.
4. The results come back between <information> and </information>. If they are reliable and enough, combine them with your reasoning inside <reflect> and </reflect>, then answer between <answer> and </answer>.
5. If they are not enough, or contradict what you know, say so inside <reflect> and </reflect>, and search again with a revised query if you must.
6. The final answer is short and clear, without explanation, for example <answer> Paris </answer>. Reasoning comes first; searching is a last resort, not the default.`;

const RETRY = 'Your last turn had neither a <search> query nor an <answer>. To search, put the query between <search> and </search>; to finish, put the answer between <answer> and </answer>.';
const FORCE = 'You have no searches left. Give your final answer now between <answer> and </answer>.';

/**
 * A model turn as it should be shown back to the model: closed tags even if generation stopped early.
 * A turn cut at its stop string keeps the text before it as written (`<search> q ` + `</search>`), as
 * Search-R1's transcript keeps the generation up to and including the stop string: so a backend that
 * drops stop strings (vLLM, llama.cpp) and one that keeps them (transformers serve) give the model
 * the same next prompt.
 */
function closedTurn(raw: string, action: Action): string {
  const t = raw.trimEnd();
  if (action.type === 'search' && !t.endsWith('</search>')) return `${raw}</search>`;
  if (action.type === 'answer' && !t.endsWith('</answer>')) return `${raw}</answer>`;
  return t;
}

export const searchR1: Protocol = {
  name: 'search-r1',
  description: 'Search-R1 / LWS tags: <think>, <search> → <information>, <reflect>, <answer>',
  // Search-R1's retriever returns 3 documents per search (its train and eval scripts' topk).
  defaults: { maxTurns: 5, topK: 3, maxTokens: 512, stop: ['</search>', '</answer>'] },
  allowed: (state) => (state.mustAnswer ? ['answer'] : ['search', 'answer']),

  render(state: State, opts: RenderOptions = {}): Message[] {
    const messages: Message[] = [{ role: 'user', content: `${INSTRUCTIONS}\nQuestion: ${state.question.question}\n` }];
    for (const step of state.steps) {
      messages.push({ role: 'assistant', content: closedTurn(step.raw, step.action) });
      if (step.action.type === 'search') messages.push({ role: 'user', content: `\n\n<information>${formatDocs(step.docs ?? [])}</information>\n\n` });
      else if (step.action.type === 'invalid') messages.push({ role: 'user', content: `\n${RETRY}\n` });
    }
    if (opts.forced) messages.push({ role: 'user', content: `\n${FORCE}\n` });
    return messages;
  },

  template: {
    kinds: { main: { description: 'the opening user message (instructions and question); the turns after it are the protocol\'s', fields: { question: { required: true, description: 'the question' } } } },
    fill: (state, opts) => ({ kind: 'main', values: { question: state.question.question }, continuation: searchR1.render(state, opts).slice(1) }),
  },

  parse(text: string): Action {
    const hit = firstTag(text, ['search', 'answer']);
    if (!hit) return invalid('no <search> or <answer> tag');
    if (hit.content === '') return invalid(`empty <${hit.tag}>`);
    return hit.tag === 'search' ? { type: 'search', query: hit.content } : { type: 'answer', answer: hit.content };
  },

  format(action: Action, state: State): string {
    const think = `<think> ${thoughtFor(action, state)} </think>`;
    if (action.type === 'search') return `${think}\n<search> ${action.query} </search>`;
    if (action.type === 'answer') return `${think}\n<reflect> The information above supports this answer. </reflect>\n<answer> ${action.answer} </answer>`;
    return think;
  },
};

/** Documents of one Search-R1 <information> block (`Doc 1(Title: …) text` lines, as FlashRAG writes them). */
export function parseInformation(block: string): { title: string; text: string }[] {
  const docs: { title: string; text: string }[] = [];
  const re = /Doc \d+\s*\(Title:\s*([\s\S]*?)\)\s([\s\S]*?)(?=\nDoc \d+\s*\(Title:|$)/g;
  for (const m of block.matchAll(re)) {
    let title = (m[1] ?? '').trim();
    if (title.length >= 2 && title.startsWith('"') && title.endsWith('"')) title = title.slice(1, -1);
    docs.push({ title, text: (m[2] ?? '').trim() });
  }
  return docs;
}

/**
 * Search-R1's own reading of a turn (`postprocess_predictions` in search_r1/llm_agent/generation.py):
 * the first complete `<search>…</search>` or `<answer>…</answer>` pair (DOTALL), its content stripped
 * as Python strips; an empty pair is a valid action, an unclosed tag is none. ragtrail's `parse` above
 * also accepts a tag cut off at its stop string, because ragtrail's backends drop the stop string.
 */
export function parseSearchR1Turn(text: string): Action {
  const m = /<(search|answer)>([\s\S]*?)<\/\1>/.exec(text);
  if (!m) return { type: 'invalid', reason: 'no complete <search>…</search> or <answer>…</answer>' };
  const content = pyStrip(m[2]!);
  return m[1] === 'search' ? { type: 'search', query: content } : { type: 'answer', answer: content };
}
