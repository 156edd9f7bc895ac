/** Flag parsers shared by the commands: each rejects a bad value with one line naming the flag and the fix. */
import { type Command, InvalidArgumentError } from 'commander';
import { retryDefaults } from '../core/http.js';

export function intArg(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^-?\d+$/.test(value.trim()) || !Number.isSafeInteger(n)) throw new InvalidArgumentError(`expected an integer, got "${value}".`);
    if (n < min || n > max) throw new InvalidArgumentError(`expected an integer from ${min} to ${max === Number.MAX_SAFE_INTEGER ? 'up' : max}, got ${n}.`);
    return n;
  };
}

export function numberArg(min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError(`expected a number, got "${value}".`);
    if (n < min || n > max) throw new InvalidArgumentError(`expected a number from ${min} to ${max}, got ${n}.`);
    return n;
  };
}

/** A flag parser accepting one of `choices`: a fixed list, or a function read at parse time (a
 * registry's names, which plugins extend). */
export function choiceArg<T extends string>(choices: readonly T[] | (() => readonly T[])) {
  return (value: string): T => {
    const list = typeof choices === 'function' ? choices() : choices;
    if (!(list as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${list.join(', ')}, got "${value}".`);
    return value as T;
  };
}

/** The dataset flags of `score` and `corpus`, for loadDataset's error hints. */
export const DATASET_FLAGS = { format: '--dataset-format', skipInvalid: '--skip-invalid' } as const;

/** A flag whose value is a JSON object (`--llm-body '{"top_k": 20}'`). */
export function jsonObjectArg(value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new InvalidArgumentError(`not JSON: ${value} (write an object, e.g. '{"skip_special_tokens": false}')`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new InvalidArgumentError(`expected a JSON object, e.g. '{"skip_special_tokens": false}'`);
  return parsed as Record<string, unknown>;
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Seeds may be numbers or strings; numeric strings become numbers so that `--seed 7` and the API's `7` agree. */
export function seedArg(value: string): number | string {
  return /^-?\d+$/.test(value) ? Number(value) : value;
}

/** A duration: plain seconds, or a number with ms, s, m or h ("90s", "10m", "2h"); returns milliseconds. */
export function durationArg(value: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(value);
  if (!m) throw new InvalidArgumentError(`expected a duration such as 30s, 10m or 2h, got "${value}".`);
  const scale = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h'];
  return Math.round(Number(m[1]) * scale);
}

/**
 * `--retry-for`: how long a failing request to the LLM, embedding or retrieval server is retried
 * before the command stops (core/http.ts). Call after the command's --config hook, so a config
 * file may set it too.
 */
export function addRetryOption(cmd: Command): Command {
  return cmd
    .option('--retry-for <duration>', 'keep retrying a failing server request this long before stopping (e.g. 30s, 10m, 2h; 0 = no retries)', durationArg, retryDefaults.retryForMs)
    .hook('preAction', (c) => {
      retryDefaults.retryForMs = c.getOptionValue('retryFor') as number;
    });
}
