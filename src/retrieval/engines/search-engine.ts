/**
 * Elasticsearch and OpenSearch as the retrieval engine, through their official clients
 * (`@elastic/elasticsearch` 8.x, `@opensearch-project/opensearch`; optional, loaded on first use):
 *
 *   --index es:http://host:9200#passages         --index opensearch:https://host:9200#passages
 *
 * One index per corpus: `id` (keyword), `title` and `text` (kept in _source), `contents` =
 * "title\ntext" analysed by the `english` analyzer and scored by BM25 with the k1/b set on the index
 * (as ragtrail's own BM25 scores title + text), and `vector` when an embedder is given — ES
 * `dense_vector` with `int8_hnsw`, OpenSearch `knn_vector` on Lucene HNSW with its scalar quantizer —
 * inner product on unit vectors. Hybrid search uses the engine's own fusion: Elasticsearch's `rrf`
 * retriever, OpenSearch's `hybrid` query through a search pipeline with the `score-ranker-processor`
 * (RRF). Loading is resumable: the count of passages acknowledged is kept in the index mapping's
 * `_meta`, and a re-run continues after it.
 */
import { InputError, RagtrailError } from '../../core/errors.js';
import { importOptional } from '../../core/optional.js';
import { Progress } from '../../core/progress.js';
import type { Passage } from '../../core/types.js';
import { readCorpus } from '../../corpus/corpus.js';
import type { Embedder, Prefixes } from '../embedders/embedder.js';
import { RRF_K } from '../hybrid.js';
import type { Hit, Retriever } from '../types.js';

export type EngineKind = 'es' | 'opensearch';
export type EngineMethod = 'bm25' | 'dense' | 'hybrid';

export interface EngineSpec {
  kind: EngineKind;
  url: string;
  index: string;
}

export const ENGINE_SPEC_HELP = 'es:<URL>#<index> or opensearch:<URL>#<index>, e.g. es:http://127.0.0.1:9200#wiki';

/** Parses `es:URL#INDEX` / `opensearch:URL#INDEX`; undefined for anything else (a folder, an http server). */
export function parseEngineSpec(location: string): EngineSpec | undefined {
  const m = /^(es|elasticsearch|opensearch):(.*)$/.exec(location);
  if (!m) return undefined;
  const rest = m[2]!;
  const hash = rest.lastIndexOf('#');
  const url = hash < 0 ? rest : rest.slice(0, hash);
  const index = hash < 0 ? '' : rest.slice(hash + 1);
  if (!/^https?:\/\/[^/]/.test(url) || !/^[a-z0-9][a-z0-9._-]*$/.test(index)) {
    throw new InputError(`"${location}": expected ${m[1]}:<http(s) URL>#<index name in lower case>`, `e.g. ${m[1]}:http://127.0.0.1:9200#wiki`);
  }
  return { kind: m[1] === 'opensearch' ? 'opensearch' : 'es', url, index };
}

/** What ragtrail records in the index mapping's `_meta.ragtrail`. */
export interface EngineMeta {
  corpus: string;
  passages: number;
  complete: boolean;
  k1: number;
  b: number;
  embedder?: string;
  lexical?: boolean;
  prefixes?: Prefixes;
  dim?: number;
}

/** A search response in the shape both engines return (one entry of `_msearch`'s `responses`). */
interface SearchResponse {
  hits?: { hits?: { _id: string; _score: number | null; _source?: { id?: string; title?: string; text?: string } }[] };
  error?: { type?: string; reason?: string } | string;
  status?: number;
}

/** The few calls ragtrail makes; the two clients differ in call shapes, not in what is asked. */
interface Dialect {
  exists(): Promise<boolean>;
  create(settings: object, mappings: object): Promise<void>;
  getMeta(): Promise<EngineMeta | undefined>;
  putMeta(meta: EngineMeta): Promise<void>;
  bulk(operations: object[]): Promise<{ errors?: boolean; items?: Record<string, { status?: number; error?: { type?: string; reason?: string } }>[] }>;
  msearch(bodies: object[], pipeline?: string): Promise<SearchResponse[]>;
  refresh(): Promise<void>;
  putPipeline(id: string, body: object): Promise<void>;
  close(): Promise<void>;
}

// Minimal views of the two clients (the packages are optional, so their types are not imported).
type Call = (params: object) => Promise<unknown>;
interface EsClient {
  indices: { exists: Call; create: Call; getMapping: Call; putMapping: Call; refresh: Call };
  bulk: Call;
  msearch: Call;
  close(): Promise<void>;
}
interface OsClient {
  indices: { exists: Call; create: Call; getMapping: Call; putMapping: Call; refresh: Call };
  searchPipeline: { put: Call };
  bulk: Call;
  msearch: Call;
  close(): Promise<void>;
}

function mappingMeta(reply: unknown, index: string): EngineMeta | undefined {
  const r = reply as Record<string, { mappings?: { _meta?: { ragtrail?: EngineMeta } } }>;
  return (r[index] ?? Object.values(r)[0])?.mappings?._meta?.ragtrail;
}

async function connect(spec: EngineSpec): Promise<Dialect> {
  const { index } = spec;
  if (spec.kind === 'es') {
    const { Client } = await importOptional<{ Client: new (o: object) => EsClient }>('@elastic/elasticsearch', 'an es: index');
    const apiKey = process.env['ES_API_KEY'];
    const c = new Client({ node: spec.url, ...(apiKey ? { auth: { apiKey } } : {}) });
    return {
      exists: async () => (await c.indices.exists({ index })) as boolean,
      create: async (settings, mappings) => void (await c.indices.create({ index, settings, mappings })),
      getMeta: async () => mappingMeta(await c.indices.getMapping({ index }), index),
      putMeta: async (meta) => void (await c.indices.putMapping({ index, _meta: { ragtrail: meta } })),
      bulk: async (operations) => (await c.bulk({ operations })) as Awaited<ReturnType<Dialect['bulk']>>,
      msearch: async (bodies) => ((await c.msearch({ index, searches: bodies.flatMap((b) => [{}, b]) })) as { responses: SearchResponse[] }).responses,
      refresh: async () => void (await c.indices.refresh({ index })),
      putPipeline: async () => {},
      close: () => c.close(),
    };
  }
  const { Client } = await importOptional<{ Client: new (o: object) => OsClient }>('@opensearch-project/opensearch', 'an opensearch: index');
  const c = new Client({ node: spec.url });
  const body = async <T>(p: Promise<unknown>) => ((await p) as { body: T }).body;
  return {
    exists: async () => body<boolean>(c.indices.exists({ index })),
    create: async (settings, mappings) => void (await c.indices.create({ index, body: { settings, mappings } })),
    getMeta: async () => mappingMeta(await body(c.indices.getMapping({ index })), index),
    putMeta: async (meta) => void (await c.indices.putMapping({ index, body: { _meta: { ragtrail: meta } } })),
    bulk: async (operations) => body(c.bulk({ body: operations })),
    msearch: async (bodies, pipeline) => (await body<{ responses: SearchResponse[] }>(c.msearch({ index, body: bodies.flatMap((b) => [{}, b]), ...(pipeline ? { search_pipeline: pipeline } : {}) }))).responses,
    refresh: async () => void (await c.indices.refresh({ index })),
    putPipeline: async (id, pipeline) => void (await c.searchPipeline.put({ id, body: pipeline })),
    close: () => c.close(),
  };
}

/** OpenSearch's RRF pipeline for hybrid queries (score-ranker-processor, OpenSearch ≥ 2.19). */
export const OPENSEARCH_RRF_PIPELINE = 'ragtrail-rrf';

/** Index settings and mappings for a corpus (pure, so that the test checks their shape). */
export function indexDefinition(kind: EngineKind, o: { k1: number; b: number; dim?: number }): { settings: object; mappings: object } {
  const settings: Record<string, unknown> = {
    index: { similarity: { default: { type: 'BM25', k1: o.k1, b: o.b } }, ...(kind === 'opensearch' && o.dim ? { knn: true } : {}) },
    analysis: { analyzer: { default: { type: 'english' } } },
  };
  const properties: Record<string, unknown> = {
    id: { type: 'keyword' },
    title: { type: 'text', index: false },
    text: { type: 'text', index: false },
    contents: { type: 'text' },
  };
  if (o.dim) {
    properties['vector'] =
      kind === 'es'
        ? { type: 'dense_vector', dims: o.dim, index: true, similarity: 'dot_product', index_options: { type: 'int8_hnsw', m: 16, ef_construction: 100 } }
        : { type: 'knn_vector', dimension: o.dim, space_type: 'innerproduct', method: { name: 'hnsw', engine: 'lucene', parameters: { m: 16, ef_construction: 100, encoder: { name: 'sq', parameters: { bits: 7 } } } } };
  }
  // The passage is kept once, as title and text; contents and the vector are indexed only.
  return { settings, mappings: { _source: { excludes: ['contents', 'vector'] }, properties } };
}

/** One search body per query (pure). `vector` is required for dense and hybrid. */
export function searchBody(kind: EngineKind, method: EngineMethod, o: { query: string; vector?: Float32Array; k: number; depth?: number }): object {
  const source = ['id', 'title', 'text'];
  const match = { match: { contents: o.query } };
  const depth = Math.max(o.k, o.depth ?? 100);
  const vector = o.vector ? Array.from(o.vector) : undefined;
  if (method === 'bm25') return { size: o.k, query: match, _source: source };
  if (!vector) throw new RagtrailError(`${method} search on an engine index needs the query's vector`);
  if (kind === 'es') {
    const knn = { field: 'vector', query_vector: vector, k: method === 'dense' ? o.k : depth, num_candidates: Math.max(100, 2 * depth) };
    if (method === 'dense') return { size: o.k, knn, _source: source };
    return { size: o.k, retriever: { rrf: { retrievers: [{ standard: { query: match } }, { knn }], rank_window_size: depth, rank_constant: RRF_K } }, _source: source };
  }
  const knn = { knn: { vector: { vector, k: method === 'dense' ? o.k : depth } } };
  if (method === 'dense') return { size: o.k, query: knn, _source: source };
  return { size: o.k, query: { hybrid: { queries: [match, knn] } }, _source: source };
}

function engineError(spec: EngineSpec, e: unknown): never {
  if (e instanceof RagtrailError) throw e;
  const err = e as { meta?: { statusCode?: number; body?: { error?: { reason?: string; type?: string } } }; message?: string };
  const reason = err.meta?.body?.error?.reason ?? err.message ?? String(e);
  throw new RagtrailError(`${spec.kind}:${spec.url}#${spec.index}: ${err.meta?.statusCode ? `HTTP ${err.meta.statusCode}: ` : ''}${reason}`, 'check the URL, the index name and the cluster (ES_API_KEY for Elasticsearch keys)');
}

export interface EngineBuildOptions {
  embedder?: Embedder;
  prefixes?: Prefixes;
  k1?: number;
  b?: number;
  /** Passages per bulk request (default 500). */
  batchSize?: number;
  quiet?: boolean;
}

/**
 * Bulk-loads a corpus into an engine index, one batch in memory at a time, resumable: `_meta`
 * records how many passages (in corpus order) are acknowledged, and a re-run skips them.
 */
export async function buildEngineIndex(corpusPath: string, spec: EngineSpec, opts: EngineBuildOptions = {}): Promise<EngineMeta> {
  const engine = await connect(spec);
  try {
    let meta = (await engine.exists()) ? await engine.getMeta() : undefined;
    if (meta && meta.corpus !== corpusPath) {
      throw new InputError(`${spec.kind}:${spec.url}#${spec.index} already holds ${meta.corpus}`, 'choose another index name, or delete this index first');
    }
    if (meta && opts.embedder && meta.embedder !== opts.embedder.spec) {
      throw new InputError(`${spec.kind}:${spec.url}#${spec.index} holds ${meta.embedder ? `vectors of ${meta.embedder}` : 'no vectors'}, not of ${opts.embedder.spec}`, 'choose another index name, or delete this index first');
    }
    if (meta?.complete) return meta;
    const batchSize = opts.batchSize ?? 500;
    const progress = new Progress(`loading ${spec.kind}`, { unit: 'passages', quiet: opts.quiet });
    let done = meta?.passages ?? 0;
    if (done > 0) progress.tick(done);
    let seen = 0;
    let batch: Passage[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const vectors = opts.embedder ? await opts.embedder.embed(batch.map((p) => (opts.prefixes?.passage ?? '') + (p.title ? `${p.title}\n${p.text}` : p.text)), 'passage') : undefined;
      if (!meta) {
        // Created on the first batch, once a remote embedder has told the vector size.
        meta = { corpus: corpusPath, passages: 0, complete: false, k1: opts.k1 ?? 0.9, b: opts.b ?? 0.4, ...(opts.embedder ? { embedder: opts.embedder.spec, lexical: opts.embedder.lexical, prefixes: opts.prefixes ?? {}, dim: vectors![0]!.length } : {}) };
        const def = indexDefinition(spec.kind, meta);
        await engine.create(def.settings, { ...def.mappings, _meta: { ragtrail: meta } });
      }
      const ops: object[] = [];
      batch.forEach((p, i) => {
        ops.push({ index: { _index: spec.index, _id: p.id } });
        ops.push({ id: p.id, title: p.title, text: p.text, contents: p.title ? `${p.title}\n${p.text}` : p.text, ...(vectors ? { vector: Array.from(vectors[i]!) } : {}) });
      });
      const reply = await engine.bulk(ops);
      if (reply.errors) {
        const failed = (reply.items ?? []).map((it) => Object.values(it)[0]).find((r) => r?.error);
        throw new RagtrailError(`${spec.kind}:${spec.url}#${spec.index}: bulk load failed at passage ${done + 1}: ${failed?.error?.type ?? ''} ${failed?.error?.reason ?? ''}`.trim(), 're-run the same command to resume after fixing the cause');
      }
      done += batch.length;
      meta.passages = done;
      await engine.putMeta(meta);
      progress.tick(batch.length);
      batch = [];
    };
    for await (const p of readCorpus(corpusPath)) {
      if (seen++ < done) continue;
      batch.push(p);
      if (batch.length >= batchSize) await flush();
    }
    await flush();
    if (!meta) throw new InputError(`${corpusPath}: the corpus has no passages`);
    const final = meta as EngineMeta;
    if (spec.kind === 'opensearch' && final.dim) {
      await engine.putPipeline(OPENSEARCH_RRF_PIPELINE, { description: 'ragtrail hybrid search: reciprocal rank fusion', phase_results_processors: [{ 'score-ranker-processor': { combination: { technique: 'rrf', rank_constant: RRF_K } } }] });
    }
    await engine.refresh();
    final.complete = true;
    await engine.putMeta(final);
    progress.finish();
    return final;
  } catch (e) {
    engineError(spec, e);
  } finally {
    await engine.close();
  }
}

/** A Retriever over an engine index: BM25, kNN or the engine's hybrid, one `_msearch` per batch. */
export class EngineRetriever implements Retriever {
  readonly name: string;

  private constructor(
    private readonly spec: EngineSpec,
    private readonly engine: Dialect,
    private readonly method: EngineMethod,
    private readonly meta: EngineMeta,
    private readonly embedder: Embedder | undefined,
    private readonly depth: number,
  ) {
    this.name = `${spec.kind}(${spec.index}, ${method}${embedder && method !== 'bm25' ? `, ${embedder.spec}` : ''})`;
  }

  static async open(spec: EngineSpec, o: { method?: EngineMethod; embedder?: (meta: EngineMeta) => Promise<Embedder>; depth?: number } = {}): Promise<EngineRetriever> {
    const engine = await connect(spec);
    let meta: EngineMeta | undefined;
    try {
      meta = await engine.getMeta();
    } catch (e) {
      await engine.close();
      engineError(spec, e);
    }
    if (!meta) {
      await engine.close();
      throw new InputError(`${spec.kind}:${spec.url}#${spec.index} was not built by ragtrail (no _meta.ragtrail in its mapping)`, `load it with \`ragtrail index build --corpus C --to ${spec.kind}:${spec.url}#${spec.index}\``);
    }
    const method = o.method ?? 'bm25';
    if (method !== 'bm25' && !meta.embedder) {
      await engine.close();
      throw new InputError(`${spec.kind}:${spec.url}#${spec.index} holds no vectors`, 'load it with --dense --embedder SPEC, or search with --retrieval bm25');
    }
    const embedder = method !== 'bm25' && o.embedder ? await o.embedder(meta) : undefined;
    return new EngineRetriever(spec, engine, method, meta, embedder, o.depth ?? 100);
  }

  async search(query: string, k: number): Promise<Hit[]> {
    return (await this.searchBatch([query], k))[0]!;
  }

  async searchBatch(queries: readonly string[], k: number): Promise<Hit[][]> {
    if (queries.length === 0) return [];
    const prefix = this.meta.prefixes?.query ?? '';
    const vectors = this.embedder ? await this.embedder.embed(queries.map((q) => prefix + q), 'query') : undefined;
    const bodies = queries.map((query, i) => searchBody(this.spec.kind, this.method, { query, vector: vectors?.[i], k, depth: this.depth }));
    let responses: SearchResponse[];
    try {
      responses = await this.engine.msearch(bodies, this.spec.kind === 'opensearch' && this.method === 'hybrid' ? OPENSEARCH_RRF_PIPELINE : undefined);
    } catch (e) {
      engineError(this.spec, e);
    }
    return responses.map((r) => {
      if (r.error) throw new RagtrailError(`${this.spec.kind}:${this.spec.url}#${this.spec.index}: search failed: ${typeof r.error === 'string' ? r.error : `${r.error.type ?? ''} ${r.error.reason ?? ''}`.trim()}`);
      return (r.hits?.hits ?? []).slice(0, k).map((h) => ({ passageId: h._source?.id ?? h._id, title: h._source?.title ?? '', text: h._source?.text ?? '', score: h._score ?? 0 }));
    });
  }

  async close(): Promise<void> {
    await this.embedder?.close?.();
    await this.engine.close();
  }
}
