/**
 * Errors are for people: one line saying what is wrong, where, and how to fix it.
 * `InputError` marks a problem with the user's input (file, flag, config); the CLI prints its message
 * and exits with status 2 instead of a stack trace.
 */
export class RagtrailError extends Error {
  constructor(
    message: string,
    /** How to fix it, appended to the message as a separate sentence. */
    readonly hint?: string,
  ) {
    super(hint ? `${message} (${hint})` : message);
    this.name = new.target.name;
  }
}

/** Bad input from the user: a malformed file, an unknown flag value, a missing path. */
export class InputError extends RagtrailError {}

/** Where a record came from, for error messages: `file:line`. */
export interface SourceLocation {
  file: string;
  /** 1-based line where the record starts. */
  line: number;
  /** 1-based position of the record in a JSON array (whose records often share one line). */
  record?: number;
}

export function formatLocation(loc: SourceLocation): string {
  return loc.record === undefined ? `${loc.file}:${loc.line}` : `${loc.file}:${loc.line} (record ${loc.record})`;
}

/**
 * `text` with its line breaks written as \n, \r, \u2028, \u2029: for quoting what a user gave (a
 * JSON parser's message quotes the bad text) inside a message that must stay one line.
 */
export function oneLine(text: string): string {
  return text.replace(/[\r\n\u2028\u2029]/g, (c) => (c === '\n' ? '\\n' : c === '\r' ? '\\r' : c === '\u2028' ? '\\u2028' : '\\u2029'));
}

/** A single record that does not fit the expected shape; `field` names the offending field. */
export class RecordError extends InputError {
  constructor(
    readonly location: SourceLocation,
    readonly field: string,
    readonly problem: string,
    hint?: string,
  ) {
    super(`${formatLocation(location)}: field "${field}" ${problem}`, hint);
  }
}

/**
 * The `error` of an error record (`{id, error}`), written in place of a result for one line that could
 * not be scored while the others go on (issue 45): an exception the authors' Python code would raise on
 * that input as "TypeError: …" (errors carrying `pythonType`), a problem with the line as its one-line
 * message, anything else as "unexpected error: …". An interruption is not a line's problem and is
 * rethrown by the caller before this is reached.
 */
export function errorRecordText(e: unknown): string {
  const err = e instanceof Error ? e : new Error(String(e));
  const py = (err as { pythonType?: unknown }).pythonType;
  if (typeof py === 'string') return oneLine(`${py}: ${err.message}`);
  if (err instanceof RagtrailError) return oneLine(err.message);
  if (err instanceof RangeError && /call stack/i.test(err.message)) return 'nesting too deep to score (maximum call stack size exceeded)';
  return oneLine(`unexpected error: ${err.message}`);
}

/** The id an error record carries: the line's own `id` when it has one, else null. */
export function recordId(value: unknown): string | null {
  const id = value && typeof value === 'object' ? (value as Record<string, unknown>)['id'] : undefined;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : null;
}

/** A record of a user's file that could not be used, written in place of its result: its id (null when it has none) and why. */
export interface ErrorRecord {
  id: string | null;
  error: string;
}

/** The error record for `value` (the record as read, if it was) that failed with `e`. */
export function errorRecord(e: unknown, value?: unknown): ErrorRecord {
  return { id: recordId(value), error: errorRecordText(e) };
}

/**
 * What a command ends with when `failed` of `total` records of a user's file became error records
 * (`{id, error}`, each in `where`; `total` the records read, where countable), the other records having been used: a RagtrailError, so the exit status
 * is 1 and the message counts them; undefined when none failed.
 */
export function recordFailures(failed: number, total: number | undefined, where: string): RagtrailError | undefined {
  if (failed === 0) return undefined;
  return new RagtrailError(`${failed}${total === undefined ? '' : ` of ${total}`} record${failed === 1 && total === undefined ? '' : 's'} could not be used: each is an {"id", "error"} line in ${where}`, 'the error says what to fix in that record; the others were used');
}
