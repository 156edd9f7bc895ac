/**
 * Buffered binary I/O with LEB128 varints (7 bits a byte, high bit = more), for postings files and
 * the build's sorted runs: a writer that flushes a large buffer to a file descriptor, and a reader
 * that refills one. Synchronous on purpose: the index build is a CPU-bound loop.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { writeAllSync } from '../../core/disk.js';

/** Buffered writer of varints and raw bytes. */
export class VarintWriter {
  private buf: Uint8Array;
  private pos = 0;
  /** Bytes written so far, flushed or not. */
  written = 0;
  private readonly fd: number;

  constructor(path: string, capacity = 8 << 20) {
    this.fd = openSync(path, 'w');
    this.buf = new Uint8Array(capacity);
  }

  private flush(): void {
    this.write(this.buf.subarray(0, this.pos));
    this.pos = 0;
  }

  private closed = false;

  /** A failed write (a full disk) closes the file at once: its space is freed when the build removes it. */
  private write(data: Uint8Array): void {
    try {
      writeAllSync(this.fd, data);
    } catch (e) {
      this.closed = true;
      closeSync(this.fd);
      throw e;
    }
  }

  uint(v: number): void {
    if (this.pos + 10 > this.buf.length) this.flush();
    const b = this.buf;
    let p = this.pos;
    while (v >= 0x80) {
      b[p++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128); // values may exceed 2^31 (file offsets), so no >>> here
    }
    b[p++] = v;
    this.written += p - this.pos;
    this.pos = p;
  }

  /** Raw bytes (e.g. a UTF-8 line of the document store). */
  bytes(data: Uint8Array): void {
    if (this.pos + data.length > this.buf.length) this.flush();
    if (data.length > this.buf.length) {
      this.write(data);
    } else {
      this.buf.set(data, this.pos);
      this.pos += data.length;
    }
    this.written += data.length;
  }

  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    closeSync(this.fd);
  }
}

export class VarintReader {
  private buf: Uint8Array;
  private pos = 0;
  private end = 0;
  private fileOffset = 0;
  private eof = false;
  private readonly fd: number;

  constructor(path: string, capacity = 4 << 20) {
    this.fd = openSync(path, 'r');
    this.buf = new Uint8Array(capacity);
  }

  private refill(): void {
    const keep = this.end - this.pos;
    this.buf.copyWithin(0, this.pos, this.end);
    const n = readSync(this.fd, this.buf, keep, this.buf.length - keep, this.fileOffset);
    this.fileOffset += n;
    this.pos = 0;
    this.end = keep + n;
    if (n === 0) this.eof = true;
  }

  /** True when no bytes are left. */
  atEnd(): boolean {
    if (this.pos < this.end) return false;
    if (!this.eof) this.refill();
    return this.pos >= this.end;
  }

  uint(): number {
    if (this.end - this.pos < 10 && !this.eof) this.refill();
    const b = this.buf;
    let p = this.pos;
    let byte = b[p++] as number;
    let v = byte & 0x7f;
    let scale = 128;
    while (byte & 0x80) {
      byte = b[p++] as number;
      v += (byte & 0x7f) * scale;
      scale *= 128;
    }
    if (p > this.end) throw new Error('truncated varint stream');
    this.pos = p;
    return v;
  }

  close(): void {
    closeSync(this.fd);
  }
}
