/**
 * O²-Searcher (Mei et al., 2025, "O²-Searcher: A Searching-based Agent Model for Open-Domain Open-Ended
 * Question Answering", arXiv 2505.16582; Acade-Mate/O2-Searcher; its released 3B checkpoint
 * Jianbiao/O2-Searcher-Qwen2.5-3B-GRPO; a baseline row of LWS's Table 3), in the format that checkpoint
 * was trained on for closed-ended questions. Read at commit 58af6ff5680ac24a30a3030fb35a83928ac2374e:
 * o2searcher/generation.py (the rollout loop, a fork of Search-R1's), o2searcher/prompts.py,
 * o2searcher/searcher/run_closedended.py (the Wikipedia search service), scripts/train/run_o2searcher_grpo.sh,
 * scripts/data/o2searcher_dataset.py (the first prompt) and scripts/eval/infer_agent.py.
 *
 * The format: a chat whose system message holds the instructions and whose first user message is
 * "Initial query: Q". The model reasons in <think>, and searches with several queries at once,
 * `<search>\n<query>q1</query>\n<query>q2</query>\n</search>` (one to five, the prompt says); the loop
 * keeps a turn up to its first </search> (else its first </answer>) and reads the turn's first complete
 * <search>…</search> or <answer>…</answer> (a tag cut off at its stop string also counts: ragtrail's
 * backends drop stop strings, put back here as the loop would have kept them); the queries are every
 * <query>…</query> inside that <search>, stripped. Each query is retrieved on its own (top 3; the search
 * action's `queries`, see core/trajectory) and the environment answers with a user message
 * `Search learnings: <learnings>L</learnings>.\n`, where L — the search service's text, stripped — has one
 * line per query, in order: that query's documents as the wiki-18 corpus holds them (`"Title"\ntext`),
 * joined by a space; repeats across queries are kept. A turn with neither tag gets the loop's notice (its
 * wording, a fact of the format). The answer is the <answer> content (the reward reads the last <answer>
 * of the text, which is this one). Four turns, then one more whose search is not run (the loop's final `do_search=False` generation); 2048 tokens a turn.
 *
 * Differences from the authors' code, each deliberate:
 * - A <search> with no <query> inside: the training loop sends no query and shows an empty <learnings>;
 *   infer_agent.py answers it with the notice. Here it is an invalid step with the notice, as there. An
 *   empty <query></query> is dropped (the loop would search for "").
 * - The search service pads a query that returns fewer than k documents with " " entries; not
 *   reproduced (the text differs only when the retriever returns fewer than k).
 * - The training loop appends the environment's "<|im_start|>user\n…" right after the model's text, its
 *   end-of-turn token decoded away; a chat backend closes the model's turn first, as infer_agent.py's
 *   chat messages do.
 * - Budget and reading are the training loop's (four turns and a final one; the first complete tag
 *   decides), not infer_agent.py's (five turns and no final one; an <answer> anywhere ends the episode,
 *   and the queries are every <query> of the reply).
 * - Open-ended questions: the authors' web search service condenses pages into learnings with another
 *   model; only the closed-ended (Wikipedia) service is reproduced here.
 * `query` of a several-query search is the queries joined by "; " (for whatever reads one query).
 * The system prompt is in this project's words; `--prompt-template FILE` loads the authors' exact text.
 */
import { pyStrip } from '../core/text.js';
import type { Action, Message, RetrievedDoc, Step } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import { invalid, type Protocol, thoughtFor } from './protocol.js';
import { keptTurn } from './search-r1-family.js';

/** The loop's notice after a turn with neither a search nor an answer (o2searcher/prompts.py `error_prompt`). */
export const O2_INVALID_NOTICE =
  'The response you attempted before is invalid. If you plan to execute actions like SEARCH, you need to enclose the SEARCH queries within the <search> and </search> tags. Furthermore, the required queries for the SEARCH action should be placed between the <query> and </query> tags. Moreover, if you wish to present the final output for the initial query, you must wrap the result within the <answer> and </answer> tags.\n';

/** How the `query` of a several-query search joins its queries. */
export const O2_QUERY_JOIN = '; ';

const INSTRUCTIONS =
  'You are a careful researcher: for an open-ended query, give a thorough list of key findings; for a specific question, give a precise answer. Whenever you receive new information, first reason about it inside <think> and </think>. If you then find that you lack some knowledge, search with one to five distinct queries written as <search>\n<query>QUERY</query>\n<query>QUERY</query>\n</search>; what they find comes back between <learnings> and </learnings>. Search as many times as you need. Once no more outside knowledge is needed, give the output between <answer> and </answer>.';

/** Python's strip, then JavaScript's (an action's text is trimmed either way). */
const strip = (s: string) => pyStrip(s).trim();

/** The documents of a search step, one list per query (one list when the step searched one query). */
export function queryGroups(step: Pick<Step, 'docs' | 'docsPerQuery'>): RetrievedDoc[][] {
  const docs = step.docs ?? [];
  if (!step.docsPerQuery?.length) return [docs];
  let at = 0;
  return step.docsPerQuery.map((n) => docs.slice(at, (at += n)));
}

/** The environment's reply to a search: each query's documents (`"Title"\ntext`, space-joined) on a line of their own, stripped. */
export function o2Observation(groups: readonly (readonly RetrievedDoc[])[]): string {
  const learnings = groups.map((g) => g.map((d) => `"${d.title}"\n${d.text}`).join(' ')).join('\n');
  return `Search learnings: <learnings>${pyStrip(learnings)}</learnings>.\n`;
}

/**
 * The action tag of a turn as the loop reads it: the first match of `<(search|answer)>(.*?)</\1>` (DOTALL),
 * content stripped. A turn without a complete pair is read with the stop string of its last opened tag
 * put back (the backend dropped it); `protocol.firstTag` would not do, since the <query> tags close
 * inside an open <search>. Linear: the leftmost match opens at the first opening of a tag whose last
 * closing comes after it.
 */
export function o2Tag(text: string): { tag: 'search' | 'answer'; content: string } | undefined {
  const pair = (t: string) => {
    let best: { tag: 'search' | 'answer'; at: number } | undefined;
    for (const tag of ['search', 'answer'] as const) {
      const at = t.indexOf(`<${tag}>`);
      if (at >= 0 && t.lastIndexOf(`</${tag}>`) >= at + tag.length + 2 && (!best || at < best.at)) best = { tag, at };
    }
    if (!best) return undefined;
    const start = best.at + best.tag.length + 2;
    return { tag: best.tag, content: strip(t.slice(start, t.indexOf(`</${best.tag}>`, start))) };
  };
  const hit = pair(text);
  if (hit) return hit;
  const s = text.lastIndexOf('<search>');
  const a = text.lastIndexOf('<answer>');
  return s < 0 && a < 0 ? undefined : pair(`${text}${s > a ? '</search>' : '</answer>'}`);
}

/** Every `<query>…</query>` of a search, in order (`re.findall`, non-overlapping, lazy), stripped. */
export function o2Queries(content: string): string[] {
  const out: string[] = [];
  for (let at = content.indexOf('<query>'); at >= 0; ) {
    const close = content.indexOf('</query>', at + 7);
    if (close < 0) break; // no later <query> closes either
    out.push(strip(content.slice(at + 7, close)));
    at = content.indexOf('<query>', close + 8);
  }
  return out;
}

export const o2Searcher: Protocol = {
  name: 'o2-searcher',
  description: 'O²-Searcher: <think>, <search> of several <query>s → "Search learnings: <learnings>…</learnings>.", <answer>',
  // Its GRPO script: agent.max_turns 4 (and the loop's final turn), searcher.topk 3, 2048-token responses.
  defaults: { maxTurns: 4, topK: 3, maxTokens: 2048, stop: ['</search>', '</answer>'] },
  allowed: (state) => (state.mustAnswer ? ['answer'] : ['search', 'answer']),
  render(state: State): Message[] {
    const messages: Message[] = [
      { role: 'system', content: INSTRUCTIONS },
      { role: 'user', content: `Initial query: ${state.question.question}` },
    ];
    for (const step of state.steps) {
      messages.push({ role: 'assistant', content: keptTurn(step.raw, step.action) });
      if (step.action.type === 'search') messages.push({ role: 'user', content: o2Observation(queryGroups(step)) });
      else if (step.action.type === 'invalid') messages.push({ role: 'user', content: O2_INVALID_NOTICE });
    }
    return messages;
  },
  template: {
    kinds: { main: { description: 'the instructions (system) and "Initial query: Q" (user); the turns after them are the loop\'s', fields: { question: { required: true, description: 'the question' } } } },
    fill: (state) => ({ kind: 'main', values: { question: state.question.question }, continuation: o2Searcher.render(state).slice(2) }),
  },
  /** The first complete <search> or <answer> (or one cut off at its stop string); a search's queries are its <query>s. */
  parse(text: string): Action {
    const hit = o2Tag(text);
    if (!hit) return invalid('no <search> or <answer> tag');
    if (hit.tag === 'answer') return hit.content === '' ? invalid('empty <answer>') : { type: 'answer', answer: hit.content };
    const queries = o2Queries(hit.content).filter((q) => q !== '');
    if (queries.length === 0) return invalid('no <query> in <search>');
    return queries.length === 1 ? { type: 'search', query: queries[0]! } : { type: 'search', query: queries.join(O2_QUERY_JOIN), queries };
  },
  format(action: Action, state: State): string {
    const think = `<think>${thoughtFor(action, state) || 'The learnings so far settle it.'}</think>`;
    if (action.type === 'search') return `${think}\n<search>\n${(action.queries ?? [action.query]).map((q) => `<query>${q}</query>`).join('\n')}\n</search>`;
    if (action.type === 'answer') return `${think}\n<answer>${action.answer}</answer>`;
    return think;
  },
};
