/**
 * What the data says a good agent would do, for the non-LLM policies: a plan of searches (the gold
 * decomposition's sub-questions; HotpotQA's supporting titles; else the question itself) and the
 * gold answer, plus checks of what the agent has actually retrieved so far.
 */
import type { Question } from '../core/types.js';
import type { Action } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import { retrievedDocs } from '../env/env.js';
import { normalizeAnswer } from '../core/text.js';

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
  const t = normalizeAnswer(text);
  return t !== '' && docs.some((d) => normalizeAnswer(`${d.title} ${d.text}`).includes(t));
}

export function searchesSoFar(state: State): string[] {
  return state.steps.flatMap((s) => (s.action.type === 'search' ? [s.action.query] : []));
}

/** The sentence of the latest search's documents that mentions `needle`, else its first sentence, else "None". */
export function evidenceFrom(state: State, needle?: string): string {
  const last = [...state.steps].reverse().find((s) => s.action.type === 'search');
  const sentences = (last?.docs ?? []).flatMap((d) => d.text.split(/(?<=[.!?])\s+/));
  if (needle) {
    const n = normalizeAnswer(needle);
    const hit = sentences.find((s) => normalizeAnswer(s).includes(n));
    if (hit) return hit.trim();
  }
  return sentences[0]?.trim() || 'None';
}

/** ARENA-style reference numbers (1-based) of the supporting passages among the shown references. */
export function citationsOf(question: Question, references: { id: string }[]): number[] {
  const ids = new Set(question.supporting ?? []);
  return references.flatMap((r, i) => (ids.has(r.id) ? [i + 1] : []));
}

export function answerAction(answer: string, citations?: number[]): Action {
  return citations ? { type: 'answer', answer, citations } : { type: 'answer', answer };
}
