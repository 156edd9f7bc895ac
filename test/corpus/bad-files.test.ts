/** Bad input files each get one clear error (or, with skipInvalid, a counted skip): real FlashRAG lines, damaged in a temp folder. */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { InputError } from '../../src/core/errors.js';
import { readCorpus } from '../../src/corpus/corpus.js';
import { loadDataset, loadDatasetAll } from '../../src/corpus/dataset.js';
import { collectAll, data, tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);
const bamboogle = readFileSync(data('flashrag', 'bamboogle_test.jsonl'), 'utf8').trim().split('\n');

describe('invalid UTF-8', () => {
  // Line 3 as a Latin-1 editor would save it: "é" as the single byte 0xE9.
  const lines = bamboogle.slice(0, 5).map((l) => Buffer.from(l + '\n'));
  const [head, tail] = bamboogle[2]!.split('"question": "') as [string, string];
  lines[2] = Buffer.concat([Buffer.from(`${head}"question": "caf`), Buffer.from([0xe9]), Buffer.from(` ${tail}\n`)]);
  const path = join(tmp.dir, 'latin1.jsonl');
  writeFileSync(path, Buffer.concat(lines));

  it('a dataset line that is not UTF-8 is an error naming file:line, not U+FFFD', async () => {
    await assert.rejects(collectAll(loadDataset(path)), (e: Error) => e instanceof InputError && e.message.startsWith(`${path}:3: invalid UTF-8`) && /iconv/.test(e.message));
  });
  it('with skipInvalid it is skipped and counted', async () => {
    const { questions, invalid } = await loadDatasetAll(path, { skipInvalid: true });
    assert.equal(questions.length, 4);
    assert.ok(questions.every((q) => !q.question.includes('\uFFFD')));
    assert.deepEqual(invalid.map((e) => e.message.split(': ')[0]), [`${path}:3`]);
  });
  it('a corpus line that is not UTF-8 too', async () => {
    const corpus = join(tmp.dir, 'latin1-corpus.jsonl');
    writeFileSync(corpus, Buffer.concat([Buffer.from('{"id":"1","title":"A","text":"ok"}\n{"id":"2","title":"B","text":"caf'), Buffer.from([0xe9]), Buffer.from('"}\n')]));
    await assert.rejects(collectAll(readCorpus(corpus)), new RegExp(`latin1-corpus\\.jsonl:2: invalid UTF-8`));
    const skipped: InputError[] = [];
    assert.deepEqual((await collectAll(readCorpus(corpus, { skipInvalid: true, onInvalid: (e) => skipped.push(e) }))).map((p) => p.id), ['1']);
    assert.equal(skipped.length, 1);
  });
});

describe('passage ids and answer lists', () => {
  it('a repeated passage id is an error naming both the id and the line; skipInvalid keeps the first', async () => {
    const corpus = join(tmp.dir, 'dup.jsonl');
    writeFileSync(corpus, ['{"id":"7","title":"A","text":"first"}', '{"id":"8","title":"B","text":"b"}', '{"id":"7","title":"C","text":"again"}', '{"id":"doc-x","title":"D","text":"d"}', '{"id":"doc-x","title":"E","text":"e"}'].join('\n'));
    await assert.rejects(collectAll(readCorpus(corpus)), /dup\.jsonl:3: field "id" "7" repeats an earlier passage's id/);
    const skipped: InputError[] = [];
    const kept = await collectAll(readCorpus(corpus, { skipInvalid: true, onInvalid: (e) => skipped.push(e) }));
    assert.deepEqual(kept.map((p) => p.text), ['first', 'b', 'd']);
    assert.deepEqual(skipped.map((e) => e.message.split(': ')[0]), [`${corpus}:3`, `${corpus}:5`]);
  });
  it('golden_answers: 42 is a malformed record, not ["42"]', async () => {
    const rec = JSON.parse(bamboogle[0]!) as Record<string, unknown>;
    const path = join(tmp.dir, 'scalar-answer.jsonl');
    writeFileSync(path, JSON.stringify({ ...rec, golden_answers: 42 }) + '\n');
    await assert.rejects(collectAll(loadDataset(path)), /scalar-answer\.jsonl:1: field "golden_answers" must be a list of answer strings, got number 42 \(write it as a list, e\.g\. \["42"\]\)/);
    // A list of numbers is still fine (PopQA-style years), and HotpotQA's single-string "answer" too.
    writeFileSync(path, JSON.stringify({ ...rec, golden_answers: [1900] }) + '\n');
    assert.deepEqual((await collectAll(loadDataset(path)))[0]!.answers, ['1900']);
  });
});
