/**
 * Property-based tests of config and recipe validation (fast-check, fixed seed and run counts):
 * arbitrary JSON and YAML values are either accepted or refused with one InputError of one line,
 * never another exception.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Command } from 'commander';
import fc from 'fast-check';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { buildProgram } from '../../src/cli/program.js';
import { commandConfigSchema } from '../../src/cli/config.js';
import { checkConfig } from '../../src/core/config-schema.js';
import { InputError } from '../../src/core/errors.js';
import { evalConfigSchema } from '../../src/eval/harness.js';
import { parseRecipe, RECIPES_DIR } from '../../src/pipelines/recipe.js';

const SEED = 49;

/** Runs `f`: it returns, or throws an InputError whose message is one line. */
function acceptsOrRefuses(f: () => unknown): void {
  try {
    f();
  } catch (e) {
    if (!(e instanceof InputError)) throw new Error(`not an InputError: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
    assert.ok(!/[\r\n\u2028\u2029]/.test(e.message), `message of more than one line: ${JSON.stringify(e.message)}`);
  }
}

const KEYS = ['llm', 'agent', 'limit', 'seed', 'systems', 'name', 'temperature', 'n', 'out', 'stages', 'kind', 'id', '__proto__', 'constructor', 'toString', 'a\nb', '', ' ', '😀'];
const key = fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 8 }));
const scalar = fc.oneof(fc.string({ maxLength: 12 }), fc.string({ unit: 'binary', maxLength: 6 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constantFrom('five', '1e400', '-1', '0x10', 'true', '\n'));
// JSON values whose object keys are mostly ones the schemas know, so that validation gets past the top.
const json: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, scalar, fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(key, tie('value'), { maxKeys: 5 })),
})).value;

describe('command configs (--config FILE) of every command', () => {
  const commands: Command[] = [];
  const walk = (c: Command) => {
    if (c.options.some((o) => o.attributeName() === 'config')) commands.push(c);
    c.commands.forEach(walk);
  };
  walk(buildProgram());
  it(`${commands.length} commands: arbitrary objects of their own option names and arbitrary values`, () => {
    assert.ok(commands.length >= 3);
    const schemas = commands.map((c) => ({ c, schema: commandConfigSchema(c), keys: c.options.map((o) => o.attributeName()) }));
    fc.assert(
      fc.property(fc.nat(schemas.length - 1), fc.array(fc.tuple(fc.oneof(fc.nat(99), key), json), { maxLength: 6 }), (i, entries) => {
        const { c, schema, keys } = schemas[i]!;
        const value = Object.fromEntries(entries.map(([k, v]) => [typeof k === 'number' ? keys[k % keys.length]! : k, v]));
        acceptsOrRefuses(() => checkConfig(schema, value, `--config ${c.name()}.json`, 'see --help'));
      }),
      { seed: SEED, numRuns: 1500 },
    );
  });
  it('any JSON value at all', () => {
    const schema = commandConfigSchema(commands[0]!);
    fc.assert(fc.property(json, (v) => acceptsOrRefuses(() => checkConfig(schema, v, 'c.json', 'h'))), { seed: SEED, numRuns: 500 });
  });
});

describe('defects the fuzzing found, kept as examples', () => {
  it('a value with a line break, quoted in the message, is written as \\n', () => {
    const run = buildProgram().commands.find((c) => c.name() === 'run')!;
    assert.throws(() => checkConfig(commandConfigSchema(run), { agent: 'a\nb' }, '--config run.json', 'h'), (e: Error) => e instanceof InputError && e.message.startsWith('--config run.json: "agent" expected one of ') && e.message.endsWith('got "a\\nb" (h)'));
  });
  it('a key with a line break is quoted as JSON, so the message stays one line', () => {
    assert.throws(() => checkConfig(evalConfigSchema, { index: 'i', out: 'o', datasets: [{ name: 'd', path: 'p' }], systems: [{ name: 'a', agent: 'search-r1', policy: 'oracle' }], 'a\nb': 1 }, 'eval.json', 'h'), (e: Error) => e instanceof InputError && e.message.startsWith('eval.json: unknown key "a\\nb" (allowed: ') && !e.message.includes('\n'));
    assert.throws(() => checkConfig(evalConfigSchema, { index: 'i', out: 'o', datasets: [{ name: 'd', path: 'p' }], systems: [{ name: 'a', agent: 'search-r1', policy: 'oracle', temprature: 1 }] }, 'eval.json', 'h'), { message: 'eval.json: unknown key "temprature" in "systems[0]" (did you mean "temperature"?) (h)' });
  });
});

describe('eval configs', () => {
  it('arbitrary JSON values, and a good config with one field replaced by an arbitrary value', () => {
    const good = { index: 'idx', out: 'o', datasets: [{ name: 'd', path: 'p' }], systems: [{ name: 'a', agent: 'search-r1', policy: 'oracle' }] };
    fc.assert(
      fc.property(json, key, json, (v, k, x) => {
        acceptsOrRefuses(() => checkConfig(evalConfigSchema, v, 'eval.json', 'h'));
        acceptsOrRefuses(() => checkConfig(evalConfigSchema, { ...good, systems: [{ ...good.systems[0], [k]: x }] }, 'eval.json', 'h'));
        acceptsOrRefuses(() => checkConfig(evalConfigSchema, { ...good, [k]: x }, 'eval.json', 'h'));
      }),
      { seed: SEED, numRuns: 800 },
    );
  });
});

describe('recipes', () => {
  const recipes = readdirSync(RECIPES_DIR)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => parseYaml(readFileSync(join(RECIPES_DIR, f), 'utf8')) as unknown);

  /** `value` with the node at `path` (indices chosen modulo each level's size) replaced, or deleted when `x` is undefined. */
  function mutate(value: unknown, path: number[], x: unknown): unknown {
    if (path.length === 0 || value === null || typeof value !== 'object') return x;
    const copy: Record<string, unknown> | unknown[] = Array.isArray(value) ? [...value] : { ...(value as Record<string, unknown>) };
    const keys = Object.keys(copy);
    if (keys.length === 0) return copy;
    const k = keys[path[0]! % keys.length]!;
    const child = mutate((copy as Record<string, unknown>)[k], path.slice(1), x);
    if (child === undefined && !Array.isArray(copy)) delete (copy as Record<string, unknown>)[k];
    else (copy as Record<string, unknown>)[k] = child;
    return copy;
  }

  it(`the ${recipes.length} shipped recipes, one node replaced or deleted, as YAML`, () => {
    assert.ok(recipes.length >= 6);
    fc.assert(
      fc.property(fc.nat(recipes.length - 1), fc.array(fc.nat(40), { maxLength: 5 }), fc.option(json, { nil: undefined }), (r, path, x) => {
        acceptsOrRefuses(() => parseRecipe(toYaml(mutate(recipes[r], path, x)), 'r.yaml'));
      }),
      { seed: SEED, numRuns: 600 },
    );
  });
  it('arbitrary text, and arbitrary JSON values written as YAML', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), json, (text, v) => {
        acceptsOrRefuses(() => parseRecipe(text, 'r.yaml'));
        acceptsOrRefuses(() => parseRecipe(toYaml(v), 'r.yaml'));
      }),
      { seed: SEED, numRuns: 800 },
    );
  });
  it('YAML built to hurt: deep nesting, aliases, tags, huge text', () => {
    const cases = ['['.repeat(50_000), '{a: '.repeat(20_000), '- '.repeat(5_000) + 'x', '&a [*a]', 'a: &x [1]\nb: *x\nstages: *x', '!!binary x', '!!js/function "f"', 'key: ' + 'x'.repeat(1_000_000), '%YAML 9.9\n---\na: 1', ':\n:\n:', '\t'];
    for (const text of cases) acceptsOrRefuses(() => parseRecipe(text, 'r.yaml'));
  });
});
