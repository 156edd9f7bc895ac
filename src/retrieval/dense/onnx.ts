/**
 * Exact flat search as one matrix product: scores = Q·Dᵀ for a whole batch of queries against a
 * chunk of rows, then the top k of each query, run by ONNX Runtime (the optional package
 * `onnxruntime-node`). Batched exact search is a GEMM, and ONNX Runtime's CPU GEMM (MLAS) runs it
 * at BLAS speed, as faiss's IndexFlatIP does through BLAS; usearch's `exactSearch` scores one
 * (query, row) pair at a time and gains little from a batch (README, dense bench).
 *
 * The graph is two nodes, Gemm(Q, D, transB = 1) → TopK(k, axis 1), written here as ONNX protobuf
 * bytes (a dozen fields; no model file and no protobuf dependency). Its inputs are views of the
 * caller's memory: the rows are not copied.
 */
import { importOptional } from '../../core/optional.js';

/** The parts of `onnxruntime-node` used here. */
interface OrtTensor {
  readonly data: Float32Array | BigInt64Array;
}
interface OrtSession {
  run(feeds: Record<string, OrtTensor>): Promise<Record<string, OrtTensor>>;
  release?(): Promise<void>;
}
interface OrtModule {
  Tensor: new (type: 'float32' | 'int64', data: Float32Array | BigInt64Array, dims: readonly number[]) => OrtTensor;
  InferenceSession: { create(model: Uint8Array, options: Record<string, unknown>): Promise<OrtSession> };
}

/** `onnxruntime-node`; `what` names the feature in the error when it is not installed. */
async function importOrt(what: string): Promise<OrtModule> {
  const mod = await importOptional<{ default?: OrtModule } & OrtModule>('onnxruntime-node', what);
  return mod.default ?? mod;
}

/** `onnxruntime-node` when installed, else undefined (callers fall back to another kernel). */
export function loadOnnxRuntime(): Promise<OrtModule | undefined> {
  return importOrt('the onnx kernel').catch(() => undefined);
}

// --- ONNX protobuf, the few messages this graph needs (onnx.proto field numbers) ---
const utf8 = new TextEncoder();
function varint(value: number): number[] {
  const out: number[] = [];
  let v = value;
  do {
    let byte = v % 128;
    v = Math.floor(v / 128);
    if (v > 0) byte |= 0x80;
    out.push(byte);
  } while (v > 0);
  return out;
}
const intField = (field: number, value: number) => [...varint(field << 3), ...varint(value)];
const bytesField = (field: number, bytes: number[]) => [...varint((field << 3) | 2), ...varint(bytes.length), ...bytes];
const stringField = (field: number, s: string) => bytesField(field, [...utf8.encode(s)]);
/** AttributeProto {name: 1, i: 3, type: 20 (INT = 2)}. */
const intAttribute = (name: string, value: number) => [...stringField(1, name), ...intField(3, value), ...intField(20, 2)];
/** NodeProto {input: 1, output: 2, op_type: 4, attribute: 5}. */
const node = (inputs: string[], outputs: string[], op: string, attributes: number[][]) => [
  ...inputs.flatMap((i) => stringField(1, i)),
  ...outputs.flatMap((o) => stringField(2, o)),
  ...stringField(4, op),
  ...attributes.flatMap((a) => bytesField(5, a)),
];
/** ValueInfoProto {name, type: TypeProto {tensor_type: {elem_type, shape: {dim: [dim_value | dim_param]}}}}. */
const tensorInfo = (name: string, elemType: number, dims: (number | string)[]) => [
  ...stringField(1, name),
  ...bytesField(2, bytesField(1, [...intField(1, elemType), ...bytesField(2, dims.flatMap((d) => bytesField(1, typeof d === 'number' ? intField(1, d) : stringField(2, d))))])),
];
const FLOAT = 1;
const INT64 = 7;

/** ModelProto bytes of Gemm(Q [nq, dim], D [n, dim], transB) → S [nq, n] → TopK(S, K) on axis 1. */
export function gemmTopKModel(dim: number): Uint8Array {
  const graph = [
    ...bytesField(1, node(['Q', 'D'], ['S'], 'Gemm', [intAttribute('transB', 1)])),
    ...bytesField(1, node(['S', 'K'], ['V', 'I'], 'TopK', [intAttribute('axis', 1)])),
    ...stringField(2, 'ragtrail-flat'),
    ...bytesField(11, tensorInfo('Q', FLOAT, ['nq', dim])),
    ...bytesField(11, tensorInfo('D', FLOAT, ['n', dim])),
    ...bytesField(11, tensorInfo('K', INT64, [1])),
    ...bytesField(12, tensorInfo('V', FLOAT, ['nq', 'k'])),
    ...bytesField(12, tensorInfo('I', INT64, ['nq', 'k'])),
  ];
  // ir_version 8, opset 13 (Gemm 13, TopK 11 with K as an input).
  return Uint8Array.from([...intField(1, 8), ...bytesField(8, intField(2, 13)), ...bytesField(7, graph)]);
}

/** A session of the Gemm → TopK graph for one vector size. */
export class OnnxFlatKernel {
  private constructor(
    private readonly ort: OrtModule,
    private readonly session: OrtSession,
    private readonly dim: number,
  ) {}

  /** `threads` 0 lets ONNX Runtime use every core. Throws when `onnxruntime-node` is not installed. */
  static async create(dim: number, threads = 0): Promise<OnnxFlatKernel> {
    const ort = await importOrt('the onnx kernel of dense flat search');
    const session = await ort.InferenceSession.create(gemmTopKModel(dim), {
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
    });
    return new OnnxFlatKernel(ort, session, dim);
  }

  /**
   * The `k` best rows of `rows` (row-major, `rows.length / dim` of them) for each of the `nq`
   * queries packed in `queries`: per query, k scores (best first) and their row numbers.
   */
  async topK(queries: Float32Array, nq: number, rows: Float32Array, k: number): Promise<{ scores: Float32Array; rows: BigInt64Array; k: number }> {
    const n = rows.length / this.dim;
    const kk = Math.min(k, n);
    const out = await this.session.run({
      Q: new this.ort.Tensor('float32', queries, [nq, this.dim]),
      D: new this.ort.Tensor('float32', rows, [n, this.dim]),
      K: new this.ort.Tensor('int64', BigInt64Array.of(BigInt(kk)), [1]),
    });
    return { scores: out['V']!.data as Float32Array, rows: out['I']!.data as BigInt64Array, k: kk };
  }

  async close(): Promise<void> {
    await this.session.release?.();
  }
}
