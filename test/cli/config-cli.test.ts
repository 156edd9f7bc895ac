/** Config files and flags as users get them wrong: exit 2 and one line naming the key or flag and what it expects. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Command } from 'commander';
import { applyConfigFile } from '../../src/cli/config.js';
import { durationArg, intArg } from '../../src/cli/options.js';
import { InputError } from '../../src/core/errors.js';
import { cliRunner, tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);
const { run: ragtrail } = cliRunner(tmp.dir);
const write = (name: string, config: object) => {
  const p = join(tmp.dir, name);
  writeFileSync(p, JSON.stringify(config));
  return p;
};

describe('run --config, checked by the command\'s schema', () => {
  // The same shapes as `run`'s options, without starting the CLI.
  const command = () =>
    new Command('run')
      .option('--limit <n>', 'first N', intArg(1))
      .option('--temperature <t>', 't')
      .option('--quiet', 'no progress', false)
      .option('--no-cache', 'no cache')
      .option('--config <file>', 'config');
  const apply = (config: object) => {
    const cmd = command();
    cmd.parse(['--config', write('run-config.json', config)], { from: 'user' });
    applyConfigFile(cmd);
    return cmd.opts();
  };

  it('takes typed values through the option parsers', () => {
    assert.deepEqual(apply({ limit: 5, quiet: true, cache: false }), { limit: 5, quiet: true, cache: false, config: join(tmp.dir, 'run-config.json') });
    assert.equal(apply({ limit: '7' }).limit, 7);
  });
  it('names the key and the expected type', () => {
    const p = join(tmp.dir, 'run-config.json');
    for (const [config, expected] of [
      [{ limit: 'five' }, `--config ${p}: "limit" expected an integer, got "five"`],
      [{ quiet: 'no' }, `--config ${p}: "quiet" expected boolean, received string`],
      [{ temprature: 0.5 }, `--config ${p}: unknown key "temprature" (did you mean "temperature"?)`],
      [{ limit: [3] }, `--config ${p}: "limit" expected a string or a number`],
    ] as const) {
      assert.throws(() => apply(config), (e: Error) => e instanceof InputError && e.message.startsWith(expected), JSON.stringify(config));
    }
  });
  it('parses --retry-for durations', () => {
    assert.deepEqual(['90', '90s', '10m', '1.5h', '250ms'].map(durationArg), [90_000, 90_000, 600_000, 5_400_000, 250]);
    assert.throws(() => durationArg('ten minutes'), /expected a duration such as 30s, 10m or 2h/);
  });
});

describe('the CLI says what is wrong in one line, exit 2', () => {
  it('a wrongly typed run --config value, --out naming a file, a bad --retry-for, an eval config with "n": "ten"', () => {
    const file = join(tmp.dir, 'plain-file');
    writeFileSync(file, 'x');
    const evalConfig = write('eval.json', { index: 'i', out: 'o', datasets: [{ name: 'w', path: 'q.jsonl' }], systems: [{ name: 'v', agent: 'search-r1', policy: 'sim', select: 'vote', n: 'ten' }] });
    for (const [args, expected] of [
      [['run', '--config', write('typed.json', { policy: 'sim', index: 'i', dataset: 'd', out: 'o', 'max-turns': 'six' })], /--config .*typed\.json: "max-turns" expected an integer, got "six"/],
      [['run', '--policy', 'sim', '--index', 'i', '--dataset', 'd', '--out', file], /--out .*plain-file: is a file, not a folder/],
      [['run', '--policy', 'sim', '--index', 'i', '--dataset', 'd', '--out', 'o', '--retry-for', 'soon'], /--retry-for <duration>' argument 'soon' is invalid\. expected a duration/],
      [['eval', '--config', evalConfig], /eval\.json: "systems\[0\]\.n" expected number, received string/],
    ] as const) {
      const r = ragtrail(...args);
      assert.equal(r.status, 2, args.join(' ') + r.stderr);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, expected);
    }
  });
});
