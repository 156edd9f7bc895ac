/**
 * What the RL parity tests share (test/rewards/parity-rl*.test.ts): reading a set's cases from
 * test/fixtures/parity-rl/<set>/dev.jsonl, decoding the non-finite numbers written as strings, and comparing
 * ragtrail's values with the authors' to the tolerance of the case's dtype.
 *
 * Tolerance: float64 cases to 1e-9 relative (1e-12 absolute near 0): the same operations in another order.
 * float32 cases (the dtype verl trains in) are recomputed in float64 from the float32 inputs, which doubles
 * hold exactly, so they differ by float32 rounding: to 1e-5 of the magnitudes involved.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers.js';

export type Num = number | 'NaN' | 'Infinity' | '-Infinity';
export const toNum = (x: Num): number => (typeof x === 'number' ? x : x === 'NaN' ? NaN : x === 'Infinity' ? Infinity : -Infinity);
export const grid = (g: Num[][]) => g.map((row) => row.map(toNum));

export function cases<T>(set: string): T[] {
  const text = readFileSync(join(ROOT, 'test', 'fixtures', 'parity-rl', set, 'dev.jsonl'), 'utf8');
  return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as T);
}

/**
 * Whether `ours` matches `theirs` for a case of the given dtype. `scale` is the magnitude the float32 rounding
 * is relative to; `cond` the factor by which the computation magnifies the inputs' own rounding (8 units in
 * the last place of the dtype times it are allowed on top).
 */
export function agrees(ours: number, theirs: number, dtype: string, scale = 1, cond = 0): boolean {
  if (Number.isNaN(theirs)) return Number.isNaN(ours);
  if (!Number.isFinite(theirs)) return ours === theirs;
  const unit = dtype === 'float32' ? 2 ** -24 : 2 ** -53;
  const base = dtype === 'float32' ? 1e-5 * Math.max(1, Math.abs(theirs), scale) : Math.max(1e-12, 1e-9 * Math.abs(theirs));
  return Math.abs(ours - theirs) <= Math.max(base, 8 * unit * cond);
}

/** Counts the cases whose every value agrees and names the first that do not. */
export function tally(label: string, results: { id: string; ok: boolean; detail: string }[]): void {
  const bad = results.filter((r) => !r.ok);
  assert.ok(results.length >= 200, `${label}: only ${results.length} cases`);
  assert.deepEqual(bad.slice(0, 5).map((r) => `${r.id}: ${r.detail}`), [], `${label}: ${results.length - bad.length} of ${results.length} match`);
}

export const gridsAgree = (ours: number[][], theirs: number[][], dtype: string, scale: (i: number, j: number) => number, cond: (i: number) => number = () => 0) =>
  theirs.length === ours.length && theirs.every((row, i) => row.length === ours[i]!.length && row.every((t, j) => agrees(ours[i]![j]!, t, dtype, scale(i, j), cond(i))));
