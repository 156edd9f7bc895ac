/**
 * EM split by question type, and by whether a question can be answered without retrieval at all.
 *
 * A yes/no question, or one whose gold answer is named in the question ("Who was born first, A or B?"),
 * can be answered by a guess between the options the question offers; a policy can score on those by
 * a shortcut (always "no", always the first option) without retrieving anything. The other questions
 * (single-hop, compositional: the answer is a name or a year found only in a passage) measure retrieval.
 * Claims and reports give EM on both, so that a shortcut cannot decide a result unseen.
 */
import { normalizeAnswer } from '../core/metrics.js';
import type { Trajectory } from '../core/trajectory.js';
import type { Question } from '../core/types.js';

/** True when the question offers its own answer: yes/no, or a gold answer written in the question. */
export function answerInQuestion(q: Pick<Question, 'question' | 'answers'>): boolean {
  const text = ` ${normalizeAnswer(q.question)} `;
  return q.answers.some((a) => {
    const n = normalizeAnswer(a);
    return n === 'yes' || n === 'no' || (n.length > 0 && text.includes(` ${n} `));
  });
}

/** The label of the questions that need retrieval in {@link emByType}. */
export const NEEDS_RETRIEVAL = 'needs retrieval';

/** One row of the split: a question type (or {@link NEEDS_RETRIEVAL}), its question count and mean EM. */
export interface TypeEm {
  type: string;
  n: number;
  em: number;
}

/**
 * Mean EM per question type (in order of first appearance) and on the questions that need retrieval;
 * empty when no question carries a type.
 */
export function emByType(ts: readonly Trajectory[], questions: ReadonlyMap<string, Question>): TypeEm[] {
  const groups = new Map<string, number[]>();
  const add = (k: string, v: number) => (groups.get(k) ?? groups.set(k, []).get(k)!).push(v);
  let typed = false;
  for (const t of ts) {
    const q = questions.get(t.id);
    if (!q) continue;
    const em = t.metrics?.em ?? 0;
    if (q.type) {
      typed = true;
      add(q.type, em);
    }
    if (!answerInQuestion(q)) add(NEEDS_RETRIEVAL, em);
  }
  if (!typed) return [];
  const rows = [...groups].filter(([k]) => k !== NEEDS_RETRIEVAL).map(([type, v]) => ({ type, n: v.length, em: v.reduce((a, b) => a + b, 0) / v.length }));
  const need = groups.get(NEEDS_RETRIEVAL) ?? [];
  rows.push({ type: NEEDS_RETRIEVAL, n: need.length, em: need.length ? need.reduce((a, b) => a + b, 0) / need.length : 0 });
  return rows;
}
