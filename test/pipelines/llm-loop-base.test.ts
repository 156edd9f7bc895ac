/** The LLM loop's cached warm-up base: keyed by content and settings, stored whole, copied into a run. */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { baseKey, copyBaseInto, findBase, storeBase } from '../../src/pipelines/llm-loop-base.js';

describe('llm-loop warm-up base cache', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ragtrail-base-'));
  const corpus = join(dir, 'corpus.jsonl');
  writeFileSync(corpus, '{"id":"p1","title":"A","text":"a"}\n');

  it('the key changes with a file byte or a setting, and with nothing else', () => {
    const k = baseKey([corpus], { hidden: 128 });
    assert.match(k, /^[0-9a-f]{24}$/);
    assert.equal(baseKey([corpus], { hidden: 128 }), k);
    assert.notEqual(baseKey([corpus], { hidden: 64 }), k);
    const other = join(dir, 'other.jsonl');
    writeFileSync(other, '{"id":"p1","title":"A","text":"b"}\n');
    assert.notEqual(baseKey([other], { hidden: 128 }), k);
  });

  it('a stored base is found by its key and copied into a run folder; an interrupted store is not a base', () => {
    const run = join(dir, 'run', 'models');
    for (const m of ['warmup', 'quote']) {
      mkdirSync(join(run, m), { recursive: true });
      writeFileSync(join(run, m, 'model.safetensors'), m);
    }
    const cache = join(dir, 'cache');
    mkdirSync(join(cache, 'half'), { recursive: true }); // no info.json: a store killed halfway
    assert.equal(findBase(cache, 'half'), undefined);
    storeBase(cache, run, { key: 'k1', seconds: { 'copy warm-up': 250, 'quote warm-up': 310 }, builtAt: '2026-11-24T08:00:00Z', models: ['warmup', 'quote'] });
    assert.deepEqual(readdirSync(cache).sort(), ['half', 'k1'], 'no temporary folder left behind');
    const found = findBase(cache, 'k1');
    assert.ok(found);
    assert.deepEqual(found.info.seconds, { 'copy warm-up': 250, 'quote warm-up': 310 });
    const next = join(dir, 'next', 'models');
    copyBaseInto(found, next);
    assert.equal(readFileSync(join(next, 'quote', 'model.safetensors'), 'utf8'), 'quote');
    assert.equal(readFileSync(join(next, 'warmup', 'model.safetensors'), 'utf8'), 'warmup');
    // A second store of the same key keeps the first.
    writeFileSync(join(run, 'quote', 'model.safetensors'), 'changed');
    storeBase(cache, run, { key: 'k1', seconds: {}, builtAt: 'later', models: ['warmup', 'quote'] });
    assert.equal(readFileSync(join(cache, 'k1', 'quote', 'model.safetensors'), 'utf8'), 'quote');
    assert.ok(!existsSync(join(cache, `.tmp-k1-${process.pid}`)));
  });
});
