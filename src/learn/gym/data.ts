/**
 * Training data for the gym policy from `ragtrail annotate` output: demonstrations (the steps of each
 * tree's best path, as the SFT file has them) and step preference pairs (the mined pairs, as the DPO
 * file has them), rebuilt as full states so that the policy's candidates can be generated again. A
 * demonstrated or preferred action the generator would not propose joins the candidate set.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readJsonlValues } from '../../core/io.js';
import { inDatasetOrder } from '../../core/order.js';
import type { Action } from '../../core/trajectory.js';
import type { Protocol } from '../../agents/protocol.js';
import type { State } from '../../env/env.js';
import { bestPath } from '../../process/export.js';
import { pairLabels } from '../../process/annotate.js';
import { minePairs, type Pair } from '../../process/mine.js';
import type { ValueLabel } from '../../process/values.js';
import { readTrees, type SavedTree, stateAt } from '../../process/tree.js';
import { type Choice, choicesFor, indexOf } from './policy.js';

/** A state and the action to take in it, from one question: one supervised (SFT) example. */
export interface StateAction {
  state: State;
  action: Action;
  questionId: string;
}

/** A state with a preferred and a dispreferred action and the value gap between them: one step-level preference (DPO) example. */
export interface StatePair {
  state: State;
  chosen: Action;
  rejected: Action;
  questionId: string;
  gap: number;
}

const usable = (a: Action) => a.type === 'search' || a.type === 'answer' || a.type === 'extract';

/** The best-path steps with Q ≥ threshold (ranking trees: the executed steps of kept trajectories). */
export function demonstrations(trees: readonly SavedTree[], threshold = 0.5): StateAction[] {
  const out: StateAction[] = [];
  for (const tree of trees) {
    if (tree.method === 'rank' && !tree.kept) continue;
    for (const node of bestPath(tree)) {
      if (tree.method !== 'rank' && node.Q < threshold) continue;
      if (!usable(node.step!.action)) continue;
      out.push({ state: stateAt(tree, node.parent), action: node.step!.action, questionId: tree.id });
    }
  }
  return out;
}

/**
 * Step preference pairs mined from the trees (process/mine.ts), both sides valid actions, labelled as
 * `annotate` labels them (bottom-up values for MCTS-SPRE trees by default), so that the gym's step-DPO
 * trains on the pairs the annotation wrote.
 */
export function preferencePairs(trees: readonly SavedTree[], minGap = 0.01, values?: ValueLabel): StatePair[] {
  const out: StatePair[] = [];
  for (const tree of trees) {
    for (const p of minePairs(tree, { minGap, values: pairLabels(tree, values) })) {
      if (!usable(p.chosen.action) || !usable(p.rejected.action)) continue;
      out.push({ state: stateAt(tree, p.parent), chosen: p.chosen.action, rejected: p.rejected.action, questionId: tree.id, gap: p.gap });
    }
  }
  return out;
}

/**
 * Step preference pairs as an annotation wrote them (its pairs.jsonl), rebuilt as states: for pairs no
 * re-mining can give, such as a judge's (`annotate --pairs judge`). Pairs with a side that is not a valid
 * action, or of a question without a tree, are left out.
 */
export function statePairs(trees: readonly SavedTree[], pairs: readonly Pair[]): StatePair[] {
  const byId = new Map(trees.map((t) => [t.id, t]));
  const out: StatePair[] = [];
  for (const p of pairs) {
    const tree = byId.get(p.questionId);
    if (!tree || !usable(p.chosen.action) || !usable(p.rejected.action)) continue;
    out.push({ state: stateAt(tree, p.parent), chosen: p.chosen.action, rejected: p.rejected.action, questionId: tree.id, gap: p.gap });
  }
  return out;
}

/**
 * The step pairs of an annotation folder as it wrote them: re-mined from its trees with the labels it
 * used (stats.json `values` and `minGap`), or, for a judge's pairs, which no re-mining can give, read from pairs.jsonl.
 */
export async function annotationPairs(dir: string, trees?: readonly SavedTree[]): Promise<StatePair[]> {
  const statsPath = join(dir, 'stats.json');
  const stats = existsSync(statsPath) ? (JSON.parse(readFileSync(statsPath, 'utf8')) as { values?: ValueLabel; pairSource?: string; minGap?: number }) : {};
  const t = trees ?? inDatasetOrder(await readTrees(dir));
  return stats.pairSource === 'judge' ? statePairs(t, await readJsonlValues<Pair>(join(dir, 'pairs.jsonl'))) : preferencePairs(t, stats.minGap, stats.values);
}

/** A state's candidates with the given actions included, and their indices. */
export function choiceWith(state: State, protocol: Protocol, actions: readonly Action[]): { choice: Choice; indices: number[] } {
  const choice = choicesFor(state, protocol, actions);
  return { choice, indices: actions.map((a) => indexOf(choice, a)) };
}
