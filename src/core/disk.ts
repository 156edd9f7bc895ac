/**
 * A full disk. Writes that must not be torn go through {@link writeAllSync} (Node's writeSync may
 * write part of a buffer and return a short count when the disk fills); whoever wrote takes back the
 * part that landed and throws {@link diskFullError}: one line naming the file, the folder and about
 * how much more space the command needs, so that freeing it and re-running resumes.
 */
import { existsSync, readdirSync, statfsSync, statSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { RagtrailError } from './errors.js';

/** ENOSPC, or a quota (EDQUOT): either way, more space is what it takes. */
export function isDiskFull(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/** A write failed for want of space; the message names the file, the folder and the space needed. */
export class DiskFullError extends RagtrailError {
  constructor(
    message: string,
    hint: string,
    /** The folder that needs more space. */
    readonly folder: string,
    /** About how many more bytes the command needs there (free space subtracted). */
    readonly moreBytes: number,
  ) {
    super(message, hint);
  }
}

/** A byte count for people: 512 bytes, 12 KB, 3.4 MB, 1.2 GB. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${Math.round(n)} bytes`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(0)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(1)} GB`;
}

/** The nearest folder that exists at or above `path` (an output folder may not exist yet). */
function existingFolder(path: string): string {
  let d = resolve(path);
  while (!existsSync(d) && dirname(d) !== d) d = dirname(d);
  return d;
}

/** Bytes the test seam lets through before writes fail with ENOSPC; undefined: no limit. */
let budget: number | undefined;

/** Bytes of the files under `dir` (0 when it is gone). */
export function folderBytes(dir: string): number {
  let total = 0;
  try {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, entry.name);
      total += entry.isDirectory() ? folderBytes(p) : statSync(p).size;
    }
  } catch {
    // gone or unreadable: counts as empty
  }
  return total;
}

/** Bytes free to this user in the file system holding `path`, or undefined where statfs fails. */
export function freeBytes(path: string): number | undefined {
  if (budget !== undefined) return budget; // the test seam's disk
  try {
    const s = statfsSync(existingFolder(path));
    return s.bavail * s.bsize;
  } catch {
    return undefined;
  }
}

/**
 * The error for a write to `file` that ran out of space. `needBytes` is the caller's estimate of what
 * the rest of the command writes there (the free space now is subtracted), `minBytes` what the failed
 * write alone needed; `folder` defaults to the file's folder. An empty `file`: not known.
 */
export function diskFullError(file: string, opts: { needBytes?: number; minBytes?: number; folder?: string; building?: string } = {}): DiskFullError {
  const folder = opts.folder ?? (file ? dirname(file) : '.');
  const free = freeBytes(folder) ?? 0;
  const more = Math.max((opts.needBytes ?? 0) - free, opts.minBytes ?? 0, 1);
  const doing = opts.building ? ` building ${opts.building}` : file ? ` writing ${file}` : '';
  return new DiskFullError(
    `no space left on device${doing}: needs about ${formatBytes(more)} more, ${formatBytes(free)} free in ${folder}`,
    `free space there and re-run the same command to resume`,
    folder,
    more,
  );
}

/**
 * Test seam: from now on, {@link writeAllSync} writes `bytes` more bytes in all and then fails as a
 * full disk does (a short write, then ENOSPC), and {@link freeBytes} reports what is left of them;
 * undefined lifts the limit. For machines where a small
 * file system cannot be mounted.
 */
export function limitWritesForTest(bytes: number | undefined): void {
  budget = bytes;
}

function enospc(): NodeJS.ErrnoException {
  return Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
}

/**
 * Writes all of `data` (looping over short writes) at `position`, or at the current offset when it
 * is null. Throws the write's error (ENOSPC on a full disk) with `written` set to the bytes that
 * landed before it, so that the caller can take them back.
 */
export function writeAllSync(fd: number, data: Uint8Array, position: number | null = null): number {
  let off = 0;
  try {
    while (off < data.length) {
      let len = data.length - off;
      if (budget !== undefined) {
        if (budget <= 0) throw enospc();
        len = Math.min(len, budget);
      }
      const n = writeSync(fd, data, off, len, position === null ? null : position + off);
      if (budget !== undefined) budget -= n;
      off += n;
    }
  } catch (e) {
    if (e && typeof e === 'object') (e as { written?: number }).written = off;
    throw e;
  }
  return off;
}
