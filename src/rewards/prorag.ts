/**
 * ProRAG rewards. Its formulas did not survive in the paper's text; SPEC §4 gives standard forms
 * (choice) and §9 what the authors' code does, which is the default here.
 *   Outcome, code:  (0 if F1 < 0.2 else 2·F1) + (+1 if the whole trajectory follows the workflow else −1)
 *   Outcome, spec:  F1 + λ_o · 1[workflow]
 *   Step, code:     sigmoid(PRM logit) + (+1 if the step follows the tag schema else −2)
 *   Step, spec:     PRM(context, step) + λ_f · 1[step follows the schema]
 */
import type { Trajectory } from '../core/trajectory.js';
import { f1Score } from '../core/metrics.js';
import { proragStepFormat, proragWorkflow } from './format.js';

export type ProragForm = 'code' | 'spec';

export function sigmoid(x: number): number {
  return x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x));
}

/** The two parts of the outcome reward: `answer` (the F1 term) and `workflow` (the format term). */
export function proragOutcome(t: Pick<Trajectory, 'steps' | 'prediction' | 'answers'>, form: ProragForm = 'code', lambdaO = 1): { answer: number; workflow: number; total: number } {
  const f1 = f1Score(t.prediction, t.answers).f1;
  const valid = proragWorkflow(t);
  if (form === 'spec') return { answer: f1, workflow: valid ? lambdaO : 0, total: f1 + (valid ? lambdaO : 0) };
  const answer = f1 < 0.2 ? 0 : 2 * f1;
  const workflow = valid ? 1 : -1;
  return { answer, workflow, total: answer + workflow };
}

/**
 * Per-step rewards of a trajectory. `prm` is one PRM output per step (a logit in the code form, a
 * score in the spec form); without a PRM the PRM term is 0 (code form: sigmoid(0) is not used — 0).
 */
export function proragStepRewards(t: Pick<Trajectory, 'steps'>, prm?: readonly number[], form: ProragForm = 'code', lambdaF = 1): number[] {
  return t.steps.map((step, i) => {
    const ok = proragStepFormat(step);
    const p = prm?.[i];
    if (form === 'spec') return (p ?? 0) + (ok ? lambdaF : 0);
    return (p === undefined ? 0 : sigmoid(p)) + (ok ? 1 : -2);
  });
}
