/**
 * The limiter's scheduling: lower priority first, then arrival order; and drainPriority, which lets the
 * last units of a job (those running once nothing is left to start) advance together.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { drainPriority, Limiter, withPriority } from '../../src/core/limiter.js';

describe('Limiter', () => {
  it('starts waiting tasks lowest priority first, then in arrival order', async () => {
    const limiter = new Limiter(1);
    const order: string[] = [];
    let release!: () => void;
    const first = limiter.run(() => new Promise<void>((r) => (release = r)));
    const tasks = [
      withPriority(2, () => limiter.run(async () => void order.push('p2 a'))),
      withPriority(1, () => limiter.run(async () => void order.push('p1 a'))),
      withPriority(2, () => limiter.run(async () => void order.push('p2 b'))),
      withPriority(1, () => limiter.run(async () => void order.push('p1 b'))),
    ];
    release();
    await Promise.all([first, ...tasks]);
    assert.deepEqual(order, ['p1 a', 'p1 b', 'p2 a', 'p2 b']);
  });
});

describe('drainPriority', () => {
  it('is the index, except that the last inFlight units share one priority', () => {
    assert.deepEqual(Array.from({ length: 10 }, (_, i) => drainPriority(i, 10, 4)), [0, 1, 2, 3, 4, 5, 6, 6, 6, 6]);
  });
  it('gives every unit the same priority when all run at once', () => {
    assert.deepEqual(Array.from({ length: 5 }, (_, i) => drainPriority(i, 5, 8)), [0, 0, 0, 0, 0]);
  });
});
