/** Finite-difference gradient check shared by the gym's objective tests. */
import type { ScoreModel } from '../../src/prm/model.js';

/** Max relative error between the analytic gradient and central differences of f. */
export function gradientError(model: ScoreModel, f: (grad?: Float64Array) => number): number {
  const grad = new Float64Array(model.params.length);
  f(grad);
  let worst = 0;
  const h = 1e-6;
  for (let k = 0; k < model.params.length; k++) {
    const keep = model.params[k]!;
    model.params[k] = keep + h;
    const up = f();
    model.params[k] = keep - h;
    const down = f();
    model.params[k] = keep;
    const numeric = (up - down) / (2 * h);
    worst = Math.max(worst, Math.abs(numeric - grad[k]!) / Math.max(1e-4, Math.abs(numeric) + Math.abs(grad[k]!)));
  }
  return worst;
}
