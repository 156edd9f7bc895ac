/**
 * Config files checked by one schema per command (zod), so that `run --config` and eval configs
 * reject the same mistakes the same way: an unknown key or a wrongly typed value is an InputError
 * (exit 2) naming the file, the key and the expected type, never a silent default or a later crash.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { InputError, oneLine } from './errors.js';

export { z };

/** An integer in [min, max]. */
export const intIn = (min: number, max = Number.MAX_SAFE_INTEGER) => z.number().int().min(min).max(max);
/** A number in [min, max]. */
export const numberIn = (min: number, max: number) => z.number().min(min).max(max);

function keyPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `${out ? '.' : ''}${String(p)}`;
  return out;
}

/** Edit distance, for "did you mean" on a misspelt key. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const cur = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = cur;
    }
  }
  return row[b.length]!;
}

/** The keys an object schema at `path` allows, for the unknown-key message. */
function allowedKeys(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const unwrap = (t: z.ZodType | undefined): z.ZodType | undefined => {
    while (t instanceof z.ZodOptional || t instanceof z.ZodDefault || t instanceof z.ZodPipe) t = (t instanceof z.ZodPipe ? t.in : t.unwrap()) as z.ZodType;
    return t;
  };
  let s = unwrap(schema);
  for (const p of path) {
    if (s instanceof z.ZodArray && typeof p === 'number') s = unwrap(s.element as z.ZodType);
    else if (s instanceof z.ZodObject && typeof p === 'string') s = unwrap((s.shape as Record<string, z.ZodType>)[p]);
    else return [];
  }
  return s instanceof z.ZodObject ? Object.keys(s.shape) : [];
}

/** One line for the first problem zod found. */
function describeIssue(schema: z.ZodType, issue: z.core.$ZodIssue): string {
  const where = keyPath(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0]!;
    const allowed = allowedKeys(schema, issue.path);
    const near = allowed.filter((k) => distance(k.toLowerCase(), key.toLowerCase()) <= 2);
    const at = where ? ` in ${JSON.stringify(where)}` : '';
    // Keys are quoted as JSON strings, so that one with a line break still makes a one-line message.
    return `unknown key ${JSON.stringify(key)}${at}${near.length ? ` (did you mean "${near[0]}"?)` : allowed.length ? ` (allowed: ${allowed.join(', ')})` : ''}`;
  }
  // A message may quote the value given ("got \"…\""): its line breaks are written as \n, so the
  // message stays one line.
  const message = oneLine(issue.message.replace(/^Invalid (input|option): /, ''));
  return `${JSON.stringify(where)} ${message}`;
}

/** Validates `value` against `schema`; `what` names the file in the error ("--config run.json"). */
export function checkConfig<S extends z.ZodType>(schema: S, value: unknown, what: string, hint: string): z.output<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  throw new InputError(`${what}: ${describeIssue(schema, r.error.issues[0]!)}`, hint);
}

/** Reads a JSON config file, naming the file and the problem when it cannot be read or parsed. */
export function readJsonConfig(path: string, what: string, hint: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new InputError(`${what}: cannot be read`, 'check the path');
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new InputError(`${what}: not valid JSON (${oneLine(e instanceof Error ? e.message : String(e))})`, hint);
  }
}
