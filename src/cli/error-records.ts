/**
 * Error records on stderr, for commands whose output is not one record per input line (`score`, `prm
 * train`, `prm eval`): each record of a user's file that could not be used is printed as one JSON line,
 * `error record: {"id", "error"}`, so stdout stays the command's result (one JSON object under --json).
 */
import type { ErrorRecord } from '../core/errors.js';

export function reportErrorRecords(errors: readonly ErrorRecord[], label = 'error record'): void {
  for (const e of errors) console.error(`${label}: ${JSON.stringify(e)}`);
}
