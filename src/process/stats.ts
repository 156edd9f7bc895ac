/**
 * RAG-ProGuide-style statistics of an annotation (ReasonRAG Table 1): questions, pairs, actions by type,
 * iterations, tokens per action, the reward-gap histogram — and, where the data has a gold plan, how
 * often the preferred side of a pair is the gold step.
 */
import type { Action } from '../core/trajectory.js';
import type { Pair } from './mine.js';
import { type SavedTree, sameAction, stateAt } from './tree.js';
import type { State } from '../env/env.js';

/** Average, minimum, median and maximum of a count over questions. */
export interface Summary {
  avg: number;
  min: number;
  median: number;
  max: number;
}

/** Statistics of an annotation in the manner of ReasonRAG's Table 1 (RAG-ProGuide): written as `stats.json`. */
export interface AnnotationStats {
  method: string;
  questions: number;
  /** Trees that yielded at least one pair (ranking: trajectories kept as correct). */
  questionsWithPairs: number;
  kept: number;
  pairs: number;
  /** Action types of the preferred and the rejected sides: A answer, Q query, E evidence, X invalid. */
  chosenTypes: Record<string, number>;
  rejectedTypes: Record<string, number>;
  /** Search iterations per question, and steps per answered path. */
  iterations: Summary;
  nodes: Summary;
  /** Approximate tokens of an action's text (characters / 4). */
  tokensPerAction: number;
  /** Bins [from, to); `to` null for the open last bin. */
  gapHistogram: { from: number; to: number | null; count: number }[];
  /** Search trees: how pairs were labelled (bottom-up values or running-mean Q). */
  values?: string;
  /** Search trees, Q-gap pairs: the smallest gap kept; a trainer re-mining the trees keeps the same pairs. */
  minGap?: number;
  /** Search trees: "judge" when a judge compared siblings (its counts in `judge`); absent for the Q gap. */
  pairSource?: string;
  judge?: { judge: string; nodes: number; pairs: number; declined: number; malformed: number; duplicates: number };
  /** Share of pairs, among those where exactly one side is the gold step, whose preferred side is. */
  goldPreferred?: { pairs: number; share: number };
}

export function summary(xs: readonly number[]): Summary {
  if (xs.length === 0) return { avg: 0, min: 0, median: 0, max: 0 };
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return { avg: s.reduce((a, b) => a + b, 0) / s.length, min: s[0]!, median: s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2, max: s[s.length - 1]! };
}

const BINS = [0.01, 0.05, 0.1, 0.2, 0.4, 0.7, 1, Infinity];

/**
 * Computes {@link AnnotationStats} from the trees and their mined pairs; with `gold` (the gold step of
 * a
 * state, where the data has a plan), also how often the preferred side is the gold step.
 */
export function annotationStats(trees: readonly SavedTree[], pairs: readonly Pair[], gold?: (state: State) => Action | undefined): AnnotationStats {
  const count = (xs: string[]) => xs.reduce<Record<string, number>>((m, x) => ((m[x] = (m[x] ?? 0) + 1), m), { A: 0, Q: 0, E: 0 });
  const texts = pairs.flatMap((p) => [p.chosen.raw, p.rejected.raw]);
  const hist = BINS.slice(0, -1).map((from, i) => ({ from, to: BINS[i + 1] === Infinity ? null : BINS[i + 1]!, count: 0 }));
  for (const p of pairs) {
    const g = Math.abs(p.gap);
    // The bin ending at 1 includes 1 (F1-based values are at most 1 apart).
    const bin = hist.find((h) => g >= h.from && (h.to === null || g < h.to || (h.to === 1 && g === 1)));
    if (bin) bin.count++;
  }
  const stats: AnnotationStats = {
    method: [...new Set(trees.map((t) => t.method))].join(', '),
    questions: trees.length,
    questionsWithPairs: new Set(pairs.map((p) => p.questionId)).size,
    kept: trees.filter((t) => t.kept).length,
    pairs: pairs.length,
    chosenTypes: count(pairs.map((p) => p.chosen.type)),
    rejectedTypes: count(pairs.map((p) => p.rejected.type)),
    iterations: summary(trees.map((t) => t.iterations)),
    nodes: summary(trees.map((t) => t.nodes.length)),
    tokensPerAction: texts.length ? texts.reduce((s, t) => s + t.length, 0) / texts.length / 4 : 0,
    gapHistogram: hist,
  };
  if (gold) {
    const byId = new Map(trees.map((t) => [t.id, t]));
    let decided = 0;
    let preferred = 0;
    for (const p of pairs) {
      const tree = byId.get(p.questionId);
      if (!tree) continue;
      const g = gold(stateAt(tree, p.parent));
      if (!g) continue;
      const c = sameAction(p.chosen.action, g);
      const r = sameAction(p.rejected.action, g);
      if (c === r) continue;
      decided++;
      if (c) preferred++;
    }
    if (decided > 0) stats.goldPreferred = { pairs: decided, share: preferred / decided };
  }
  return stats;
}
