/** Index folders under damage: a build that fails leaves nothing behind; damaged files are named with the fix. */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InputError } from '../../src/core/errors.js';
import { generateWorld, writeWorld } from '../../src/corpus/world/index.js';
import { buildIndex, openRetriever, readManifest } from '../../src/retrieval/index-dir.js';
import { tempDir } from '../helpers.js';

const tmp = tempDir();
const corpus = join(tmp.dir, 'world', 'corpus.jsonl');
before(async () => writeWorld(join(tmp.dir, 'world'), generateWorld({ seed: 3, entities: 400, questions: 10 })));
after(tmp.cleanup);

describe('index builds', () => {
  it('a corpus that fails on its last line leaves no index folder and no partial one', async () => {
    const lines = readFileSync(corpus, 'utf8').trim().split('\n');
    const bad = join(tmp.dir, 'bad-corpus.jsonl');
    writeFileSync(bad, [...lines, '{"id": "x", "title": "T"'].join('\n') + '\n');
    const out = join(tmp.dir, 'failed-index');
    await assert.rejects(buildIndex(bad, out, { quiet: true }), new RegExp(`bad-corpus\\.jsonl:${lines.length + 1}: invalid JSON`));
    assert.ok(!existsSync(out), 'no partial index');
    assert.ok(!existsSync(`${out}.partial`));
    await assert.rejects(openRetriever(out), /not a ragtrail index|no such file/);
  });

  it('repeated passage ids stop the build; skipInvalid indexes the rest and records the count', async () => {
    const lines = readFileSync(corpus, 'utf8').trim().split('\n');
    const dup = join(tmp.dir, 'dup-corpus.jsonl');
    writeFileSync(dup, [...lines, lines[0]!, lines[1]!].join('\n') + '\n');
    await assert.rejects(buildIndex(dup, join(tmp.dir, 'dup-index'), { quiet: true }), /repeats an earlier passage's id/);
    assert.ok(!existsSync(join(tmp.dir, 'dup-index', 'index.json')));
    const skipped: InputError[] = [];
    const m = await buildIndex(dup, join(tmp.dir, 'dup-index'), { quiet: true, skipInvalid: true, onInvalid: (e) => skipped.push(e) });
    assert.equal(m.passages, lines.length);
    assert.equal(m.skippedRecords, 2);
    assert.equal(skipped.length, 2);
  });
});

describe('damaged index files', () => {
  let index = '';
  before(async () => {
    index = join(tmp.dir, 'index');
    await buildIndex(corpus, index, { quiet: true });
  });

  it('writes index.json atomically (no temporary file left), names a torn one with the fix, and --force repairs it', async () => {
    assert.deepEqual(readdirSync(index).filter((f) => f.includes('.tmp')), []);
    const manifest = readFileSync(join(index, 'index.json'));
    for (const [content, why] of [['', /the file is empty/], ['{"format": "ragtrail-index", "vers', /not valid JSON/]] as const) {
      writeFileSync(join(index, 'index.json'), content);
      assert.throws(() => readManifest(index), (e: Error) => e instanceof InputError && e.message.startsWith(`${join(index, 'index.json')}: `) && why.test(e.message) && /index build --force/.test(e.message));
    }
    // --force, the fix the message names, works on the damaged folder.
    writeFileSync(join(index, 'index.json'), '');
    assert.equal((await buildIndex(corpus, index, { quiet: true, force: true })).passages, JSON.parse(manifest.toString()).passages);
  });

  it('--out naming a file is refused before any work', async () => {
    const file = join(tmp.dir, 'not-a-folder');
    writeFileSync(file, 'x');
    await assert.rejects(buildIndex(corpus, file, { quiet: true }), /--out .*not-a-folder: is a file, not a folder/);
  });

  it('a truncated docs.off or docs.jsonl is named on open, not "document N is not in the store" later', async () => {
    // In an index from before checksums (index-checksums.test.ts has the others), where only the store's own checks see it.
    const { files: _files, checksum: _checksum, ...older } = readManifest(index);
    writeFileSync(join(index, 'index.json'), JSON.stringify(older));
    const off = join(index, 'docs.off');
    const saved = readFileSync(off);
    truncateSync(off, saved.length - 8 * 10);
    await assert.rejects(openRetriever(index), (e: Error) => e instanceof InputError && /docs\.off: holds \d+ passages, index\.json says \d+ \(truncated\?\)/.test(e.message));
    truncateSync(off, saved.length - 3);
    await assert.rejects(openRetriever(index), /docs\.off: truncated \(\d+ bytes, not a whole number of 8-byte offsets\)/);
    writeFileSync(off, saved);
    const docs = join(index, 'docs.jsonl');
    truncateSync(docs, statSync(docs).size - 100);
    await assert.rejects(openRetriever(index), /docs\.jsonl: \d+ bytes, but docs\.off ends at \d+ \(one of them is truncated\)/);
  });
});
