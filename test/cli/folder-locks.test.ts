/**
 * One writer per output folder, for the commands that write a whole folder tree rather than records:
 * `index build` (its lock sits beside the folder, which is built as DIR.partial and moved in) and
 * `pipeline` / `demo` (OUT/.lock). A folder held by a live process is refused with one line naming
 * it; once released, the same command runs.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DirLock } from '../../src/core/lock.js';
import { cliRunner, tempDir } from '../helpers.js';

const tmp = tempDir();
const { run: ragtrail } = cliRunner(tmp.dir);
const world = join(tmp.dir, 'world');
after(() => tmp.cleanup());
before(() => assert.equal(ragtrail('world', '--seed', '5', '--entities', '300', '--out', world).status, 0));

const heldBy = (what: string) => new RegExp(`^ragtrail: ${what} is in use by process ${process.pid} on this host .*\\(wait for it to finish, or stop it \\(kill ${process.pid}\\) and re-run\\)\\n$`);

describe('folder locks', () => {
  it('index build refuses a folder another process is building, then builds it once released', () => {
    const out = join(tmp.dir, 'index');
    const lock = DirLock.acquire(`${resolve(out)}.lock`, 'index folder (held by the test)');
    const refused = ragtrail('index', 'build', '--corpus', join(world, 'corpus.jsonl'), '--out', 'index');
    lock.release();
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, heldBy('index folder index'));
    assert.equal(existsSync(out), false, 'nothing built while refused');
    const built = ragtrail('index', 'build', '--corpus', join(world, 'corpus.jsonl'), '--out', 'index');
    assert.equal(built.status, 0, built.stderr);
    assert.equal(existsSync(join(out, 'index.json')), true);
    assert.equal(existsSync(`${out}.lock`), false, 'the lock is released');
  });

  it('pipeline refuses a folder another pipeline holds', () => {
    const out = join(tmp.dir, 'pipe');
    mkdirSync(out);
    const lock = DirLock.acquire(join(out, '.lock'), 'pipeline folder (held by the test)');
    const refused = ragtrail('pipeline', '--recipe', 'comparison', '--seeds', '0', '--entities', '300', '--train-questions', '4', '--test-questions', '4', '--out', 'pipe');
    lock.release();
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, heldBy('pipeline folder pipe'));
    assert.equal(existsSync(join(out, 'seed-0')), false, 'no stage ran');
  });
});
