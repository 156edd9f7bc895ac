/**
 * ARENA's adaptive rewards (§3.3): format (1 when <relevance>, <analysis>, <answer> appear once each
 * in order, else 0), accuracy (normalised exact match of the answer), relevance (the cited reference
 * numbers against the gold ones: equal 1, overlapping 0.5, disjoint 0) and a bonus of 10 when all
 * three are 1. Total = format + accuracy + relevance + bonus (weights 1).
 */
import type { Trajectory } from '../core/trajectory.js';
import { exactMatch } from '../core/metrics.js';
import { arenaFormat } from './format.js';

export interface ArenaRewards {
  format: number;
  accuracy: number;
  relevance: number;
  bonus: number;
}

/** Full match 1, partial overlap 0.5, none 0. With no gold references, citing none is the full match. */
export function relevanceReward(predicted: readonly number[] | undefined, gold: readonly number[]): number {
  if (predicted === undefined) return 0;
  const p = new Set(predicted);
  const g = new Set(gold);
  if (p.size === g.size && [...p].every((x) => g.has(x))) return 1;
  return [...p].some((x) => g.has(x)) ? 0.5 : 0;
}

/** Gold reference numbers (1-based) of the supporting passages among the references shown. */
export function goldReferenceNumbers(referenceIds: readonly string[], supporting: readonly string[]): number[] {
  const s = new Set(supporting);
  return referenceIds.flatMap((id, i) => (s.has(id) ? [i + 1] : []));
}

/** The references an ARENA trajectory saw: the question's context, else its first search's documents. */
export function referenceIds(t: Pick<Trajectory, 'steps'>, contextIds?: readonly string[]): string[] {
  if (contextIds?.length) return [...contextIds];
  const search = t.steps.find((s) => s.action.type === 'search');
  return (search?.docs ?? []).map((d) => d.passageId);
}

export function arenaRewards(t: Pick<Trajectory, 'steps' | 'prediction' | 'answers'>, gold: readonly number[], opts: { bonus?: number; underscoreToSpace?: boolean } = {}): ArenaRewards {
  const answerStep = [...t.steps].reverse().find((s) => s.action.type === 'answer');
  const format = answerStep ? arenaFormat(answerStep.raw) : 0;
  const accuracy = exactMatch(t.prediction, t.answers, { underscoreToSpace: opts.underscoreToSpace ?? true });
  const citations = answerStep?.action.type === 'answer' ? answerStep.action.citations : undefined;
  const relevance = relevanceReward(citations, gold);
  const bonus = format === 1 && accuracy === 1 && relevance === 1 ? (opts.bonus ?? 10) : 0;
  return { format, accuracy, relevance, bonus };
}
