/**
 * Compressed codes for the in-memory side of dense search; the float32 vectors stay on disk and
 * re-score a shortlist exactly.
 *
 * int8 — per-dimension scalar quantization (faiss's SQ8 idea, symmetric codes): dimension j maps
 *   [min_j, max_j] onto [−127, 127], x_j ≈ mid_j + s_j·c_j with mid_j = (max_j + min_j)/2 and
 *   s_j = (max_j − min_j)/254. For a query q,
 *       q·x ≈ Σ_j q_j·mid_j + Σ_j (q_j·s_j)·c_j,
 *   and the first sum is the same for every passage, so ranking needs only the second, an int8 dot
 *   product once w_j = q_j·s_j is itself rounded to int8 with one scale per query (t = max|w|/127).
 *   768 bytes per 768-dim vector (a quarter of float32).
 * int8, uniform — the HNSW graph's codes: one scale for every dimension and no centre (faiss's
 *   QT_8bit_uniform range, symmetric), c = round(x/s) with s = max|x|/127 over the whole file. The
 *   graph chooses its links by the distances between stored codes, and only these keep them
 *   proportional to the vectors' inner products: c·c' ≈ x·y/s². The per-dimension codes' own inner
 *   product is Σ_j (x_j − mid_j)(y_j − mid_j)/s_j², which weighs dimensions by 1/s_j² and adds
 *   −mid·x − mid·y to every pair: it ranks a vector's neighbours differently from x·y wherever the
 *   vectors share a mean direction (embeddings do), and graphs built on it needed ~10–20% more
 *   search width than faiss's for the same recall (200k × 768, efConstruction 64) and ~2× at
 *   efConstruction 40. Queries take their own scale (t = max|q|/127), so q·x ≈ t·s·(w·c).
 * binary — one bit per dimension, set when x_j is above the dimension's mean (centering keeps the
 *   bits balanced); queries take the bit q_j > 0 (q·x = q·(x − μ) + q·μ, the second term constant),
 *   ranked by Hamming distance. 96 bytes per 768-dim vector (1/32 of float32): a coarse filter
 *   whose shortlist must be longer.
 */
import type { RowFile } from './vectors.js';

/** How vectors are held in memory for search: float32 ('none'), int8 codes, or binary codes. */
export type Quantization = 'none' | 'int8' | 'binary';
export const QUANTIZATIONS = ['none', 'int8', 'binary'] as const;

/** Per-dimension statistics of the stored vectors, from one pass over the float32 file. */
export interface DimStats {
  min: number[];
  max: number[];
  mean: number[];
}

/** Bytes one vector's code takes (binary rows are padded to whole 32-bit words). */
export function codeBytes(q: Quantization, dim: number): number {
  if (q === 'none') return 4 * dim;
  if (q === 'int8') return dim;
  return Math.ceil(dim / 32) * 4;
}

export function dimStats(file: RowFile, dim: number): DimStats {
  const min = new Float64Array(dim).fill(Infinity);
  const max = new Float64Array(dim).fill(-Infinity);
  const sum = new Float64Array(dim);
  for (const { rows, bytes } of file.windows()) {
    const v = new Float32Array(bytes.buffer, bytes.byteOffset, rows * dim);
    for (let r = 0, off = 0; r < rows; r++, off += dim) {
      for (let j = 0; j < dim; j++) {
        const x = v[off + j]!;
        if (x < min[j]!) min[j] = x;
        if (x > max[j]!) max[j] = x;
        sum[j]! += x;
      }
    }
  }
  const n = Math.max(1, file.rows);
  return { min: [...min], max: [...max], mean: [...sum].map((s) => s / n) };
}

/** The int8 scale and centre of each dimension (a constant dimension gets scale 1: its code is 0). */
export function int8Params(stats: DimStats): { mid: Float32Array; scale: Float32Array } {
  const dim = stats.min.length;
  const mid = new Float32Array(dim);
  const scale = new Float32Array(dim);
  for (let j = 0; j < dim; j++) {
    mid[j] = (stats.max[j]! + stats.min[j]!) / 2;
    const s = (stats.max[j]! - stats.min[j]!) / 254;
    scale[j] = s > 0 ? s : 1;
  }
  return { mid, scale };
}

/** Encodes `rows` float32 vectors into int8 codes. */
export function encodeInt8(v: Float32Array, rows: number, mid: Float32Array, scale: Float32Array, out: Int8Array): void {
  const dim = mid.length;
  for (let r = 0, off = 0; r < rows; r++, off += dim) {
    for (let j = 0; j < dim; j++) {
      out[off + j] = int8Code((v[off + j]! - mid[j]!) / scale[j]!);
    }
  }
}

/** The uniform int8 scale of a file: its largest |x| over every dimension, onto 127 (1 for an all-zero file). */
export function uniformScale(stats: DimStats): number {
  let m = 0;
  for (let j = 0; j < stats.min.length; j++) m = Math.max(m, Math.abs(stats.min[j]!), Math.abs(stats.max[j]!));
  return m > 0 ? m / 127 : 1;
}

/** Encodes `values` (any number of rows) into uniform int8 codes, round(x/scale) clamped to ±127. */
export function encodeUniformInt8(values: Float32Array, scale: number, out: Int8Array): void {
  for (let i = 0; i < values.length; i++) out[i] = int8Code(values[i]! / scale);
}

/** x rounded (as Math.round) and clamped to [−127, 127]: one stored code. */
function int8Code(x: number): number {
  const c = roundHalfUp(x);
  return c > 127 ? 127 : c < -127 ? -127 : c;
}

/**
 * Codes `w` at its own scale t = max|w|/127 (so the largest coordinate is ±127), into `into` when
 * given; both query codings end here.
 */
function codeAtOwnScale(w: Float32Array, dim: number, into?: Int8Array): { code: Int8Array; t: number } {
  let maxAbs = 0;
  for (let j = 0; j < dim; j++) maxAbs = Math.max(maxAbs, Math.abs(w[j]!));
  const t = maxAbs > 0 ? maxAbs / 127 : 1;
  const code = into ?? new Int8Array(dim);
  for (let j = 0; j < dim; j++) code[j] = roundHalfUp(w[j]! / t);
  return { code, t };
}

/**
 * A query's uniform int8 code (into `into` when given) and the factor t = max|q|/127 of its integer
 * dot products with the graph's codes: q·x ≈ t·scale·(w·c).
 */
export function uniformInt8Query(q: Float32Array, into?: Int8Array): { code: Int8Array; factor: number } {
  const { code, t } = codeAtOwnScale(q, q.length, into);
  return { code, factor: t };
}

/** Encodes `rows` float32 vectors into sign bits around `centre` (bit j of word j>>5, low bit first). */
export function encodeBinary(v: Float32Array, rows: number, dim: number, centre: Float32Array | undefined, out: Uint32Array): void {
  const words = Math.ceil(dim / 32);
  for (let r = 0; r < rows; r++) {
    for (let w = 0; w < words; w++) {
      let bits = 0;
      const end = Math.min(32, dim - w * 32);
      for (let b = 0; b < end; b++) {
        const j = w * 32 + b;
        if (v[r * dim + j]! > (centre ? centre[j]! : 0)) bits |= 1 << b;
      }
      out[r * words + w] = bits >>> 0;
    }
  }
}

/**
 * Math.round for |x| < 2^52, with the same result for every such double (ties toward +∞, and
 * 0.49999999999999994 → 0, where x + 0.5 rounds up to 1). V8's Math.round branches on the sign of
 * its argument: over the ~50/50 signs of a query's 768 coordinates it mispredicted often enough to
 * take 11 ns a call, against ~2 for this form, whose correcting branch is almost never taken
 * (int8Query fell from 16–20 µs to ~5 µs at 768 dims; measured on the HNSW bench's queries).
 */
export function roundHalfUp(x: number): number {
  const r = Math.floor(x + 0.5);
  return x < r - 0.5 ? r - 1 : r; // r − 0.5 is exact, so this catches the one case where x + 0.5 rounded up
}

/** Scratch for int8Query's scaled coordinates (kept between calls; JavaScript runs one at a time). */
let scaled = new Float32Array(0);

/**
 * A query's int8 code, and the factor/offset that turn its integer dot products back into
 * approximate scores. `into` (dim bytes) receives the code when given, e.g. the query's slot in a
 * batch, instead of a new array.
 */
export function int8Query(q: Float32Array, mid: Float32Array, scale: Float32Array, into?: Int8Array): { code: Int8Array; factor: number; offset: number } {
  const dim = q.length;
  if (scaled.length < dim) scaled = new Float32Array(dim);
  const w = scaled; // float32, as the code's scale t is taken from the float32 products
  let offset = 0;
  for (let j = 0; j < dim; j++) {
    w[j] = q[j]! * scale[j]!;
    offset += q[j]! * mid[j]!;
  }
  const { code, t } = codeAtOwnScale(w, dim, into);
  return { code, factor: t, offset };
}

/** Number of set bits of a 32-bit word (the SWAR popcount). */
function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) as number;
}

/**
 * Hamming distances from each query code to every row of a chunk of binary codes, passed to
 * `visit(query, row, distance)`; rows outer, queries inner, so each row is read from memory once
 * per batch.
 */
export function hammingScan(codes: Uint32Array, rows: number, words: number, queries: Uint32Array[], visit: (qi: number, row: number, distance: number) => void): void {
  const nq = queries.length;
  for (let r = 0, off = 0; r < rows; r++, off += words) {
    for (let qi = 0; qi < nq; qi++) {
      const q = queries[qi]!;
      let d = 0;
      for (let w = 0; w < words; w++) d += popcount(codes[off + w]! ^ q[w]!);
      visit(qi, r, d);
    }
  }
}
