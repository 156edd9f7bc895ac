/**
 * A JSON Lines file indexed for browsing: one pass over the bytes records where each line starts and a small
 * summary of it (what a list row shows), so that the viewer lists 10,000 trajectories without holding them,
 * and reads one line from disk, by its offset, when it is opened. A line that is not JSON keeps its place
 * with an error summary: a bad line is data to show, not the end of the file.
 */
import { createReadStream, openSync, readSync, closeSync, statSync } from 'node:fs';

/** One indexed line: its 0-based number, where its bytes are, and its summary (or why it could not be read). */
export interface IndexedLine<S> {
  n: number;
  offset: number;
  length: number;
  summary?: S;
  error?: string;
}

export interface LineIndex<S> {
  path: string;
  /** Size and modification time of the file when it was indexed: a changed file is indexed again. */
  size: number;
  mtimeMs: number;
  lines: IndexedLine<S>[];
}

/**
 * Indexes `path`, calling `summarize` on each parsed non-blank line. Streams the file in chunks, so memory
 * holds the summaries and one chunk, whatever the file's size.
 */
export async function indexJsonl<S>(path: string, summarize: (value: unknown, n: number) => S): Promise<LineIndex<S>> {
  const st = statSync(path);
  const lines: IndexedLine<S>[] = [];
  let carry: Buffer[] = [];
  let carryStart = 0;
  let position = 0;
  const take = (buf: Buffer, offset: number) => {
    const end = buf.length > 0 && buf[buf.length - 1] === 13 ? buf.length - 1 : buf.length; // CRLF
    const text = buf.toString('utf8', 0, end);
    if (text.trim() === '') return;
    const line: IndexedLine<S> = { n: lines.length, offset, length: end };
    try {
      line.summary = summarize(JSON.parse(text) as unknown, line.n);
    } catch (e) {
      line.error = e instanceof SyntaxError ? `not valid JSON (${e.message})` : `cannot be shown (${(e as Error).message})`;
    }
    lines.push(line);
  };
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    const buf = chunk as Buffer;
    let start = 0;
    for (let nl = buf.indexOf(10, start); nl !== -1; nl = buf.indexOf(10, start)) {
      if (carry.length > 0) {
        take(Buffer.concat([...carry, buf.subarray(start, nl)]), carryStart);
        carry = [];
      } else take(buf.subarray(start, nl), position + start);
      start = nl + 1;
    }
    if (start < buf.length) {
      if (carry.length === 0) carryStart = position + start;
      carry.push(buf.subarray(start));
    }
    position += buf.length;
  }
  if (carry.length > 0) take(Buffer.concat(carry), carryStart);
  return { path, size: st.size, mtimeMs: st.mtimeMs, lines };
}

/** The parsed value of one indexed line, read from disk by its offset. */
export function readIndexedLine(path: string, line: IndexedLine<unknown>): unknown {
  const buf = Buffer.alloc(line.length);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, buf, 0, line.length, line.offset);
  } finally {
    closeSync(fd);
  }
  return JSON.parse(buf.toString('utf8')) as unknown;
}

/** Whether the file changed since it was indexed. */
export function isStale(index: LineIndex<unknown>): boolean {
  try {
    const st = statSync(index.path);
    return st.size !== index.size || st.mtimeMs !== index.mtimeMs;
  } catch {
    return true;
  }
}
