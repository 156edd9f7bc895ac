import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RagEnv, retrievedDocs } from '../../src/env/env.js';
import type { Hit, Retriever } from '../../src/retrieval/types.js';

class FakeRetriever implements Retriever {
  readonly name = 'fake';
  calls: [string, number][] = [];
  async search(query: string, k: number): Promise<Hit[]> {
    this.calls.push([query, k]);
    return Array.from({ length: k }, (_, i) => ({ passageId: `${query}#${i}`, title: query, text: `text ${i}`, score: k - i }));
  }
  async searchBatch(qs: readonly string[], k: number) {
    return Promise.all(qs.map((q) => this.search(q, k)));
  }
}
const q = { id: 'q', question: 'Q?', answers: ['A'] };

describe('RagEnv', () => {
  it('runs searches through the retriever, records docs and timings, and ends on an answer', async () => {
    const r = new FakeRetriever();
    const env = new RagEnv({ retriever: r, topK: 2, maxTurns: 5 });
    const s0 = env.reset(q);
    const { state: s1, done } = await env.step(s0, { action: { type: 'search', query: 'x' }, raw: '<search>x</search>', usage: { promptTokens: 3, completionTokens: 2 }, llmMs: 7 });
    assert.equal(done, false);
    assert.deepEqual(r.calls, [['x', 2]]);
    assert.deepEqual(s1.steps[0]!.docs?.map((d) => [d.passageId, d.score]), [['x#0', 2], ['x#1', 1]]);
    assert.ok(s1.steps[0]!.retrievalMs! >= 0);
    assert.deepEqual(s1.steps[0]!.usage, { promptTokens: 3, completionTokens: 2 });
    assert.equal(s0.steps.length, 0, 'step() does not change the old state');
    const end = await env.step(s1, { action: { type: 'answer', answer: 'A' }, raw: 'A' });
    assert.equal(end.done, true);
    assert.equal(end.state.done, true);
    await assert.rejects(env.step(end.state, { action: { type: 'answer', answer: 'A' }, raw: 'A' }), /after the episode ended/);
  });

  it('keeps top-k of what a server returns (one that ignores k), and a move\'s summary on its step', async () => {
    const generous: Retriever = { name: 'generous', search: async (query) => Array.from({ length: 4 }, (_, i) => ({ passageId: `${query}#${i}`, title: query, text: '', score: -i })), searchBatch: async (qs) => qs.map((x) => Array.from({ length: 4 }, (_, i) => ({ passageId: `${x}#${i}`, title: x, text: '', score: -i }))) };
    const env = new RagEnv({ retriever: generous, topK: 2, maxTurns: 5 });
    const one = await env.step(env.reset(q), { action: { type: 'search', query: 'x' }, raw: '' });
    assert.deepEqual(one.state.steps[0]!.docs?.map((d) => d.passageId), ['x#0', 'x#1']);
    const two = await env.step(one.state, { action: { type: 'search', query: 'y; z', queries: ['y', 'z'] }, raw: '' });
    assert.deepEqual(two.state.steps[1]!.docs?.map((d) => d.passageId), ['y#0', 'y#1', 'z#0', 'z#1']);
    assert.deepEqual(two.state.steps[1]!.docsPerQuery, [2, 2]);
    const end = await env.step(two.state, { action: { type: 'answer', answer: 'A' }, raw: 'A', summary: 'decided before' });
    assert.equal(end.state.steps[2]!.summary, 'decided before');
  });

  it('forces an answer when the turns run out, and turns searches beyond the budget into invalid steps', async () => {
    const env = new RagEnv({ retriever: new FakeRetriever(), topK: 1, maxTurns: 2 });
    let s = env.reset(q);
    let r = await env.step(s, { action: { type: 'search', query: 'a' }, raw: '' });
    assert.equal(r.truncated, false);
    r = await env.step(r.state, { action: { type: 'invalid', reason: 'bad' }, raw: '???' });
    assert.equal(r.truncated, true);
    assert.equal(r.state.mustAnswer, true);
    s = r.state;
    r = await env.step(s, { action: { type: 'search', query: 'b' }, raw: '' });
    assert.deepEqual(r.state.steps[2]!.action, { type: 'invalid', reason: 'search after the budget ran out' });
    assert.equal(r.state.steps[2]!.forced, true);
    r = await env.step(r.state, { action: { type: 'answer', answer: 'A' }, raw: 'A' });
    assert.equal(r.done, true);
    assert.deepEqual(retrievedDocs(r.state).map((d) => d.passageId), ['a#0']);
  });

  it('lets the last search be grounded before forcing (ReasonRAG)', async () => {
    const env = new RagEnv({ retriever: new FakeRetriever(), topK: 1, maxTurns: 10, maxSearches: 1 });
    const r1 = await env.step(env.reset(q), { action: { type: 'search', query: 'a' }, raw: '' });
    assert.equal(r1.state.mustAnswer, false);
    const r2 = await env.step(r1.state, { action: { type: 'extract', evidence: 'e' }, raw: '' });
    assert.equal(r2.state.mustAnswer, true);
  });
});
