/**
 * An index names its corpus relative to the index folder (issue 46), so that it works from any
 * working folder and moves with its corpus; manifests written before, relative to the folder the
 * build ran in, are still read, from there or from the index's own folders.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cliRunner, tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);
const a = join(tmp.dir, 'a');
const b = join(tmp.dir, 'b');
const inA = cliRunner(a).run;
const inB = cliRunner(b).run;
const corpus = join(a, 'world', 'corpus.jsonl');
const manifestPath = join(a, 'idx', 'index.json');

before(() => {
  mkdirSync(a);
  mkdirSync(b);
  assert.equal(inA('world', '--seed', '3', '--entities', '400', '--out', 'world').status, 0);
  const built = inA('index', 'build', '--corpus', 'world/corpus.jsonl', '--out', 'idx');
  assert.equal(built.status, 0, built.stderr);
  writeFileSync(join(b, 'sft.jsonl'), '{"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]}\n');
});

/** The corpus `train --model tiny` hands the tokenizer when run from `b` with `index`. */
function tinyCorpus(index: string): string {
  const r = inB('train', '--engine', 'trl', '--algo', 'sft', '--model', 'tiny', '--data', 'sft.jsonl', '--index', index, '--out', 'trl', '--print-only');
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(readFileSync(join(b, 'trl', 'trl-config.json'), 'utf8')).tiny.corpus;
}

const infoLine = (run: typeof inA, index: string) => run('index', 'info', index).stdout.split('\n')[0]!;

describe('an index used from another folder', () => {
  it('records its corpus relative to the index folder', () => {
    const m = JSON.parse(readFileSync(manifestPath, 'utf8'));
    assert.equal(m.corpus, join('..', 'world', 'corpus.jsonl'));
    assert.equal(m.corpusBase, 'index');
  });

  it('finds that corpus from another working folder: train, index info, and a re-build that resumes', () => {
    assert.equal(tinyCorpus('../a/idx'), corpus);
    assert.match(infoLine(inB, '../a/idx'), /passages from \.\.\/a\/world\/corpus\.jsonl \(built/);
    const again = inB('index', 'build', '--corpus', '../a/world/corpus.jsonl', '--out', '../a/idx');
    assert.equal(again.status, 0, again.stderr);
    const other = inB('index', 'build', '--corpus', 'sft.jsonl', '--out', '../a/idx');
    assert.equal(other.status, 2);
    assert.match(other.stderr, new RegExp(`already holds an index of ${corpus.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    const search = inB('search', '--index', '../a/idx', 'spouse');
    assert.equal(search.status, 0, search.stderr);
  });

  it('moves with its corpus', () => {
    const c = join(tmp.dir, 'c');
    cpSync(a, c, { recursive: true });
    assert.equal(tinyCorpus('../c/idx'), join(c, 'world', 'corpus.jsonl'));
  });

  it('an older manifest (relative to where the build ran) is read from there, and from elsewhere through the index folder', () => {
    const m = JSON.parse(readFileSync(manifestPath, 'utf8'));
    delete m.corpusBase;
    delete m.files; // those manifests had no checksums either
    delete m.checksum;
    m.corpus = 'world/corpus.jsonl';
    writeFileSync(manifestPath, JSON.stringify(m));
    assert.match(infoLine(inA, 'idx'), /passages from world\/corpus\.jsonl \(built/);
    assert.equal(tinyCorpus('../a/idx'), corpus);
    assert.match(infoLine(inB, '../a/idx'), /passages from \.\.\/a\/world\/corpus\.jsonl \(built/);
  });
});
