/**
 * What the data says a good agent would do, for the non-LLM policies: a plan of searches (the gold
 * decomposition's sub-questions; HotpotQA's supporting titles; else the question itself) and the
 * gold answer, plus checks of what the agent has actually retrieved so far.
 */
import type { Question } from '../core/types.js';
import type { Action } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import { retrievedDocs } from '../env/env.js';
import { normalizeAnswer, sentencesOf } from '../core/text.js';

export interface Hop {
  /** The search that finds this hop's fact. */
  query: string;
  /** The hop's answer, when the data gives one (decompositions do). */
  answer?: string;
  passageId?: string;
}

/** MuSiQue writes later sub-questions with "#1"-style references to earlier answers. */
function resolveRefs(text: string, answers: string[]): string {
  return text.replace(/#(\d+)/g, (m, k: string) => answers[Number(k) - 1] ?? m);
}

export function goldPlan(q: Question): Hop[] {
  if (q.decomposition?.length) {
    const answers = q.decomposition.map((d) => d.answer);
    return q.decomposition.map((d) => ({ query: resolveRefs(d.question, answers), answer: d.answer, passageId: d.passageId }));
  }
  if (q.supporting?.length && q.context?.length) {
    const titles = q.supporting.map((id) => q.context?.find((p) => p.id === id)?.title).filter((t): t is string => !!t);
    if (titles.length) return titles.map((t, i) => ({ query: t, passageId: q.supporting![i] }));
  }
  return [{ query: q.question }];
}

/** True when some retrieved document states the text (normalised containment) or is the named passage. */
export function retrieved(state: State, text: string | undefined, passageId?: string): boolean {
  const docs = retrievedDocs(state);
  if (passageId && docs.some((d) => d.passageId === passageId)) return true;
  if (!text) return false;
  return docsState(docs, text);
}

/** True when some document (title and text, normalised) states `text` as whole words: "Keceovia" is not stated by "a Keceovian novelist". */
export function docsState(docs: readonly { title: string; text: string }[], text: string): boolean {
  const t = normalizeAnswer(text);
  return t !== '' && docs.some((d) => ` ${normalizeAnswer(`${d.title} ${d.text}`)} `.includes(` ${t} `));
}

export function searchesSoFar(state: State): string[] {
  return state.steps.flatMap((s) => (s.action.type === 'search' ? [s.action.query] : []));
}

/** The sentence of the latest search's documents that mentions `needle`, else its first sentence, else "None". */
export function evidenceFrom(state: State, needle?: string): string {
  const last = [...state.steps].reverse().find((s) => s.action.type === 'search');
  const sentences = (last?.docs ?? []).flatMap((d) => sentencesOf(d.text));
  if (needle) {
    const n = normalizeAnswer(needle);
    const hit = sentences.find((s) => normalizeAnswer(s).includes(n));
    if (hit) return hit;
  }
  return sentences[0] || 'None';
}

/**
 * The retrieved sentence a non-LLM action rests on, quoted with its document's title — for an answer,
 * the sentence stating it; for a search, the sentence stating the earlier hop's answer that the query
 * builds on ("Who directed X?" → "When was Y born?" rests on "X was directed by Y."). Latest search
 * first; the hop's own supporting passage before other documents. Undefined when nothing retrieved
 * states it (a first search, a yes/no answer, a guess).
 */
export function groundingQuote(action: Action, state: State): string | undefined {
  // Whole words, punctuation as spaces: "(1932–2001)" states 1932, "1932" is not in "19320".
  const words = (t: string) => ` ${normalizeAnswer(t.replace(/[^\p{L}\p{N}]+/gu, ' '))} `;
  const states = (text: string, needle: string) => words(text).includes(words(needle));
  const plan = goldPlan(state.question);
  let hop: { answer?: string; passageId?: string } | undefined;
  if (action.type === 'answer') hop = { answer: action.answer, passageId: plan[plan.length - 1]?.passageId };
  else if (action.type === 'search') hop = plan.find((h) => h.answer && states(action.query, h.answer) && !states(state.question.question, h.answer));
  const needle = hop?.answer;
  if (!hop || !needle || words(needle).trim() === '') return undefined;
  const docs = state.steps.filter((s) => s.action.type === 'search').reverse().flatMap((s) => s.docs ?? []);
  const ordered = [...docs.filter((d) => hop.passageId && d.passageId === hop.passageId), ...docs];
  for (const d of ordered) {
    const sentence = sentencesOf(d.text).find((s) => states(s, needle));
    if (sentence) return quoteOf(d.title, sentence);
  }
  return undefined;
}

/** How a thought quotes a retrieved sentence: `"Title" says: sentence`. */
export function quoteOf(title: string, sentence: string): string {
  return `"${title}" says: ${sentence}`;
}

/** ARENA-style reference numbers (1-based) of the supporting passages among the shown references. */
export function citationsOf(question: Question, references: { id: string }[]): number[] {
  const ids = new Set(question.supporting ?? []);
  return references.flatMap((r, i) => (ids.has(r.id) ? [i + 1] : []));
}

export function answerAction(answer: string, citations?: number[]): Action {
  return citations ? { type: 'answer', answer, citations } : { type: 'answer', answer };
}
