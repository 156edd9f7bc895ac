/**
 * The settings a resumable job (a run, an annotation) was started with, kept beside its output:
 * written on the first invocation, compared on every later one so that a resume never mixes
 * results made with different settings.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { InputError } from './errors.js';

/** Writes `config` to `path`, or checks it against the one there; `what` names the job in the error ("run"). */
export function checkRunConfig(path: string, config: Record<string, unknown>, what: string): void {
  if (!existsSync(path)) {
    writeFileSync(path, JSON.stringify(config, null, 2) + '\n');
    return;
  }
  const before = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  for (const key of Object.keys(config)) {
    if (JSON.stringify(before[key]) !== JSON.stringify(config[key])) {
      throw new InputError(`${path}: this ${what} was made with ${key}=${JSON.stringify(before[key])}, not ${JSON.stringify(config[key])}`, 'use another --out folder, or the same settings to resume');
    }
  }
}
