/** Question selection (--limit / --tail / --sample / --val-fraction): hand-checked picks, order kept, seeds fixed, bad combinations refused. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Question } from '../../src/core/types.js';
import { InputError } from '../../src/core/errors.js';
import { Rng } from '../../src/core/rng.js';
import { checkSelection, describeSelection, inValidationPart, selectQuestions } from '../../src/corpus/select.js';

const qs: Question[] = Array.from({ length: 10 }, (_, i) => ({ id: `q${i}`, question: `Question ${i}?`, answers: [String(i)] }));
const ids = (x: Question[]) => x.map((q) => q.id);

describe('selectQuestions', () => {
  it('first N, last N, and all when N exceeds the set', () => {
    assert.deepEqual(ids(selectQuestions(qs, { limit: 3 })), ['q0', 'q1', 'q2']);
    assert.deepEqual(ids(selectQuestions(qs, { tail: 3 })), ['q7', 'q8', 'q9']);
    assert.deepEqual(ids(selectQuestions(qs, { tail: 30 })), ids(qs));
    assert.deepEqual(ids(selectQuestions(qs, { sample: 30 })), ids(qs));
  });

  it('a seeded sample is the first N of the seed\'s Fisher–Yates order, kept in file order; another seed draws another', () => {
    const order = new Rng('sample/7').shuffle(qs.map((_, i) => i));
    const expected = order.slice(0, 4).sort((a, b) => a - b).map((i) => `q${i}`);
    assert.deepEqual(ids(selectQuestions(qs, { sample: 4, seed: 7 })), expected);
    assert.deepEqual(ids(selectQuestions(qs, { sample: 4, seed: 7 })), expected, 'deterministic');
    const draws = new Set([1, 2, 3, 4, 5].map((seed) => ids(selectQuestions(qs, { sample: 4, seed })).join()));
    assert.ok(draws.size > 1);
  });

  it('the val and train parts partition the set by a hash of each id, whatever the file order', () => {
    const val = ids(selectQuestions(qs, { valFraction: 0.3, valPart: 'val', seed: 2 }));
    const train = ids(selectQuestions(qs, { valFraction: 0.3, valPart: 'train', seed: 2 }));
    assert.deepEqual([...val, ...train].sort(), ids(qs).sort());
    assert.deepEqual(val, ids(qs).filter((id) => inValidationPart(id, 0.3, 2)));
    assert.deepEqual(ids(selectQuestions([...qs].reverse(), { valFraction: 0.3, valPart: 'val', seed: 2 })), [...val].reverse());
    // A sample drawn within the part.
    assert.ok(ids(selectQuestions(qs, { valFraction: 0.5, valPart: 'train', sample: 2, seed: 2 })).every((id) => !inValidationPart(id, 0.5, 2)));
  });

  it('refuses two counts, a fraction outside (0, 1), and a fraction without a part (or a part without one)', () => {
    const message = (sel: Parameters<typeof checkSelection>[0]) => {
      try {
        checkSelection(sel);
      } catch (e) {
        assert.ok(e instanceof InputError);
        return e.message;
      }
      return 'accepted';
    };
    assert.equal(message({ limit: 3, tail: 2 }), '--limit and --tail both choose how many questions (give one of --limit (first N), --tail (last N) or --sample (random N))');
    assert.match(message({ valFraction: 1 }), /^--val-fraction 1 must be between 0 and 1/);
    assert.match(message({ valFraction: 0.1 }), /^--val-fraction needs --val-part train or val/);
    assert.match(message({ valPart: 'val' }), /^--val-part without --val-fraction/);
    assert.equal(message({ sample: 5, seed: 1, valFraction: 0.2, valPart: 'val' }), 'accepted');
  });

  it('describes what it took', () => {
    assert.equal(describeSelection({ sample: 4, seed: 7 }, 4, 10), '4 questions: a random 4 (seed 7) of 10');
    assert.equal(describeSelection({ tail: 2, valFraction: 0.5, valPart: 'val' }, 2, 10), '2 questions: the last 2 of the validation part (--val-fraction 0.5, seed 0) of 10');
  });
});
