/**
 * `--config FILE`: a JSON object whose keys are option names (kebab- or camelCase) supplies values
 * for options not given on the command line — handy for long LLM settings (spec, key, prices).
 * The file is checked against the command's schema, made from its own options: flags take booleans,
 * valued options go through the same parser as on the command line, and unknown keys are refused.
 */
import type { Command, Option } from 'commander';
import { checkConfig, readJsonConfig, z } from '../core/config-schema.js';
import { InputError } from '../core/errors.js';

const camel = (s: string) => s.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());

/** The schema of one option's value in a config file. */
function optionValueSchema(option: Option): z.ZodType {
  if (!option.required && !option.optional) return z.boolean();
  const parse = option.parseArg;
  const repeatable = Array.isArray(option.defaultValue);
  const scalar = z.union([z.string(), z.number()], { error: 'expected a string or a number' });
  const one = (v: string | number, previous: unknown, ctx: z.core.$RefinementCtx): unknown => {
    if (!parse) return String(v);
    try {
      return parse(String(v), previous);
    } catch (e) {
      // The parser's own message says what it expected ("expected an integer, got \"five\".").
      ctx.addIssue({ code: 'custom', message: e instanceof Error ? e.message.replace(/\.$/, '') : String(e) });
      return z.NEVER;
    }
  };
  if (repeatable) return z.array(scalar).transform((vs, ctx) => vs.reduce<unknown>((prev, v) => one(v, prev, ctx), []));
  return scalar.transform((v, ctx) => one(v, undefined, ctx));
}

const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** The schema of `cmd`'s config file: one optional key per option, camelCase or kebab-case. */
export function commandConfigSchema(cmd: Command): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const option of cmd.options) {
    const key = option.attributeName();
    if (key === 'config' || key === 'help') continue;
    shape[key] = optionValueSchema(option).optional();
    shape[kebab(key)] = shape[key];
  }
  return z.object(shape).strict();
}

export function applyConfigFile(cmd: Command): void {
  const path = cmd.getOptionValue('config') as string | undefined;
  if (!path) return;
  const what = `--config ${path}`;
  const hint = `pass a JSON object of option values, e.g. {"llm": "openai:http://127.0.0.1:8000/v1#model"}; see \`ragtrail ${cmd.name()} --help\``;
  const raw = readJsonConfig(path, what, hint);
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new InputError(`${what}: must be a JSON object`, hint);
  // Checked under the user's own spelling of each key, so that errors quote it.
  const config = checkConfig(commandConfigSchema(cmd), raw, what, hint) as Record<string, unknown>;
  for (const [rawKey, value] of Object.entries(config)) {
    if (value === undefined) continue;
    const key = camel(rawKey);
    const source = cmd.getOptionValueSource(key);
    if (source === 'cli' || source === 'env') continue;
    cmd.setOptionValueWithSource(key, value, 'config');
  }
}

/** Fails with the flag's name when a value required by the command is missing after config merging. */
export function requireOptions(cmd: Command, names: string[]): void {
  for (const name of names) {
    if (cmd.getOptionValue(camel(name)) === undefined) throw new InputError(`required option --${name} not specified`, `see \`ragtrail ${cmd.name()} --help\``);
  }
}
