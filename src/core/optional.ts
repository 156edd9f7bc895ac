/**
 * Optional packages (usearch, onnxruntime-node, the search-engine clients) are imported by name at
 * first use, so ragtrail installs and runs without them; a missing one is one clear error.
 */
import { InputError } from './errors.js';

/** The module namespace of the optional package `name`; `what` says which feature needs it. */
export async function importOptional<T>(name: string, what: string): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch {
    throw new InputError(`${what} needs the optional package ${name}`, `run \`npm install ${name}\``);
  }
}
