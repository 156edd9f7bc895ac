/**
 * Row-major vector files (float32 vectors, int8 or binary codes) read in windows with positioned
 * reads, never as a whole: `readFileSync` stops at 2 GiB, and a 21M × 768 float32 file is 60 GiB.
 * Node has no mmap, so what must stay in memory (the codes searched on every query) is loaded as a
 * list of chunks of at most `CHUNK_BYTES` each, and what is read rarely (the float32 rows of a
 * re-scoring shortlist) is read from disk on demand.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { InputError } from '../../core/errors.js';

/** Size of one read window while building. */
export const WINDOW_BYTES = 256 * 2 ** 20;
/**
 * Size of one in-memory chunk of codes: each chunk is one call of the SIMD kernel for a whole
 * batch of queries, and chunks of ~16 MiB stay in cache across the batch (int8 batched search
 * measured 40% faster than with 256 MiB chunks).
 */
export const CHUNK_BYTES = 16 * 2 ** 20;
/** Largest re-scoring buffer kept open between searches (a batch of ~10,000 queries' 2·k rows of 768 floats). */
const SCRATCH_KEEP_BYTES = 256 * 2 ** 20;

/** A chunk of rows held in memory: rows [start, start + rows) of the file. */
export interface Chunk {
  start: number;
  rows: number;
  bytes: Uint8Array;
}

export class RowFile {
  private readonly fd: number;
  readonly rows: number;
  private scratch = new Uint8Array(0);
  /** The whole file in memory (see hold): chunks of equal rows but the last. */
  private held?: Chunk[];

  constructor(
    readonly path: string,
    /** Bytes per row. */
    readonly rowBytes: number,
    rows?: number,
  ) {
    try {
      this.fd = openSync(path, 'r');
    } catch {
      throw new InputError(`${path}: cannot open the vector file`, 'rebuild the dense index with `ragtrail index build --dense`');
    }
    const size = fstatSync(this.fd).size;
    const available = Math.floor(size / rowBytes);
    this.rows = rows ?? available;
    if (this.rows > available) {
      closeSync(this.fd);
      throw new InputError(`${path}: holds ${available} rows of ${rowBytes} bytes, the index says ${this.rows}`, 'the index is incomplete: rebuild it');
    }
  }

  /** Reads rows [start, start + count) into `into` (or a new buffer). Offsets may exceed 2 GiB. */
  read(start: number, count: number, into?: Uint8Array): Uint8Array {
    const len = count * this.rowBytes;
    const buf = into ? into.subarray(0, len) : new Uint8Array(len);
    let done = 0;
    while (done < len) {
      const got = readSync(this.fd, buf, done, len - done, start * this.rowBytes + done);
      if (got === 0) throw new InputError(`${this.path}: ends before row ${start + count}`, 'the index is incomplete: rebuild it');
      done += got;
    }
    return buf;
  }

  /** Yields windows of consecutive rows (one reused buffer of about `windowBytes`). */
  *windows(windowBytes = WINDOW_BYTES): Generator<Chunk> {
    const per = Math.max(1, Math.floor(windowBytes / this.rowBytes));
    const buf = new Uint8Array(Math.min(per, Math.max(1, this.rows)) * this.rowBytes);
    for (let start = 0; start < this.rows; start += per) {
      const rows = Math.min(per, this.rows - start);
      yield { start, rows, bytes: this.read(start, rows, buf) };
    }
  }

  /** The whole file as in-memory chunks of at most `chunkBytes` each (each its own ArrayBuffer). */
  loadChunks(chunkBytes = CHUNK_BYTES): Chunk[] {
    const per = Math.max(1, Math.floor(chunkBytes / this.rowBytes));
    const out: Chunk[] = [];
    for (let start = 0; start < this.rows; start += per) {
      const rows = Math.min(per, this.rows - start);
      out.push({ start, rows, bytes: this.read(start, rows) });
    }
    return out;
  }

  /**
   * Loads the whole file into memory, so gatherF32 copies from it instead of reading from disk: the
   * ~20 positioned reads of an int8 HNSW search's shortlist were ~13% of a one-query search at 200k.
   * Returns the bytes now held.
   */
  hold(chunkBytes = CHUNK_BYTES): number {
    this.held ??= this.loadChunks(chunkBytes);
    return this.heldBytes;
  }

  get heldBytes(): number {
    return this.held ? this.held.reduce((s, c) => s + c.bytes.byteLength, 0) : 0;
  }

  /**
   * Reads the given rows (any order, duplicates allowed) as one block of float32 vectors of `dim`:
   * `ids` the distinct rows in file order, `rows` their vectors one after another, starting at offset 0
   * of a scratch buffer kept between calls (a fresh 24 MiB buffer per batch cost more in page faults
   * than the reads: 7 against 2 µs per row), so the block holds only until the next call. Neighbours
   * are read together; rows held in memory (hold) are copied, not read.
   */
  gatherF32(docs: readonly number[], dim: number): { ids: Float64Array; rows: Float32Array } {
    const ids = Float64Array.from(docs).sort();
    let unique = 0;
    for (const id of ids) if (unique === 0 || id !== ids[unique - 1]) ids[unique++] = id;
    const need = unique * this.rowBytes;
    let buf = this.scratch;
    if (buf.byteLength < need) {
      buf = new Uint8Array(Math.max(need, Math.min(2 * buf.byteLength, SCRATCH_KEEP_BYTES)));
      if (buf.byteLength <= SCRATCH_KEEP_BYTES) this.scratch = buf; // an outsized batch's buffer is not kept
    }
    if (this.held) {
      const chunks = this.held;
      const per = chunks[0]?.rows ?? 1;
      for (let i = 0; i < unique; i++) {
        const id = ids[i]!;
        const c = chunks[Math.floor(id / per)]!;
        const from = (id - c.start) * this.rowBytes;
        buf.set(c.bytes.subarray(from, from + this.rowBytes), i * this.rowBytes);
      }
    } else {
      for (let i = 0; i < unique; ) {
        let j = i + 1;
        while (j < unique && ids[j] === ids[j - 1]! + 1 && j - i < 256) j++;
        this.read(ids[i]!, j - i, buf.subarray(i * this.rowBytes));
        i = j;
      }
    }
    return { ids: ids.subarray(0, unique), rows: new Float32Array(buf.buffer, 0, unique * dim) };
  }

  close(): void {
    closeSync(this.fd);
    this.held = undefined; // held rows go with the file, not with the last reference to it
  }
}
