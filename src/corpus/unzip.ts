/**
 * Streaming extraction of a zip archive, for FlashRAG's `wiki18_100w.zip` (5.1 GB, one JSON Lines
 * file of about 14 GB inside). Only what that needs: stored and deflated entries, ZIP64 sizes and
 * offsets, CRC-32 checked. Each entry streams from disk through zlib's raw inflater into a `.part`
 * file that is renamed once its CRC and size match, so an interrupted extraction never leaves a file
 * that looks complete. No dependency: Node has inflateRaw and (since 20.15) crc32.
 */
import { createReadStream, createWriteStream, promises as fs } from 'node:fs';
import { isAbsolute, join, normalize, sep } from 'node:path';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as zlib from 'node:zlib';
import { InputError, RagtrailError } from '../core/errors.js';
import { Progress } from '../core/progress.js';

export interface ZipEntry {
  name: string;
  /** 0 = stored, 8 = deflated. */
  method: number;
  crc32: number;
  compressedSize: number;
  size: number;
  /** Offset of the entry's local header in the archive. */
  localOffset: number;
  encrypted: boolean;
}

const SIG_EOCD = 0x06054b50;
const SIG_ZIP64_LOCATOR = 0x07064b50;
const SIG_ZIP64_EOCD = 0x06064b50;
const SIG_CENTRAL = 0x02014b50;
const SIG_LOCAL = 0x04034b50;
const U32_MAX = 0xffffffff;

async function readAt(fh: fs.FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await fh.read(buf, 0, length, position);
  return buf.subarray(0, bytesRead);
}

function u64(buf: Buffer, at: number): number {
  return Number(buf.readBigUInt64LE(at));
}

/** Lists the entries of a zip archive from its central directory. */
export async function readZipDirectory(path: string): Promise<ZipEntry[]> {
  const bad = (why: string) => new InputError(`${path}: not a readable zip archive (${why})`, 'download it again with --force, or unzip it with another tool');
  const fh = await fs.open(path, 'r');
  try {
    const size = (await fh.stat()).size;
    // The end record is 22 bytes plus a comment of up to 65535 bytes, at the very end.
    const tailLen = Math.min(size, 22 + 65535);
    const tail = await readAt(fh, size - tailLen, tailLen);
    let eocd = -1;
    for (let i = tail.length - 22; i >= 0; i--) {
      if (tail.readUInt32LE(i) === SIG_EOCD) {
        eocd = i;
        break;
      }
    }
    if (eocd < 0) throw bad('no end-of-central-directory record; the file may be truncated');
    let count = tail.readUInt16LE(eocd + 10);
    let cdSize = tail.readUInt32LE(eocd + 12);
    let cdOffset = tail.readUInt32LE(eocd + 16);
    if (count === 0xffff || cdSize === U32_MAX || cdOffset === U32_MAX) {
      // ZIP64: a locator sits just before the classic end record and points at the 64-bit one.
      const locAt = size - tailLen + eocd - 20;
      const loc = locAt >= 0 ? await readAt(fh, locAt, 20) : Buffer.alloc(0);
      if (loc.length < 20 || loc.readUInt32LE(0) !== SIG_ZIP64_LOCATOR) throw bad('ZIP64 locator missing');
      const rec = await readAt(fh, u64(loc, 8), 56);
      if (rec.length < 56 || rec.readUInt32LE(0) !== SIG_ZIP64_EOCD) throw bad('ZIP64 end record missing');
      count = u64(rec, 32);
      cdSize = u64(rec, 40);
      cdOffset = u64(rec, 48);
    }
    if (cdOffset + cdSize > size) throw bad('the central directory lies past the end of the file; it is truncated');
    const cd = await readAt(fh, cdOffset, cdSize);
    const entries: ZipEntry[] = [];
    let p = 0;
    for (let i = 0; i < count; i++) {
      if (p + 46 > cd.length || cd.readUInt32LE(p) !== SIG_CENTRAL) throw bad(`central directory entry ${i + 1} is damaged`);
      const flags = cd.readUInt16LE(p + 8);
      const method = cd.readUInt16LE(p + 10);
      const crc = cd.readUInt32LE(p + 16);
      let compressedSize = cd.readUInt32LE(p + 20);
      let uncompressed = cd.readUInt32LE(p + 24);
      const nameLen = cd.readUInt16LE(p + 28);
      const extraLen = cd.readUInt16LE(p + 30);
      const commentLen = cd.readUInt16LE(p + 32);
      let localOffset = cd.readUInt32LE(p + 42);
      const name = cd.toString('utf8', p + 46, p + 46 + nameLen);
      // The ZIP64 extra field holds, in this order, only the values whose classic field is all ones.
      let e = p + 46 + nameLen;
      const extraEnd = e + extraLen;
      while (e + 4 <= extraEnd) {
        const id = cd.readUInt16LE(e);
        const len = cd.readUInt16LE(e + 2);
        if (id === 0x0001) {
          let q = e + 4;
          if (uncompressed === U32_MAX) (uncompressed = u64(cd, q)), (q += 8);
          if (compressedSize === U32_MAX) (compressedSize = u64(cd, q)), (q += 8);
          if (localOffset === U32_MAX) localOffset = u64(cd, q);
        }
        e += 4 + len;
      }
      entries.push({ name, method, crc32: crc, compressedSize, size: uncompressed, localOffset, encrypted: (flags & 1) === 1 });
      p = extraEnd + commentLen;
    }
    return entries;
  } finally {
    await fh.close();
  }
}

type Crc32 = (data: Uint8Array, value?: number) => number;

// Table-driven fallback for Node 20 releases before 20.15, which lack zlib.crc32.
let table: Uint32Array | undefined;
const jsCrc32: Crc32 = (data, value = 0) => {
  if (!table) {
    table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
  }
  let c = ~value >>> 0;
  for (let i = 0; i < data.length; i++) c = table[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
};
export const crc32: Crc32 = (zlib as unknown as { crc32?: Crc32 }).crc32 ?? jsCrc32;

/** Counts and CRCs what passes through. */
class Check extends Transform {
  crc = 0;
  bytes = 0;
  constructor(private readonly onBytes: (n: number) => void) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.crc = crc32(chunk, this.crc);
    this.bytes += chunk.length;
    this.onBytes(chunk.length);
    cb(null, chunk);
  }
}

/** Where an entry goes under `outDir`; names that would escape it (absolute, `..`) are refused. */
function safeTarget(zipPath: string, outDir: string, name: string): string {
  const rel = normalize(name);
  if (isAbsolute(rel) || rel === '..' || rel.startsWith(`..${sep}`) || rel.split(sep).includes('..')) {
    throw new InputError(`${zipPath}: entry "${name}" would be written outside ${outDir}`, 'the archive is not a plain FlashRAG corpus; unzip it by hand');
  }
  return join(outDir, rel);
}

export interface ExtractOptions {
  /** Re-extract entries whose output already exists. */
  force?: boolean;
  quiet?: boolean;
}

export interface ExtractedFile {
  path: string;
  bytes: number;
  /** False when the file was already there from an earlier run. */
  extracted: boolean;
}

/** Extracts every file entry of `zipPath` into `outDir`, streaming and checking each one's CRC-32 and size. */
export async function extractZip(zipPath: string, outDir: string, opts: ExtractOptions = {}): Promise<ExtractedFile[]> {
  const entries = (await readZipDirectory(zipPath)).filter((e) => !e.name.endsWith('/'));
  await fs.mkdir(outDir, { recursive: true });
  await ensureSpace(outDir, entries.reduce((sum, e) => sum + e.size, 0), `unpacking ${zipPath}`);
  const out: ExtractedFile[] = [];
  for (const entry of entries) {
    const target = safeTarget(zipPath, outDir, entry.name);
    if (!opts.force) {
      const st = await fs.stat(target).catch(() => undefined);
      // Outputs only appear by rename after their check, so one of the right size is a finished one.
      if (st && st.size === entry.size) {
        out.push({ path: target, bytes: st.size, extracted: false });
        continue;
      }
    }
    if (entry.encrypted) throw new InputError(`${zipPath}: entry "${entry.name}" is encrypted`, 'ragtrail reads plain archives only');
    if (entry.method !== 0 && entry.method !== 8) {
      throw new InputError(`${zipPath}: entry "${entry.name}" uses compression method ${entry.method}`, 'ragtrail unpacks stored and deflated entries; unzip it with another tool');
    }
    const fh = await fs.open(zipPath, 'r');
    let dataStart: number;
    try {
      const local = await readAt(fh, entry.localOffset, 30);
      if (local.length < 30 || local.readUInt32LE(0) !== SIG_LOCAL) throw new InputError(`${zipPath}: the local header of "${entry.name}" is damaged`, 'download it again with --force');
      dataStart = entry.localOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
    } finally {
      await fh.close();
    }
    await fs.mkdir(join(target, '..'), { recursive: true });
    const part = `${target}.part`;
    const progress = new Progress(`unzip ${entry.name}`, { unit: 'B', total: entry.size, quiet: opts.quiet });
    const check = new Check((n) => progress.tick(n));
    const source = entry.compressedSize > 0 ? createReadStream(zipPath, { start: dataStart, end: dataStart + entry.compressedSize - 1, highWaterMark: 1 << 20 }) : Readable.from([]);
    const stages = entry.method === 8 ? [source, zlib.createInflateRaw(), check, createWriteStream(part)] : [source, check, createWriteStream(part)];
    try {
      await (pipeline as (...s: unknown[]) => Promise<void>)(...stages);
    } catch (e) {
      await fs.rm(part, { force: true });
      if (e instanceof Error && 'errno' in e && (e as { code?: string }).code?.startsWith('Z_')) {
        throw new InputError(`${zipPath}: entry "${entry.name}" does not inflate (${e.message})`, 'the archive is damaged; download it again with --force');
      }
      throw e;
    }
    progress.finish();
    if (check.bytes !== entry.size || check.crc >>> 0 !== entry.crc32 >>> 0) {
      await fs.rm(part, { force: true });
      throw new RagtrailError(
        `${zipPath}: entry "${entry.name}" came out wrong (${check.bytes} bytes, CRC-32 ${hex8(check.crc)}; the archive says ${entry.size} bytes, CRC-32 ${hex8(entry.crc32)})`,
        'the archive is damaged; download it again with --force',
      );
    }
    await fs.rename(part, target);
    out.push({ path: target, bytes: entry.size, extracted: true });
  }
  return out;
}

/** Refuses to start writing `bytes` where the file system has less room (wiki18 needs ~5 GB, then its unpacked corpus). */
export async function ensureSpace(dir: string, bytes: number, what: string): Promise<void> {
  const st = await fs.statfs(dir).catch(() => undefined);
  if (!st) return;
  const free = st.bavail * st.bsize;
  if (bytes > free) {
    const gb = (n: number) => `${(n / 1e9).toFixed(2)} GB`;
    throw new InputError(`${what} needs ${gb(bytes)} but ${dir} has ${gb(free)} free`, 'free some space or choose another --out');
  }
}

function hex8(n: number): string {
  return (n >>> 0).toString(16).padStart(8, '0');
}
