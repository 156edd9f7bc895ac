import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { InputError } from '../../src/core/errors.js';
import { readJsonArray, readJsonl, readJsonRecords, readLines, writeJsonl } from '../../src/core/io.js';
import { Rng } from '../../src/core/rng.js';
import { collectAll, tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);
const file = (name: string, content: string | Buffer) => {
  const p = join(tmp.dir, name);
  writeFileSync(p, content);
  return p;
};

describe('readLines / readJsonl', () => {
  it('numbers lines, handles CRLF and gzip (by magic bytes, whatever the name)', async () => {
    const text = '{"a":1}\r\n\r\n{"a":2}\n';
    for (const p of [file('plain.jsonl', text), file('zipped.jsonl', gzipSync(text)), file('zipped.gz', gzipSync(text))]) {
      const rows = await collectAll(readJsonl(p));
      assert.deepEqual(rows.map((r) => [r.value, r.loc.line]), [[{ a: 1 }, 1], [{ a: 2 }, 3]]);
    }
    assert.deepEqual((await collectAll(readLines(file('l.txt', 'x\r\ny')))).map((l) => l.text), ['x', 'y']);
  });
  it('names file and line of invalid JSON', async () => {
    const p = file('bad.jsonl', '{"a":1}\n{"a":\n');
    await assert.rejects(collectAll(readJsonl(p)), (e: Error) => e instanceof InputError && e.message.startsWith(`${p}:2: invalid JSON`));
  });
  it('reports a missing file in one line', async () => {
    await assert.rejects(collectAll(readJsonl(join(tmp.dir, 'nope.jsonl'))), /nope\.jsonl: no such file/);
  });
});

describe('readJsonArray', () => {
  it('splits elements with tricky strings, nesting and scalars, with their start lines', async () => {
    const values = [{ s: 'a ] } [ { , "q" \\' }, [1, [2, { x: '\u00e9' }]], 'plain ] string', 42, null, true, { e: '' }];
    const p = file('arr.json', '[\n' + values.map((v) => JSON.stringify(v)).join(',\n') + '\n]\n');
    const got = await collectAll(readJsonArray(p));
    assert.deepEqual(got.map((g) => g.value), values);
    assert.deepEqual(got.map((g) => g.loc.line), [2, 3, 4, 5, 6, 7, 8]);
    assert.deepEqual(got.map((g) => g.loc.record), [1, 2, 3, 4, 5, 6, 7]);
  });
  it('matches JSON.parse on a multi-megabyte array whose elements straddle read chunks', async () => {
    const rng = new Rng(3);
    const values = Array.from({ length: 3000 }, (_, i) => ({ i, text: 'x"]}{['.repeat(rng.range(10, 200)), nested: [[i], { k: 'v' }] }));
    const text = JSON.stringify(values, null, 1);
    assert.ok(text.length > 2 * (1 << 20));
    const got = await collectAll(readJsonArray(file('big.json', gzipSync(text))));
    assert.deepEqual(got.map((g) => g.value), values);
  });
  it('rejects a truncated array and trailing content', async () => {
    await assert.rejects(collectAll(readJsonArray(file('trunc.json', '[{"a":1},\n{"a":'))), /not closed/);
    await assert.rejects(collectAll(readJsonArray(file('trail.json', '[1]\n[2]'))), /after the closing/);
  });
});

describe('readJsonRecords', () => {
  it('reads arrays, JSON Lines and a single pretty-printed object', async () => {
    assert.equal((await collectAll(readJsonRecords(file('a.json', '[{"a":1},{"a":2}]')))).length, 2);
    assert.equal((await collectAll(readJsonRecords(file('b.jsonl', '{"a":1}\n{"a":2}\n')))).length, 2);
    const one = await collectAll(readJsonRecords(file('c.json', '{\n  "answer": {"x": "y"}\n}\n')));
    assert.deepEqual(one.map((r) => r.value), [{ answer: { x: 'y' } }]);
  });
});

describe('writeJsonl', () => {
  it('round-trips through gzip and leaves no temporary file', async () => {
    const p = join(tmp.dir, 'out', 'rows.jsonl.gz');
    assert.equal(await writeJsonl(p, [{ a: 1 }, { b: 'é' }]), 2);
    assert.deepEqual((await collectAll(readJsonl(p))).map((r) => r.value), [{ a: 1 }, { b: 'é' }]);
    const { readdirSync } = await import('node:fs');
    assert.deepEqual(readdirSync(join(tmp.dir, 'out')), ['rows.jsonl.gz']);
  });
});
