/**
 * Damage checks of an index folder. A build records each file's size and SHA-256 in `index.json`
 * (`files`), and the manifest carries a checksum of its own content. Opening an index compares every
 * size (a stat each) and fully hashes the small files (manifests, quantization tables, and whole
 * indexes under FULL_CHECK_BYTES), so a truncated file or a flipped byte in a parameter is one line
 * naming the file and the rebuild command, never wrong scores. Hashing a large index on every open
 * would cost seconds, so its big files are checked by `ragtrail index verify DIR`. Indexes built
 * before checksums open as before; `index verify` says it cannot check them.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { type FileSum, sumFile } from '../core/checksum.js';
import { InputError } from '../core/errors.js';
import { DEFAULT_BM25 } from './bm25/build.js';
import type { DenseMeta } from './dense/build.js';

/** What these checks read of an index manifest (index-dir.ts's IndexManifest, without importing it). */
export interface IndexManifestParts {
  files?: Record<string, FileSum>;
  bm25?: { k1: number; b: number };
  dense?: DenseMeta;
}

/** The parts of an index folder, each a set of files. */
export type IndexPart = 'store' | 'bm25' | 'dense';

/** Files up to this size are hashed on every open: the cost is a few milliseconds at most. */
export const SMALL_FILE_BYTES = 1 << 20;
/** An index whose checked files total at most this is hashed whole on open (about 30 ms at 1 GB/s). */
export const FULL_CHECK_BYTES = 32 << 20;

/** A file of an index (or a model file) that does not hold what was written: names it and the fix. */
export class DamagedFileError extends InputError {
  constructor(
    readonly path: string,
    readonly why: string,
    readonly fix: string,
  ) {
    super(`${path} is damaged (${why}): ${fix}`);
  }
}

const partOf = (rel: string): IndexPart => (rel.startsWith('bm25/') ? 'bm25' : rel.startsWith('dense/') ? 'dense' : 'store');

/** The files of one part as they are on disk now (relative to the index folder, with '/'). */
function partFiles(dir: string, part: IndexPart): string[] {
  if (part === 'store') return ['docs.jsonl', 'docs.off'];
  const sub = join(dir, part);
  if (!existsSync(sub)) return [];
  // progress.json is build state (resuming an embedding), never read by a search.
  const keep = (name: string) => !name.endsWith('.tmp') && !name.endsWith('.partial') && !name.startsWith('.') && name !== 'progress.json';
  return readdirSync(sub, { withFileTypes: true })
    .filter((e) => e.isFile() && keep(e.name))
    .map((e) => `${part}/${e.name}`)
    .sort();
}

/** Records the size and SHA-256 of every file of `parts` in `m.files`, replacing what it had for them. */
export function recordFileSums(dir: string, m: IndexManifestParts, parts: readonly IndexPart[]): void {
  const files: Record<string, FileSum> = {};
  for (const [rel, sum] of Object.entries(m.files ?? {})) if (!parts.includes(partOf(rel))) files[rel] = sum;
  for (const part of parts) for (const rel of partFiles(dir, part)) files[rel] = sumFile(join(dir, rel));
  m.files = Object.fromEntries(Object.entries(files).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

const quote = (s: string) => (/^[\w./:@%+=,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/** The `ragtrail index build` command that rebuilds the index `m` describes, from its corpus. */
export function rebuildCommand(dir: string, m: IndexManifestParts, corpus: string): string {
  const args = ['ragtrail index build', '--corpus', quote(relative(process.cwd(), corpus) || corpus), '--out', quote(dir)];
  if (m.bm25 && m.dense) args.push('--bm25');
  if (m.bm25 && (m.bm25.k1 !== DEFAULT_BM25.k1 || m.bm25.b !== DEFAULT_BM25.b)) args.push('--k1', String(m.bm25.k1), '--b', String(m.bm25.b));
  const d = m.dense;
  if (d) {
    args.push('--dense', '--embedder', quote(d.embedder));
    if (d.prefixes.query) args.push('--query-prefix', quote(d.prefixes.query));
    if (d.prefixes.passage) args.push('--passage-prefix', quote(d.prefixes.passage));
    if (d.quantization && d.quantization !== 'none') args.push('--quantize', d.quantization);
    if (d.hnsw) args.push('--hnsw', '--hnsw-m', String(d.hnsw.connectivity), '--ef-construction', String(d.hnsw.expansionAdd ?? 40), '--hnsw-order', d.hnsw.order ?? 'natural');
  }
  args.push('--force');
  return args.join(' ');
}

/** What one file of an index holds compared with its manifest entry: why it is damaged, or undefined when it is sound. */
function damage(path: string, want: FileSum, hash: boolean): string | undefined {
  let bytes: number;
  try {
    bytes = statSync(path).size;
  } catch {
    return 'missing';
  }
  if (bytes !== want.bytes) return `${bytes} bytes, built with ${want.bytes}: ${bytes < want.bytes ? 'truncated' : 'grown or replaced'}`;
  if (hash && sumFile(path).sha256 !== want.sha256) return 'checksum mismatch';
  return undefined;
}

/**
 * The checks made on opening an index for `parts`: every file's size, and the content of small files
 * (or of all of them when the whole is small). Throws a DamagedFileError for the first damaged file.
 */
export function checkIndexOnOpen(dir: string, m: IndexManifestParts, parts: readonly IndexPart[], corpus: string): void {
  if (!m.files) return;
  const entries = Object.entries(m.files).filter(([rel]) => parts.includes(partOf(rel)));
  const total = entries.reduce((s, [, f]) => s + f.bytes, 0);
  for (const [rel, want] of entries) {
    const why = damage(join(dir, rel), want, total <= FULL_CHECK_BYTES || want.bytes <= SMALL_FILE_BYTES);
    if (why) throw new DamagedFileError(join(dir, rel), why, `rebuild it with \`${rebuildCommand(dir, m, corpus)}\``);
  }
}

/** One file's result in {@link verifyIndex}. */
export interface VerifiedFile {
  file: string;
  bytes: number;
  /** Why the file is damaged; absent when it is sound. */
  damaged?: string;
}

/** Hashes every file an index's manifest lists; `undefined` when the index was built without checksums. */
export function verifyIndexFiles(dir: string, m: IndexManifestParts): VerifiedFile[] | undefined {
  if (!m.files) return undefined;
  return Object.entries(m.files).map(([rel, want]) => {
    const why = damage(join(dir, rel), want, true);
    return why ? { file: join(dir, rel), bytes: want.bytes, damaged: why } : { file: join(dir, rel), bytes: want.bytes };
  });
}
