import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Rng } from '../../src/core/rng.js';

describe('Rng', () => {
  it('is deterministic per seed and differs across seeds', () => {
    const a = Array.from({ length: 5 }, ((r) => () => r.nextUint32())(new Rng(42)));
    const b = Array.from({ length: 5 }, ((r) => () => r.nextUint32())(new Rng(42)));
    const c = Array.from({ length: 5 }, ((r) => () => r.nextUint32())(new Rng(43)));
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
  });
  it('draws uniform integers in range with roughly equal frequencies', () => {
    const r = new Rng('uniform');
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 40_000; i++) counts[r.int(4)]!++;
    for (const c of counts) assert.ok(Math.abs(c - 10_000) < 400, `count ${c}`);
  });
  it('weighted picks follow the weights', () => {
    const r = new Rng(1);
    let ones = 0;
    for (let i = 0; i < 10_000; i++) ones += r.weighted([1, 3]);
    assert.ok(Math.abs(ones / 10_000 - 0.75) < 0.02);
  });
  it('derived streams are independent of the parent stream', () => {
    assert.equal(Rng.derive(5, 'x').nextUint32(), Rng.derive(5, 'x').nextUint32());
    assert.notEqual(Rng.derive(5, 'x').nextUint32(), Rng.derive(5, 'y').nextUint32());
  });
});
