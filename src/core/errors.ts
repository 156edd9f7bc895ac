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
