/**
 * A persistent key → JSON value store for caches that must survive crashes: an append-only JSON
 * Lines log (`{"k": key, "v": value}` per line), one write() per entry, with an in-memory index
 * of byte offsets so that values are read back with positioned reads. A crash can at worst leave
 * a partial last line; opening the store seals it with a newline and ignores it. The file is opened
 * for appending (O_APPEND, one write per entry), so several processes may share a store: entries do
 * not interleave, and a read checks that the line it finds holds the key it wanted.
 */
import { closeSync, fstatSync, ftruncateSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { diskFullError, isDiskFull, writeAllSync } from './disk.js';

/**
 * A persistent key → JSON value store that survives crashes (the append-only log described above): the
 * LLM response cache. Several processes may share one file.
 */
export class KvStore {
  private readonly index = new Map<string, { offset: number; length: number }>();
  private readonly fd: number;
  /** Lines that did not parse when the store was opened (a crash's partial line). */
  readonly damagedLines: number;

  private constructor(readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, 'a+');
    this.damagedLines = this.load();
  }

  /** Opens the store at `path`, creating it and its folder when absent, and indexes the entries already in it. */
  static open(path: string): KvStore {
    return new KvStore(path);
  }

  private load(): number {
    const size = fstatSync(this.fd).size;
    const chunk = Buffer.allocUnsafe(1 << 22);
    let carry = Buffer.alloc(0);
    let carryStart = 0;
    let damaged = 0;
    for (let pos = 0; pos < size; ) {
      const n = readSync(this.fd, chunk, 0, Math.min(chunk.length, size - pos), pos);
      const buf = carry.length ? Buffer.concat([carry, chunk.subarray(0, n)]) : chunk.subarray(0, n);
      const bufStart = carry.length ? carryStart : pos;
      let lineStart = 0;
      for (let i = buf.indexOf(10); i >= 0; i = buf.indexOf(10, lineStart)) {
        if (i > lineStart && !this.indexLine(buf.subarray(lineStart, i), bufStart + lineStart)) damaged++;
        lineStart = i + 1;
      }
      carry = Buffer.from(buf.subarray(lineStart));
      carryStart = bufStart + lineStart;
      pos += n;
    }
    if (carry.length > 0) {
      // A partial last line from a crash: seal it so the next append starts on a fresh line.
      damaged++;
      writeSync(this.fd, '\n');
    }
    return damaged;
  }

  private indexLine(line: Buffer, offset: number): boolean {
    try {
      const { k } = JSON.parse(line.toString('utf8')) as { k: unknown };
      if (typeof k !== 'string') return false;
      this.index.set(k, { offset, length: line.length });
      return true;
    } catch {
      return false;
    }
  }

  get size(): number {
    return this.index.size;
  }

  /** Whether a value is stored under `key`. */
  has(key: string): boolean {
    return this.index.has(key);
  }

  /** The value stored under `key` (the latest entry wins), or undefined. */
  get<T = unknown>(key: string): T | undefined {
    const at = this.index.get(key);
    if (!at) return undefined;
    const buf = Buffer.allocUnsafe(at.length);
    readSync(this.fd, buf, 0, at.length, at.offset);
    try {
      const entry = JSON.parse(buf.toString('utf8')) as { k: string; v: T };
      if (entry.k === key) return entry.v;
    } catch {
      // fall through: another process appended between our write and our offset lookup
    }
    this.index.delete(key);
    return undefined;
  }

  /** Stores `value` under `key`: one line appended in one write, so a crash cannot tear it. */
  set(key: string, value: unknown): void {
    const line = Buffer.from(JSON.stringify({ k: key, v: value }) + '\n', 'utf8');
    const end = fstatSync(this.fd).size;
    try {
      writeAllSync(this.fd, line); // O_APPEND: lands at the end, whole
    } catch (e) {
      // A full disk writes what fits, then fails: take that part back unless another process appended
      // since (then the torn line stays, and opening the store skips it as after a crash).
      const written = (e as { written?: number }).written ?? 0;
      if (fstatSync(this.fd).size === end + written) ftruncateSync(this.fd, end);
      if (isDiskFull(e)) throw diskFullError(this.path, { minBytes: line.length });
      throw e;
    }
    this.index.set(key, { offset: fstatSync(this.fd).size - line.length, length: line.length - 1 });
  }

  /** Closes the file; the store is not usable afterwards. */
  close(): void {
    closeSync(this.fd);
  }
}
