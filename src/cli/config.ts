/**
 * `--config FILE`: a JSON object whose keys are option names (kebab- or camelCase) supplies values
 * for options not given on the command line — handy for long LLM settings (spec, key, prices).
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { InputError } from '../core/errors.js';

const camel = (s: string) => s.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());

export function applyConfigFile(cmd: Command): void {
  const path = cmd.getOptionValue('config') as string | undefined;
  if (!path) return;
  let config: unknown;
  try {
    config = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new InputError(`--config ${path}: ${e instanceof SyntaxError ? 'not valid JSON' : 'cannot be read'}`, 'pass a JSON object of option values, e.g. {"llm": "openai:http://127.0.0.1:8000/v1#model"}');
  }
  if (!config || typeof config !== 'object' || Array.isArray(config)) throw new InputError(`--config ${path}: must be a JSON object`);
  for (const [rawKey, value] of Object.entries(config as Record<string, unknown>)) {
    const key = camel(rawKey);
    const option = cmd.options.find((o) => o.attributeName() === key);
    if (!option) throw new InputError(`--config ${path}: unknown option "${rawKey}"`, `see \`ragtrail ${cmd.name()} --help\``);
    const source = cmd.getOptionValueSource(key);
    if (source === 'cli' || source === 'env') continue;
    const parsed = option.parseArg && typeof value !== 'boolean' ? option.parseArg(String(value), undefined) : value;
    cmd.setOptionValueWithSource(key, parsed, 'config');
  }
}

/** Fails with the flag's name when a value required by the command is missing after config merging. */
export function requireOptions(cmd: Command, names: string[]): void {
  for (const name of names) {
    if (cmd.getOptionValue(camel(name)) === undefined) throw new InputError(`required option --${name} not specified`, `see \`ragtrail ${cmd.name()} --help\``);
  }
}
