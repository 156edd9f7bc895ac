/** Field checks shared by the dataset converters; each failure names the record's file:line and the field. */
import { RecordError, type SourceLocation } from '../../core/errors.js';

/** A parsed JSON object, field name → value: one record of a dataset file before its fields are read. */
export type Json = Record<string, unknown>;

export function asObject(value: unknown, loc: SourceLocation): Json {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new RecordError(loc, '(record)', 'is not a JSON object', 'each record must be an object');
  }
  return value as Json;
}

export function requireString(rec: Json, field: string, loc: SourceLocation): string {
  const v = rec[field];
  if (v === undefined || v === null) throw new RecordError(loc, field, 'is missing');
  if (typeof v === 'number') return String(v);
  if (typeof v !== 'string') throw new RecordError(loc, field, `must be a string, got ${typeof v}`);
  if (v.trim() === '') throw new RecordError(loc, field, 'is empty');
  return v;
}

/**
 * A list of answer strings (numbers are accepted and stringified); must not be empty. A single
 * answer outside a list is accepted where the format has one (HotpotQA's `answer`), but not with
 * `listOnly` (FlashRAG's `golden_answers`), where `42` is a malformed record rather than ["42"].
 */
export function requireAnswerList(rec: Json, field: string, loc: SourceLocation, listOnly = false): string[] {
  const v = rec[field];
  if (v === undefined || v === null) throw new RecordError(loc, field, 'is missing');
  if (listOnly && !Array.isArray(v)) throw new RecordError(loc, field, `must be a list of answer strings, got ${typeof v} ${JSON.stringify(v).slice(0, 40)}`, `write it as a list, e.g. [${JSON.stringify(String(v)).slice(0, 40)}]`);
  const list = Array.isArray(v) ? v : [v];
  const out: string[] = [];
  for (const a of list) {
    if (typeof a === 'string') out.push(a);
    else if (typeof a === 'number') out.push(String(a));
    else throw new RecordError(loc, field, `must hold strings, found ${a === null ? 'null' : typeof a}`);
  }
  if (out.length === 0) throw new RecordError(loc, field, 'is an empty list', 'every question needs at least one gold answer');
  return out;
}

/** Appends aliases to the answer list, skipping duplicates and non-strings. */
export function withAliases(answers: string[], aliases: unknown): string[] {
  const out = answers.slice();
  if (Array.isArray(aliases)) {
    for (const a of aliases) if (typeof a === 'string' && a !== '' && !out.includes(a)) out.push(a);
  }
  return out;
}

export function optionalString(rec: Json, field: string): string | undefined {
  const v = rec[field];
  return typeof v === 'string' ? v : undefined;
}
