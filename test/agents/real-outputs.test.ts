/**
 * The search-r1 parser over a real Search-R1 agent's outputs (../shared/data/trajectories): it must
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

describe('Search-R1 outputs from ../shared/data', () => {
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
    assert.deepEqual(await importRun('search-r1', file, out), { imported: 125, skipped: 0 });
    assert.deepEqual(await importRun('search-r1', file, out), { imported: 0, skipped: 125 });
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
