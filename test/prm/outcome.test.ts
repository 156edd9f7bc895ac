/**
 * RAG-Gym's ORM baseline: outcome pairs from several runs (right final answers over wrong ones, each in
 * its own episode), pairs whose rejected step has its own state, and ORM best-of-N over whole episodes.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { LlmPolicy } from '../../src/agents/policy.js';
import { PROTOCOLS } from '../../src/agents/registry.js';
import type { Step, Trajectory } from '../../src/core/trajectory.js';
import { RagEnv } from '../../src/env/env.js';
import { runOrmEpisode } from '../../src/eval/run.js';
import { ScriptedLLM } from '../../src/llm/scripted.js';
import { outcomePairs } from '../../src/prm/outcome.js';
import { evaluatePrm, readPrmPairs, scorePair } from '../../src/prm/trained.js';
import type { PRM } from '../../src/prm/types.js';
import type { Retriever } from '../../src/retrieval/types.js';
import { tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);

const search = (q: string): Step => ({ action: { type: 'search', query: q }, raw: `<search>${q}</search>`, docs: [] });
const answer = (a: string): Step => ({ action: { type: 'answer', answer: a }, raw: `<answer>${a}</answer>` });
const episode = (id: string, steps: Step[], em: number): Trajectory => ({
  id, question: `${id}?`, answers: ['x'], agent: 'search-r1', policy: 'p', steps, prediction: '', finished: true, retrievalCount: 0, formatFailures: 0,
  usage: { promptTokens: 0, completionTokens: 0, requests: 0 }, latencyMs: 0, source: 'native', metrics: { em, f1: em, acc: em },
});
/** Scores a step by the number of steps before it: easy to follow by hand. */
const bySteps: PRM = { name: 'steps', score: async (s, cands) => cands.map(() => s.steps.length) };

describe('outcome pairs', () => {
  it('pairs each question\'s right episodes with its wrong ones, each answer in its own episode\'s state', () => {
    const runs = [
      [episode('q1', [search('a'), answer('x')], 1), episode('q2', [answer('x')], 1), episode('q3', [search('a')], 0)],
      [episode('q1', [answer('y')], 0), episode('q2', [search('b'), answer('x')], 1)],
      [episode('q1', [search('c'), search('d'), answer('x')], 1)],
    ];
    const r = outcomePairs(runs);
    assert.deepEqual([r.paired, r.oneSided], [1, 1]); // q1 paired; q2 all right; q3 never answered
    assert.deepEqual(r.pairs.map((p) => [p.id, p.state.steps.length, p.rejectedState!.steps.length, p.chosen.action, p.rejected.action]), [
      ['q1:orm:0', 1, 0, { type: 'answer', answer: 'x' }, { type: 'answer', answer: 'y' }],
      ['q1:orm:1', 2, 0, { type: 'answer', answer: 'x' }, { type: 'answer', answer: 'y' }],
    ]);
    assert.equal(outcomePairs(runs, { perQuestion: 1 }).pairs.length, 1);
  });

  it('a pair with its own rejected state is scored in each state, read back from a file, and a malformed one is an error record', async () => {
    const [pair] = outcomePairs([[episode('q1', [search('a'), search('b'), answer('x')], 1)], [episode('q1', [answer('y')], 0)]]).pairs;
    assert.deepEqual(await scorePair(bySteps, pair!), [2, 0]);
    const file = join(tmp.dir, 'pairs.jsonl');
    writeFileSync(file, `${JSON.stringify(pair)}\n${JSON.stringify({ ...pair, rejectedState: { steps: 3 } })}\n`);
    const errors: unknown[] = [];
    const read = await readPrmPairs(file, errors as never[]);
    assert.equal(read.length, 1);
    assert.equal(errors.length, 1);
    assert.equal((await evaluatePrm(bySteps, read)).accuracy, 1);
  });
});

describe('ORM best-of-N', () => {
  it('samples n whole episodes and keeps the one whose final answer the ORM scores highest', async () => {
    const none: Retriever = { name: 'none', search: async () => [], searchBatch: async (qs) => qs.map(() => []) };
    const env = new RagEnv({ retriever: none, topK: 1, maxTurns: 1, maxSearches: 0 });
    const llm = new ScriptedLLM(['a', 'bbb', 'cc']);
    const byLength: PRM = { name: 'length', score: async (_s, cands) => cands.map((c) => (c.action.type === 'answer' ? c.action.answer.length : 0)) };
    const t = await runOrmEpisode(env, new LlmPolicy(PROTOCOLS.direct, llm), { id: 'q', question: 'Q?', answers: ['bbb'] }, { n: 3, temperature: 1, orm: byLength });
    assert.equal(llm.requests.length, 3);
    assert.equal(t.prediction, 'bbb');
    assert.deepEqual(t.meta!['orm'], { n: 3, chosen: 1, scores: [1, 3, 2] });
    assert.equal(t.usage.requests, 3);
  });
});
