/**
 * NumPy's float64 sum and mean, in NumPy's order of additions, for compatibility modes that must give the
 * authors' numbers to the last bit (ReasonRAG keeps each search-tree node's value as `np.mean` of a list).
 * A plain left-to-right sum rounds differently once a list has 8 values or more, and very differently where
 * large values cancel: [1e16, 1, −1e16, 1, …].
 */

/**
 * `np.add.reduce` of a contiguous float64 array: NumPy's pairwise summation (numpy/_core/src/umath/
 * loops_utils.h.src, `pairwise_sum`): below 8 values a loop from 0.0; up to 128, eight running sums over
 * strides of 8, combined as ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)), then the rest added in order;
 * above 128, the two halves (the first a multiple of 8 long) summed the same way and added.
 */
export function numpySum(values: readonly number[], start = 0, end = values.length): number {
  const n = end - start;
  if (n < 8) {
    let res = 0;
    for (let i = start; i < end; i++) res += values[i]!;
    return res;
  }
  if (n <= 128) {
    const r = values.slice(start, start + 8);
    let i = 8;
    for (; i < n - (n % 8); i += 8) for (let j = 0; j < 8; j++) r[j]! += values[start + i + j]!;
    let res = (r[0]! + r[1]! + (r[2]! + r[3]!)) + (r[4]! + r[5]! + (r[6]! + r[7]!));
    for (; i < n; i++) res += values[start + i]!;
    return res;
  }
  let half = Math.floor(n / 2);
  half -= half % 8;
  return numpySum(values, start, start + half) + numpySum(values, start + half, end);
}

/** `np.mean` of a list of floats (or ints, which it sums as float64): {@link numpySum} / length; NaN when empty. */
export function numpyMean(values: readonly number[]): number {
  return numpySum(values) / values.length;
}
