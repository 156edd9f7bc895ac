import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IdSet } from '../../src/corpus/corpus.js';

test('IdSet refuses repeated string ids across its Sets (a 21M build with string ids overflowed one Set)', () => {
  const ids = new IdSet(3); // 3 per Set: 10 ids span 4 Sets
  for (let i = 0; i < 10; i++) assert.equal(ids.add(`p-${i}`), true);
  for (let i = 0; i < 10; i++) assert.equal(ids.add(`p-${i}`), false, `p-${i} repeats`);
  assert.equal(ids.add('p-10'), true);
  assert.equal(ids.add('7'), true); // numeric ids go in the bitset
  assert.equal(ids.add('7'), false);
});

// 30 s and ~1.5 GB on the 2-core machine: run with RAGTRAIL_SLOW_TESTS=1.
test('IdSet holds more string ids than one JavaScript Set can (2^24)', { timeout: 120_000, skip: process.env['RAGTRAIL_SLOW_TESTS'] === '1' ? false : 'slow (30 s, ~1.5 GB): set RAGTRAIL_SLOW_TESTS=1 to run it' }, () => {
  const ids = new IdSet();
  const n = 2 ** 24 + 10;
  for (let i = 0; i < n; i++) if (!ids.add(`s${i}`)) assert.fail(`s${i} reported as repeated`);
  assert.equal(ids.add('s0'), false);
  assert.equal(ids.add(`s${n - 1}`), false);
  assert.equal(ids.add(`s${n}`), true);
});
