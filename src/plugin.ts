/**
 * Plugins: a module that adds protocols, reward schemes, retrievers, LLM backends, PRMs or policies
 * to ragtrail's registries. From code, call the `register*` functions of each stage directly. For the
 * CLI, write an ES module whose default export is a function taking the `PluginApi`, and pass it with
 * `--plugin FILE` (repeatable): the CLI loads it before reading any other flag, so `--agent`,
 * `--scheme`, `--index`, `--llm`, `--prm` and `--policy` accept its names exactly like built-in ones.
 * @module
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { policies, registerPolicy } from './agents/policies.js';
import { protocols, registerProtocol } from './agents/registry.js';
import { InputError } from './core/errors.js';
import { llmBackends, registerLLMBackend } from './llm/create.js';
import { prmKinds, registerPrm } from './prm/select.js';
import { registerRetriever, retrieverKinds } from './retrieval/index-dir.js';
import { registerRewardScheme, rewardSchemes } from './rewards/schemes.js';
// The gym policy registers itself where it is defined (learn/): load it so the tables are complete.
import './learn/gym/policy.js';

/** What a plugin's default export receives: every registry's `register` function and table. */
export const pluginApi = {
  /** Adds a protocol, usable as `--agent NAME` ({@link registerProtocol}). */
  registerProtocol,
  /** Adds a reward scheme, usable in `--scheme` ({@link registerRewardScheme}). */
  registerRewardScheme,
  /** Adds a retriever kind, opened by `--index KIND:…` ({@link registerRetriever}). */
  registerRetriever,
  /** Adds an LLM backend kind, built by `--llm KIND:…` ({@link registerLLMBackend}). */
  registerLLMBackend,
  /** Adds a PRM kind, built by `--prm KIND[:…]` ({@link registerPrm}). */
  registerPrm,
  /** Adds a non-LLM policy, built by `--policy NAME[:ARG]` ({@link registerPolicy}). */
  registerPolicy,
  /** The tables themselves, to look up or list what is registered. */
  registries: { protocols, rewardSchemes, retrieverKinds, llmBackends, prmKinds, policies },
};

/** The API object passed to a plugin's default export. */
export type PluginApi = typeof pluginApi;

/** A plugin module's default export. */
export type RagtrailPlugin = (api: PluginApi) => void | Promise<void>;

/** Identity, for type inference: `export default definePlugin((api) => { … })`. */
export function definePlugin(plugin: RagtrailPlugin): RagtrailPlugin {
  return plugin;
}

/**
 * Imports a plugin file and, when its default export is a function, calls it with `pluginApi`. A
 * module that registers through its own `import … from 'ragtrail/…'` (no default export) also works,
 * provided it resolves to this same installation of ragtrail.
 */
export async function loadPlugin(file: string): Promise<void> {
  const path = resolve(file);
  if (!existsSync(path)) throw new InputError(`--plugin ${file}: no such file`, 'pass the path of an ES module (.js or .mjs) whose default export is a function (api) => { api.registerProtocol(…) … }');
  let mod: { default?: unknown };
  try {
    mod = (await import(pathToFileURL(path).href)) as { default?: unknown };
  } catch (e) {
    const err = e as Error & { code?: string };
    const ts = /\.[mc]?ts$/.test(path) && (err.code === 'ERR_UNKNOWN_FILE_EXTENSION' || /Unknown file extension/.test(err.message));
    throw new InputError(`--plugin ${file}: could not load it: ${err.message.split('\n')[0]}`, ts ? 'compile the plugin to JavaScript (tsc), or run ragtrail under `node --import tsx`' : 'fix the module so that `node FILE` imports it without error');
  }
  if (typeof mod.default === 'function') await (mod.default as RagtrailPlugin)(pluginApi);
}

/** The `--plugin FILE` / `--plugin=FILE` values of a command line, in order. */
export function pluginArgs(argv: readonly string[]): string[] {
  const files: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') break;
    if (a === '--plugin' && i + 1 < argv.length) files.push(argv[++i]!);
    else if (a.startsWith('--plugin=')) files.push(a.slice('--plugin='.length));
  }
  return files;
}
