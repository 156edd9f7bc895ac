/**
 * The released RL search agents that share Search-R1's rollout loop (search_r1/llm_agent/generation.py
 * and its forks), in the tag structure their checkpoints were trained on, so that those checkpoints can
 * be evaluated as their papers did:
 *   search-r1-released  Search-R1 (Jin et al., 2025): <think>, <search> → <information>, <answer>
 *   zerosearch          ZeroSearch (Sun et al., 2025): the same loop; documents as "Doc N: text"
 *   autorefine          AutoRefine (Shi et al., 2025): <documents> in place of <information>, and a
 *                       <refine> summary after each search (written by the model, never parsed)
 * What the loop does, and these protocols with it: a turn's action is its first complete
 * <search>…</search> or <answer>…</answer> (content stripped; a tag cut off at its stop string also
 * counts, since ragtrail's backends drop stop strings); the environment answers a search with
 * "\n\n<OBS>docs</OBS>\n\n" and a turn with neither with Search-R1's fixed notice; once the budget is
 * spent the model gets one more turn, with no notice (the loop's final `do_search=False` generation).
 * Documents keep the wiki-18 corpus's quoted titles: `Doc 1(Title: "Euclid") text`, joined by "\n".
 * The `search-r1` protocol is LWS's variant (a <reflect> step, LWS's instruction); this is the original.
 * Prompts here are in this project's words; `--prompt-template FILE` loads the authors' exact text.
 */
import type { Action, Message, RetrievedDoc } from '../core/trajectory.js';
import { pyStrip } from '../core/text.js';
import type { State } from '../env/env.js';
import { type Protocol, thoughtFor } from './protocol.js';
import { searchR1 } from './search-r1.js';
import { SEARCH_R1_INVALID_NOTICE } from './transcript.js';

/** One member of the family: its name, prompt, observation tag and document lines. */
interface FamilyMember {
  name: string;
  description: string;
  instructions: string;
  observationTag: 'information' | 'documents';
  docLine: (d: RetrievedDoc, i: number) => string;
  defaults: Protocol['defaults'];
  /** AutoRefine: the model refines each search's documents in <refine> before going on. */
  refine?: boolean;
}

/** Search-R1's document line: 1-based, no space before "(Title:", the corpus title in its quotes. */
export const searchR1DocLine = (d: RetrievedDoc, i: number) => `Doc ${i + 1}(Title: "${d.title}") ${d.text}`;

/** The environment's reply to a search: the documents, one per line, stripped as the loop strips them. */
export function observation(tag: string, docs: readonly RetrievedDoc[], line: (d: RetrievedDoc, i: number) => string): string {
  return `\n\n<${tag}>${pyStrip(docs.map((d, i) => `${line(d, i)}\n`).join(''))}</${tag}>\n\n`;
}

/** A model turn as the loop keeps it: cut after the first closing </search> (else </answer>), a tag cut off at its stop string closed again. */
export function keptTurn(raw: string, action: Action): string {
  for (const tag of ['search', 'answer']) {
    const close = raw.indexOf(`</${tag}>`);
    if (close >= 0) return raw.slice(0, close + tag.length + 3);
  }
  if (action.type === 'search') return `${raw}</search>`;
  if (action.type === 'answer') return `${raw}</answer>`;
  return raw;
}

function member(m: FamilyMember): Protocol {
  const p: Protocol = {
    name: m.name,
    description: m.description,
    defaults: m.defaults,
    allowed: (state) => (state.mustAnswer ? ['answer'] : ['search', 'answer']),
    render(state: State): Message[] {
      const messages: Message[] = [{ role: 'user', content: `${m.instructions} Question: ${state.question.question}\n` }];
      for (const step of state.steps) {
        messages.push({ role: 'assistant', content: keptTurn(step.raw, step.action) });
        if (step.action.type === 'search') messages.push({ role: 'user', content: observation(m.observationTag, step.docs ?? [], m.docLine) });
        else if (step.action.type === 'invalid') messages.push({ role: 'user', content: SEARCH_R1_INVALID_NOTICE });
      }
      return messages;
    },
    template: {
      kinds: { main: { description: "the opening user message (instructions and question); the turns after it are the loop's", fields: { question: { required: true, description: 'the question' } } } },
      fill: (state) => ({ kind: 'main', values: { question: state.question.question }, continuation: p.render(state).slice(1) }),
    },
    // The first complete <search>/<answer> pair, as postprocess_predictions reads it (or one cut off at its
    // stop string): `search-r1`'s reading. The authors' loop would search for "" (or score an empty
    // answer); there, an empty tag is a format failure.
    parse: searchR1.parse,
    format(action: Action, state: State): string {
      const last = state.steps.at(-1);
      const refine = m.refine && last?.action.type === 'search' ? `<refine> ${thoughtFor(action, state) || 'The documents do not settle it yet.'} </refine>\n` : '';
      const think = `<think> ${thoughtFor(action, state)} </think>`;
      if (action.type === 'search') return `${refine}${think}\n<search> ${action.query} </search>`;
      if (action.type === 'answer') return `${refine}${think}\n<answer> ${action.answer} </answer>`;
      return think;
    },
  };
  return p;
}

const SEARCH_R1_WORDS =
  'Answer the question below. Reason inside <think> and </think> first, and again each time new information arrives. If you find you are missing knowledge, search by writing a query between <search> and </search>; the top results come back between <information> and </information>. You may search as often as you need. When no more outside knowledge is needed, give the answer between <answer> and </answer>, briefly and without explanation, for example <answer> Beijing </answer>.';

export const searchR1Released = member({
  name: 'search-r1-released',
  description: 'Search-R1 as released: <think>, <search> → <information> (Doc N(Title: "T") text), <answer>; no <reflect>',
  instructions: SEARCH_R1_WORDS,
  observationTag: 'information',
  docLine: searchR1DocLine,
  // Search-R1's retriever top 3 (train and eval scripts); budgets of its inference loop.
  defaults: { maxTurns: 5, topK: 3, maxTokens: 512, stop: ['</search>', '</answer>'] },
});

export const zeroSearch = member({
  name: 'zerosearch',
  description: 'ZeroSearch: Search-R1\'s loop and tags, documents as "Doc N: text" lines',
  instructions: SEARCH_R1_WORDS,
  observationTag: 'information',
  // The wiki formatter of ZeroSearch's _search: no title.
  docLine: (d, i) => `Doc ${i + 1}: ${d.text}`,
  // Its README's training command: MAX_TURNS 5, TOPK 5.
  defaults: { maxTurns: 5, topK: 5, maxTokens: 512, stop: ['</search>', '</answer>'] },
});

export const autoRefine = member({
  name: 'autorefine',
  description: 'AutoRefine: <think>, <search> → <documents>, <refine> (a summary of each search), <answer>',
  instructions:
    'Answer the question below. Reason inside <think> and </think> first. When knowledge is missing, search by writing a query between <search> and </search>; the three most relevant documents come back between <documents> and </documents>. After every search, summarise and refine what the documents say that matters, between <refine> and </refine>. You may search more than once. Give the final answer between <answer> and </answer>, concise, for example <answer> Donald Trump </answer>.',
  observationTag: 'documents',
  docLine: searchR1DocLine,
  refine: true,
  // AutoRefine's retriever top 3; max_turns 3 in its eval script.
  defaults: { maxTurns: 4, maxSearches: 3, topK: 3, maxTokens: 512, stop: ['</search>', '</answer>'] },
});
