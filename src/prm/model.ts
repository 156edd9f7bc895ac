/**
 * The trained PRM's scoring head: linear, or a one-hidden-layer MLP (tanh), fitted with the
 * Bradley–Terry loss on preference pairs (ProRAG §3.2, eq. 4; RAG-Gym §2.2.2):
 *
 *   L = −log σ(r(x⁺) − r(x⁻)),   ∂L/∂Δ = σ(Δ) − 1 with Δ = r(x⁺) − r(x⁻),
 *
 * by Adam on mini-batches, with L2 weight decay; features are standardised with the training mean and
 * standard deviation. Hand-written rather than a framework: the whole model is a few hundred weights,
 * and the maths is the few lines below (tfjs would add 300 MB for it).
 */
import { Rng } from '../core/rng.js';
import { negLogSigmoid } from '../rewards/rl.js';

/** The scoring head's shape: linear, or an MLP with one tanh hidden layer. */
export type ModelKind = 'linear' | 'mlp';

/** A scoring head as saved in JSON: its shape, its flat parameters, and the standardisation of its features. */
export interface ModelState {
  kind: ModelKind;
  dim: number;
  hidden: number;
  /** Flat parameters: linear — w (dim); MLP — W1 (hidden × dim), b1 (hidden), w2 (hidden), b2. */
  params: number[];
  mean: number[];
  std: number[];
}

export interface TrainOptions {
  kind?: ModelKind;
  hidden?: number;
  epochs?: number;
  lr?: number;
  l2?: number;
  batch?: number;
  seed?: number | string;
}

export interface PairX {
  chosen: Float64Array;
  rejected: Float64Array;
}

const sigmoid = (x: number) => (x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x)));

/** The scoring head r(x) of the trained PRM and of the gym policy, over standardised features (see the module header). */
export class ScoreModel {
  readonly kind: ModelKind;
  readonly dim: number;
  readonly hidden: number;
  readonly params: Float64Array;
  readonly mean: Float64Array;
  readonly std: Float64Array;

  constructor(s: ModelState) {
    this.kind = s.kind;
    this.dim = s.dim;
    this.hidden = s.hidden;
    this.params = Float64Array.from(s.params);
    this.mean = Float64Array.from(s.mean);
    this.std = Float64Array.from(s.std);
  }

  /** A fresh head: all zeros when linear; seeded small random weights when an MLP. */
  static init(kind: ModelKind, dim: number, hidden: number, mean: Float64Array, std: Float64Array, rng: Rng): ScoreModel {
    const n = kind === 'linear' ? dim : hidden * dim + 2 * hidden + 1;
    const params = new Array<number>(n).fill(0);
    if (kind === 'mlp') {
      // Small random first layer (Xavier-like) and second layer; linear models start at zero.
      const a = Math.sqrt(6 / (dim + hidden));
      for (let i = 0; i < hidden * dim; i++) params[i] = (rng.next() * 2 - 1) * a;
      for (let i = 0; i < hidden; i++) params[hidden * dim + hidden + i] = (rng.next() * 2 - 1) * Math.sqrt(6 / (hidden + 1));
    }
    return new ScoreModel({ kind, dim, hidden, params, mean: [...mean], std: [...std] });
  }

  /** The head as plain JSON, for saving. */
  toJSON(): ModelState {
    return { kind: this.kind, dim: this.dim, hidden: this.hidden, params: [...this.params], mean: [...this.mean], std: [...this.std] };
  }

  private standardise(x: Float64Array): Float64Array {
    const z = new Float64Array(this.dim);
    for (let i = 0; i < this.dim; i++) z[i] = (x[i]! - this.mean[i]!) / this.std[i]!;
    return z;
  }

  /** r(x), and optionally its gradient with respect to the parameters added into `grad` times `scale`. */
  forward(x: Float64Array, grad?: Float64Array, scale = 1): number {
    const z = this.standardise(x);
    const p = this.params;
    if (this.kind === 'linear') {
      let r = 0;
      for (let i = 0; i < this.dim; i++) r += p[i]! * z[i]!;
      if (grad) for (let i = 0; i < this.dim; i++) grad[i]! += scale * z[i]!;
      return r;
    }
    const { dim: d, hidden: h } = this;
    const b1 = h * d;
    const w2 = b1 + h;
    const b2 = w2 + h;
    const act = new Float64Array(h);
    let r = p[b2]!;
    for (let j = 0; j < h; j++) {
      let s = p[b1 + j]!;
      const row = j * d;
      for (let i = 0; i < d; i++) s += p[row + i]! * z[i]!;
      act[j] = Math.tanh(s);
      r += p[w2 + j]! * act[j]!;
    }
    if (grad) {
      grad[b2]! += scale;
      for (let j = 0; j < h; j++) {
        grad[w2 + j]! += scale * act[j]!;
        const back = scale * p[w2 + j]! * (1 - act[j]! * act[j]!);
        grad[b1 + j]! += back;
        const row = j * d;
        for (let i = 0; i < d; i++) grad[row + i]! += back * z[i]!;
      }
    }
    return r;
  }

  /** r(x) for one feature vector (standardised here). */
  score(x: Float64Array): number {
    return this.forward(x);
  }
}

/**
 * One pair's share of a pair accuracy: 1 when the chosen side scores higher, 0 when lower, and 0.5 on
 * a tie, so that a model that cannot tell the two apart (all weights zero, equal log-probabilities)
 * stands at chance, 0.5, rather than at 0. The PRM's pair accuracy and the step-DPO training curve's
 * both count this way.
 */
export function pairCredit(chosen: number, rejected: number): number {
  return chosen > rejected ? 1 : chosen < rejected ? 0 : 0.5;
}

/** Mean Bradley–Terry loss and pair accuracy (r⁺ > r⁻ counts 1, a tie 0.5: {@link pairCredit}) of a model on pairs. */
export function evaluatePairs(model: ScoreModel, pairs: readonly PairX[]): { loss: number; accuracy: number } {
  if (pairs.length === 0) return { loss: 0, accuracy: 0 };
  let loss = 0;
  let right = 0;
  for (const p of pairs) {
    const [chosen, rejected] = [model.score(p.chosen), model.score(p.rejected)];
    loss += negLogSigmoid(chosen - rejected);
    right += pairCredit(chosen, rejected);
  }
  return { loss: loss / pairs.length, accuracy: right / pairs.length };
}

/** Feature means and standard deviations (1 where a feature is constant). */
export function standardisation(xs: readonly Float64Array[], dim: number): { mean: Float64Array; std: Float64Array } {
  const mean = new Float64Array(dim);
  const std = new Float64Array(dim);
  for (const x of xs) for (let i = 0; i < dim; i++) mean[i]! += x[i]! / xs.length;
  for (const x of xs) for (let i = 0; i < dim; i++) std[i]! += (x[i]! - mean[i]!) ** 2 / xs.length;
  for (let i = 0; i < dim; i++) std[i] = std[i]! > 1e-12 ? Math.sqrt(std[i]!) : 1;
  return { mean, std };
}

/** Adam (Kingma & Ba) over a flat parameter vector, with L2 weight decay added to the gradient. */
export class Adam {
  private readonly m: Float64Array;
  private readonly v: Float64Array;
  private t = 0;

  constructor(
    private readonly params: Float64Array,
    private readonly lr = 0.01,
    private readonly l2 = 0,
    private readonly betas: [number, number] = [0.9, 0.999],
    private readonly eps = 1e-8,
  ) {
    this.m = new Float64Array(params.length);
    this.v = new Float64Array(params.length);
  }

  step(grad: Float64Array): void {
    const [b1, b2] = this.betas;
    this.t++;
    for (let k = 0; k < this.params.length; k++) {
      const g = grad[k]! + this.l2 * this.params[k]!;
      this.m[k] = b1 * this.m[k]! + (1 - b1) * g;
      this.v[k] = b2 * this.v[k]! + (1 - b2) * g * g;
      const mh = this.m[k]! / (1 - b1 ** this.t);
      const vh = this.v[k]! / (1 - b2 ** this.t);
      this.params[k]! -= (this.lr * mh) / (Math.sqrt(vh) + this.eps);
    }
  }
}

export function trainModel(pairs: readonly PairX[], opts: TrainOptions = {}, onEpoch?: (epoch: number, loss: number) => void): ScoreModel {
  if (pairs.length === 0) throw new RangeError('no pairs to train on');
  const dim = pairs[0]!.chosen.length;
  const rng = new Rng(opts.seed ?? 0);
  const { mean, std } = standardisation(pairs.flatMap((p) => [p.chosen, p.rejected]), dim);
  const kind = opts.kind ?? 'linear';
  const model = ScoreModel.init(kind, dim, opts.hidden ?? 32, mean, std, rng);
  const n = model.params.length;
  // The MLP overfits a few hundred pairs at the linear head's settings: a smaller step, more decay.
  const lr = opts.lr ?? (kind === 'mlp' ? 0.003 : 0.01);
  const l2 = opts.l2 ?? (kind === 'mlp' ? 1e-3 : 1e-4);
  const batch = opts.batch ?? 32;
  const adam = new Adam(model.params, lr, l2);
  const order = pairs.map((_, i) => i);
  for (let epoch = 0; epoch < (opts.epochs ?? 30); epoch++) {
    rng.shuffle(order);
    let epochLoss = 0;
    for (let start = 0; start < order.length; start += batch) {
      const idx = order.slice(start, start + batch);
      const grad = new Float64Array(n);
      for (const i of idx) {
        const p = pairs[i]!;
        // Δ = r(x⁺) − r(x⁻); ∂L/∂Δ = σ(Δ) − 1.
        const rc = model.forward(p.chosen);
        const rr = model.forward(p.rejected);
        const delta = rc - rr;
        epochLoss += negLogSigmoid(delta);
        const g = (sigmoid(delta) - 1) / idx.length;
        model.forward(p.chosen, grad, g);
        model.forward(p.rejected, grad, -g);
      }
      adam.step(grad);
    }
    onEpoch?.(epoch, epochLoss / pairs.length);
  }
  return model;
}
