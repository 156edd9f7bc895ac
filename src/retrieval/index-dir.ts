/**
 * An index folder: the document store plus whichever search structures were built over it.
 *
 *   DIR/index.json        manifest (corpus, passage count, components)
 *   DIR/docs.jsonl, docs.off
 *   DIR/bm25/             see bm25/build.ts
 *   DIR/dense/            see dense/build.ts
 *
 * Building streams the corpus once for the store and BM25, then embeds from the store. Re-running a
 * build on the same folder keeps finished parts: adding `--dense` to a BM25 index embeds only, and
 * an interrupted embedding resumes.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { InputError } from '../core/errors.js';
import { DirLock } from '../core/lock.js';
import { type RegisterOptions, Registry, splitSpec } from '../core/registry.js';
import { makeDir, readJsonFileSync, readLines, writeJsonAtomicSync } from '../core/io.js';
import { diskFullError, folderBytes, isDiskFull } from '../core/disk.js';
import { Progress } from '../core/progress.js';
import { checkJsonChecksum, type FileSum, withChecksum } from '../core/checksum.js';
import type { Passage } from '../core/types.js';
import { readCorpus } from '../corpus/corpus.js';
import { Bm25Builder, type Bm25BuildOptions, type Bm25Meta } from './bm25/build.js';
import { Bm25Index, type Bm25OpenOptions } from './bm25/index.js';
import { buildDense, denseMatches, type DenseBuildOptions, type DenseMeta } from './dense/build.js';
import { DenseIndex, type DenseOpenOptions, type DenseSearchMode } from './dense/index.js';
import { DocStore, DocStoreWriter } from './docstore.js';
import { checkIndexOnOpen, DamagedFileError, type IndexPart, recordFileSums } from './integrity.js';
import { createEmbedder, type Embedder, type EmbedderOptions } from './embedders/embedder.js';
import { RrfRetriever } from './hybrid.js';
import { HttpRetriever } from './client.js';
import { EngineRetriever, parseEngineSpec } from './engines/search-engine.js';
import { Bm25Retriever, DenseRetriever } from './retrievers.js';
import type { Retriever } from './types.js';

export const INDEX_FORMAT_VERSION = 1;

/** `DIR/index.json` of an index folder: the corpus it was built from and the parts built over it. */
export interface IndexManifest {
  format: 'ragtrail-index';
  version: number;
  /**
   * The corpus file. Relative to the index folder where `corpusBase` is "index", so that the index
   * works from any folder and moves with its corpus; in manifests from before that field, as given to
   * the build (relative to the folder it ran in). Resolve it with {@link manifestCorpus}.
   */
  corpus: string;
  corpusBase?: 'index';
  /** Size and modification time of the corpus file when indexed: a changed corpus is not resumed. */
  corpusStat?: { size: number; mtimeMs: number };
  passages: number;
  /** Corpus records skipped by --skip-invalid. */
  skippedRecords?: number;
  created: string;
  bm25?: Omit<Bm25Meta, 'analyzer'>;
  dense?: DenseMeta;
  /**
   * Size and SHA-256 of each file, by path relative to the index folder, recorded when the part was
   * built (see integrity.ts); absent in indexes built before checksums.
   */
  files?: Record<string, FileSum>;
  /** SHA-256 of this manifest without this field (core/checksum.ts); absent before checksums. */
  checksum?: string;
}

/** Options of {@link buildIndex}. */
export interface IndexBuildOptions {
  /** Build the BM25 part (default: true unless an embedder is given). */
  bm25?: boolean;
  bm25Options?: Bm25BuildOptions;
  /** Embedder for the dense part; omit for BM25 only. */
  embedder?: Embedder;
  dense?: DenseBuildOptions;
  quiet?: boolean;
  /** Rebuild from scratch when the folder holds an index of another or a changed corpus. */
  force?: boolean;
  /** Skip corpus lines that are not UTF-8 or do not parse, and repeated passage ids, instead of failing (each reported to `onInvalid`). */
  skipInvalid?: boolean;
  /** Called for each corpus record skipped under `skipInvalid`. */
  onInvalid?: (e: InputError) => void;
}

function corpusStat(path: string): { size: number; mtimeMs: number } {
  const s = statSync(path);
  return { size: s.size, mtimeMs: Math.round(s.mtimeMs) };
}

const manifestPath = (dir: string) => join(dir, 'index.json');

/** The manifest of the index folder `dir`; throws an InputError when it is not a ragtrail index or has an unsupported format version. */
export function readManifest(dir: string): IndexManifest {
  const path = manifestPath(dir);
  if (!existsSync(path)) throw new InputError(`${dir}: not a ragtrail index (no index.json)`, 'build one with `ragtrail index build --corpus C --out DIR`');
  const m = readJsonFileSync<IndexManifest>(path, 'rebuild the index with `ragtrail index build --force`');
  if (m.format !== 'ragtrail-index' || m.version !== INDEX_FORMAT_VERSION) {
    throw new InputError(`${dir}: index format ${m.format} v${m.version} is not supported by this ragtrail (v${INDEX_FORMAT_VERSION})`, 'rebuild the index');
  }
  // A flipped digit can leave valid JSON (a passage count, k1): the manifest's own checksum catches it.
  // Its content is suspect then, so the fix names only the corpus and folder, not the options it reads.
  if (checkJsonChecksum(m) === 'mismatch') {
    const corpus = relative(process.cwd(), manifestCorpus(dir, m));
    throw new DamagedFileError(path, 'checksum mismatch', `rebuild the index with \`ragtrail index build --corpus ${corpus} --out ${dir} --force\` and the options it was built with`);
  }
  return m;
}

/** The corpus file an index was built from, as an absolute path. */
export function manifestCorpus(dir: string, m: Pick<IndexManifest, 'corpus' | 'corpusBase' | 'corpusStat'>): string {
  if (m.corpusBase === 'index') return resolve(dir, m.corpus);
  // An older manifest: the path is relative to the folder the build ran in, as before when it exists
  // from here; else from the index folder and each folder above it (a build ran in one of them when
  // its --out had no ".."), preferring a file of the recorded size.
  const fromCwd = resolve(m.corpus);
  if (isAbsolute(m.corpus)) return fromCwd;
  const candidates = [fromCwd];
  for (let d = resolve(dir); ; d = dirname(d)) {
    candidates.push(resolve(d, m.corpus));
    if (dirname(d) === d) break;
  }
  const fits = (p: string) => existsSync(p) && (m.corpusStat === undefined || statSync(p).size === m.corpusStat.size);
  return existsSync(fromCwd) ? fromCwd : (candidates.find(fits) ?? candidates.find((p) => existsSync(p)) ?? fromCwd);
}

/** How a new manifest names its corpus: relative to the index folder, whatever the working folder. */
function corpusField(corpusPath: string, dir: string): Pick<IndexManifest, 'corpus' | 'corpusBase'> {
  return { corpus: relative(resolve(dir), resolve(corpusPath)), corpusBase: 'index' };
}

function writeManifest(dir: string, m: IndexManifest): void {
  writeJsonAtomicSync(manifestPath(dir), withChecksum(m));
}

/**
 * Moves a finished build from `tmp` into `dir`, the manifest last, so that `dir` holds either no
 * index or a complete one: a build that fails (a bad corpus line, a full disk) leaves no partial
 * index behind.
 */
function moveInto(tmp: string, dir: string): void {
  mkdirSync(dir, { recursive: true });
  const entries = readdirSync(tmp).sort((a, b) => Number(a === 'index.json') - Number(b === 'index.json'));
  for (const name of entries) {
    rmSync(join(dir, name), { recursive: true, force: true });
    renameSync(join(tmp, name), join(dir, name));
  }
  rmSync(tmp, { recursive: true, force: true });
}

/** Passages of the document store from document number `from` on, in order. */
async function* storedPassages(dir: string, from: number): AsyncGenerator<Passage> {
  let i = 0;
  for await (const { text } of readLines(join(dir, 'docs.jsonl'))) {
    if (i++ < from || text === '') continue;
    yield JSON.parse(text) as Passage;
  }
}

/**
 * Builds (or completes) the index folder `dir` over the corpus file: document store and BM25 in one
 * pass, then the dense part when `opts.embedder` is set. Finished parts are kept, so re-running adds
 * what is missing and resumes an interrupted embedding; the first pass is built aside and moved in
 * when complete. Throws an InputError when `dir` holds an index of another or a changed corpus (unless
 * `force`).
 */
export async function buildIndex(corpusPath: string, dir: string, opts: IndexBuildOptions): Promise<IndexManifest> {
  if (existsSync(dir) && !statSync(dir).isDirectory()) throw new InputError(`--out ${dir}: is a file, not a folder`, 'name a folder for the index');
  // One build per index folder: two would share DIR.partial. The lock sits beside the folder, which
  // may not exist yet (it is built as DIR.partial and moved in).
  const lock = DirLock.acquire(`${resolve(dir)}.lock`, `index folder ${dir}`);
  try {
    return await buildIndexLocked(corpusPath, dir, opts);
  } finally {
    lock.release();
  }
}

async function buildIndexLocked(corpusPath: string, dir: string, opts: IndexBuildOptions): Promise<IndexManifest> {
  const wantBm25 = opts.bm25 ?? !opts.embedder;
  let manifest: IndexManifest | undefined;
  if (existsSync(manifestPath(dir)) && opts.force) {
    // Without reading the manifest: --force is also the fix for a damaged one.
    for (const part of ['bm25', 'dense', 'index.json']) rmSync(join(dir, part), { recursive: true, force: true });
  } else if (existsSync(manifestPath(dir))) {
    manifest = readManifest(dir);
    const now = existsSync(corpusPath) ? corpusStat(corpusPath) : undefined;
    const other = manifestCorpus(dir, manifest) !== resolve(corpusPath);
    const changed = !other && now !== undefined && manifest.corpusStat !== undefined && (now.size !== manifest.corpusStat.size || now.mtimeMs !== manifest.corpusStat.mtimeMs);
    if (other) {
      throw new InputError(`${dir} already holds an index of ${manifestCorpus(dir, manifest)}`, 'choose another --out folder, delete this one, or pass --force to rebuild it');
    } else if (changed) {
      throw new InputError(`${corpusPath} changed since ${dir} was built from it`, 'pass --force to rebuild the index, or choose another --out folder');
    }
  }
  if (!manifest || (wantBm25 && !manifest.bm25)) {
    // One pass over the corpus: document store, and BM25 when asked, built in a sibling folder and
    // moved in when complete.
    const tmp = `${resolve(dir)}.partial`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    try {
      const store = new DocStoreWriter(tmp);
      const bm25 = wantBm25 ? new Bm25Builder(join(tmp, 'bm25'), opts.bm25Options) : undefined;
      const progress = new Progress('indexing', { unit: 'passages', quiet: opts.quiet });
      let skipped = 0;
      const corpusOptions = { skipInvalid: opts.skipInvalid, onInvalid: (e: InputError) => (skipped++, opts.onInvalid?.(e)) };
      try {
        for await (const p of readCorpus(corpusPath, corpusOptions)) {
          store.add(p);
          bm25?.add(p.title ? `${p.title}\n${p.text}` : p.text);
          progress.tick();
        }
      } finally {
        store.close();
      }
      const bm25Meta = bm25?.finish();
      progress.finish(`${bm25Meta ? `(${bm25Meta.vocabulary} terms, ${bm25Meta.postings} postings, ${bm25Meta.runs} runs)` : ''}${skipped ? ` ${skipped} invalid records skipped` : ''}`);
      if (store.count === 0) throw new InputError(`${corpusPath}: the corpus has no passages`);
      manifest = { format: 'ragtrail-index', version: INDEX_FORMAT_VERSION, ...corpusField(corpusPath, dir), corpusStat: existsSync(corpusPath) ? corpusStat(corpusPath) : undefined, passages: store.count, created: new Date().toISOString() };
      if (bm25Meta) {
        const { analyzer: _analyzer, ...rest } = bm25Meta;
        manifest.bm25 = rest;
      }
      if (skipped) manifest.skippedRecords = skipped;
      recordFileSums(tmp, manifest, bm25Meta ? ['store', 'bm25'] : ['store']);
      writeManifest(tmp, manifest);
    } catch (e) {
      const written = folderBytes(tmp);
      rmSync(tmp, { recursive: true, force: true });
      // The store is about the corpus's size and BM25 about half more (1.55x on a test world); what
      // the failed build had written is a floor. Its partial folder is gone, so a re-run starts over.
      if (isDiskFull(e)) throw diskFullError(tmp, { building: `the index ${dir}`, folder: dirname(dir), needBytes: Math.max(written, 1.6 * statSync(corpusPath).size) });
      throw e;
    }
    moveInto(tmp, dir);
  }
  if (opts.embedder && !(manifest.dense && manifest.dense.embedder === opts.embedder.spec && denseMatches(manifest.dense, opts.dense ?? {}))) {
    const denseDir = join(dir, 'dense');
    makeDir(denseDir);
    const n = manifest.passages;
    try {
      manifest.dense = await buildDense(denseDir, (from) => storedPassages(dir, from), n, opts.embedder, { quiet: opts.quiet, ...opts.dense });
    } catch (e) {
      // The vectors embedded so far are kept (a re-run resumes); float32 vectors, with codes or a graph on top.
      const vectors = n * 4 * (opts.embedder.dim ?? 768);
      if (isDiskFull(e)) throw diskFullError(denseDir, { building: `the dense index in ${denseDir}`, folder: denseDir, needBytes: vectors * (opts.dense?.hnsw ? 2 : 1.25) - folderBytes(denseDir) });
      throw e;
    }
    // An index built before checksums gets them for every part now, so that `index verify` covers it whole.
    recordFileSums(dir, manifest, manifest.files ? ['dense'] : ['store', 'bm25', 'dense']);
    writeManifest(dir, manifest);
  }
  return manifest;
}

/** Which part of an index a retriever searches; `hybrid` fuses BM25 and dense by reciprocal rank. */
export type SearchMethod = 'bm25' | 'dense' | 'hybrid';

/** Options of {@link openRetriever}; those not relevant to the location's kind are ignored. */
export interface OpenRetrieverOptions {
  /** Default: bm25 when the index has it, else dense. */
  method?: SearchMethod;
  /** Embedder to use instead of the one named in the index (e.g. with an API key). */
  embedder?: Embedder;
  embedderOptions?: EmbedderOptions;
  denseMode?: DenseSearchMode;
  /** Shortlist, search width, threads of dense search (see DenseOpenOptions). */
  dense?: DenseOpenOptions;
  bm25?: Bm25OpenOptions;
  /** RRF constant (default 60) and per-retriever depth (default 100). */
  rrfK?: number;
  rrfDepth?: number;
  /** Bearer token for a remote retrieval server. */
  token?: string;
}

/** Opens a retriever from the rest of its location (after `kind:`). */
export type RetrieverFactory = (rest: string, opts: OpenRetrieverOptions) => Retriever | Promise<Retriever>;

/**
 * Retriever kinds registered with `registerRetriever`: a location `KIND:rest` opens through the
 * kind's factory. Built-in locations (an index folder, an http(s) URL, `es:` / `opensearch:`) are
 * not in this table and cannot be shadowed by it.
 */
export const retrieverKinds = new Registry<RetrieverFactory>('retriever kind');

/** Makes `--index KIND:rest` open with `factory` in every command that takes an index. */
export function registerRetriever(kind: string, factory: RetrieverFactory, opts?: RegisterOptions): void {
  if (['http', 'https', 'es', 'opensearch'].includes(kind)) throw new InputError(`retriever kind "${kind}" is built in`, 'pick another name');
  retrieverKinds.register(kind, factory, opts);
}

/** The registered retriever kind a location names, if any. */
export function registeredRetrieverKind(location: string): { factory: RetrieverFactory; rest: string } | undefined {
  const { kind, rest } = splitSpec(location);
  const factory = location.includes(':') ? retrieverKinds.find(kind) : undefined;
  return factory ? { factory, rest } : undefined;
}

/**
 * A Retriever over an index folder, over a Search-R1-style retrieval server when `location` is
 * an http(s) URL, over an Elasticsearch / OpenSearch index (`es:URL#INDEX`, `opensearch:URL#INDEX`),
 * or of a registered kind (`KIND:rest`, see `registerRetriever`).
 */
export async function openRetriever(location: string, opts: OpenRetrieverOptions = {}): Promise<Retriever> {
  const custom = registeredRetrieverKind(location);
  if (custom) return custom.factory(custom.rest, opts);
  if (/^https?:\/\//.test(location)) return new HttpRetriever(location, { token: opts.token });
  const engine = parseEngineSpec(location);
  if (engine) return EngineRetriever.open(engine, { method: opts.method, embedder: async (m) => opts.embedder ?? createEmbedder(m.embedder!, opts.embedderOptions), depth: opts.rrfDepth });
  const manifest = readManifest(location);
  const method = opts.method ?? (manifest.bm25 ? 'bm25' : 'dense');
  const parts: IndexPart[] = ['store', ...(method === 'dense' ? [] : (['bm25'] as const)), ...(method === 'bm25' ? [] : (['dense'] as const))];
  checkIndexOnOpen(location, manifest, parts, manifestCorpus(location, manifest));
  const store = new DocStore(location, manifest.passages);
  const bm25 = async () => {
    if (!manifest.bm25) throw new InputError(`${location} has no BM25 index`, 'rebuild with --bm25, or search with --retrieval dense');
    return new Bm25Retriever(Bm25Index.open(join(location, 'bm25'), opts.bm25), store);
  };
  const dense = async () => {
    if (!manifest.dense) throw new InputError(`${location} has no dense index`, 'rebuild with --dense --embedder SPEC, or search with --retrieval bm25');
    const embedder = opts.embedder ?? (await createEmbedder(manifest.dense.embedder, opts.embedderOptions));
    return new DenseRetriever(await DenseIndex.open(join(location, 'dense'), { mode: opts.denseMode, ...opts.dense }), embedder, store);
  };
  if (method === 'bm25') return bm25();
  if (method === 'dense') return dense();
  return new RrfRetriever([await bm25(), await dense()], { k: opts.rrfK, depth: opts.rrfDepth });
}
