/**
 * Where a trained PRM's held-out accuracy is lost: in its labels or in its features. On data whose
 * questions carry a gold decomposition (the synthetic world), the gold PRM (gold.ts) with grounded
 * answers gives each pair an independent verdict — grounded, because a process label should not prefer
 * a right answer guessed before its evidence was found (the plan scores it as a wrong one). Two numbers
 * separate the causes:
 *   - label agreement: the share of pairs whose chosen step the gold PRM also scores higher, among those
 *     it does not tie. Near 0.5, the annotation's labels are noise to the gold plan, and no head can
 *     hold out well on them.
 *   - the features' ceiling: the same head, trained and held out on the same split with the gold
 *     verdicts as labels (ties dropped). Low, the features cannot express the gold plan either.
 * Agreement is also given per kind of pair (the chosen and the rejected step's letters: A answer,
 * Q query, E evidence), since an annotator can be right about when to answer and guess between queries.
 * A diagnostic for the synthetic world's recipes, not a claim about any paper's annotator.
 */
import type { Question } from '../core/types.js';
import { GoldPRM } from './gold.js';
import { pairState, type PrmPairRecord, type PrmTrainOptions, questionOf, scorePair, trainPrm } from './trained.js';

/** An annotation's pairs checked against the gold plan: {@link checkLabels}. */
export interface LabelCheck {
  /** Pairs whose question has a gold decomposition (the others cannot be checked). */
  checked: number;
  /** Share of checked pairs the gold PRM scores alike (a tie says nothing either way). */
  goldTies: number;
  /** Among the checked pairs the gold PRM does not tie: the share where it prefers the annotation's chosen step. */
  goldAgreement: number | null;
  /** Held-out accuracy of the same head trained on the gold verdicts over the same split (null: too few pairs). */
  featuresCeiling: number | null;
  /** The same counts per kind of pair, `chosen/rejected` by step letter ("Q/Q": two queries). */
  byKind: Record<string, KindCheck>;
}

/** Label agreement on one kind of pair. */
export interface KindCheck {
  pairs: number;
  goldTies: number;
  goldAgreement: number | null;
}

/** Checks preference pairs against the gold plan of their questions (`questions` by id); see the module comment. */
export async function checkLabels(pairs: readonly PrmPairRecord[], questions: ReadonlyMap<string, Question>, opts: PrmTrainOptions = {}): Promise<LabelCheck> {
  const gold = new GoldPRM({ grounded: true });
  let checked = 0;
  let ties = 0;
  let agree = 0;
  const relabelled: PrmPairRecord[] = [];
  const kinds = new Map<string, { n: number; ties: number; agree: number }>();
  for (const p of pairs) {
    const question = questions.get(questionOf(p));
    if (!question?.decomposition?.length) continue;
    checked++;
    const kind = `${p.chosen.type}/${p.rejected.type}`;
    const k = kinds.get(kind) ?? { n: 0, ties: 0, agree: 0 };
    kinds.set(kind, k);
    k.n++;
    const state = { ...pairState(p), question };
    const [c, r] = await scorePair(gold, p, state);
    if (c === r) {
      ties++;
      k.ties++;
    } else if (c! > r!) {
      agree++;
      k.agree++;
      relabelled.push(p);
    } else relabelled.push({ ...p, chosen: p.rejected, rejected: p.chosen });
  }
  const byKind = Object.fromEntries([...kinds].sort(([a], [b]) => a.localeCompare(b)).map(([kind, k]) => [kind, { pairs: k.n, goldTies: k.ties / k.n, goldAgreement: k.n > k.ties ? k.agree / (k.n - k.ties) : null }]));
  const decided = checked - ties;
  let featuresCeiling: number | null = null;
  if (new Set(relabelled.map(questionOf)).size >= 5) {
    const { prm } = await trainPrm(relabelled, opts);
    featuresCeiling = prm.saved.training.heldOutAccuracy ?? null;
  }
  return { checked, goldTies: checked ? ties / checked : 0, goldAgreement: decided ? agree / decided : null, featuresCeiling, byKind };
}
