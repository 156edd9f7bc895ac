/**
 * Statistics for comparing systems over the same questions: means with 95% bootstrap confidence
 * intervals, the paired t-test the papers report (p < 0.05), and a paired bootstrap test.
 */
import jstatModule from 'jstat';
import { Rng } from '../core/rng.js';

const { jStat } = jstatModule;

export function mean(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

/** Sample variance (n − 1 denominator). */
export function variance(xs: readonly number[]): number {
  const n = xs.length;
  if (n < 2) return NaN;
  const m = mean(xs);
  let s = 0;
  for (const x of xs) s += (x - m) * (x - m);
  return s / (n - 1);
}

/** The q-quantile of sorted values, linear interpolation between order statistics (numpy's default). */
export function quantileSorted(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = sorted[lo] as number;
  const b = sorted[hi] as number;
  return a + (b - a) * (pos - lo);
}

/** Settings of bootstrap resampling (percentile intervals). */
export interface BootstrapOptions {
  /** Number of bootstrap resamples (default 1000). */
  resamples?: number;
  /** Confidence level (default 0.95). */
  confidence?: number;
  /** Seed of the resampling (default 0): the same data and seed give the same interval. */
  seed?: number | string;
}

/** A mean with the bounds of its bootstrap confidence interval (percentile method). */
export interface MeanCI {
  mean: number;
  low: number;
  high: number;
}

/** Means of `resamples` bootstrap resamples (questions drawn with replacement). */
function bootstrapMeans(values: readonly number[], opts: BootstrapOptions): number[] {
  const rng = new Rng(opts.seed ?? 0);
  const b = opts.resamples ?? 1000;
  const n = values.length;
  const means = new Array<number>(b);
  for (let r = 0; r < b; r++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += values[rng.int(n)] as number;
    means[r] = s / n;
  }
  return means.sort((x, y) => x - y);
}

/** Mean with a percentile bootstrap confidence interval. */
export function bootstrapCI(values: readonly number[], opts: BootstrapOptions = {}): MeanCI {
  const m = mean(values);
  if (values.length === 0) return { mean: NaN, low: NaN, high: NaN };
  const alpha = 1 - (opts.confidence ?? 0.95);
  const means = bootstrapMeans(values, opts);
  return { mean: m, low: quantileSorted(means, alpha / 2), high: quantileSorted(means, 1 - alpha / 2) };
}

/** The result of {@link pairedTTest}. */
export interface PairedTTest {
  n: number;
  /** mean(a − b) */
  meanDiff: number;
  t: number;
  df: number;
  /** Two-sided p-value. */
  p: number;
}

/**
 * Paired t-test of a against b (same questions, same order): t = mean(d) / (sd(d) / √n), df = n − 1.
 * When every difference is equal (sd = 0) the test is degenerate: p = 1 if they are all 0, else p = 0.
 */
export function pairedTTest(a: readonly number[], b: readonly number[]): PairedTTest {
  if (a.length !== b.length) throw new RangeError(`paired test needs equal lengths, got ${a.length} and ${b.length}`);
  const d = a.map((x, i) => x - (b[i] as number));
  const n = d.length;
  const md = mean(d);
  const df = n - 1;
  if (n < 2) return { n, meanDiff: md, t: NaN, df, p: NaN };
  const sd = Math.sqrt(variance(d));
  if (sd === 0) return { n, meanDiff: md, t: md === 0 ? 0 : Math.sign(md) * Infinity, df, p: md === 0 ? 1 : 0 };
  const t = md / (sd / Math.sqrt(n));
  const p = 2 * (1 - jStat.studentt.cdf(Math.abs(t), df));
  return { n, meanDiff: md, t, df, p: Math.min(1, Math.max(0, p)) };
}

/** The result of {@link pairedBootstrap}: mean(a − b), its confidence interval and a two-sided p-value. */
export interface PairedBootstrap {
  n: number;
  meanDiff: number;
  /** Confidence interval of mean(a − b). */
  low: number;
  high: number;
  /** Two-sided p-value: twice the share of resampled mean differences on the far side of 0, capped at 1. */
  p: number;
}

/** Paired bootstrap over questions: resample question indices, recompute mean(a − b). */
export function pairedBootstrap(a: readonly number[], b: readonly number[], opts: BootstrapOptions = {}): PairedBootstrap {
  if (a.length !== b.length) throw new RangeError(`paired test needs equal lengths, got ${a.length} and ${b.length}`);
  const d = a.map((x, i) => x - (b[i] as number));
  const n = d.length;
  if (n === 0) return { n, meanDiff: NaN, low: NaN, high: NaN, p: NaN };
  const alpha = 1 - (opts.confidence ?? 0.95);
  const means = bootstrapMeans(d, opts);
  let atOrBelow = 0;
  let atOrAbove = 0;
  for (const m of means) {
    if (m <= 0) atOrBelow++;
    if (m >= 0) atOrAbove++;
  }
  const p = Math.min(1, (2 * Math.min(atOrBelow, atOrAbove)) / means.length);
  return { n, meanDiff: mean(d), low: quantileSorted(means, alpha / 2), high: quantileSorted(means, 1 - alpha / 2), p };
}
