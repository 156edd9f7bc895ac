/**
 * The search-r1 parser over a real Search-R1 agent's outputs (test/fixtures/data/trajectories): it must
 * recover the queries and answers that file records, and the imported run must score exactly as
 * FlashRAG scored it (metric_score.txt: em 0.088, acc 0.096, f1 0.17242597402597404).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fromSearchR1, importRun } from '../../src/eval/import.js';
import { readTrajectories, summarize } from '../../src/eval/trajectories.js';
import { data, tempDir } from '../helpers.js';

const file = data('trajectories', 'search_r1_bamboogle_base', 'intermediate_data.json');
const records = JSON.parse(readFileSync(file, 'utf8')) as { id: string; golden_answers: string[]; output: { final_response: string; pred: string; metric_score: { em: number; f1: number; acc: number }; prompt_tokens: number; completion_tokens: number } }[];
const tmp = tempDir();
after(tmp.cleanup);

describe('Search-R1 outputs from a real run (test/fixtures/data/trajectories)', () => {
  it('parses every record into search, information and answer steps matching the text', () => {
    assert.equal(records.length, 125);
    records.forEach((r, i) => {
      const t = fromSearchR1(r, { file, line: 1, record: i + 1 });
      const queries = [...r.output.final_response.matchAll(/<search>([\s\S]*?)<\/search>/g)].map((m) => m[1]!.trim());
      const answers = [...r.output.final_response.matchAll(/<answer>([\s\S]*?)<\/answer>/g)].map((m) => m[1]!.trim());
      assert.deepEqual(t.steps.flatMap((s) => (s.action.type === 'search' ? [s.action.query] : [])), queries, r.id);
      assert.deepEqual(t.steps.flatMap((s) => (s.action.type === 'answer' ? [s.action.answer] : [])), answers, r.id);
      // FlashRAG's pred is the answer the parser finds.
      assert.equal(answers.at(-1), r.output.pred, r.id);
      // Each search came back with the retriever's 3 documents (config.yaml: retrieval_topk 3).
      for (const s of t.steps) if (s.action.type === 'search') assert.equal(s.docs?.length, 3, r.id);
      assert.deepEqual({ p: t.usage.promptTokens, c: t.usage.completionTokens }, { p: r.output.prompt_tokens, c: r.output.completion_tokens });
      assert.deepEqual(t.metrics, { em: r.output.metric_score.em, f1: r.output.metric_score.f1, acc: r.output.metric_score.acc }, r.id);
    });
  });

  it('imports every question, and the run scores em 0.088, f1 0.172426, acc 0.096', async () => {
    const out = join(tmp.dir, 'imported');
    const errorsPath = join(out, 'import-errors.jsonl');
    assert.deepEqual(await importRun('search-r1', file, out), { imported: 125, skipped: 0, errors: 0, errorsPath });
    assert.deepEqual(await importRun('search-r1', file, out), { imported: 0, skipped: 125, errors: 0, errorsPath });
    const ts = await readTrajectories(out);
    assert.deepEqual(ts.map((t) => t.id), records.map((r) => r.id));
    const s = summarize(ts);
    assert.equal(s.questions, 125);
    assert.ok(Math.abs(s.em - 0.088) < 1e-12);
    assert.ok(Math.abs(s.acc - 0.096) < 1e-12);
    assert.ok(Math.abs(s.f1 - 0.17242597402597404) < 1e-12);
    assert.equal(s.retrievalCount, 1);
    assert.equal(ts[0]!.steps[0]!.docs?.[0]?.title, 'Citibank');
  });
});

describe('Search-R1 import: a search counts where the environment answered it', () => {
  const info = (title: string) => `\n\n<information>Doc 1(Title: "${title}") ${title} is a city.\nDoc 2(Title: "Other") text\n</information>\n\n`;
  const rec = (final_response: string) => ({ id: 'x', question: 'Q?', golden_answers: ['Paris'], output: { final_response, pred: 'Paris' } });

  it('reads the search after a turn that starts with its own <information> tag (unclosed)', () => {
    const text = `<information> I recall something <think> need facts </think> <search> capital of France </search>${info('Paris')}<think> done </think> <answer> Paris </answer>`;
    const t = fromSearchR1(rec(text), { file: 'x', line: 1 });
    assert.equal(t.retrievalCount, 1);
    const search = t.steps.find((s) => s.action.type === 'search')!;
    assert.deepEqual(search.action, { type: 'search', query: 'capital of France' });
    assert.deepEqual(search.docs?.map((d) => d.title), ['Paris', 'Other']);
    assert.equal(t.steps.at(-1)!.action.type, 'answer');
  });

  it('keeps a closed model-written <information> block as model text, not a search', () => {
    const text = `<information>made up</information> <search> capital of France </search>${info('Paris')}<search> river of Paris </search>${info('Seine')}<answer> Paris </answer>`;
    const t = fromSearchR1(rec(text), { file: 'x', line: 1 });
    assert.equal(t.retrievalCount, 2);
    assert.deepEqual(t.steps.flatMap((s) => (s.action.type === 'search' ? [s.action.query] : [])), ['capital of France', 'river of Paris']);
  });

  it('splits at the environment\'s invalid-action notice, but not at a copy of it in a turn that acted', () => {
    const notice = '\nMy previous action is invalid. If I want to search, I should put the query between <search> and </search>. If I want to give the final answer, I should put the answer between <answer> and </answer>. Let me try again.\n';
    // A turn with no action, the environment's notice, then a search.
    const env = fromSearchR1(rec(`<think> hmm </think>${notice}<search> capital of France </search>${info('Paris')}<answer> Paris </answer>`), { file: 'x', line: 1 });
    assert.deepEqual(env.steps.map((s) => s.action.type), ['invalid', 'search', 'answer']);
    assert.equal(env.retrievalCount, 1);
    // The model copies the notice after writing a search: one turn, the search the environment answered.
    const copied = fromSearchR1(rec(`<search> France </search>${notice}<search> capital of France </search>${info('Paris')}<answer> Paris </answer>`), { file: 'x', line: 1 });
    assert.deepEqual(copied.steps.map((s) => s.action.type), ['search', 'answer']);
    assert.deepEqual(copied.steps[0]!.action, { type: 'search', query: 'capital of France' });
    assert.equal(copied.retrievalCount, 1);
  });

  it('does not count a <search> the environment never answered', () => {
    const t = fromSearchR1(rec('<search> capital of France </search> and then <answer> Paris </answer>'), { file: 'x', line: 1 });
    assert.equal(t.retrievalCount, 0);
  });
});
