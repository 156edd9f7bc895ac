/** Loaders on the real samples in test/fixtures/data, copies of ../shared/data (counts checked against the files with Python). */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { RecordError } from '../../src/core/errors.js';
import type { Question } from '../../src/core/types.js';
import { detectFormat, loadDataset, loadDatasetAll } from '../../src/corpus/dataset.js';
import { fromFlashrag, toFlashrag } from '../../src/corpus/formats/flashrag.js';
import { makeContextPassage } from '../../src/corpus/formats/hotpotqa.js';
import { collectAll, data, tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);
const file = (name: string, content: string) => {
  const p = join(tmp.dir, name);
  writeFileSync(p, content);
  return p;
};
const countBy = (qs: Question[], f: (q: Question) => string) => qs.reduce<Record<string, number>>((m, q) => ((m[f(q)] = (m[f(q)] ?? 0) + 1), m), {});

describe('HotpotQA distractor', () => {
  it('official layout (JSON array): 53 questions, 39 bridge / 14 comparison, 522 context paragraphs', async () => {
    const { questions } = await loadDatasetAll(data('hotpotqa', 'distractor_dev_first53_official.json'));
    assert.equal(questions.length, 53);
    assert.deepEqual(countBy(questions, (q) => q.type ?? ''), { comparison: 14, bridge: 39 });
    assert.equal(questions.reduce((n, q) => n + (q.context?.length ?? 0), 0), 522);
    const q = questions[0] as Question;
    assert.equal(q.id, '5a8b57f25542995d1e6f1371');
    assert.deepEqual(q.answers, ['yes']);
    // Supporting facts name "Scott Derrickson" and "Ed Wood": two passages of the context.
    const titles = q.supporting?.map((id) => q.context?.find((p) => p.id === id)?.title);
    assert.deepEqual(titles, ['Scott Derrickson', 'Ed Wood']);
    assert.ok(q.context?.[1]?.text.startsWith('Scott Derrickson (born July 16, 1966) is an American director, screenwriter and producer. He lives in'));
    // Every question of HotpotQA has two supporting paragraphs: 106 in all.
    assert.equal(questions.reduce((n, x) => n + (x.supporting?.length ?? 0), 0), 106);
  });

  it('Hugging Face layout without ids: 100 questions with stable derived ids, and the same passage ids as the official layout', async () => {
    const hf = (await loadDatasetAll(data('hotpotqa', 'distractor_dev_sample100_hf.json'))).questions;
    assert.equal(hf.length, 100);
    assert.deepEqual(countBy(hf, (q) => q.type ?? ''), { comparison: 21, bridge: 79 });
    const again = (await loadDatasetAll(data('hotpotqa', 'distractor_dev_sample100_hf.json'))).questions;
    assert.deepEqual(hf.map((q) => q.id), again.map((q) => q.id));
    assert.equal(new Set(hf.map((q) => q.id)).size, 100);
    const official = (await loadDatasetAll(data('hotpotqa', 'distractor_dev_first53_official.json'))).questions;
    const byText = new Map(hf.map((q) => [q.question, q]));
    for (const o of official) {
      const h = byText.get(o.question) as Question;
      assert.ok(h, `official question missing from the HF sample: ${o.question}`);
      assert.deepEqual(h.supporting, o.supporting);
      assert.deepEqual(h.context?.map((p) => p.id), o.context?.map((p) => p.id));
    }
  });

  it('Hugging Face layout as JSON Lines: 300 hard questions, 238 bridge / 62 comparison', async () => {
    const { questions } = await loadDatasetAll(data('hotpotqa', 'distractor_hard_train300.jsonl'));
    assert.equal(questions.length, 300);
    assert.deepEqual(countBy(questions, (q) => q.type ?? ''), { bridge: 238, comparison: 62 });
    assert.equal(questions[0]?.id, '5abf63f15542997ec76fd3ea');
    assert.deepEqual(questions[0]?.answers, ['October 1922']);
    assert.equal(questions[0]?.metadata?.['level'], 'hard');
  });
});

describe('FlashRAG JSON Lines', () => {
  it('Bamboogle: 125 questions, one gold each', async () => {
    const { questions } = await loadDatasetAll(data('flashrag', 'bamboogle_test.jsonl'));
    assert.equal(questions.length, 125);
    assert.deepEqual(questions[0], { id: 'test_0', question: 'Who was president of the United States in the year that Citibank was founded?', answers: ['james madison'] });
  });
  it('PopQA: 500 questions, 1988 gold answers with aliases, metadata kept', async () => {
    const { questions } = await loadDatasetAll(data('flashrag', 'popqa_test_sample500.jsonl'));
    assert.equal(questions.length, 500);
    assert.equal(questions.reduce((n, q) => n + q.answers.length, 0), 1988);
    assert.deepEqual(questions[0]?.answers, ['Ralph Rainger', 'Ralph Reichenthal']);
    assert.equal(questions[0]?.metadata?.['prop'], 'composer');
  });
  it('round-trips the data model through metadata, context included', () => {
    const context = [makeContextPassage('T1', ['One.', ' Two.']), makeContextPassage('T2', ['Three.'])];
    const q: Question = {
      id: 'q1', question: 'Who?', answers: ['A', 'B'], type: 'compositional', supporting: [context[1]!.id], context,
      decomposition: [{ question: 'Sub?', answer: 'A', passageId: 'p1' }],
      metadata: { split: 'dev' },
    };
    assert.deepEqual(fromFlashrag(toFlashrag(q), { file: 'x', line: 1 }), q);
  });
});

describe('2WikiMultihopQA and MuSiQue (fixtures in the official layouts)', () => {
  it('2Wiki: evidences kept, supporting passages resolved', async () => {
    const rec = {
      _id: 'abc', type: 'compositional', question: 'Who is the mother of the director of film Polish-Russian War?', answer: 'Małgorzata Braunek',
      supporting_facts: [['Polish-Russian War (film)', 1], ['Xawery Żuławski', 2]],
      context: [['Polish-Russian War (film)', ['Polish-Russian War is a 2009 Polish film.', ' It was directed by Xawery Żuławski.']], ['Xawery Żuławski', ['Xawery Żuławski is a director.', ' His father is Andrzej.', ' His mother is Małgorzata Braunek.']], ['Other', ['Unrelated.']]],
      evidences: [['Polish-Russian War', 'director', 'Xawery Żuławski'], ['Xawery Żuławski', 'mother', 'Małgorzata Braunek']],
    };
    const p = file('2wiki.json', JSON.stringify([rec]));
    const [q] = await collectAll(loadDataset(p));
    assert.equal(detectFormat(rec), '2wiki');
    assert.equal(q?.type, 'compositional');
    assert.equal(q?.context?.length, 3);
    assert.equal(q?.context?.[0]?.text, 'Polish-Russian War is a 2009 Polish film. It was directed by Xawery Żuławski.');
    assert.deepEqual(q?.supporting, [q?.context?.[0]?.id, q?.context?.[1]?.id]);
    assert.deepEqual(q?.metadata?.['evidences'], rec.evidences);
  });
  it('MuSiQue: answers with aliases, is_supporting, decomposition with passages', async () => {
    const rec = {
      id: '2hop__1_2', question: 'When was the creator of X born?', answer: '1900', answer_aliases: ['in 1900'], answerable: true,
      paragraphs: [
        { idx: 0, title: 'Y', paragraph_text: 'Y is unrelated.', is_supporting: false },
        { idx: 1, title: 'X', paragraph_text: 'X was created by Z.', is_supporting: true },
        { idx: 2, title: 'Z', paragraph_text: 'Z was born in 1900.', is_supporting: true },
      ],
      question_decomposition: [
        { id: 1, question: 'Who created X?', answer: 'Z', paragraph_support_idx: 1 },
        { id: 2, question: 'When was #1 born?', answer: '1900', paragraph_support_idx: 2 },
      ],
    };
    const [q] = await collectAll(loadDataset(file('musique.jsonl', JSON.stringify(rec) + '\n')));
    assert.deepEqual(q?.answers, ['1900', 'in 1900']);
    assert.equal(q?.type, '2hop');
    const ids = q?.context?.map((c) => c.id) ?? [];
    assert.deepEqual(q?.supporting, [ids[1], ids[2]]);
    assert.deepEqual(q?.decomposition, [
      { question: 'Who created X?', answer: 'Z', passageId: ids[1] },
      { question: 'When was #1 born?', answer: '1900', passageId: ids[2] },
    ]);
  });
});

describe('malformed input', () => {
  it('a missing question names file, line and field', async () => {
    const p = file('noq.jsonl', '{"id":"1","question":"Q?","golden_answers":["a"]}\n{"id":"2","golden_answers":["b"]}\n');
    await assert.rejects(collectAll(loadDataset(p)), (e: Error) => e instanceof RecordError && e.message.startsWith(`${p}:2: field "question" is missing`));
  });
  it('missing or empty answers are rejected', async () => {
    const p = file('noa.jsonl', '{"id":"1","question":"Q?","golden_answers":[]}\n');
    await assert.rejects(collectAll(loadDataset(p)), /:1: field "golden_answers" is an empty list/);
    // One-line JSON arrays (HotpotQA's official files) also name the record.
    const h = file('noa.json', JSON.stringify([{ _id: 'w', question: 'Q?', answer: 'A', context: [] }, { _id: 'x', question: 'Q?', context: [] }]));
    await assert.rejects(collectAll(loadDataset(h)), /noa\.json:1 \(record 2\): field "answer" is missing/);
  });
  it('an invalid JSON line names file:line', async () => {
    const p = file('badjson.jsonl', '{"id":"1","question":"Q?","golden_answers":["a"]}\n{"id": 2,\n');
    await assert.rejects(collectAll(loadDataset(p)), new RegExp(`${p.replaceAll('.', '\\.')}:2: invalid JSON`));
  });
  it('--skip-invalid counts and reports instead', async () => {
    const p = file('mixed.jsonl', ['{"id":"1","question":"Q?","golden_answers":["a"]}', '{"id": 2,', '{"id":"3","golden_answers":["b"]}', '{"id":"1","question":"dup?","golden_answers":["c"]}', '{"id":"4","question":"Q4?","golden_answers":["d"]}'].join('\n'));
    const { questions, invalid } = await loadDatasetAll(p, { skipInvalid: true });
    assert.deepEqual(questions.map((q) => q.id), ['1', '4']);
    assert.deepEqual(invalid.map((e) => e.message.split(':').slice(1, 2)[0]), ['2', '3', '4']);
    assert.match(invalid[2]?.message ?? '', /"1" repeats an earlier question's id/);
  });
  it("an unknown layout names the caller's layout flag, or none when it has none", async () => {
    const odd = file('odd.jsonl', '{"foo":1}\n');
    await assert.rejects(collectAll(loadDataset(odd, { flags: { format: '--dataset-format' } })), /cannot tell the dataset layout.*\(pass --dataset-format flashrag\|hotpotqa\|2wiki\|musique\|medqa, or give the records the fields/);
    await assert.rejects(collectAll(loadDataset(odd)), (e: Error) => /cannot tell the dataset layout \(fields: foo\) \(give the records the fields a layout is recognised by: golden_answers \(flashrag\)/.test(e.message) && !/--/.test(e.message));
  });
});
