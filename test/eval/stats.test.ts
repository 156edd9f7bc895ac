import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bootstrapCI, mean, pairedBootstrap, pairedTTest, quantileSorted, variance } from '../../src/eval/stats.js';

const close = (a: number, b: number, tol: number) => assert.ok(Math.abs(a - b) <= tol, `${a} vs ${b} (tol ${tol})`);

describe('descriptive statistics', () => {
  it('mean, sample variance, interpolated quantiles', () => {
    assert.equal(mean([1, 2, 3, 4]), 2.5);
    assert.equal(variance([1, 2, 3, 4]), 5 / 3);
    assert.equal(quantileSorted([1, 2, 3, 4], 0.5), 2.5);
    assert.equal(quantileSorted([0, 10], 0.25), 2.5);
  });
});

describe('pairedTTest', () => {
  it('d = [1,2,2,3]: t = 2/(√(2/3)/2) = 4.8990, df 3, p = 0.016277 (scipy.stats.ttest_rel)', () => {
    const r = pairedTTest([1, 2, 3, 4], [0, 0, 1, 1]);
    close(r.t, 4.898979485566356, 1e-12);
    assert.equal(r.df, 3);
    close(r.p, 0.016276603459428555, 1e-9);
  });
  it('agrees with scipy on fractional scores: t = 1.94118, p = 0.084150', () => {
    const a = [0.5, 1, 0, 1, 0.25, 1, 0, 1, 1, 0.75];
    const b = [0, 1, 0, 0, 0.5, 1, 0, 1, 0, 0.25];
    const r = pairedTTest(a, b);
    close(r.t, 1.9411764705882355, 1e-12);
    close(r.p, 0.08415030805368938, 1e-9);
  });
  it('defines the degenerate case of constant differences', () => {
    assert.equal(pairedTTest([1, 1], [1, 1]).p, 1);
    assert.equal(pairedTTest([1, 1, 1], [0, 0, 0]).p, 0);
  });
  it('rejects unequal lengths', () => {
    assert.throws(() => pairedTTest([1], [1, 2]), /equal lengths/);
  });
});

describe('bootstrap', () => {
  it('gives a zero-width interval for constant data', () => {
    assert.deepEqual(bootstrapCI([0.5, 0.5, 0.5]), { mean: 0.5, low: 0.5, high: 0.5 });
  });
  it('is reproducible for a seed and brackets the mean', () => {
    const xs = Array.from({ length: 200 }, (_, i) => (i % 3 === 0 ? 1 : 0));
    const a = bootstrapCI(xs, { seed: 7 });
    assert.deepEqual(bootstrapCI(xs, { seed: 7 }), a);
    assert.ok(a.low < a.mean && a.mean < a.high);
    // Normal approximation for a proportion: half-width ≈ 1.96·√(p(1−p)/n) = 0.0653 for p = 67/200.
    const p = 67 / 200;
    close((a.high - a.low) / 2, 1.96 * Math.sqrt((p * (1 - p)) / 200), 0.012);
  });
  it('paired bootstrap: identical systems differ by 0 with p = 1; a uniformly better one has p = 0', () => {
    const xs = [1, 0, 1, 1, 0, 0, 1, 0];
    const same = pairedBootstrap(xs, xs);
    assert.equal(same.meanDiff, 0);
    assert.equal(same.p, 1);
    const better = pairedBootstrap(xs.map(() => 1), xs.map(() => 0));
    assert.equal(better.meanDiff, 1);
    assert.equal(better.p, 0);
  });
});
