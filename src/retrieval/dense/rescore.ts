/**
 * The second stage of quantized search: the shortlist that int8 or binary codes picked is scored again
 * with the float32 vectors (q·x, cosine for unit vectors), so every hit carries a float32 score.
 *
 * The dot products run in usearch's native SIMD kernel when that optional package is installed (one
 * exactSearch call over the shortlist's rows: ~9 µs for 20 rows of 768 floats, against ~32 µs in the
 * JavaScript loop; the native score is float32, 1 − (1 − q·x), within ~1e-7 of the loop's), else in
 * JavaScript.
 */
import { exactSearch, keyRows, type UsearchBinding } from './usearch.js';

/** A query copied to the start of its own buffer (the native binding ignores byteOffset). */
let queryScratch = new Float32Array(0);

/**
 * q·row for rows [0, n) of `rows` (row-major, `dim` floats each, starting at offset 0 of their
 * buffer), written to out[0, n).
 */
export function scoreRows(usearch: UsearchBinding | undefined, q: Float32Array, rows: Float32Array, n: number, dim: number, out: Float64Array): void {
  if (n === 0) return;
  if (!usearch) {
    for (let r = 0; r < n; r++) out[r] = dot(rows, r * dim, q, dim);
    return;
  }
  if (queryScratch.length !== dim) queryScratch = new Float32Array(dim);
  queryScratch.set(q);
  const data = rows.length === n * dim ? rows : new Float32Array(rows.buffer, rows.byteOffset, n * dim);
  const [keys, distances] = exactSearch(usearch, data, queryScratch, dim, n, 1);
  const at = keyRows(keys);
  for (let i = 0; i < n; i++) out[at[i]!] = 1 - distances[i]!;
}

/** Float32 dot product over four accumulators: the adds no longer wait on each other (2–3× faster than one accumulator in the re-scoring loop, measured at 200k). */
export function dot(a: Float32Array, offset: number, b: Float32Array, n: number): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let j = 0;
  for (; j + 3 < n; j += 4) {
    s0 += a[offset + j]! * b[j]!;
    s1 += a[offset + j + 1]! * b[j + 1]!;
    s2 += a[offset + j + 2]! * b[j + 2]!;
    s3 += a[offset + j + 3]! * b[j + 3]!;
  }
  for (; j < n; j++) s0 += a[offset + j]! * b[j]!;
  return s0 + s1 + s2 + s3;
}
