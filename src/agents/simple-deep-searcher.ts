/**
 * SimpleDeepSearcher (Sun et al., 2025; RUCAIBox/SimpleDeepSearcher), a baseline of LWS's and ARENA's
 * tables, in the format its released models were fine-tuned on (inference/inference.py): one running
 * assistant turn in which the model writes `<|begin_search_query|>query<|end_search_query|>` — generation
 * stops there, the stop string kept — and the harness splices in
 * `\n\n<|begin_search_result|>ANALYSIS<|end_search_result|>\n\n`, where ANALYSIS is a second model call
 * (the reader) over the search's documents and the reasoning so far, kept after its last
 * "**Final Information**" marker with every newline removed; a repeated query gets the harness's notice
 * instead. The answer is the last `\boxed{…}` (read as the authors read it: greedy to the last "}" on its
 * line, a `\text{…}` inside unwrapped, parentheses stripped). The reader is the agent's own model here
 * (the authors serve a separate one); prompts in this project's words.
 */
import type { Action, Message, Step } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import type { LLM } from '../llm/types.js';
import { formatDocs, invalid, isBlank, type Protocol, thoughtFor } from './protocol.js';

export const BEGIN_SEARCH_QUERY = '<|begin_search_query|>';
export const END_SEARCH_QUERY = '<|end_search_query|>';
export const BEGIN_SEARCH_RESULT = '<|begin_search_result|>';
export const END_SEARCH_RESULT = '<|end_search_result|>';
/** The harness's notice for a query searched before (the authors' wording is a fact of the format). */
export const REPEATED_QUERY = `\n${BEGIN_SEARCH_RESULT}\nYou have searched this query. Please refer to previous results.\n${END_SEARCH_RESULT}\n`;
const FINAL_MARK = '**Final Information**';

const instructions = (maxSearches: number) => `You are a reasoning assistant who can search the web. To look something up, write ${BEGIN_SEARCH_QUERY} your query ${END_SEARCH_QUERY}; the system then returns what the pages say, between ${BEGIN_SEARCH_RESULT} and ${END_SEARCH_RESULT}. Search whenever you are unsure of a fact, at most ${maxSearches} times, then go on reasoning. Never write the result markers yourself.

Answer the question below, thinking step by step. Give the final answer as \\boxed{YOUR_ANSWER}.

Question:
`;

/** The query of a turn that ends in one: the text between the last begin marker and the end marker (or the turn's end). */
function queryOf(text: string): string | undefined {
  const at = text.lastIndexOf(BEGIN_SEARCH_QUERY);
  if (at < 0) return undefined;
  const rest = text.slice(at + BEGIN_SEARCH_QUERY.length);
  const end = rest.indexOf(END_SEARCH_QUERY);
  if (end >= 0 && rest.slice(end + END_SEARCH_QUERY.length).trim() !== '') return undefined; // the turn went on past its query
  return (end >= 0 ? rest.slice(0, end) : rest).trim();
}

/** The answer as the authors' evaluate.extract_answer reads it (see the module comment). */
export function simpleDeepSearcherAnswer(text: string): string | undefined {
  let found: string | undefined;
  for (const line of text.split('\n')) {
    const at = line.indexOf('\\boxed{');
    const close = line.lastIndexOf('}');
    if (at >= 0 && close > at + 6) found = line.slice(at + 7, close);
  }
  if (found === undefined) return undefined;
  const inner = /\\text\{(.*)\}/.exec(found)?.[1];
  return (inner ?? found).replace(/^[()]+|[()]+$/g, '').trim();
}

/** The reader's analysis of a search: after its last "**Final Information**", newlines removed, code fences stripped. */
export function readerAnalysis(reply: string): string {
  const at = reply.lastIndexOf(FINAL_MARK);
  const kept = at >= 0 ? reply.slice(at + FINAL_MARK.length).replace(/\n/g, '') : reply;
  return kept.replace(/^`+|`+$/g, '').trim() || 'None';
}

const searchSteps = (state: State) => state.steps.filter((s): s is Step & { action: { type: 'search'; query: string } } => s.action.type === 'search');
/** Whether a search step repeats an earlier query of the episode. */
const repeated = (state: State, step: Step) => {
  const all = searchSteps(state);
  const i = all.indexOf(step as (typeof all)[number]);
  return i > 0 && all.slice(0, i).some((s) => s.action.query === (step.action as { query: string }).query);
};

const turnText = (s: Step) => (s.action.type === 'search' && !s.raw.trimEnd().endsWith(END_SEARCH_QUERY) ? `${s.raw}${END_SEARCH_QUERY}` : s.raw);

export const simpleDeepSearcher: Protocol = {
  name: 'simple-deep-searcher',
  description: 'SimpleDeepSearcher: <|begin_search_query|> … <|end_search_query|> → a reader\'s analysis in <|begin_search_result|> … <|end_search_result|>, \\boxed{} answer',
  // Its inference defaults: 10 searches, 15 rounds, 10 results per query.
  defaults: { maxTurns: 15, maxSearches: 10, topK: 10, maxTokens: 1024, stop: [END_SEARCH_QUERY] },
  allowed: (state) => (state.mustAnswer ? ['answer'] : ['search', 'answer']),
  /** The reader's analysis of each new search (a repeated query gets the notice instead), at temperature 0. */
  async prepare(state: State, llm: LLM): Promise<void> {
    for (const s of searchSteps(state)) {
      if (s.summary !== undefined || repeated(state, s)) continue;
      const before = state.steps.slice(0, state.steps.indexOf(s) + 1).map((x) => turnText(x)).join('\n');
      const reply = await llm.generate({
        messages: [{ role: 'user', content: `Earlier reasoning:\n${before}\n\nSearch query: ${s.action.query}\n\nPages found:\n${formatDocs(s.docs ?? [])}\n\nFrom these pages, write what answers the search query and helps the reasoning go on, accurately and briefly. End with ${FINAL_MARK} followed by that information.` }],
        temperature: 0,
        maxTokens: 512,
      });
      s.summary = readerAnalysis(reply.choices[0]?.text ?? '');
    }
  },
  render(state: State): Message[] {
    const messages: Message[] = [{ role: 'user', content: `${instructions(simpleDeepSearcher.defaults.maxSearches!)}${state.question.question}\n\n` }];
    for (const s of state.steps) {
      messages.push({ role: 'assistant', content: turnText(s) });
      if (s.action.type === 'search') messages.push({ role: 'user', content: repeated(state, s) ? REPEATED_QUERY : `\n\n${BEGIN_SEARCH_RESULT}${s.summary ?? 'None'}${END_SEARCH_RESULT}\n\n` });
    }
    return messages;
  },
  template: {
    kinds: { main: { description: "the user message (instructions and question); the turns after it are the harness's", fields: { question: { required: true, description: 'the question' } } } },
    fill: (state) => ({ kind: 'main', values: { question: state.question.question }, continuation: simpleDeepSearcher.render(state).slice(1) }),
  },
  /** A search when the turn ends in a query; otherwise the last \boxed{} answer. */
  parse(text: string, state: State): Action {
    const query = state.mustAnswer ? undefined : queryOf(text);
    if (query !== undefined) return isBlank(query) ? invalid('empty search query') : { type: 'search', query };
    const answer = simpleDeepSearcherAnswer(text);
    return answer === undefined ? invalid('no search query at the end and no \\boxed{} answer') : isBlank(answer) ? invalid('empty \\boxed{}') : { type: 'answer', answer };
  },
  format(action: Action, state: State): string {
    if (action.type === 'search') return `${thoughtFor(action, state)}\n\n${BEGIN_SEARCH_QUERY}${action.query}${END_SEARCH_QUERY}`;
    if (action.type === 'answer') return `${thoughtFor(action, state)}\n\n**Final Answer**\n\\boxed{${action.answer}}`;
    return '';
  },
};
