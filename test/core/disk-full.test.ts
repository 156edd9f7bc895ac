/**
 * A full disk (issue 49), through the write seam of core/disk.ts (writes fail as a full disk's do: what
 * fits lands, then ENOSPC), so it runs where no small file system can be mounted; test/cli/
 * reliability-cli.test.ts does the same on a real tmpfs. Every writer takes back what landed: no torn
 * record, no temporary sibling, no half-built index; the error is one line naming the file, the folder
 * and the space needed; and once space is back the same call completes.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, afterEach, describe, it } from 'node:test';
import { AppendLog } from '../../src/core/append-log.js';
import { DiskFullError, limitWritesForTest } from '../../src/core/disk.js';
import { writeJsonAtomicSync } from '../../src/core/io.js';
import { KvStore } from '../../src/core/kvstore.js';
import { buildIndex } from '../../src/retrieval/index-dir.js';
import { tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);
afterEach(() => limitWritesForTest(undefined));

const record = (i: number) => ({ id: `q${i}`, text: 'x'.repeat(100) });
const lineBytes = (i: number) => Buffer.byteLength(JSON.stringify(record(i)) + '\n');
const diskFull = (file: string) => (e: unknown) => {
  assert.ok(e instanceof DiskFullError, String(e));
  assert.match(e.message, new RegExp(`^no space left on device writing ${file.replace(/[.\\/]/g, '\\$&')}: needs about \\d+(\\.\\d)? (bytes|KB|MB|GB) more, \\d+(\\.\\d)? (bytes|KB|MB|GB) free in ${tmp.dir.replace(/[.\\/]/g, '\\$&')}.* \\(free space there and re-run the same command to resume\\)$`));
  return true;
};

describe('a full disk', () => {
  it('AppendLog: the record that does not fit leaves no part of itself; after space is freed the log goes on', () => {
    const path = join(tmp.dir, 'trajectories.jsonl');
    const log = AppendLog.open<ReturnType<typeof record>>(path, { total: 10 });
    for (let i = 0; i < 3; i++) log.append(record(i));
    const before = readFileSync(path, 'utf8');
    limitWritesForTest(50); // half a record fits
    assert.throws(() => log.append(record(3)), diskFull(path));
    assert.equal(readFileSync(path, 'utf8'), before, 'the 50 bytes that landed were taken back');
    assert.equal(log.has('q3'), false);
    limitWritesForTest(undefined);
    log.append(record(3));
    log.close();
    const again = AppendLog.open(path);
    assert.equal(again.repairedBytes, 0);
    assert.equal(again.size, 4);
    again.close();
  });

  it('AppendLog: the space needed is the records still to come at the average size so far', () => {
    const path = join(tmp.dir, 'estimate.jsonl');
    const log = AppendLog.open<ReturnType<typeof record>>(path, { total: 1_000_000 });
    log.append(record(0));
    limitWritesForTest(0);
    // 999,999 records still to come (this one among them), each the size of the first.
    const err = (() => {
      try {
        log.append(record(1));
      } catch (e) {
        return e as DiskFullError;
      }
      assert.fail('no error');
    })();
    log.close();
    assert.equal(err.moreBytes, 999_999 * lineBytes(1)); // nothing free on the seam's disk
    assert.match(err.message, /: needs about 116\.3 MB more, 0 bytes free in /);
  });

  it('KvStore (the LLM cache): an entry that does not fit is taken back; the store reopens whole', () => {
    const path = join(tmp.dir, 'cache.jsonl');
    const kv = KvStore.open(path);
    kv.set('a', { reply: 'x'.repeat(100) });
    const before = readFileSync(path, 'utf8');
    limitWritesForTest(30);
    assert.throws(() => kv.set('b', { reply: 'y'.repeat(100) }), diskFull(path));
    assert.equal(readFileSync(path, 'utf8'), before);
    limitWritesForTest(undefined);
    kv.set('c', 1);
    kv.close();
    const again = KvStore.open(path);
    assert.equal(again.damagedLines, 0);
    assert.deepEqual([again.has('a'), again.has('b'), again.get('c')], [true, false, 1]);
    again.close();
  });

  it('state files: the old file stays and no temporary sibling is left', () => {
    const path = join(tmp.dir, 'state', 'run.json');
    writeJsonAtomicSync(path, { version: 1 });
    limitWritesForTest(5);
    assert.throws(() => writeJsonAtomicSync(path, { version: 2, padding: 'z'.repeat(200) }), diskFull(path));
    assert.deepEqual(JSON.parse(readFileSync(path, 'utf8')), { version: 1 });
    assert.deepEqual(readdirSync(join(tmp.dir, 'state')), ['run.json']);
  });

  it('index build: a build that runs out of space leaves no index and no partial folder; the re-run builds it', async () => {
    const corpus = join(tmp.dir, 'corpus.jsonl');
    writeFileSync(corpus, Array.from({ length: 400 }, (_, i) => JSON.stringify({ id: `p${i}`, title: `T${i}`, text: `passage ${i} about topic ${i % 17} and ${'words '.repeat(20)}` })).join('\n') + '\n');
    const out = join(tmp.dir, 'idx');
    limitWritesForTest(20_000); // the store alone needs more
    await assert.rejects(
      buildIndex(corpus, out, { quiet: true }),
      (e: unknown) => e instanceof DiskFullError && /^no space left on device building the index .*idx: needs about [\d.]+ (KB|MB|GB) more, .* \(free space there and re-run the same command to resume\)$/.test(e.message),
    );
    assert.equal(existsSync(out), false);
    assert.equal(existsSync(`${out}.partial`), false);
    limitWritesForTest(undefined);
    const m = await buildIndex(corpus, out, { quiet: true });
    assert.equal(m.passages, 400);
  });
});
