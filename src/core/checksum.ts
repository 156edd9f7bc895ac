/**
 * Checksums that let a reader tell a damaged file from data: SHA-256 of whole files (streamed, so
 * that `sha256sum` gives the same digest by hand) and of JSON documents that carry their own
 * `checksum` field. SHA-256 rather than a CRC: Node computes it at about 1 GB/s on a core with SHA
 * instructions, and every supported Node has it (zlib.crc32 arrived in 20.15).
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { InputError } from './errors.js';
import { writeTextAtomicSync } from './io.js';

/** Size and SHA-256 of a file as recorded at build time. */
export interface FileSum {
  bytes: number;
  sha256: string;
}

const CHUNK = 1 << 22;

/** The file's size and SHA-256 (hex), read in 4 MiB chunks. */
export function sumFile(path: string): FileSum {
  const fd = openSync(path, 'r');
  try {
    const h = createHash('sha256');
    const buf = Buffer.allocUnsafe(CHUNK);
    let bytes = 0;
    for (let n; (n = readSync(fd, buf, 0, CHUNK, bytes)) > 0; bytes += n) h.update(buf.subarray(0, n));
    return { bytes, sha256: h.digest('hex') };
  } finally {
    closeSync(fd);
  }
}

/**
 * The checksum of a JSON document: SHA-256 of its compact JSON without the `checksum` field. Parsing
 * and re-serialising in JavaScript keeps key order and every number's digits, so a reader recomputes
 * it from the parsed value, whatever indentation the file was written with.
 */
export function jsonChecksum(value: object): string {
  const { checksum: _skip, ...rest } = value as { checksum?: unknown };
  return `sha256:${createHash('sha256').update(JSON.stringify(rest)).digest('hex')}`;
}

/** `value` with its `checksum` field (re)computed, last. */
export function withChecksum<T extends object>(value: T): T & { checksum: string } {
  const { checksum: _old, ...rest } = value as T & { checksum?: unknown };
  return { ...(rest as T), checksum: jsonChecksum(rest) };
}

/** Whether a parsed document's `checksum` holds: `absent` for files written before checksums. */
export function checkJsonChecksum(value: unknown): 'ok' | 'absent' | 'mismatch' {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'absent';
  const sum = (value as { checksum?: unknown }).checksum;
  if (sum === undefined) return 'absent';
  return sum === jsonChecksum(value) ? 'ok' : 'mismatch';
}

/**
 * Reads a model file written by {@link writeChecksummedJson} (a gym policy, a PRM): an unreadable file
 * is `unreadable`'s InputError; an empty, torn or checksum-failing one is named damaged with `retrain`
 * as the fix. A flipped digit in a weight still parses, so the checksum is what tells it from a
 * trained value; files from before checksums (none recorded) load as they are.
 */
export function readChecksummedJson<T>(path: string, unreadable: { what: string; fix: string }, retrain: string): T {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new InputError(`${path}: not a readable ${unreadable.what}`, unreadable.fix);
  }
  let value: T;
  try {
    value = JSON.parse(text) as T;
  } catch {
    throw new InputError(`${path} is damaged (${text.trim() === '' ? 'empty' : 'not complete JSON: truncated?'}): ${retrain}`);
  }
  if (checkJsonChecksum(value) === 'mismatch') throw new InputError(`${path} is damaged (checksum mismatch): ${retrain}`);
  return value;
}

/** Writes `value` with its checksum as one JSON line, atomically: a crash leaves the old file or the new one. */
export function writeChecksummedJson(path: string, value: object): void {
  writeTextAtomicSync(path, JSON.stringify(withChecksum(value)) + '\n');
}
