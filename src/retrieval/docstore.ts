/**
 * The passages of an index, by internal document number: `docs.jsonl` (one `{id, title, text}` line
 * per passage, in corpus order) and `docs.off` (Float64 byte offsets, N + 1 of them). Lookups are
 * positioned reads, so a Wikipedia-size store stays on disk and in the page cache, not in the heap.
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync, writeFileSync } from 'node:fs';
import { InputError } from '../core/errors.js';
import { join } from 'node:path';
import type { Passage } from '../core/types.js';
import { VarintWriter } from './bm25/bytes.js';

const encoder = new TextEncoder();

/** Writes the passage store of an index build (`docs.jsonl` and `docs.off`), one passage at a time. */
export class DocStoreWriter {
  private readonly out: VarintWriter;
  private offsets = new Float64Array(1 << 16);
  private n = 0;

  constructor(private readonly dir: string) {
    this.out = new VarintWriter(join(dir, 'docs.jsonl'));
  }

  /** Appends a passage; returns its document number. */
  add(p: Passage): number {
    if (this.n + 1 >= this.offsets.length) {
      const bigger = new Float64Array(this.offsets.length * 2);
      bigger.set(this.offsets);
      this.offsets = bigger;
    }
    this.offsets[this.n] = this.out.written;
    this.out.bytes(encoder.encode(JSON.stringify({ id: p.id, title: p.title, text: p.text }) + '\n'));
    return this.n++;
  }

  get count(): number {
    return this.n;
  }

  close(): void {
    this.offsets[this.n] = this.out.written;
    this.out.close();
    writeFileSync(join(this.dir, 'docs.off'), new Uint8Array(this.offsets.buffer, 0, (this.n + 1) * 8));
  }
}

/** The passages of an index by internal document number, read with positioned reads (see the module header). */
export class DocStore {
  private readonly fd: number;
  private readonly offsets: Float64Array;
  private scratch = Buffer.alloc(1 << 16);

  /** `expected`: the passage count the index manifest records, when known. */
  constructor(dir: string, expected?: number) {
    const offPath = join(dir, 'docs.off');
    const rebuild = 'rebuild the index with `ragtrail index build --force`';
    const raw = readFileSync(offPath);
    // A truncated or mismatched offsets file would otherwise surface much later as "document N is not in the store".
    if (raw.byteLength % 8 !== 0 || raw.byteLength < 8) throw new InputError(`${offPath}: truncated (${raw.byteLength} bytes, not a whole number of 8-byte offsets)`, rebuild);
    this.offsets = raw.byteOffset % 8 === 0 ? new Float64Array(raw.buffer, raw.byteOffset, raw.byteLength / 8) : new Float64Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
    if (expected !== undefined && this.size !== expected) throw new InputError(`${offPath}: holds ${this.size} passages, index.json says ${expected} (truncated?)`, rebuild);
    this.fd = openSync(join(dir, 'docs.jsonl'), 'r');
    const bytes = fstatSync(this.fd).size;
    if (this.offsets[this.size] !== bytes) {
      closeSync(this.fd);
      throw new InputError(`${join(dir, 'docs.jsonl')}: ${bytes} bytes, but docs.off ends at ${this.offsets[this.size]} (one of them is truncated)`, rebuild);
    }
  }

  get size(): number {
    return this.offsets.length - 1;
  }

  /** The passage numbered `doc`. */
  get(doc: number): Passage {
    if (!(doc >= 0 && doc < this.size)) throw new RangeError(`document ${doc} is not in the store (size ${this.size})`);
    const start = this.offsets[doc] as number;
    const len = (this.offsets[doc + 1] as number) - start;
    if (len > this.scratch.length) this.scratch = Buffer.alloc(len * 2);
    readSync(this.fd, this.scratch, 0, len, start);
    return JSON.parse(this.scratch.toString('utf8', 0, len)) as Passage;
  }

  /** Closes the passages file. */
  close(): void {
    closeSync(this.fd);
  }
}
