import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type CorpusBuildStats, corpusFromQuestions, readCorpus, splitContents, writeCorpus } from '../../src/corpus/corpus.js';
import { loadDataset } from '../../src/corpus/dataset.js';
import { collectAll, data, tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);

describe('corpus files', () => {
  it("parses FlashRAG's contents: quoted title line, then text", () => {
    assert.deepEqual(splitContents('"Aaron Aaron"\nAaron Aaron is a musician.'), { title: 'Aaron Aaron', text: 'Aaron Aaron is a musician.' });
    assert.deepEqual(splitContents('Unquoted\nBody'), { title: 'Unquoted', text: 'Body' });
    assert.deepEqual(splitContents('no title line'), { title: '', text: 'no title line' });
  });
  it('writes and reads both layouts, and DPR TSV', async () => {
    const passages = [{ id: '1', title: 'A "quoted" title', text: 'Text one.' }, { id: '2', title: 'B', text: 'Line\nbreak.' }];
    for (const format of ['ragtrail', 'flashrag'] as const) {
      const p = join(tmp.dir, `c-${format}.jsonl`);
      await writeCorpus(p, passages, format);
      assert.deepEqual(await collectAll(readCorpus(p)), passages);
    }
    assert.match(readFileSync(join(tmp.dir, 'c-flashrag.jsonl'), 'utf8'), /^\{"id":"1","contents":"\\"A \\"quoted\\" title\\"\\nText one\."\}/);
    const tsv = join(tmp.dir, 'psgs.tsv');
    writeFileSync(tsv, 'id\ttext\ttitle\n1\t"Aaron ( or ; ""Ahärôn"") is a prophet"\tAaron\n');
    assert.deepEqual(await collectAll(readCorpus(tsv)), [{ id: '1', title: 'Aaron', text: 'Aaron ( or ; "Ahärôn") is a prophet' }]);
  });
  it('names the line of a passage without text', async () => {
    const p = join(tmp.dir, 'bad.jsonl');
    writeFileSync(p, '{"id":"1","text":"ok"}\n{"id":"2"}\n');
    await assert.rejects(collectAll(readCorpus(p)), /bad\.jsonl:2: field "text" is missing/);
  });
});

describe('corpus from dataset contexts', () => {
  it('deduplicates HotpotQA paragraphs: 522 seen → 521 distinct (53 questions), 992 → 991 (100)', async () => {
    const s1: CorpusBuildStats = { questions: 0, seen: 0, passages: 0 };
    await collectAll(corpusFromQuestions(loadDataset(data('hotpotqa', 'distractor_dev_first53_official.json')), s1));
    assert.deepEqual(s1, { questions: 53, seen: 522, passages: 521 });
    const s2: CorpusBuildStats = { questions: 0, seen: 0, passages: 0 };
    const ps = await collectAll(corpusFromQuestions(loadDataset(data('hotpotqa', 'distractor_dev_sample100_hf.json')), s2));
    assert.deepEqual(s2, { questions: 100, seen: 992, passages: 991 });
    assert.equal(new Set(ps.map((p) => p.id)).size, 991);
  });
  it('merges datasets: the 53 official questions add nothing to the 100-question sample; all three give 3,877', async () => {
    async function* both() {
      yield* loadDataset(data('hotpotqa', 'distractor_dev_sample100_hf.json'));
      yield* loadDataset(data('hotpotqa', 'distractor_dev_first53_official.json'));
      yield* loadDataset(data('hotpotqa', 'distractor_hard_train300.jsonl'));
    }
    const stats: CorpusBuildStats = { questions: 0, seen: 0, passages: 0 };
    const ps = await collectAll(corpusFromQuestions(both(), stats));
    assert.equal(stats.questions, 453);
    assert.equal(ps.length, 3877);
  });
});
