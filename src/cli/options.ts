/** Flag parsers shared by the commands: each rejects a bad value with one line naming the flag and the fix. */
import { InvalidArgumentError } from 'commander';

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

export function choiceArg<T extends string>(choices: readonly T[]) {
  return (value: string): T => {
    if (!(choices as readonly string[]).includes(value)) throw new InvalidArgumentError(`expected one of ${choices.join(', ')}, got "${value}".`);
    return value as T;
  };
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** Seeds may be numbers or strings; numeric strings become numbers so that `--seed 7` and the API's `7` agree. */
export function seedArg(value: string): number | string {
  return /^-?\d+$/.test(value) ? Number(value) : value;
}
