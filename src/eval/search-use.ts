/**
 * Over- and under-search (LWS §1: "over and under retrieval"): where the retrieval count alone cannot
 * tell a search the question needed from one it did not. A question's evidence is complete once every
 * one of its supporting passages (Question.supporting: passage ids or page titles) has been among the
 * documents of a search so far. Then:
 *   - over-search: the searches made after the evidence was complete — nothing was left to find;
 *   - answered early: the episode ended (an answer, or out of turns) while some supporting passage had
 *     never been retrieved.
 * Only questions that name their supporting passages are counted (the synthetic world's, HotpotQA's,
 * 2Wiki's, MuSiQue's); a question answerable from its own words (yes/no, either-or) still needs its
 * passages to be *known* right, so it counts too.
 */
import type { Step, Trajectory } from '../core/trajectory.js';
import type { Question } from '../core/types.js';

/** One episode's use of search against its question's supporting passages. */
export interface EpisodeSearchUse {
  /** Searches made after every supporting passage had been retrieved. */
  overSearch: number;
  /** The episode ended — answered, or out of turns — while some supporting passage had never been retrieved. */
  answeredEarly: boolean;
}

/** A system's search use over the questions that name their supporting passages. */
export interface SearchUse {
  /** Questions counted: those with supporting passages. */
  n: number;
  /** Mean searches per question made after the evidence was complete. */
  overSearch: number;
  /** Share of questions with at least one such search. */
  overSearchShare: number;
  /** Share of questions whose episode ended (answered, or out of turns) before the evidence was complete. */
  answeredEarly: number;
}

/** Over-search and early answering of one episode; undefined when the question names no supporting passages. */
export function episodeSearchUse(t: { readonly steps: readonly Step[] }, q: Pick<Question, 'supporting'>): EpisodeSearchUse | undefined {
  const need = new Set(q.supporting ?? []);
  if (need.size === 0) return undefined;
  const missing = new Set(need);
  let overSearch = 0;
  for (const s of t.steps) {
    if (s.action.type === 'answer') break;
    if (s.action.type !== 'search') continue;
    if (missing.size === 0) overSearch++;
    for (const d of s.docs ?? []) {
      missing.delete(d.passageId);
      missing.delete(d.title);
    }
  }
  return { overSearch, answeredEarly: missing.size > 0 };
}

/** {@link episodeSearchUse} over a system's trajectories; undefined when no question names its supporting passages. */
export function searchUse(ts: readonly Trajectory[], questions: ReadonlyMap<string, Pick<Question, 'supporting'>>): SearchUse | undefined {
  const uses = ts.flatMap((t) => {
    const q = questions.get(t.id);
    const u = q && episodeSearchUse(t, q);
    return u ? [u] : [];
  });
  if (uses.length === 0) return undefined;
  const n = uses.length;
  return {
    n,
    overSearch: uses.reduce((a, u) => a + u.overSearch, 0) / n,
    overSearchShare: uses.filter((u) => u.overSearch > 0).length / n,
    answeredEarly: uses.filter((u) => u.answeredEarly).length / n,
  };
}
