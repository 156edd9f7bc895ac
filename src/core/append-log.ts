/**
 * The record log of a long job: JSON Lines, one record per finished unit of work (a question), each
 * appended with a single write() and keyed by a stable id. Re-opening lists the ids already done,
 * so a re-run skips them; a partial last line (a crash mid-write) is cut off on open, so a kill -9
 * at any moment loses at most the units in flight and never leaves a broken file behind.
 */
import { closeSync, existsSync, ftruncateSync, fstatSync, mkdirSync, openSync, readSync } from 'node:fs';
import { dirname } from 'node:path';
import { RagtrailError } from './errors.js';
import { diskFullError, isDiskFull, writeAllSync } from './disk.js';

/** Options of {@link AppendLog.open}. */
export interface AppendLogOptions {
  /** Records the job will hold when done: how a full disk estimates the space still needed. */
  total?: number;
}

export class AppendLog<T extends { id: string }> {
  private readonly fd: number;
  private readonly ids = new Set<string>();
  /** Bytes of a partial last line removed on open. */
  readonly repairedBytes: number;

  private constructor(
    readonly path: string,
    private readonly opts: AppendLogOptions = {},
  ) {
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, existsSync(path) ? 'r+' : 'w+');
    this.repairedBytes = this.scan();
  }

  static open<T extends { id: string }>(path: string, opts?: AppendLogOptions): AppendLog<T> {
    return new AppendLog<T>(path, opts);
  }

  /** Indexes the ids of complete lines; truncates an incomplete last line. */
  private scan(): number {
    const size = fstatSync(this.fd).size;
    const buf = Buffer.allocUnsafe(1 << 22);
    let carry = '';
    let lineNo = 0;
    let good = 0; // byte length of the complete lines
    for (let pos = 0; pos < size; ) {
      const n = readSync(this.fd, buf, 0, Math.min(buf.length, size - pos), pos);
      pos += n;
      const text = carry + buf.toString('utf8', 0, n);
      const lines = text.split('\n');
      carry = lines.pop() ?? '';
      for (const line of lines) {
        lineNo++;
        good += Buffer.byteLength(line) + 1;
        if (line.trim() === '') continue;
        let rec: { id?: unknown };
        try {
          rec = JSON.parse(line) as { id?: unknown };
        } catch {
          throw new RagtrailError(`${this.path}:${lineNo}: a complete line is not valid JSON`, 'the file was edited or corrupted; remove that line to resume');
        }
        if (typeof rec.id === 'string') this.ids.add(rec.id);
      }
    }
    if (good < size) ftruncateSync(this.fd, good);
    return size - good;
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }

  get size(): number {
    return this.ids.size;
  }

  append(record: T): void {
    if (this.ids.has(record.id)) throw new RagtrailError(`${this.path}: record ${record.id} is already in the log`);
    const line = Buffer.from(JSON.stringify(record) + '\n', 'utf8');
    const end = fstatSync(this.fd).size;
    try {
      writeAllSync(this.fd, line, end);
    } catch (e) {
      // Take back the part that landed (a full disk writes what fits, then fails): no torn last line.
      ftruncateSync(this.fd, end);
      if (!isDiskFull(e)) throw e;
      // The rest of the job: this record and those still to come, at the average size so far.
      const left = Math.max(1, (this.opts.total ?? 0) - this.ids.size);
      const average = (end + line.length) / (this.ids.size + 1);
      throw diskFullError(this.path, { needBytes: left * average, minBytes: line.length });
    }
    this.ids.add(record.id);
  }

  close(): void {
    closeSync(this.fd);
  }
}
