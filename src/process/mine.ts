/**
 * Preference pairs from annotated trees (ReasonRAG §2.2.3; RAG-Gym §2.2.1). Search trees (MCTS): sibling
 * steps under the same parent, preferred = higher label, kept when |Δ| ≥ 0.01 and the texts differ, the
 * label being the node's bottom-up value (values.ts `bottomUpTreeValues`; nodes without one are pruned)
 * or its running-mean Q (branches that never reached an answer pruned first); a pair whose preferred
 * side is not a query, evidence or answer is dropped (ReasonRAG's code). Ranking trees (RAG-Gym): at
 * each step the best candidate against each candidate whose reward 1/(1+rank) is below 0.5, for kept
 * (correct) trajectories only.
 */
import type { Action } from '../core/trajectory.js';
import { actionLetter, type SavedNode, type SavedTree, sameAction } from './tree.js';

/**
 * One side of a preference pair: the tree node, its step, the step's type letter (A answer, Q query,
 * E evidence, X invalid) and its MCTS statistics.
 */
export interface PairSide {
  node: number;
  action: Action;
  raw: string;
  type: 'A' | 'Q' | 'E' | 'X';
  q: number;
  n: number;
  /** The label the pair was made by: the bottom-up value, or a judge's 1 (chosen) / 0 (rejected). */
  value?: number;
}

/**
 * A preference pair of sibling steps that branch from the same node (ReasonRAG §2.2.3): one line of
 * `pairs.jsonl`.
 */
export interface Pair {
  /** `${questionId}:${parent}:${chosen}:${rejected}` */
  id: string;
  questionId: string;
  method: string;
  /** Node the two steps branch from, and its depth (number of prior steps). */
  parent: number;
  depth: number;
  chosen: PairSide;
  rejected: PairSide;
  /** label(chosen) − label(rejected): bottom-up values, or Q; judge pairs: Q(chosen) − Q(rejected). */
  gap: number;
  /** Judge-labelled pairs (sibling-judge.ts): which judge, and its reason. */
  judge?: { name: string; reason?: string };
}

/** Options of {@link minePairs}. */
export interface MineOptions {
  /** Smallest |ΔQ| kept (0.01). */
  minGap: number;
  /** Search trees: label by these values (bottom-up re-scoring) instead of Q; null = pruned. */
  values?: ReadonlyMap<number, number | null>;
}

function side(n: SavedNode, value?: number | null): PairSide {
  const s: PairSide = { node: n.id, action: n.step!.action, raw: n.step!.raw, type: actionLetter(n.step!.action.type), q: n.Q, n: n.N };
  if (value !== undefined && value !== null) s.value = value;
  return s;
}

function distinct(a: SavedNode, b: SavedNode): boolean {
  return a.step!.raw.trim() !== b.step!.raw.trim() && !sameAction(a.step!.action, b.step!.action);
}

/**
 * Preference pairs of one tree, sorted by node ids. Search trees: every two distinct live siblings
 * whose
 * labels differ by at least `minGap`, the higher preferred. Ranking trees (kept ones only): the best
 * candidate against each with reward 1/(1+rank) below 0.5. Pairs whose preferred step is invalid are
 * dropped.
 */
export function minePairs(tree: SavedTree, opts: MineOptions = { minGap: 0.01 }): Pair[] {
  const byParent = new Map<number, SavedNode[]>();
  for (const n of tree.nodes) {
    if (n.parent < 0 || !n.step) continue;
    const list = byParent.get(n.parent) ?? [];
    list.push(n);
    byParent.set(n.parent, list);
  }
  const depthOf = new Map(tree.nodes.map((n) => [n.id, n.depth]));
  const pairs: Pair[] = [];
  const values = tree.method === 'rank' ? undefined : opts.values;
  const label = (n: SavedNode): number => (values ? values.get(n.id)! : n.Q);
  const make = (parent: number, c: SavedNode, r: SavedNode): Pair => ({
    id: `${tree.id}:${parent}:${c.id}:${r.id}`,
    questionId: tree.id,
    method: tree.method,
    parent,
    depth: depthOf.get(parent) ?? 0,
    chosen: side(c, values?.get(c.id)),
    rejected: side(r, values?.get(r.id)),
    gap: label(c) - label(r),
  });
  for (const [parent, siblings] of byParent) {
    if (tree.method === 'rank') {
      if (!tree.kept) continue;
      const best = siblings.find((s) => s.rank === 0);
      if (!best) continue;
      for (const other of siblings) {
        if (other === best || other.rank === undefined || 1 / (1 + other.rank) >= 0.5 || !distinct(best, other)) continue;
        if (actionLetter(best.step!.action.type) === 'X') continue;
        pairs.push(make(parent, best, other));
      }
      continue;
    }
    const live = values ? siblings.filter((s) => (values.get(s.id) ?? null) !== null) : siblings.filter((s) => s.answered && s.N > 0);
    for (let i = 0; i < live.length; i++) {
      for (let j = i + 1; j < live.length; j++) {
        const [a, b] = [live[i]!, live[j]!];
        if (Math.abs(label(a) - label(b)) < opts.minGap || !distinct(a, b)) continue;
        const [c, r] = label(a) > label(b) ? [a, b] : [b, a];
        if (actionLetter(c.step!.action.type) === 'X') continue;
        pairs.push(make(parent, c, r));
      }
    }
  }
  return pairs.sort((x, y) => x.parent - y.parent || x.chosen.node - y.chosen.node || x.rejected.node - y.rejected.node);
}
