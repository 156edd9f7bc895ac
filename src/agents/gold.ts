/**
 * What the data says a good agent would do, for the non-LLM policies: a plan of searches (the gold
 * decomposition's sub-questions; HotpotQA's supporting titles; else the question itself) and the
 * gold answer, plus checks of what the agent has actually retrieved so far.
 */
import type { Question } from '../core/types.js';
import type { Action, Step } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import { retrievedDocs } from '../env/env.js';
import { normalizeAnswer, sentencesOf } from '../core/text.js';
import { exactMatch, tokenF1 } from '../core/metrics.js';

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

/**
 * Each action's score by the question's gold plan (the gold PRM's, prm/gold.ts, and the plan judge's,
 * process/sibling-judge.ts):
 *
 *   answer   +2 when it matches a gold answer (EM), −2 otherwise
 *   search   4·F1(query, an open hop's sub-question) − 1, in [−1, 3], the best over the open hops;
 *            −1 once every hop's answer has been retrieved (time to answer)
 *   extract  +1 when the evidence holds the answer of a resolved hop that no earlier evidence holds (a
 *            fact found and not yet noted), −1 otherwise
 *   invalid  −2
 *
 * The plan is a partial order, not a sequence: a hop is open when it is unresolved and every earlier
 * hop whose answer its sub-question names is resolved ({@link openHops}). A chain ("the spouse of the
 * author of F") opens one hop at a time; a comparison ("which film is older, A or B?") opens A's and B's
 * lookups together, and searching either first is equally good — the decomposition's order between
 * them is arbitrary.
 *
 * `grounded`: an answer scores +2 only when it is correct and every hop of the plan has been retrieved.
 * A right answer given before the history holds what it needs is a guess — ProRAG's "process
 * hallucination" (§3.2), a step the sufficiency criterion of RAG-Gym's judge ranks low — and scores −2
 * like a wrong one. Hops without an answer or passage to look for are not checked.
 */
export function planScores(state: State, actions: readonly Action[], opts: { grounded?: boolean } = {}): number[] {
  const plan = goldPlan(state.question);
  const resolved = plan.map((h) => retrieved(state, h.answer, h.passageId));
  const open = openHops(plan, resolved);
  // Facts found and not yet noted: a comparison's two lookups resolve in either order, so any of them may be next.
  const noted = state.steps.flatMap((st) => (st.action.type === 'extract' ? [` ${normalizeAnswer(st.action.evidence)} `] : []));
  const holds = (text: string, answer: string) => text.includes(` ${normalizeAnswer(answer)} `);
  const unnoted = plan.filter((h, i) => resolved[i] && h.answer && normalizeAnswer(h.answer) !== '' && !noted.some((n) => holds(n, h.answer!)));
  const grounded = !opts.grounded || plan.every((h, i) => resolved[i] || (!h.answer && !h.passageId));
  const tokens = (t: string) => normalizeAnswer(t).split(' ').filter(Boolean);
  return actions.map((a) => {
    if (a.type === 'answer') return grounded && exactMatch(a.answer, state.question.answers) === 1 ? 2 : -2;
    if (a.type === 'search') return open.length ? Math.max(...open.map((h) => 4 * tokenF1(tokens(a.query), tokens(h.query)).f1 - 1)) : -1;
    if (a.type === 'extract') return unnoted.some((h) => holds(` ${normalizeAnswer(a.evidence)} `, h.answer!)) ? 1 : -1;
    return -2;
  });
}

/**
 * A judge's scores of executed sibling steps by the gold plan (process/sibling-judge.ts PlanJudge, the
 * rank source plan): {@link planScores} with grounded answers, except that a search is judged by what
 * it fetched, as a judge shown each search's results would:
 *
 *   search   +3 when its documents bring in the passage of an open hop (the fact the question depends
 *            on next), +1 when they bring in another hop's passage not yet found, −1 when they bring in
 *            nothing the plan still needs (a miss, a repeat, or a search after every hop is found)
 *
 * A search step without documents is scored by its query, as {@link planScores}.
 */
export function judgedPlanScores(state: State, steps: readonly Pick<Step, 'action' | 'docs'>[]): number[] {
  const plan = goldPlan(state.question);
  const before = plan.map((h) => retrieved(state, h.answer, h.passageId));
  const open = new Set(openHops(plan, before));
  const byQuery = planScores(state, steps.map((s) => s.action), { grounded: true });
  return steps.map((s, k) => {
    if (s.action.type !== 'search' || !s.docs) return byQuery[k]!;
    const after: State = { ...state, steps: [...state.steps, { action: s.action, raw: '', docs: s.docs }] };
    const fetched = plan.filter((h, i) => !before[i] && retrieved(after, h.answer, h.passageId));
    return fetched.some((h) => open.has(h)) ? 3 : fetched.length ? 1 : -1;
  });
}

/**
 * The hops a search may take next: unresolved, with every earlier hop whose answer the sub-question
 * names (as whole words) resolved. The first unresolved hop is always open, so a plan with anything
 * left has an open hop.
 */
export function openHops<H extends { query: string; answer?: string }>(plan: readonly H[], resolved: readonly boolean[]): H[] {
  const words = (t: string) => ` ${normalizeAnswer(t)} `;
  return plan.filter((h, i) => !resolved[i] && plan.slice(0, i).every((e, j) => resolved[j] || !e.answer || normalizeAnswer(e.answer) === '' || !words(h.query).includes(words(e.answer))));
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
