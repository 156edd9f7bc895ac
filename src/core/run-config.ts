/**
 * The settings a resumable job (a run, an annotation) was started with, kept beside its output:
 * written on the first invocation, compared on every later one so that a resume never mixes
 * results made with different settings.
 */
import { existsSync } from 'node:fs';
import { InputError } from './errors.js';
import { readJsonFileSync, writeJsonAtomicSync } from './io.js';

/** Writes `config` to `path`, or checks it against the one there; `what` names the job in the error ("run"). */
export function checkRunConfig(path: string, config: Record<string, unknown>, what: string): void {
  if (!existsSync(path)) {
    writeJsonAtomicSync(path, config);
    return;
  }
  const before = readJsonFileSync<Record<string, unknown>>(path, `it records the settings of this ${what}: delete it to resume with the current settings, or use another --out folder`);
  for (const key of Object.keys(config)) {
    if (JSON.stringify(before[key]) !== JSON.stringify(config[key])) {
      throw new InputError(`${path}: this ${what} was made with ${key}=${JSON.stringify(before[key])}, not ${JSON.stringify(config[key])}`, 'use another --out folder, or the same settings to resume');
    }
  }
}
