/**
 * The contract every embedder backend implements, and the helpers they share. It sits apart from the
 * factory (embedder.ts) because the factory imports the backends and the backends need this contract:
 * in one module the two formed an import cycle.
 */
export type EmbedKind = 'query' | 'passage';

/** Text → L2-normalised vectors (so inner product is cosine similarity), for dense indexes. */
export interface Embedder {
  /** The spec string that re-creates this embedder (stored in the index manifest). */
  readonly spec: string;
  /** True for embedders that only see surface forms (hashed n-grams): label results accordingly. */
  readonly lexical: boolean;
  /** Vector size; known before the first call for local embedders, after it for remote ones. */
  readonly dim: number | undefined;
  /**
   * One unit-length vector per text, in order; `kind` says whether the texts are queries or passages
   * (asymmetric models embed them differently).
   */
  embed(texts: readonly string[], kind: EmbedKind): Promise<Float32Array[]>;
  /** Releases a loaded model or open connections. */
  close?(): Promise<void>;
}

/** Instruction prefixes in the E5 / BGE style, e.g. {query: "query: ", passage: "passage: "}. */
export interface Prefixes {
  query?: string;
  passage?: string;
}

export function l2normalize(v: Float32Array): Float32Array {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]! * v[i]!;
  if (s > 0) {
    const inv = 1 / Math.sqrt(s);
    for (let i = 0; i < v.length; i++) v[i]! *= inv;
  }
  return v;
}

/** Wraps an embedder so that queries and passages get their instruction prefixes. */
export function withPrefixes(e: Embedder, prefixes: Prefixes): Embedder {
  if (!prefixes.query && !prefixes.passage) return e;
  return {
    spec: e.spec,
    lexical: e.lexical,
    get dim() {
      return e.dim;
    },
    embed: (texts, kind) => e.embed(texts.map((t) => (prefixes[kind] ?? '') + t), kind),
    close: e.close ? () => e.close!() : undefined,
  };
}

/** Settings of remote embedders (ignored by the offline `hash` embedder). */
export interface EmbedderOptions {
  apiKey?: string;
  /** Texts per request for remote embedders (default 64). */
  batchSize?: number;
  /** Requests in flight at once for remote embedders (default 4). */
  concurrency?: number;
}
