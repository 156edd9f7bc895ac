/**
 * Finding the optional node-llama-cpp package. It is not a dependency of ragtrail (its npm install
 * pulls every GPU build, ~725 MB); it is looked up, in order, in
 *   1. the project's own node_modules (`npm install node-llama-cpp`), then
 *   2. a separate folder with only the CPU build, $RAGTRAIL_NODE_LLAMA_CPP or
 *      ~/.cache/ragtrail/node-llama-cpp (what `scripts/install-node-llama-cpp.sh` makes, ~85 MB).
 * A separate folder because `npm install --omit=optional` in the project, the way to skip the GPU
 * builds there, would also remove the project's other optional packages.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { InputError } from './errors.js';

export const NODE_LLAMA_CPP_VERSION = '3.22.1';

export function nodeLlamaCppDir(): string {
  return process.env['RAGTRAIL_NODE_LLAMA_CPP'] ?? join(homedir(), '.cache', 'ragtrail', 'node-llama-cpp');
}

/** The command that installs the CPU-only build where `loadNodeLlamaCpp` looks second. */
export function installCommand(dir = nodeLlamaCppDir()): string {
  return `npm install --prefix ${dir} --omit=optional node-llama-cpp@${NODE_LLAMA_CPP_VERSION} @node-llama-cpp/linux-x64@${NODE_LLAMA_CPP_VERSION}`;
}

export interface LoadedNodeLlamaCpp<M> {
  mod: M;
  /** A `require` rooted where node-llama-cpp was found, for its own dependencies (@huggingface/jinja). */
  requireBeside: NodeJS.Require;
  /** Where the package was found. */
  path: string;
}

/** Imports node-llama-cpp from the project or the CPU-only folder; `what` names the caller in the error. */
export async function loadNodeLlamaCpp<M>(what: string): Promise<LoadedNodeLlamaCpp<M>> {
  const dir = nodeLlamaCppDir();
  const bases = [import.meta.url, ...(existsSync(dir) ? [pathToFileURL(join(dir, 'package.json')).href] : [])];
  for (const base of bases) {
    let path: string;
    try {
      path = createRequire(base).resolve('node-llama-cpp');
    } catch {
      continue;
    }
    const mod = (await import(pathToFileURL(path).href)) as M;
    return { mod, requireBeside: createRequire(pathToFileURL(path).href), path };
  }
  throw new InputError(
    `${what}: needs the optional package node-llama-cpp, found neither in this project nor in ${dir}`,
    `run \`npm install node-llama-cpp\` in your project (all GPU builds, ~725 MB), or for the CPU build alone (~85 MB): ${installCommand(dir)}`,
  );
}
