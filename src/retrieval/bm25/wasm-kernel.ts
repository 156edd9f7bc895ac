/**
 * The compiled block-max MaxScore evaluation (assembly/block-max.ts, built by `npm run build:wasm`
 * into wasm/bm25-block-max.wasm at the package root) and the WebAssembly memory that holds the index
 * arrays it reads. The arrays are allocated in that memory once, at open, and handed to the index as
 * typed-array views: the TypeScript evaluations read the same bytes, so nothing is held twice.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ScoredDoc } from '../types.js';

/** Where the build writes the module: the package root's wasm/ (the same depth from src/ and dist/). */
export const BLOCK_MAX_WASM = fileURLToPath(new URL('../../../wasm/bm25-block-max.wasm', import.meta.url));

/** wasm32 addresses 4 GiB; the kernel's own scratch takes a few MiB of it. */
const WASM_PAGE = 65536;
const MAX_PAGES = 65536;

interface Exports {
  skipBlock(): number;
  maxTerms(): number;
  maxK(): number;
  hostArea(): number;
  layout(postings: number, skipDocs: number, skipOffs: number, blockMax: number, lens: number, width: number, norms: number): void;
  inputArea(): number;
  outputArea(): number;
  search(n: number, k: number): number;
}

/** Sizes of the arrays the kernel reads, in elements. */
export interface KernelSizes {
  postingsBytes: number;
  skipEntries: number;
  blocks: number;
  docs: number;
  /** Bytes per document length: 1 or 2. */
  lenWidth: 1 | 2;
  /** Entries of the length-norm table (longest length + 1). */
  normEntries: number;
}

/** The index arrays, as views of the kernel's memory, for the index to fill. */
export interface KernelArrays {
  postings: Uint8Array;
  skipDocs: Uint32Array;
  skipOffs: Uint32Array;
  blockMax: Float32Array;
  lens: Uint8Array | Uint16Array;
  norms: Float64Array;
}

/** One query term as the kernel reads it (terms sorted by ub, ascending). */
export interface KernelTerm {
  /** Byte offset of the term's postings in the postings file. */
  termStart: number;
  df: number;
  skipFirst: number;
  blockFirst: number;
  /** qtf · idf */
  w: number;
  ub: number;
}

/** The part of Node's WebAssembly global used here (the ES library typings do not declare it). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: Record<string, Record<string, unknown>>) => { exports: unknown };
  Memory: new (descriptor: { initial: number; maximum: number }) => { readonly buffer: ArrayBuffer };
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

let compiled: object | null | undefined;
/** The compiled module, or null when the build has not produced it (then the TypeScript evaluation serves). */
function compiledModule(): object | null {
  if (compiled === undefined) compiled = existsSync(BLOCK_MAX_WASM) ? new wasm.Module(readFileSync(BLOCK_MAX_WASM)) : null;
  return compiled;
}

const align = (n: number) => Math.ceil(n / 16) * 16;
/** Bytes of each array, in layout order: postings, skip docs, skip offsets, block maxima, lengths, norms. */
function regionBytes(s: KernelSizes): number[] {
  return [s.postingsBytes, s.skipEntries * 4, s.skipEntries * 4, s.blocks * 4, s.docs * s.lenWidth, s.normEntries * 8];
}
/** Room for the kernel's own data below hostArea(): its cursors, top-k heap and result areas (~1.7 MB). */
const KERNEL_RESERVE = 8 << 20;

export class WasmBlockMax {
  readonly arrays: KernelArrays;
  readonly memoryBytes: number;
  private readonly exports: Exports;
  private readonly maxTerms: number;
  private readonly maxK: number;
  private readonly inU32: Uint32Array;
  private readonly inF64: Float64Array;
  private readonly outDocs: Int32Array;
  private readonly outScores: Float64Array;

  /** Whether the compiled module is there (`npm run build:wasm` writes it). */
  static available(): boolean {
    return compiledModule() !== null;
  }

  /**
   * A kernel with room for arrays of these sizes, or undefined when the module is missing or they
   * do not fit 32-bit WebAssembly memory (then the index keeps its arrays in the JavaScript heap).
   */
  static create(sizes: KernelSizes, skipBlock: number): WasmBlockMax | undefined {
    const mod = compiledModule();
    if (!mod) return undefined;
    const bytes = regionBytes(sizes).reduce((s, b) => s + align(b), 0) + KERNEL_RESERVE;
    const pages = Math.ceil(bytes / WASM_PAGE);
    if (pages > MAX_PAGES) return undefined;
    const memory = new wasm.Memory({ initial: pages, maximum: pages });
    const exports = new wasm.Instance(mod, { env: { memory, abort: () => { throw new Error('bm25 kernel aborted'); } } }).exports as Exports;
    if (exports.skipBlock() !== skipBlock) throw new Error(`wasm/bm25-block-max.wasm was built for skip blocks of ${exports.skipBlock()}, the index has ${skipBlock}: run npm run build:wasm`);
    return new WasmBlockMax(memory, exports, sizes, pages * WASM_PAGE);
  }

  private constructor(memory: { readonly buffer: ArrayBuffer }, exports: Exports, sizes: KernelSizes, memoryBytes: number) {
    this.exports = exports;
    this.memoryBytes = memoryBytes;
    let next = align(exports.hostArea());
    if (next > KERNEL_RESERVE) throw new Error(`the bm25 kernel's own data ends at ${next}, past the ${KERNEL_RESERVE} bytes reserved for it`);
    const at = (bytes: number) => {
      const p = next;
      next += align(bytes);
      return p;
    };
    const [p, sd, so, bm, ln, nm] = regionBytes(sizes).map(at) as [number, number, number, number, number, number];
    exports.layout(p, sd, so, bm, ln, sizes.lenWidth, nm);
    // The memory never grows (its maximum is its size), so these views stay valid.
    const buf = memory.buffer;
    this.arrays = {
      postings: new Uint8Array(buf, p, sizes.postingsBytes),
      skipDocs: new Uint32Array(buf, sd, sizes.skipEntries),
      skipOffs: new Uint32Array(buf, so, sizes.skipEntries),
      blockMax: new Float32Array(buf, bm, sizes.blocks),
      lens: sizes.lenWidth === 1 ? new Uint8Array(buf, ln, sizes.docs) : new Uint16Array(buf, ln, sizes.docs),
      norms: new Float64Array(buf, nm, sizes.normEntries),
    };
    this.maxTerms = exports.maxTerms();
    this.maxK = exports.maxK();
    this.inU32 = new Uint32Array(buf, exports.inputArea(), this.maxTerms * 8);
    this.inF64 = new Float64Array(buf, exports.inputArea(), this.maxTerms * 4);
    this.outDocs = new Int32Array(buf, exports.outputArea(), this.maxK);
    this.outScores = new Float64Array(buf, exports.outputArea() + this.maxK * 4, this.maxK);
  }

  /** Whether a query of n terms and this k fits the kernel's scratch areas. */
  fits(n: number, k: number): boolean {
    return n >= 1 && n <= this.maxTerms && k >= 1 && k <= this.maxK;
  }

  /** The top k for terms sorted by ub (ascending), in the kernel's heap order (the caller sorts). */
  search(terms: readonly KernelTerm[], k: number): ScoredDoc[] {
    const u32 = this.inU32;
    const f64 = this.inF64;
    for (let i = 0; i < terms.length; i++) {
      const t = terms[i]!;
      u32[i * 8] = t.termStart;
      u32[i * 8 + 1] = t.df;
      u32[i * 8 + 2] = t.skipFirst;
      u32[i * 8 + 3] = t.blockFirst;
      f64[i * 4 + 2] = t.w;
      f64[i * 4 + 3] = t.ub;
    }
    const m = this.exports.search(terms.length, k);
    const out: ScoredDoc[] = new Array(m);
    for (let i = 0; i < m; i++) out[i] = { doc: this.outDocs[i]!, score: this.outScores[i]! };
    return out;
  }
}
