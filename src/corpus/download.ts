/**
 * Downloads for users who are online: the benchmark question sets and the 2018 Wikipedia corpus in
 * the copies the papers' code reads, FlashRAG's dataset repository on the Hugging Face Hub
 * (`RUC-NLPIR/FlashRAG_datasets`). ReasonRAG's appendix links its PopQA, HotpotQA, 2WikiMultihopQA,
 * Bamboogle and MuSiQue folders; Search-R1's data scripts (the baseline of LWS, ProRAG and ARENA) load
 * NQ, TriviaQA, PopQA and the multi-hop sets from it; LWS builds its retriever with FlashRAG; ProRAG
 * and ReasonRAG retrieve from the 2018 dump in DPR's 100-word passages, which is `wiki18_100w`.
 * RAG-Gym's MedQA comes from other repositories: the questions from `GBaker/MedQA-USMLE-4-options` (the
 * MedQA release's `phrases_no_exclude_*.jsonl`, the file RAG-Gym's `src/data_loader.py` reads) and the
 * corpus from MedRAG's (`MedRAG/textbooks`, whose `chunk/` folder is listed with the Hub's tree API,
 * fetched file by file and joined into one corpus file; StatPearls is not on the Hub, see `build`).
 *
 * Files come from `{endpoint}/datasets/{repo}/resolve/{revision}/{path}` (endpoint: `HF_ENDPOINT`,
 * as huggingface_hub reads it, or huggingface.co; `HF_TOKEN` is sent to the endpoint only, never to the
 * CDN it redirects to). Each goes to `FILE.part`, resumes with `Range: bytes=N-` after a dropped
 * connection or on the next run, is checked against the checksum the Hub reports (`X-Linked-Etag`,
 * the sha256 of an LFS file; a plain file's `ETag` is its git blob sha1) or else ragtrail's pinned
 * manifest, and is renamed into place only once it matches. A machine that cannot reach the endpoint
 * gets one line saying so and how to bring the files over by hand.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, promises as fs } from 'node:fs';
import { type IncomingMessage, request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join, resolve } from 'node:path';
import { once } from 'node:events';
import { InputError, RagtrailError } from '../core/errors.js';
import { readJsonFileSync, writeFileAtomic, writeJsonAtomicSync } from '../core/io.js';
import { Progress } from '../core/progress.js';
import { ensureSpace, extractZip } from './unzip.js';

export const DEFAULT_ENDPOINT = 'https://huggingface.co';
export const FLASHRAG_REPO = 'RUC-NLPIR/FlashRAG_datasets';

export interface HubFile {
  /** Path under --out; also the path in the repository unless `repoPath` says otherwise. */
  path: string;
  /** Path in the repository, where it differs from `path` (files of other repositories go in a folder of their own). */
  repoPath?: string;
  split: string;
  /** Exact size and sha256 from the file's LFS pointer, where ragtrail has them (commit in `pinnedAt`). */
  bytes?: number;
  sha256?: string;
  /** Git blob sha1 of a plain (non-LFS) file, as the Hub's file listing states it. */
  gitSha1?: string;
  pinnedAt?: string;
  /** Size and checksum come from the Hub's file listing (the tree API) at download time, not from ragtrail. */
  listed?: boolean;
  /** Rough size for listings when no exact one is pinned. */
  approx?: string;
  /** A zip archive, unpacked beside itself after download (unless `unpack: false`). */
  zip?: boolean;
}

/**
 * Files a set finds by listing a folder of its repository when it downloads (the Hub's tree API,
 * `{endpoint}/api/datasets/{repo}/tree/{revision}/{folder}`), each fetched and checked like a named one.
 */
export interface HubListing {
  split: string;
  /** Folder of the repository listed, e.g. `chunk`. */
  folder: string;
  /** Ending of the file names kept, e.g. `.jsonl`. */
  ext: string;
  /** Folder under --out the listed files go to, at their repository paths (`textbooks/chunk/X.jsonl`). */
  into: string;
  /** Files and total size the Hub's listing showed when ragtrail pinned the set, for --list. */
  count: number;
  approx: string;
  /**
   * The listed files, in name order, joined into this one file (path under --out): what `ragtrail
   * index build --corpus` reads. Each file's last line gets its line break if it lacks one (MedRAG
   * writes its chunk files with '\n'.join, no final newline).
   */
  joinTo?: string;
}

export interface DownloadSet {
  name: string;
  what: string;
  /** The Hub dataset repository (default: FlashRAG's, {@link FLASHRAG_REPO}). */
  repo?: string;
  /** The commit the set is pinned to (default main); `--revision` overrides it. */
  revision?: string;
  files: HubFile[];
  listing?: HubListing;
  /** Splits fetched when none are asked for: the ones the papers evaluate on. */
  defaults: string[];
  /** A set that is not files on the Hub: why, and how to build it (one line each); `download` refuses it with these. */
  build?: { why: string; how: string };
}

// Sizes marked approx are those the Hub's file listing shows; exact ones come from the LFS pointers
// of commits e011525 (hotpotqa) and f2de0bd (wiki18_100w.zip) of the repository.
export const DOWNLOADS = {
  hotpotqa: {
    name: 'hotpotqa',
    what: 'HotpotQA (distractor contexts in metadata)',
    defaults: ['dev'],
    files: [
      { path: 'hotpotqa/dev.jsonl', split: 'dev', bytes: 48_191_374, sha256: '434ec155867019396312f3d466ce3406c71fe8a2917f49f63bb646ec5ad2ff52', pinnedAt: 'e011525' },
      { path: 'hotpotqa/train.jsonl', split: 'train', bytes: 569_520_788, sha256: 'a81274abafa899ec0ee073102edbe6bb694a8a1174201b4e43e2bc6c98964d1a', pinnedAt: 'e011525' },
    ],
  },
  '2wikimultihopqa': {
    name: '2wikimultihopqa',
    what: '2WikiMultihopQA',
    defaults: ['dev'],
    files: [
      { path: '2wikimultihopqa/dev.jsonl', split: 'dev', approx: '54.7 MB' },
      { path: '2wikimultihopqa/train.jsonl', split: 'train', approx: '59.6 MB' },
    ],
  },
  musique: {
    name: 'musique',
    what: 'MuSiQue (answerable)',
    defaults: ['dev'],
    files: [
      { path: 'musique/dev.jsonl', split: 'dev', approx: '5.6 MB' },
      { path: 'musique/train.jsonl', split: 'train', approx: '40.1 MB' },
    ],
  },
  bamboogle: {
    name: 'bamboogle',
    what: 'Bamboogle (125 two-hop questions)',
    defaults: ['test'],
    files: [{ path: 'bamboogle/test.jsonl', split: 'test', approx: '17 kB' }],
  },
  popqa: {
    name: 'popqa',
    what: 'PopQA (long-tail entity questions)',
    defaults: ['test'],
    files: [{ path: 'popqa/test.jsonl', split: 'test', approx: '8.5 MB' }],
  },
  nq: {
    name: 'nq',
    what: 'Natural Questions (open-domain)',
    defaults: ['test'],
    files: [
      { path: 'nq/test.jsonl', split: 'test', approx: '488 kB' },
      { path: 'nq/dev.jsonl', split: 'dev', approx: '1.1 MB' },
      { path: 'nq/train.jsonl', split: 'train', approx: '10 MB' },
    ],
  },
  triviaqa: {
    name: 'triviaqa',
    what: 'TriviaQA (open-domain)',
    defaults: ['test'],
    files: [
      { path: 'triviaqa/test.jsonl', split: 'test', approx: '4.8 MB' },
      { path: 'triviaqa/dev.jsonl', split: 'dev', approx: '3.7 MB' },
      { path: 'triviaqa/train.jsonl', split: 'train', approx: '33 MB' },
    ],
  },
  wiki18: {
    name: 'wiki18',
    what: "Wikipedia, Dec 2018, in DPR's 100-word passages (FlashRAG wiki18_100w, {id, contents})",
    defaults: ['corpus'],
    files: [
      { path: 'retrieval-corpus/wiki18_100w.zip', split: 'corpus', bytes: 5_130_719_280, sha256: 'e5b987a0ce4f6c5fff788162f50c70d41f10fb7762daba507a96a3ad7bb956db', pinnedAt: 'f2de0bd', zip: true },
    ],
  },
  // RAG-Gym's MedQA (paper, appendix B: "the English split of MedQA with 1,273 USMLE-style test
  // questions"; 1,000 of the 10,178 training questions sampled for process rewards). Its code reads the
  // MedQA release's `phrases_no_exclude_test.jsonl` (RAG-Gym/RAG-Gym `src/data_loader.py`, the file
  // `dataset/medqa/phrases_no_exclude_test.jsonl`, 2,075,679 bytes, git blob 1cfad45). On the Hub the
  // release's US 4-option files are in GBaker/MedQA-USMLE-4-options, commit 0fb93dd (its main): the test
  // file plain (2.08 MB in the Hub's listing, so its ETag is the git blob sha1 to compare with 1cfad45
  // in ragtrail-download.json), train in LFS. The release's dev file is not there; RAG-Gym does not use it.
  medqa: {
    name: 'medqa',
    what: "MedQA USMLE 4-option questions, RAG-Gym's fourth benchmark: test (1,273) is what it evaluates on, train (10,178) the pool its 1,000 process-reward questions come from",
    repo: 'GBaker/MedQA-USMLE-4-options',
    revision: '0fb93dd23a7339b6dcd27e241cb9b5eca62d4d18',
    defaults: ['test'],
    files: [
      { path: 'medqa/phrases_no_exclude_test.jsonl', repoPath: 'phrases_no_exclude_test.jsonl', split: 'test', approx: '2.08 MB' },
      { path: 'medqa/phrases_no_exclude_train.jsonl', repoPath: 'phrases_no_exclude_train.jsonl', split: 'train', approx: '16.2 MB' },
    ],
  },
  // MedRAG's Textbooks corpus as RAG-Gym's IR environment clones it (rag_gym/envs/IR.py: `git clone
  // https://huggingface.co/datasets/MedRAG/textbooks`, then reads `chunk/*.jsonl`): 18 files of
  // `{id, title, content, contents}` lines, 125,847 chunks, 212 MB, added in commit d6d1d71; main is
  // 9c72838 (README edits since). readCorpus reads `title` and `content` of each line.
  textbooks: {
    name: 'textbooks',
    what: "MedRAG's Textbooks corpus (18 USMLE textbooks in 125,847 chunks), half of RAG-Gym's MedQA corpus: joined into textbooks/textbooks.jsonl for `ragtrail index build`",
    repo: 'MedRAG/textbooks',
    revision: '9c72838920a1323ffa867467d3f7aa7b36b0f994',
    defaults: ['corpus'],
    files: [],
    listing: { split: 'corpus', folder: 'chunk', ext: '.jsonl', into: 'textbooks', count: 18, approx: '212 MB', joinTo: 'textbooks/textbooks.jsonl' },
  },
  // The other half of RAG-Gym's MedQA corpus ("MedText" = textbooks + statpearls). MedRAG/statpearls on
  // the Hub holds only a dataset card (.gitattributes and README.md at main, ba1fe29): StatPearls' terms
  // forbid redistributing it, so RAG-Gym's IR.py and MedRAG download NCBI's dump and chunk it with
  // MedRAG's src/data/statpearls.py, which writes the same {id, title, content, contents} lines.
  statpearls: {
    name: 'statpearls',
    what: "MedRAG's StatPearls corpus (9,330 articles in 301,202 chunks), the other half of RAG-Gym's MedQA corpus",
    repo: 'MedRAG/statpearls',
    defaults: ['corpus'],
    files: [],
    build: {
      why: "not on the Hub as files: StatPearls may not be redistributed, so MedRAG/statpearls holds only its dataset card",
      how: "git clone https://github.com/Teddy-XiongGZ/MedRAG && cd MedRAG && mkdir -p corpus/statpearls && wget -P corpus/statpearls https://ftp.ncbi.nlm.nih.gov/pub/litarch/3d/12/statpearls_NBK430685.tar.gz && tar -xzf corpus/statpearls/statpearls_NBK430685.tar.gz -C corpus/statpearls && pip install tqdm && python src/data/statpearls.py && awk 1 corpus/statpearls/chunk/*.jsonl > statpearls.jsonl",
    },
  },
} satisfies Record<string, DownloadSet>;

export type DownloadName = keyof typeof DOWNLOADS;
export const DOWNLOAD_NAMES = Object.keys(DOWNLOADS) as DownloadName[];

export function hubUrl(endpoint: string, repo: string, revision: string, path: string): string {
  const segs = path.split('/').map(encodeURIComponent).join('/');
  return `${endpoint.replace(/\/+$/, '')}/datasets/${repo}/resolve/${encodeURIComponent(revision)}/${segs}`;
}

/** The Hub's listing of a folder of a dataset repository (the tree API huggingface_hub's list_repo_tree calls). */
export function hubTreeUrl(endpoint: string, repo: string, revision: string, folder: string): string {
  const segs = folder.split('/').filter(Boolean).map(encodeURIComponent).join('/');
  return `${endpoint.replace(/\/+$/, '')}/api/datasets/${repo}/tree/${encodeURIComponent(revision)}/${segs}`;
}

export interface DownloadOptions {
  /** Folder the files go to, at their paths (`DIR/hotpotqa/dev.jsonl`, `DIR/medqa/phrases_no_exclude_test.jsonl`). */
  out: string;
  /** Splits to fetch (`all` for every one); default: the set's evaluation splits. */
  splits?: string[];
  /** Default: $HF_ENDPOINT, else https://huggingface.co. */
  endpoint?: string;
  /** Branch, tag or commit (default: the set's pinned commit, else main). */
  revision?: string;
  /** Repository (default: the set's). */
  repo?: string;
  /** Default: $HF_TOKEN (or the older $HUGGING_FACE_HUB_TOKEN). */
  token?: string;
  /** Unpack zip archives after download (default true). */
  unpack?: boolean;
  /** Fetch again files that are already there. */
  force?: boolean;
  /** Attempts after the first when a transfer breaks off or the server answers 429/5xx (default 5); each resumes where the last stopped. */
  retries?: number;
  /** First wait between attempts in ms (default 1000, doubling, at most 30 s). */
  retryDelayMs?: number;
  /** Give up on a connection that sends nothing for this long, in ms (default 60 s). */
  timeoutMs?: number;
  quiet?: boolean;
  /** Notes for the user (a changed upstream file, a server that ignored Range, ...). */
  log?: (line: string) => void;
}

export type Check = 'sha256' | 'git-sha1' | 'size';

export interface FileResult {
  /** Path under --out (the repository path for FlashRAG's files), e.g. hotpotqa/dev.jsonl, textbooks/chunk/Anatomy_Gray.jsonl. */
  path: string;
  /** Where it is on disk. */
  file: string;
  bytes: number;
  /** downloaded now, or present from an earlier run. */
  status: 'downloaded' | 'present';
  /** Bytes already in FILE.part when this run started on it (a resumed download). */
  resumedFrom: number;
  /** Transfers it took (1 unless a connection broke off). */
  attempts: number;
  checkedBy?: Check;
  sha256?: string;
  /** Git blob sha1 of a plain (non-LFS) file, as the Hub's ETag states it. */
  gitSha1?: string;
  /** The commit the Hub resolved the revision to (X-Repo-Commit). */
  commit?: string;
  /** Files unpacked from it (zip archives); `extracted` false when an earlier run had unpacked them. */
  unpacked?: { file: string; bytes: number; extracted: boolean }[];
}

export interface DownloadResult {
  name: DownloadName;
  files: FileResult[];
  /** The set's files joined into one corpus file (`HubListing.joinTo`); `written` false when an earlier run had joined the same files. */
  joined?: { file: string; bytes: number; parts: number; written: boolean };
  /** Commands that read what was fetched. */
  next: string[];
  /** Splits of the set not fetched this time. */
  skippedSplits: HubFile[];
}

/** The bytes the server sent do not match the checksum: nothing is kept. */
export class ChecksumError extends RagtrailError {}

class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    readonly url: string,
  ) {
    super(`HTTP ${status} from ${url}`);
  }
}

/** A transfer that stopped early: retried, resuming from what arrived. */
class BrokenTransfer extends Error {}

/** The server answered in a way that invalidates FILE.part (another version, a bad Content-Range): start over at once. */
class Restart extends Error {}

// Failures that mean the endpoint cannot be reached at all, rather than a transfer that broke off.
const UNREACHABLE = new Set(['ENOTFOUND', 'EAI_AGAIN', 'ECONNREFUSED', 'ENETUNREACH', 'EHOSTUNREACH', 'ENETDOWN', 'EHOSTDOWN', 'CONNECT_TIMEOUT']);

function errCode(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

interface HubMeta {
  /** Checksum of the file as the Hub states it (sha256 for LFS, git sha1 otherwise). */
  etag?: string;
  size?: number;
  commit?: string;
}

function unquote(v: string): string {
  return v.replace(/^W\//, '').replace(/^"|"$/g, '');
}

function header(res: IncomingMessage, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

interface Ctx {
  origin: string;
  token?: string;
  timeoutMs: number;
  quiet: boolean;
  log: (line: string) => void;
}

/** One request; resolves with the response head. `connected` tells a refused connection from a reply that stalls. */
function send(url: URL, headers: Record<string, string>, ctx: Ctx): Promise<IncomingMessage> {
  return new Promise((resolvePromise, reject) => {
    let response: IncomingMessage | undefined;
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method: 'GET', headers }, (res) => {
      response = res;
      resolvePromise(res);
    });
    let connected = false;
    req.on('socket', (s) => {
      if (!s.connecting) connected = true;
      else s.once('connect', () => (connected = true));
    });
    // Idle timeout for the whole exchange, the body included (the response shares the socket).
    req.setTimeout(ctx.timeoutMs, () => {
      const code = connected ? 'ETIMEDOUT' : 'CONNECT_TIMEOUT';
      const err = Object.assign(new Error(`no data from ${url.host} for ${ctx.timeoutMs / 1000} s`), { code });
      // Once the body is flowing, the error must reach its reader, not just the request.
      if (response) response.destroy(err);
      else req.destroy(err);
    });
    req.on('error', reject);
    req.end();
  });
}

/** GET with redirects followed by hand, so the Hub's own headers (before the CDN hop) are kept and the token stays at the Hub. */
async function open(url: string, offset: number, ctx: Ctx): Promise<{ res: IncomingMessage; meta: HubMeta; url: string }> {
  const meta: HubMeta = {};
  let current = new URL(url);
  for (let hop = 0; hop <= 10; hop++) {
    const headers: Record<string, string> = { 'user-agent': 'ragtrail/0.1 (dataset download)', 'accept-encoding': 'identity' };
    if (offset > 0) headers['range'] = `bytes=${offset}-`;
    const atHub = current.origin === ctx.origin;
    if (ctx.token && atHub) headers['authorization'] = `Bearer ${ctx.token}`;
    const res = await send(current, headers, ctx);
    const status = res.statusCode ?? 0;
    const linked = header(res, 'x-linked-etag');
    if (linked) meta.etag = unquote(linked);
    const linkedSize = header(res, 'x-linked-size');
    if (linkedSize && /^\d+$/.test(linkedSize)) meta.size = Number(linkedSize);
    const commit = header(res, 'x-repo-commit');
    if (commit) meta.commit = commit;
    if (status >= 300 && status < 400 && status !== 304) {
      const location = header(res, 'location');
      res.resume();
      if (!location) throw new HttpStatusError(status, current.href);
      current = new URL(location, current);
      continue;
    }
    // A plain (non-LFS) file comes straight from the Hub, and its ETag there is its git blob sha1.
    // A CDN's ETag is its own business and is never read as a checksum.
    const etag = header(res, 'etag');
    if (atHub && !meta.etag && etag && (status === 200 || status === 206)) meta.etag = unquote(etag);
    return { res, meta, url: current.href };
  }
  throw new RagtrailError(`${url}: more than 10 redirects`, 'check HF_ENDPOINT / --endpoint');
}

function checkKind(etag: string | undefined): Check | undefined {
  if (etag && /^[0-9a-f]{64}$/i.test(etag)) return 'sha256';
  if (etag && /^[0-9a-f]{40}$/i.test(etag)) return 'git-sha1';
  return undefined;
}

async function hashFile(path: string, kind: 'sha256' | 'git-sha1', size: number): Promise<string> {
  const h = createHash(kind === 'sha256' ? 'sha256' : 'sha1');
  if (kind === 'git-sha1') h.update(`blob ${size}\0`);
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** Bytes for people: 48.2 MB, 5.13 GB. */
export function formatBytes(n: number): string {
  return n >= 1e9 ? `${(n / 1e9).toFixed(2)} GB` : n >= 1e6 ? `${(n / 1e6).toFixed(1)} MB` : n >= 1e3 ? `${(n / 1e3).toFixed(1)} kB` : `${n} B`;
}

interface PartMeta {
  url: string;
  etag?: string;
  size?: number;
}

interface Attempt {
  meta: HubMeta;
  resumedFrom: number;
}

/**
 * One transfer into `part`, resuming from its current length. Resolves when the body ended; throws
 * BrokenTransfer (keep the part, try again), Restart (part discarded), HttpStatusError, or a network error.
 */
async function transfer(url: string, file: HubFile, part: string, ctx: Ctx): Promise<Attempt> {
  const sidecar = `${part}.json`;
  let offset = (await fs.stat(part).catch(() => undefined))?.size ?? 0;
  const previous: PartMeta | undefined = offset > 0 && existsSync(sidecar) ? readJsonFileSync<PartMeta>(sidecar, `delete ${sidecar} and ${part}`) : undefined;
  if (offset > 0 && !previous) {
    // Bytes of unknown origin: resuming onto them could splice two versions together.
    await fs.rm(part, { force: true });
    offset = 0;
  }
  const { res, meta } = await open(url, offset, ctx);
  const status = res.statusCode ?? 0;
  const discard = async (why: string) => {
    res.destroy();
    ctx.log(`${file.path}: ${why}; starting it over`);
    await fs.rm(part, { force: true });
    await fs.rm(sidecar, { force: true });
    throw new Restart(why);
  };
  if (offset > 0 && previous?.etag && meta.etag && previous.etag !== meta.etag) await discard('the file changed on the server since the partial download');
  if (status === 416) {
    // Nothing past `offset`: the part is complete if the server's total agrees.
    const total = /\/(\d+)$/.exec(header(res, 'content-range') ?? '')?.[1];
    res.resume();
    if (total !== undefined && Number(total) === offset) return { meta: { ...meta, size: meta.size ?? offset }, resumedFrom: offset };
    await discard(`the server has no bytes past ${offset}`);
  }
  if (status !== 200 && status !== 206) {
    res.resume();
    throw new HttpStatusError(status, url);
  }
  let start = 0;
  let total: number | undefined;
  if (status === 206) {
    const m = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(header(res, 'content-range') ?? '');
    if (!m || Number(m[1]) !== offset) await discard('the server answered a range that does not continue the partial download');
    start = offset;
    total = m![3] === '*' ? undefined : Number(m![3]);
  } else {
    if (offset > 0) ctx.log(`${file.path}: the server does not resume downloads (no range support); fetching it whole`);
    const len = header(res, 'content-length');
    total = len && /^\d+$/.test(len) ? Number(len) : undefined;
  }
  const size = meta.size ?? total ?? file.bytes;
  writeJsonAtomicSync(sidecar, { url, etag: meta.etag, size } satisfies PartMeta);
  const out = createWriteStream(part, { flags: start > 0 ? 'a' : 'w' });
  const label = start > 0 ? `${file.path} (resumed at ${formatBytes(start)})` : file.path;
  const progress = new Progress(label, { unit: 'B', total: size !== undefined ? size - start : undefined, quiet: ctx.quiet, logEvery: 30 });
  let received = 0;
  let failure: unknown;
  try {
    for await (const chunk of res as AsyncIterable<Buffer>) {
      received += chunk.length;
      if (!out.write(chunk)) await once(out, 'drain');
      progress.tick(chunk.length);
    }
  } catch (e) {
    failure = e;
  } finally {
    out.end();
    await once(out, 'close').catch(() => undefined);
  }
  progress.finish();
  const have = start + received;
  // Node ends a body cut short by a closed socket with an error, or (with no length given) quietly:
  // both are a transfer to resume when fewer bytes arrived than the file has.
  if (failure !== undefined || (size !== undefined && have < size)) {
    throw new BrokenTransfer(`the connection broke off at ${formatBytes(have)}${size !== undefined ? ` of ${formatBytes(size)}` : ''}${failure ? ` (${errCode(failure) ?? (failure as Error).message})` : ''}`);
  }
  return { meta: { ...meta, size: meta.size ?? size }, resumedFrom: start };
}

/** One line: the endpoint cannot be reached, and how to bring `file` (or the set's joined corpus) over by hand. */
function offlineError(ctx: Ctx, code: string, set: DownloadSet, out: string, exampleUrl: string, file?: HubFile): InputError {
  const what = `cannot reach ${ctx.origin} (${code === 'CONNECT_TIMEOUT' ? 'connection timed out' : code}): this machine looks offline, or the Hub is blocked from it`;
  const joinTo = set.listing?.joinTo;
  if (joinTo && (!file || file.listed)) {
    const local = join(out, joinTo);
    return new InputError(
      what,
      `fetch the files on a machine that is online (\`ragtrail download ${set.name} --out DIR\` there; ${exampleUrl} lists them), copy DIR/${joinTo} to ${local}, and index it: \`ragtrail index build --corpus ${local} --out INDEX\`; HF_ENDPOINT or --endpoint names a mirror`,
    );
  }
  const first = file ?? set.files[0]!;
  const local = join(out, first.path);
  const use = first.zip ? `unzip it there and index the .jsonl inside: \`ragtrail index build --corpus ${join(out, 'retrieval-corpus', 'wiki18_100w.jsonl')} --out INDEX\`` : `pass the file itself, e.g. \`ragtrail run --dataset ${local} …\` or \`ragtrail corpus --dataset ${local} …\``;
  return new InputError(what, `fetch the files on a machine that is online (\`ragtrail download ${set.name} --out DIR\` there, or ${exampleUrl} with any browser or curl), copy them to ${local}, and ${use}; HF_ENDPOINT or --endpoint names a mirror`);
}

function statusError(e: HttpStatusError, file: HubFile, revision: string, repo: string): RagtrailError {
  if (e.status === 401 || e.status === 403) return new InputError(`HTTP ${e.status} for ${file.path} from ${e.url}`, 'the repository needs a Hugging Face token: set HF_TOKEN');
  if (e.status === 404) return new InputError(`${file.repoPath ?? file.path} is not in ${repo} at revision "${revision}" (HTTP 404 from ${e.url})`, 'check --revision, and HF_ENDPOINT / --endpoint if you use a mirror');
  return new RagtrailError(`HTTP ${e.status} for ${file.path} from ${e.url}`, 'the server is failing; run the same command later and it resumes');
}

interface ManifestEntry {
  bytes: number;
  checkedBy?: Check;
  sha256?: string;
  gitSha1?: string;
  commit?: string;
  revision: string;
  source: string;
  at: string;
}

interface Manifest {
  /** Per path under --out: what was fetched, from where, and how it was checked. */
  files: { [path: string]: ManifestEntry };
  /** The Hub's listings of the folders listed sets read, per `repo@revision:folder`: later runs fetch and check the same files without asking again (--force asks again). */
  listings?: { [key: string]: ListedFile[] };
}

interface ListedFile {
  repoPath: string;
  bytes: number;
  sha256?: string;
  gitSha1?: string;
}

const MANIFEST = 'ragtrail-download.json';

function readManifest(out: string): Manifest {
  const path = join(out, MANIFEST);
  return existsSync(path) ? readJsonFileSync<Manifest>(path, `delete ${path}; files already there are kept`) : { files: {} };
}

/** Fetches one file to `dest`, resuming, retrying and checking. */
async function fetchOne(set: DownloadSet, file: HubFile, dest: string, url: string, o: Required<Pick<DownloadOptions, 'retries' | 'retryDelayMs' | 'revision' | 'repo'>> & { out: string }, ctx: Ctx): Promise<FileResult> {
  const part = `${dest}.part`;
  await fs.mkdir(join(dest, '..'), { recursive: true });
  let attempts = 0;
  let reached = false;
  let firstResume: number | undefined;
  let delay = o.retryDelayMs;
  let att: Attempt | undefined;
  while (!att) {
    attempts++;
    try {
      att = await transfer(url, file, part, ctx);
      firstResume ??= att.resumedFrom;
    } catch (e) {
      if (e instanceof Restart) {
        attempts--;
        continue;
      }
      if (e instanceof InputError || e instanceof RagtrailError) throw e;
      const code = errCode(e);
      if (!reached && code !== undefined && UNREACHABLE.has(code)) throw offlineError(ctx, code, set, o.out, url, file);
      reached = true;
      if (e instanceof HttpStatusError && !(e.status === 408 || e.status === 429 || e.status >= 500)) throw statusError(e, file, o.revision, o.repo);
      if (firstResume === undefined && e instanceof BrokenTransfer) firstResume = 0;
      if (attempts > o.retries) {
        const have = (await fs.stat(part).catch(() => undefined))?.size ?? 0;
        const why = e instanceof HttpStatusError ? statusError(e, file, o.revision, o.repo).message : (e as Error).message;
        throw new RagtrailError(`${file.path}: gave up after ${attempts} attempt${attempts === 1 ? '' : 's'} (${why})`, have > 0 ? `run the same command again: it resumes from the ${formatBytes(have)} in ${part}` : 'run the same command again later');
      }
      ctx.log(`${file.path}: ${(e as Error).message}; attempt ${attempts + 1} in ${(delay / 1000).toFixed(1)} s`);
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 30_000);
    }
    reached = true;
  }
  const bytes = (await fs.stat(part)).size;
  const sidecar = `${part}.json`;
  const reject = async (what: string, expected: string, got: string) => {
    await fs.rm(part, { force: true });
    await fs.rm(sidecar, { force: true });
    throw new ChecksumError(
      `${file.path}: ${what} mismatch: expected ${expected}, got ${got}; the download was discarded, nothing was kept`,
      `run the same command again; if it repeats, the server at ${ctx.origin} does not serve the Hub's file`,
    );
  };
  const meta = att.meta;
  const pinned = file.listed ? "the one the Hub's file listing named" : `the one ragtrail pinned (commit ${file.pinnedAt})`;
  const pinnedAs = file.listed ? "from the Hub's file listing" : `pinned at commit ${file.pinnedAt}`;
  const size = meta.size ?? file.bytes;
  if (size !== undefined && bytes !== size) await reject('size', `${size} bytes`, `${bytes} bytes`);
  // The Hub's own checksum wins; the pinned one covers servers that state none.
  const kind = checkKind(meta.etag);
  let checkedBy: Check = 'size';
  let sha256: string | undefined;
  let gitSha1: string | undefined;
  if (kind === 'sha256') {
    sha256 = await hashFile(part, 'sha256', bytes);
    if (sha256 !== meta.etag!.toLowerCase()) await reject('sha256', meta.etag!, sha256);
    if (file.sha256 && file.sha256 !== sha256) ctx.log(`${file.path}: the Hub's file differs from ${pinned}; checked against the Hub's sha256`);
    checkedBy = 'sha256';
  } else if (kind === 'git-sha1') {
    gitSha1 = await hashFile(part, 'git-sha1', bytes);
    if (gitSha1 !== meta.etag!.toLowerCase()) await reject('git blob sha1', meta.etag!, gitSha1);
    if (file.gitSha1 && file.gitSha1 !== gitSha1) ctx.log(`${file.path}: the Hub's file differs from ${pinned}; checked against the Hub's git blob sha1`);
    checkedBy = 'git-sha1';
  } else if (file.sha256) {
    sha256 = await hashFile(part, 'sha256', bytes);
    if (sha256 !== file.sha256) await reject('sha256', `${file.sha256} (${pinnedAs})`, sha256);
    checkedBy = 'sha256';
  } else if (file.gitSha1) {
    gitSha1 = await hashFile(part, 'git-sha1', bytes);
    if (gitSha1 !== file.gitSha1) await reject('git blob sha1', `${file.gitSha1} (${pinnedAs})`, gitSha1);
    checkedBy = 'git-sha1';
  } else {
    ctx.log(`${file.path}: the server states no checksum; checked by size only`);
  }
  await fs.rename(part, dest);
  await fs.rm(sidecar, { force: true });
  return { path: file.path, file: dest, bytes, status: 'downloaded', resumedFrom: firstResume ?? 0, attempts, checkedBy, sha256, gitSha1, commit: meta.commit };
}

/** The splits of a set: its named files' and its listing's. */
function splitsOf(set: DownloadSet): string[] {
  return [...new Set([...set.files.map((f) => f.split), ...(set.listing ? [set.listing.split] : [])])];
}

/** The splits to fetch of a set: the requested ones (`all` for every one), else the set's defaults. */
export function selectSplits(set: DownloadSet, splits?: string[]): string[] {
  const known = splitsOf(set);
  if (!splits || splits.length === 0) return known.filter((s) => set.defaults.includes(s));
  if (splits.includes('all')) return known;
  const unknown = splits.filter((s) => !known.includes(s));
  if (unknown.length > 0) throw new InputError(`${set.name} has no split "${unknown[0]}"`, `its splits are ${known.join(', ')} (or all)`);
  return known.filter((s) => splits.includes(s));
}

/** Chooses the named files of a set for the requested splits (a listing's files are found when it downloads). */
export function selectFiles(set: DownloadSet, splits?: string[]): HubFile[] {
  const chosen = selectSplits(set, splits);
  return set.files.filter((f) => chosen.includes(f.split));
}

/** The Hub's tree API entry of a file (the fields ragtrail reads). */
interface TreeEntry {
  type: string;
  path: string;
  size: number;
  /** Git blob sha1. */
  oid: string;
  /** An LFS file's sha256 and size. */
  lfs?: { oid: string; size: number };
}

function isTreeEntry(v: unknown): v is TreeEntry {
  const e = v as TreeEntry;
  return !!e && typeof e === 'object' && typeof e.type === 'string' && typeof e.path === 'string' && (e.type !== 'file' || (typeof e.size === 'number' && typeof e.oid === 'string'));
}

/**
 * The files of a set's listed folder, from the Hub's tree API (following `Link: <…>; rel="next"`
 * pages), each with the exact size and checksum the listing states: an LFS file's sha256, a plain
 * file's git blob sha1. Retried like a file on 429/5xx and broken replies.
 */
async function listFolder(set: DownloadSet, listing: HubListing, endpoint: string, repo: string, revision: string, o: { retries: number; retryDelayMs: number; out: string }, ctx: Ctx): Promise<ListedFile[]> {
  const first = hubTreeUrl(endpoint, repo, revision, listing.folder);
  const entries: TreeEntry[] = [];
  let next: string | undefined = first;
  let reached = false;
  let attempts = 0;
  let delay = o.retryDelayMs;
  while (next) {
    const url: string = next;
    try {
      const { res } = await open(url, 0, ctx);
      reached = true;
      const status = res.statusCode ?? 0;
      if (status !== 200) {
        res.resume();
        throw new HttpStatusError(status, url);
      }
      const chunks: Buffer[] = [];
      for await (const chunk of res as AsyncIterable<Buffer>) chunks.push(chunk);
      let page: unknown;
      try {
        page = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        throw new RagtrailError(`${url}: the listing is not JSON`, 'check HF_ENDPOINT / --endpoint: a mirror must serve the Hub\'s /api/datasets/…/tree/… listing');
      }
      if (!Array.isArray(page) || !page.every(isTreeEntry)) throw new RagtrailError(`${url}: the listing is not a list of files and folders`, 'check HF_ENDPOINT / --endpoint: a mirror must serve the Hub\'s /api/datasets/…/tree/… listing');
      entries.push(...page);
      const link = header(res, 'link');
      const more = link ? /<([^>]+)>\s*;\s*rel="?next"?/.exec(link)?.[1] : undefined;
      next = more ? new URL(more, url).href : undefined;
      attempts = 0;
    } catch (e) {
      if (e instanceof RagtrailError) throw e;
      const code = errCode(e);
      if (!reached && code !== undefined && UNREACHABLE.has(code)) throw offlineError(ctx, code, set, o.out, first);
      reached = true;
      if (e instanceof HttpStatusError) {
        if (e.status === 401 || e.status === 403) throw new InputError(`HTTP ${e.status} for the listing of ${listing.folder}/ from ${e.url}`, 'the repository needs a Hugging Face token: set HF_TOKEN');
        if (e.status === 404) throw new InputError(`${listing.folder}/ is not in ${repo} at revision "${revision}" (HTTP 404 from ${e.url})`, 'check --revision, and HF_ENDPOINT / --endpoint if you use a mirror');
        if (!(e.status === 408 || e.status === 429 || e.status >= 500)) throw new RagtrailError(`HTTP ${e.status} for the listing of ${listing.folder}/ from ${e.url}`, 'the server is failing; run the same command later');
      }
      if (++attempts > o.retries) throw new RagtrailError(`the listing of ${listing.folder}/ in ${repo}: gave up after ${attempts} attempt${attempts === 1 ? '' : 's'} (${(e as Error).message})`, 'run the same command again later');
      ctx.log(`listing ${listing.folder}/: ${(e as Error).message}; attempt ${attempts + 1} in ${(delay / 1000).toFixed(1)} s`);
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 30_000);
    }
  }
  const prefix = `${listing.folder.replace(/\/+$/, '')}/`;
  const files = entries
    .filter((e) => e.type === 'file' && e.path.startsWith(prefix) && e.path.endsWith(listing.ext))
    .map((e): ListedFile => ({ repoPath: e.path, bytes: e.lfs?.size ?? e.size, ...(e.lfs ? { sha256: e.lfs.oid.toLowerCase() } : { gitSha1: e.oid.toLowerCase() }) }))
    .sort((a, b) => (a.repoPath < b.repoPath ? -1 : a.repoPath > b.repoPath ? 1 : 0));
  if (files.length === 0) throw new InputError(`${repo} has no ${listing.ext} files in ${listing.folder}/ at revision "${revision}" (listing ${first})`, 'check --revision, and HF_ENDPOINT / --endpoint if you use a mirror');
  return files;
}

/**
 * Joins `parts` (in order) into `dest`, atomically, giving each part's last line the line break it
 * may lack; `written` is false when `dest` is there and no part was fetched in this run.
 */
async function joinParts(parts: FileResult[], dest: string, rebuild: boolean): Promise<NonNullable<DownloadResult['joined']>> {
  if (!rebuild && existsSync(dest)) return { file: dest, bytes: (await fs.stat(dest)).size, parts: parts.length, written: false };
  const total = parts.reduce((n, p) => n + p.bytes + 1, 0);
  await ensureSpace(join(dest, '..'), total, `joining ${parts.length} files into ${dest}`);
  await writeFileAtomic(dest, async (out) => {
    for (const p of parts) {
      let last: number | undefined;
      for await (const chunk of createReadStream(p.file, { highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
        if (chunk.length === 0) continue;
        last = chunk[chunk.length - 1];
        if (!out.write(chunk)) await once(out, 'drain');
      }
      if (last !== undefined && last !== 0x0a && !out.write('\n')) await once(out, 'drain');
    }
  });
  return { file: dest, bytes: (await fs.stat(dest)).size, parts: parts.length, written: true };
}

/** Downloads a set (a question set or a corpus) from its Hub repository into `opts.out`. */
export async function download(name: string, opts: DownloadOptions): Promise<DownloadResult> {
  if (!Object.hasOwn(DOWNLOADS, name)) throw new InputError(`unknown download "${name}"`, `choose from ${DOWNLOAD_NAMES.join(', ')}`);
  const set: DownloadSet = DOWNLOADS[name as DownloadName];
  if (set.build) throw new InputError(`${set.name} is ${set.build.why}`, `build it: ${set.build.how}`);
  const splits = selectSplits(set, opts.splits);
  const files = selectFiles(set, opts.splits);
  const endpoint = (opts.endpoint ?? process.env['HF_ENDPOINT'] ?? DEFAULT_ENDPOINT).replace(/\/+$/, '');
  let origin: string;
  try {
    origin = new URL(endpoint).origin;
    if (!/^https?:$/.test(new URL(endpoint).protocol)) throw new Error('scheme');
  } catch {
    throw new InputError(`endpoint "${endpoint}" is not an http(s) URL`, 'set HF_ENDPOINT or --endpoint to e.g. https://huggingface.co');
  }
  const revision = opts.revision ?? set.revision ?? 'main';
  const repo = opts.repo ?? set.repo ?? FLASHRAG_REPO;
  const out = resolve(opts.out);
  const ctx: Ctx = {
    origin,
    token: opts.token ?? process.env['HF_TOKEN'] ?? process.env['HUGGING_FACE_HUB_TOKEN'],
    timeoutMs: opts.timeoutMs ?? 60_000,
    quiet: opts.quiet ?? false,
    log: opts.log ?? ((line) => process.stderr.write(`${line}\n`)),
  };
  const o = { retries: opts.retries ?? 5, retryDelayMs: opts.retryDelayMs ?? 1000, revision, repo, out };
  await fs.mkdir(out, { recursive: true });
  const listing = set.listing && splits.includes(set.listing.split) ? set.listing : undefined;
  if (listing) {
    // The listing is asked for once per output folder and kept in its manifest, so that a later run
    // (a resumed one, or one on a machine gone offline with the files in place) fetches the same files.
    const key = `${repo}@${revision}:${listing.folder}`;
    let listed = opts.force ? undefined : readManifest(out).listings?.[key];
    if (!listed) {
      listed = await listFolder(set, listing, endpoint, repo, revision, o, ctx);
      const fresh = readManifest(out);
      fresh.listings = { ...fresh.listings, [key]: listed };
      writeJsonAtomicSync(join(out, MANIFEST), fresh);
    }
    for (const l of listed) files.push({ path: `${listing.into}/${l.repoPath}`, repoPath: l.repoPath, split: listing.split, bytes: l.bytes, sha256: l.sha256, gitSha1: l.gitSha1, listed: true });
  }
  const results: FileResult[] = [];
  for (const file of files) {
    const dest = join(out, file.path);
    const source = hubUrl(endpoint, repo, revision, file.repoPath ?? file.path);
    const manifest = readManifest(out);
    let result: FileResult;
    if (!opts.force && existsSync(dest)) {
      // Files only reach their final name after their check, so one that is there is complete.
      const rec = manifest.files[file.path];
      result = { path: file.path, file: dest, bytes: (await fs.stat(dest)).size, status: 'present', resumedFrom: 0, attempts: 0, checkedBy: rec?.checkedBy, sha256: rec?.sha256, gitSha1: rec?.gitSha1, commit: rec?.commit };
    } else {
      if (opts.force) await fs.rm(dest, { force: true });
      if (file.bytes !== undefined) {
        const have = (await fs.stat(`${dest}.part`).catch(() => undefined))?.size ?? 0;
        await ensureSpace(out, file.bytes - have, `downloading ${file.path}`);
      }
      result = await fetchOne(set, file, dest, source, o, ctx);
      const fresh = readManifest(out);
      fresh.files[file.path] = {
        bytes: result.bytes,
        checkedBy: result.checkedBy,
        sha256: result.sha256,
        gitSha1: result.gitSha1,
        commit: result.commit,
        revision,
        source,
        at: new Date().toISOString(),
      };
      writeJsonAtomicSync(join(out, MANIFEST), fresh);
    }
    if (file.zip && opts.unpack !== false) {
      result.unpacked = (await extractZip(dest, join(dest, '..'), { force: opts.force, quiet: ctx.quiet })).map((x) => ({ file: x.path, bytes: x.bytes, extracted: x.extracted }));
    }
    results.push(result);
  }
  let joined: DownloadResult['joined'];
  if (listing?.joinTo) {
    const parts = results.filter((r) => files.find((f) => f.path === r.path)?.listed);
    joined = await joinParts(parts, join(out, listing.joinTo), opts.force === true || parts.some((p) => p.status === 'downloaded'));
  }
  return { name: set.name as DownloadName, files: results, joined, next: nextCommands(results, joined), skippedSplits: set.files.filter((f) => !files.includes(f)) };
}

function nextCommands(files: FileResult[], joined?: DownloadResult['joined']): string[] {
  if (joined) return [`ragtrail index build --corpus ${joined.file} --out INDEX`];
  const next: string[] = [];
  for (const f of files) {
    if (f.unpacked) {
      for (const u of f.unpacked.filter((x) => /\.jsonl(\.gz)?$/.test(x.file))) next.push(`ragtrail index build --corpus ${u.file} --out INDEX`);
      if (f.unpacked.length === 0 || !f.unpacked.some((x) => /\.jsonl(\.gz)?$/.test(x.file))) next.push(`unpacked ${f.unpacked.map((x) => x.file).join(', ') || 'nothing'} from ${f.file}`);
    } else if (f.path.endsWith('.zip')) {
      next.push(`unzip ${f.file}, then ragtrail index build --corpus <the .jsonl inside> --out INDEX`);
    } else {
      next.push(`ragtrail run --dataset ${f.file} --index INDEX --out RUN   (or: ragtrail score --dataset ${f.file} --predictions …)`);
    }
  }
  return next;
}
