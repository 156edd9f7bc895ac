/**
 * Streaming file input and output shared by every stage: text files that may be gzipped (detected by
 * their magic bytes, not their name), JSON Lines, and large top-level JSON arrays, each record tagged
 * with the line it starts on so that errors can name `file:line`.
 */
import { closeSync, createReadStream, createWriteStream, existsSync, fsyncSync, mkdirSync, openSync, promises as fs, readFileSync, renameSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { isUtf8 } from 'node:buffer';
import { createGunzip, createGzip } from 'node:zlib';
import { dirname, resolve, sep } from 'node:path';
import { type Readable, Transform, type Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { formatLocation, InputError, oneLine, type SourceLocation } from './errors.js';
import { diskFullError, isDiskFull, writeAllSync } from './disk.js';

/** One parsed JSON record with the place it came from, so that errors about it can name file and line. */
export interface LocatedValue {
  value: unknown;
  loc: SourceLocation;
}

async function assertReadableFile(path: string): Promise<void> {
  let stat;
  try {
    stat = await fs.stat(path);
  } catch {
    throw new InputError(`${path}: no such file`, 'check the path');
  }
  if (!stat.isFile()) throw new InputError(`${path}: not a regular file`, 'pass a file, not a directory');
}

async function isGzipped(path: string): Promise<boolean> {
  const fh = await fs.open(path, 'r');
  try {
    const buf = Buffer.alloc(2);
    const { bytesRead } = await fh.read(buf, 0, 2, 0);
    return bytesRead === 2 && buf[0] === 0x1f && buf[1] === 0x8b;
  } finally {
    await fh.close();
  }
}

/** The bytes of the file, gunzipped on the fly when it is gzip data. */
async function openBytes(path: string): Promise<Readable> {
  await assertReadableFile(path);
  const raw = createReadStream(path, { highWaterMark: 1 << 20 });
  const stream: Readable = (await isGzipped(path)) ? raw.pipe(createGunzip()) : raw;
  if (stream !== raw) raw.on('error', (e) => stream.destroy(e));
  return stream;
}

const UTF8_HINT = 'convert the file to UTF-8 (e.g. `iconv -f latin1 -t utf-8`)';

/**
 * A UTF-8 text stream of the file, gunzipped on the fly when it is gzip data. Bytes that are not
 * UTF-8 are an error naming the file and line, not silently U+FFFD (a Latin-1 file would otherwise
 * index and score as mojibake).
 */
export async function openText(path: string): Promise<Readable> {
  const bytes = await openBytes(path);
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let line = 1;
  const text = new Transform({
    readableObjectMode: true,
    transform(chunk: Buffer, _enc, done) {
      let s: string;
      try {
        s = decoder.decode(chunk, { stream: true });
      } catch {
        const upTo = chunk.toString('utf8').indexOf('\uFFFD');
        for (let i = 0; i < upTo; i++) if (chunk[i] === 10) line++;
        done(new InputError(`${path}:${line}: invalid UTF-8`, UTF8_HINT));
        return;
      }
      for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) line++;
      done(null, s === '' ? undefined : s);
    },
    flush(done) {
      try {
        const rest = decoder.decode();
        done(null, rest === '' ? undefined : rest);
      } catch {
        done(new InputError(`${path}:${line}: invalid UTF-8 (a truncated character at the end)`, UTF8_HINT));
      }
    },
  });
  bytes.on('error', (e) => text.destroy(e));
  text.on('close', () => bytes.destroy()); // a reader that stops early closes the file too
  return bytes.pipe(text);
}

export interface TextLine {
  text: string;
  /** 1-based line number. */
  line: number;
  /** The line's bytes are not valid UTF-8 (`text` then holds U+FFFD in their place). */
  invalidUtf8?: true;
}

/**
 * The error for a line that is not UTF-8. `skipFlag` names the caller's flag that skips such lines
 * (`--skip-invalid`); without one the hint names none, since most commands have no such flag.
 */
export function invalidUtf8Error(path: string, line: number, skipFlag?: string): InputError {
  return new InputError(`${path}:${line}: invalid UTF-8`, `${UTF8_HINT}${skipFlag ? `, or pass ${skipFlag} to skip such lines` : ''}`);
}

/**
 * Lines of a (possibly gzipped) text file with their 1-based numbers; `\r\n` is handled. Split on
 * bytes and checked line by line, so a line that is not UTF-8 is flagged and the rest still read.
 */
export async function* readLines(path: string): AsyncGenerator<TextLine> {
  let line = 0;
  let carry: Buffer[] = [];
  const make = (buf: Buffer): TextLine => {
    line++;
    const end = buf.length > 0 && buf[buf.length - 1] === 13 ? buf.length - 1 : buf.length;
    const body = buf.subarray(0, end);
    return isUtf8(body) ? { text: body.toString('utf8'), line } : { text: body.toString('utf8'), line, invalidUtf8: true };
  };
  for await (const chunk of await openBytes(path)) {
    const buf = chunk as Buffer;
    let start = 0;
    for (let nl = buf.indexOf(10); nl >= 0; nl = buf.indexOf(10, start)) {
      const piece = buf.subarray(start, nl);
      yield make(carry.length ? Buffer.concat([...carry, piece]) : piece);
      carry = [];
      start = nl + 1;
    }
    if (start < buf.length) carry.push(buf.subarray(start));
  }
  if (carry.length) yield make(Buffer.concat(carry));
}

/** The hint for a record that does not parse; `skipFlag` as in invalidUtf8Error. */
function parseJsonAt(text: string, loc: SourceLocation, skipFlag?: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const why = oneLine(e instanceof Error ? e.message : String(e));
    throw new InputError(`${formatLocation(loc)}: invalid JSON (${why})`, `fix or remove that ${loc.record === undefined ? 'line' : 'record'}${skipFlag ? `, or pass ${skipFlag}` : ''}`);
  }
}

/**
 * Records of a JSON Lines file; blank lines are skipped. An unparsable line throws an InputError
 * naming file:line (and `skipFlag`, the caller's flag that skips such lines, if it has one).
 */
export async function* readJsonl(path: string, skipFlag?: string): AsyncGenerator<LocatedValue> {
  for await (const r of readJsonlEach(path, skipFlag)) {
    if ('error' in r) throw r.error;
    yield r;
  }
}

/**
 * Records of a JSON Lines file, where a line that is not UTF-8 or not JSON comes back as its error
 * instead of ending the read: for readers that write an error record for such a line and go on.
 */
export async function* readJsonlEach(path: string, skipFlag?: string): AsyncGenerator<(LocatedValue & { text: string }) | UnreadableRecord> {
  for await (const { text, line, invalidUtf8 } of readLines(path)) {
    const loc = { file: path, line };
    if (invalidUtf8) {
      yield { error: invalidUtf8Error(path, line, skipFlag), loc };
      continue;
    }
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = parseJsonAt(text, loc, skipFlag);
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      yield { error: e, loc };
      continue;
    }
    yield { value, loc, text };
  }
}

/** Every record of a JSON Lines file, in order (for files that fit in memory). */
export async function readJsonlValues<T>(path: string): Promise<T[]> {
  const out: T[] = [];
  for await (const { value } of readJsonl(path)) out.push(value as T);
  return out;
}

/**
 * Elements of a file holding one top-level JSON array, parsed one element at a time so that files
 * larger than V8's maximum string length (HotpotQA train is ~570 MB) stream in bounded memory.
 * A hand-written scanner rather than a streaming-JSON library: it only has to find element
 * boundaries (tracking strings and nesting), then JSON.parse does the real work, and it knows the
 * line each element starts on.
 */
export async function* readJsonArray(path: string, skipFlag?: string): AsyncGenerator<LocatedValue> {
  for await (const r of readJsonArrayEach(path, skipFlag)) {
    if ('error' in r) throw r.error;
    yield r;
  }
}

/** A record of a user's file that could not be read: the error naming its file:line, in place of its value. */
export interface UnreadableRecord {
  error: InputError;
  loc: SourceLocation;
}

/**
 * The elements of a top-level JSON array (as readJsonArray), where an element that is not valid JSON comes
 * back as its error and the next ones are still read. A broken array (no opening "[", not closed, content
 * after the "]") still ends the read: no element boundary can be trusted then.
 */
export async function* readJsonArrayEach(path: string, skipFlag?: string): AsyncGenerator<(LocatedValue & { text: string }) | UnreadableRecord> {
  let line = 1;
  let started = false; // seen the opening '['
  let finished = false; // seen the closing ']'
  let inElement = false;
  let container = false; // the current element is an object or array (else a scalar)
  let depth = 0;
  let inString = false;
  let escaped = false;
  let parts: string[] = []; // pieces of the current element from earlier chunks
  let elementLine = 0;
  let record = 0;

  const element = (text: string): (LocatedValue & { text: string }) | UnreadableRecord => {
    const loc = { file: path, line: elementLine, record: ++record };
    const whole = parts.length > 0 ? parts.join('') + text : text;
    parts = [];
    inElement = false;
    try {
      return { value: parseJsonAt(whole, loc, skipFlag), loc, text: whole };
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      return { error: e, loc };
    }
  };

  for await (const chunk of await openText(path)) {
    const s = chunk as string;
    let start = 0;
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (c === 10) line++;
      if (inString) {
        if (escaped) escaped = false;
        else if (c === 92) escaped = true; // backslash
        else if (c === 34) inString = false; // closing quote
        continue;
      }
      if (!inElement) {
        if (c === 32 || c === 10 || c === 13 || c === 9) continue;
        if (!started) {
          if (c !== 91) throw new InputError(`${path}:${line}: expected a JSON array starting with "["`, 'pass a JSON array or a JSON Lines file');
          started = true;
          continue;
        }
        if (finished) throw new InputError(`${path}:${line}: unexpected content after the closing "]"`, 'the file must hold exactly one JSON array');
        if (c === 44) continue; // ',' between elements
        if (c === 93) {
          finished = true;
          continue;
        }
        inElement = true;
        container = c === 123 || c === 91;
        depth = 0;
        start = i;
        elementLine = line;
      }
      if (c === 34) inString = true;
      else if (container) {
        if (c === 123 || c === 91) depth++;
        else if ((c === 125 || c === 93) && --depth === 0) yield element(s.slice(start, i + 1));
      } else if (c === 44 || c === 93) {
        // A scalar element ends at the next ',' or at the array's closing ']'.
        yield element(s.slice(start, i));
        if (c === 93) finished = true;
      }
    }
    if (inElement) parts.push(s.slice(start));
  }
  if (!started) return; // empty file: no records
  if (!finished) throw new InputError(`${path}:${line}: the JSON array is not closed (truncated file?)`, 'check that the file was written completely');
}

/** The first non-whitespace character of a (possibly gzipped) text file, or '' for an empty file. */
export async function firstSignificantChar(path: string): Promise<string> {
  // Bytes, not checked text: a bad byte further on is reported with its line by whoever reads the file.
  const stream = await openBytes(path);
  try {
    for await (const chunk of stream) {
      const m = /\S/.exec((chunk as Buffer).toString('utf8'));
      if (m) return m[0];
    }
    return '';
  } finally {
    stream.destroy();
  }
}

async function readWhole(path: string): Promise<string> {
  const parts: string[] = [];
  for await (const chunk of await openText(path)) parts.push(chunk as string);
  return parts.join('');
}

/**
 * Records of a JSON file in any of the layouts datasets ship in: a top-level array, JSON Lines, or a
 * single (possibly pretty-printed) object, which is yielded as one record. The first record that is not
 * valid JSON throws an InputError naming its file:line.
 */
export async function* readJsonRecords(path: string, skipFlag?: string): AsyncGenerator<LocatedValue> {
  for await (const r of readJsonRecordsEach(path, skipFlag)) {
    if ('error' in r) throw r.error;
    yield r;
  }
}

/**
 * Records of a JSON file in any layout (as readJsonRecords), where a record that is not valid JSON or not
 * UTF-8 comes back as its error and the next ones are still read: for readers that give such a record an
 * error record of its own and go on (issue 45). A file no layout fits still throws.
 */
export async function* readJsonRecordsEach(path: string, skipFlag?: string): AsyncGenerator<(LocatedValue & { text: string }) | UnreadableRecord> {
  const first = await firstSignificantChar(path);
  if (first === '') return;
  if (first === '[') {
    yield* readJsonArrayEach(path, skipFlag);
    return;
  }
  if (first !== '{') {
    throw new InputError(`${path}:1: expected JSON (an array, JSON Lines, or an object), found "${first}"`, 'pass a .json or .jsonl file');
  }
  // JSON Lines unless the first line alone is not valid JSON but the whole file is (a pretty-printed object).
  const lines = readLines(path);
  const head = await lines.next();
  await lines.return(undefined);
  const firstLine = head.done ? '' : head.value.text;
  let firstLineParses = true;
  try {
    JSON.parse(firstLine);
  } catch {
    firstLineParses = false;
  }
  if (firstLineParses) {
    yield* readJsonlEach(path, skipFlag);
    return;
  }
  const whole = await readWhole(path);
  let value: unknown;
  try {
    value = JSON.parse(whole);
  } catch {
    yield* readJsonlEach(path, skipFlag); // each bad line with its number
    return;
  }
  yield { value, loc: { file: path, line: 1 }, text: whole };
}

/** Writes a file atomically: content goes to a temporary sibling that is renamed over `path` on success. */
export async function writeFileAtomic(path: string, write: (out: Writable) => Promise<void>): Promise<void> {
  await fs.mkdir(dirname(path) || '.', { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  const file = createWriteStream(tmp);
  const out: Writable = path.endsWith('.gz') ? createGzip() : file;
  if (out !== file) out.pipe(file);
  const done = finished(file);
  done.catch(() => undefined); // observed below; this only keeps an early failure from going unhandled
  try {
    await write(out);
    out.end();
    await done;
    await fs.rename(tmp, path);
  } catch (e) {
    out.destroy();
    file.destroy();
    await done.catch(() => undefined); // the file may still be opening: wait for it to close before removing it
    await fs.rm(tmp, { force: true });
    if (isDiskFull(e)) throw diskFullError(path);
    throw e;
  }
}

/** Writes one line, waiting for the stream to drain when its buffer is full (bounded memory on big outputs). */
export async function writeLine(out: Writable, text: string): Promise<void> {
  if (!out.write(text + '\n')) await once(out, 'drain');
}

/** Writes records as JSON Lines (gzipped when `path` ends in .gz), atomically. Returns the count written. */
export async function writeJsonl(path: string, records: Iterable<unknown> | AsyncIterable<unknown>): Promise<number> {
  let n = 0;
  await writeFileAtomic(path, async (out) => {
    for await (const r of records) {
      await writeLine(out, JSON.stringify(r));
      n++;
    }
  });
  return n;
}

/**
 * Writes a small JSON state file (run.json, index.json, summary.json, …) atomically: to a temporary
 * sibling, flushed, then renamed over `path`, so a crash leaves the old file or the new one, never
 * a torn or empty one.
 */
export function writeJsonAtomicSync(path: string, value: unknown): void {
  writeTextAtomicSync(path, JSON.stringify(value, null, 2) + '\n');
}

/** Writes a whole file atomically, as {@link writeJsonAtomicSync} does (model files: a policy, a PRM). */
export function writeTextAtomicSync(path: string, content: string): void {
  mkdirSync(dirname(path) || '.', { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  const text = Buffer.from(content, 'utf8');
  try {
    const fd = openSync(tmp, 'w');
    try {
      writeAllSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true }); // the old file stays as it was, and no torn sibling is left
    if (isDiskFull(e)) throw diskFullError(path, { minBytes: text.length });
    throw e;
  }
}

/** Reads a JSON state file; an empty or corrupt one is an InputError naming the file and `fix`. */
export function readJsonFileSync<T>(path: string, fix: string): T {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new InputError(`${path}: cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})`, fix);
  }
  if (text.trim() === '') throw new InputError(`${path}: the file is empty (left by a crash while it was written?)`, fix);
  try {
    return JSON.parse(text) as T;
  } catch (e) {
    throw new InputError(`${path}: not valid JSON (${e instanceof Error ? e.message : String(e)})`, fix);
  }
}

/** Creates an output folder; `flag` names where the path came from ("--out") when it is a file. */
export function ensureOutDir(path: string, flag = '--out'): void {
  if (existsSync(path) && !statSync(path).isDirectory()) throw new InputError(`${flag} ${path}: is a file, not a folder`, 'name a folder (it is created if missing)');
  makeDir(path);
}

/** Folders {@link makeDir} created in this process (absolute paths). */
const createdDirs = new Set<string>();

/**
 * `mkdir -p` that remembers which folders it created, so that a command that then fails can take
 * back the empty ones ({@link removeCreatedEmptyDirs}) instead of leaving a bare `--out` folder.
 */
export function makeDir(path: string): void {
  const first = mkdirSync(path, { recursive: true });
  if (first === undefined) return; // it existed: never ours to remove
  // mkdirSync returns the topmost folder it made; every folder from there down to `path` is new.
  const top = resolve(first);
  for (let d = resolve(path); d.startsWith(top); d = dirname(d)) {
    createdDirs.add(d);
    if (d === top) break;
  }
}

/**
 * Removes the folders {@link makeDir} created that are empty, deepest first (so a nested `--out a/b`
 * goes with its new parent). rmdir refuses a folder with anything in it, so content is never lost,
 * and folders that existed before were never recorded.
 */
export function removeCreatedEmptyDirs(): void {
  const depth = (d: string) => d.split(sep).length;
  for (const d of [...createdDirs].sort((a, b) => depth(b) - depth(a))) {
    try {
      rmdirSync(d);
    } catch {
      // not empty (or already gone): keep it
    }
  }
  createdDirs.clear();
}
