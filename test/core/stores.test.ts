/** Crash safety of the two on-disk logs: the response cache and the per-question record log. */
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { AppendLog } from '../../src/core/append-log.js';
import { KvStore } from '../../src/core/kvstore.js';
import { tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);

describe('KvStore', () => {
  it('persists values and survives a partial last line', () => {
    const path = join(tmp.dir, 'kv.jsonl');
    const kv = KvStore.open(path);
    kv.set('a', { x: 1 });
    kv.set('b', 'é two');
    kv.close();
    appendFileSync(path, '{"k":"c","v":{"trunc'); // a crash mid-write
    const again = KvStore.open(path);
    assert.equal(again.damagedLines, 1);
    assert.deepEqual(again.get('a'), { x: 1 });
    assert.equal(again.get('b'), 'é two');
    assert.equal(again.get('c'), undefined);
    again.set('c', [3]);
    again.close();
    const third = KvStore.open(path);
    assert.deepEqual(third.get('c'), [3]);
    assert.equal(third.size, 3);
    third.close();
  });
  it('two handles on one file see their own writes and do not corrupt each other', () => {
    const path = join(tmp.dir, 'shared.jsonl');
    const [x, y] = [KvStore.open(path), KvStore.open(path)];
    for (let i = 0; i < 50; i++) {
      x.set(`x${i}`, i);
      y.set(`y${i}`, -i);
    }
    assert.equal(x.get('x49'), 49);
    assert.equal(y.get('y49'), -49);
    const z = KvStore.open(path);
    assert.equal(z.size, 100);
    assert.equal(z.damagedLines, 0);
  });
});

describe('AppendLog', () => {
  it('lists finished ids, cuts a partial last line, refuses duplicates', () => {
    const path = join(tmp.dir, 'run', 'trajectories.jsonl');
    const log = AppendLog.open<{ id: string; v: number }>(path);
    log.append({ id: 'q1', v: 1 });
    log.append({ id: 'q2', v: 2 });
    assert.throws(() => log.append({ id: 'q1', v: 3 }), /already in the log/);
    log.close();
    appendFileSync(path, '{"id":"q3","v":');
    const again = AppendLog.open<{ id: string; v: number }>(path);
    assert.equal(again.repairedBytes, 15);
    assert.deepEqual([again.has('q1'), again.has('q2'), again.has('q3')], [true, true, false]);
    again.append({ id: 'q3', v: 3 });
    again.close();
    assert.deepEqual(readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l).id), ['q1', 'q2', 'q3']);
  });
  it('names a complete line that is not JSON', () => {
    const path = join(tmp.dir, 'bad.jsonl');
    appendFileSync(path, '{"id":"a"}\nnot json\n');
    assert.throws(() => AppendLog.open(path), /bad\.jsonl:2: a complete line is not valid JSON/);
  });
});

describe('DirLock', () => {
  it('refuses a folder held by a live process and takes over a stale lock', async () => {
    const { DirLock } = await import('../../src/core/lock.js');
    const { writeFileSync, existsSync } = await import('node:fs');
    const path = join(tmp.dir, '.lock');
    writeFileSync(path, String(process.ppid)); // our parent is alive
    assert.throws(() => DirLock.acquire(path, 'run folder X'), new RegExp(`run folder X is in use by process ${process.ppid}`));
    writeFileSync(path, '2147483646'); // no such process
    const notes: string[] = [];
    const lock = DirLock.acquire(path, 'run folder X', (l) => notes.push(l));
    assert.equal(JSON.parse(readFileSync(path, 'utf8')).pid, process.pid);
    assert.equal(notes.length, 1);
    lock.release();
    assert.equal(existsSync(path), false);
  });
});
