import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { InputError } from '../../src/core/errors.js';
import type { Question } from '../../src/core/types.js';
import { readCorpus } from '../../src/corpus/corpus.js';
import { loadDatasetAll } from '../../src/corpus/dataset.js';
import { generateWorld, QUESTION_TYPES, writeWorld } from '../../src/corpus/world/index.js';
import { normalizeAnswer } from '../../src/eval/metrics.js';
import { collectAll, tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);

describe('synthetic world', () => {
  const world = generateWorld({ seed: 11, entities: 3000, questions: 600 });
  const passages = new Map(world.passages.map((p) => [p.id, p]));

  it('is byte-identical for the same seed and differs for another', async () => {
    const read = (dir: string) => ['corpus.jsonl', 'questions.jsonl', 'entities.jsonl', 'world.json'].map((f) => readFileSync(join(dir, f), 'utf8'));
    await writeWorld(join(tmp.dir, 'a'), generateWorld({ seed: 11, entities: 3000, questions: 600 }));
    await writeWorld(join(tmp.dir, 'b'), generateWorld({ seed: 11, entities: 3000, questions: 600 }));
    await writeWorld(join(tmp.dir, 'c'), generateWorld({ seed: 12, entities: 3000, questions: 600 }));
    const [a, b, c] = [read(join(tmp.dir, 'a')), read(join(tmp.dir, 'b')), read(join(tmp.dir, 'c'))];
    assert.deepEqual(a, b);
    assert.notEqual(a[0], c?.[0]);
    assert.notEqual(a[1], c?.[1]);
  });

  it('writes files the loaders read back unchanged', async () => {
    const dir = join(tmp.dir, 'a');
    const { questions } = await loadDatasetAll(join(dir, 'questions.jsonl'));
    assert.deepEqual(questions, world.questions);
    const corpus = await collectAll(readCorpus(join(dir, 'corpus.jsonl')));
    assert.deepEqual(corpus, world.passages);
  });

  it('has every question type, 2–4 hop compositional questions, unique ids and texts', () => {
    assert.equal(world.questions.length, 600);
    for (const t of QUESTION_TYPES) assert.ok((world.stats.questionTypes[t] ?? 0) > 50, `${t}: ${world.stats.questionTypes[t]}`);
    const hops = new Set(world.questions.filter((q) => q.type === 'compositional').map((q) => q.metadata?.['hops']));
    assert.deepEqual([...hops].sort(), [2, 3, 4]);
    assert.equal(new Set(world.questions.map((q) => q.id)).size, 600);
    assert.equal(new Set(world.questions.map((q) => q.question)).size, 600);
  });

  it('grounds every hop: each sub-answer is written in its supporting passage, and the chain ends in the gold answer', () => {
    for (const q of world.questions) {
      assert.ok(q.answers.length > 0 && q.answers.every((a) => a.trim() !== ''), q.id);
      assert.ok(q.supporting && q.supporting.length > 0, q.id);
      for (const id of q.supporting ?? []) assert.ok(passages.has(id), `${q.id}: unknown passage ${id}`);
      for (const step of q.decomposition ?? []) {
        const p = passages.get(step.passageId as string);
        assert.ok(p, `${q.id}: sub-question without passage`);
        assert.ok(normalizeAnswer(p.text).includes(normalizeAnswer(step.answer)), `${q.id}: "${step.answer}" not in ${p.id}: ${p.text}`);
      }
      if (q.type === 'single-hop' || q.type === 'compositional') {
        assert.equal(q.decomposition?.length, q.metadata?.['hops']);
        assert.equal(q.decomposition?.at(-1)?.answer, q.answers[0], q.id);
      }
    }
  });

  it('answers comparisons correctly and balances yes/no', () => {
    const yesNo = world.questions.filter((q: Question) => ['yes', 'no'].includes(q.answers[0] as string));
    const yes = yesNo.filter((q) => q.answers[0] === 'yes').length;
    assert.ok(yesNo.length > 40 && Math.abs(yes / yesNo.length - 0.5) < 0.15, `${yes}/${yesNo.length}`);
    // "Which …, A or B?": the answer is the option whose year/size (from the decomposition) is the smaller
    // one for first/earlier/older questions and the larger one otherwise.
    const numeric = world.questions.filter((q) => q.type === 'comparison' && !['yes', 'no'].includes(q.answers[0] as string));
    assert.ok(numeric.length > 30);
    for (const q of numeric) {
      const [va, vb] = (q.decomposition ?? []).map((d) => Number(d.answer.replaceAll(',', '')));
      const [a, b] = (/, (.+) or (.+)\?$/.exec(q.question) ?? []).slice(1);
      const wantSmaller = /first|earlier|older/.test(q.question);
      assert.equal(q.answers[0], ((va as number) < (vb as number)) === wantSmaller ? a : b, q.question);
    }
  });

  it('contains the distractors it promises: namesakes with disambiguated titles, shared film/novel titles', () => {
    assert.ok(world.stats.namesakes > 10);
    assert.ok(world.stats.sharedTitles > 3);
    const titles = world.passages.map((p) => p.title);
    assert.ok(titles.some((t) => t.endsWith(' (film)')) && titles.some((t) => t.endsWith(' (novel)')));
  });

  it('refuses a world too small to hold every entity type', () => {
    assert.throws(() => generateWorld({ seed: 1, entities: 10 }), InputError);
  });
});
