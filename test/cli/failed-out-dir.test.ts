/**
 * A command that fails takes back the folders it created and left empty (issue 46): no bare `--out`
 * folder after a typo. A folder that existed before, or one the command already wrote into, stays.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cliRunner, tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);
const { run: ragtrail } = cliRunner(tmp.dir);
const world = join(tmp.dir, 'world');
const questions = join(world, 'questions.jsonl');
const index = join(tmp.dir, 'index');
const plugin = join(tmp.dir, 'failing.mjs');

before(() => {
  assert.equal(ragtrail('world', '--seed', '3', '--entities', '400', '--out', world).status, 0);
  assert.equal(ragtrail('index', 'build', '--corpus', join(world, 'corpus.jsonl'), '--out', index).status, 0);
  // A policy whose every step fails: the run has written its run.json when the first episode fails.
  writeFileSync(plugin, `export default (api) => api.registerPolicy('failing', (_a, protocol) => ({ name: 'failing', kind: 'custom', protocol, async propose() { throw new Error('no step today'); } }));\n`);
});

describe('a failed run', () => {
  const cases: [string, string[], RegExp][] = [
    ['a missing index', ['--policy', 'sim', '--index', join(tmp.dir, 'nope'), '--dataset', questions], /not a ragtrail index/],
    ['a folder that is not an index', ['--policy', 'sim', '--index', world, '--dataset', questions], /not a ragtrail index/],
    ['a missing dataset', ['--policy', 'sim', '--index', index, '--dataset', join(tmp.dir, 'nope.jsonl')], /no such file/],
    ['--select prm without --prm', ['--policy', 'sim', '--select', 'prm', '--index', index, '--dataset', questions], /--select prm needs --prm/],
    ['a missing PRM file', ['--policy', 'sim', '--select', 'prm', '--prm', join(tmp.dir, 'nope.json'), '--index', index, '--dataset', questions], /not a readable PRM file/],
    ['an unknown split', ['--policy', 'sim', '--index', index, '--dataset', questions, '--split', 'val'], /no questions in split "val"/],
    ['an empty shard', ['--policy', 'sim', '--index', index, '--dataset', questions, '--limit', '3', '--shard', '9/10'], /no question .* falls in this shard/],
    ['dense search on a BM25 index', ['--policy', 'sim', '--index', index, '--dataset', questions, '--retrieval', 'dense'], /has no dense index/],
  ];
  for (const [what, args, error] of cases) {
    it(`on ${what} leaves no --out folder, nor the parent it created`, () => {
      const parent = join(tmp.dir, `new-${what.replace(/\W+/g, '-')}`);
      const r = ragtrail('run', ...args, '--out', join(parent, 'run'), '--quiet');
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, error);
      assert.ok(!existsSync(parent), `${parent} is left behind`);
    });
  }

  it('keeps a folder that existed before, empty or not', () => {
    const empty = join(tmp.dir, 'existing-empty');
    const full = join(tmp.dir, 'existing-full');
    mkdirSync(empty);
    mkdirSync(full);
    writeFileSync(join(full, 'notes.txt'), 'mine\n');
    for (const out of [empty, full]) {
      const r = ragtrail('run', '--policy', 'sim', '--index', join(tmp.dir, 'nope'), '--dataset', questions, '--out', join(out, 'run'), '--quiet');
      assert.equal(r.status, 2, r.stderr);
      assert.ok(existsSync(out));
      assert.ok(!existsSync(join(out, 'run')));
    }
    assert.deepEqual(readdirSync(full), ['notes.txt']);
  });

  it('keeps a folder it created once something is written in it', () => {
    const out = join(tmp.dir, 'written', 'run');
    const r = ragtrail('--plugin', plugin, 'run', '--policy', 'failing', '--index', index, '--dataset', questions, '--limit', '2', '--out', out, '--quiet');
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /no step today/);
    assert.deepEqual(readdirSync(out).sort(), ['run.json', 'trajectories.jsonl']);
  });

  it('a run that succeeds keeps its folder (and annotate fails as cleanly)', () => {
    const ok = ragtrail('run', '--policy', 'sim', '--index', index, '--dataset', questions, '--limit', '2', '--out', join(tmp.dir, 'ok', 'run'), '--quiet');
    assert.equal(ok.status, 0, ok.stderr);
    assert.ok(existsSync(join(tmp.dir, 'ok', 'run', 'summary.json')));
    const bad = ragtrail('annotate', '--policy', 'sim', '--index', join(tmp.dir, 'nope'), '--dataset', questions, '--out', join(tmp.dir, 'ann', 'out'));
    assert.equal(bad.status, 2, bad.stderr);
    assert.ok(!existsSync(join(tmp.dir, 'ann')));
  });
});
