/** Episodes and runs: oracle and sim on the synthetic world, an LLM policy with a scripted model, resume. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Question } from '../../src/core/types.js';
import { loadDatasetAll } from '../../src/corpus/dataset.js';
import { generateWorld, writeWorld } from '../../src/corpus/world/index.js';
import { OraclePolicy } from '../../src/agents/oracle.js';
import { LlmPolicy } from '../../src/agents/policy.js';
import { PROTOCOLS } from '../../src/agents/registry.js';
import { SimPolicy } from '../../src/agents/sim.js';
import { RagEnv } from '../../src/env/env.js';
import { runEpisode, runQuestions } from '../../src/eval/run.js';
import { ScriptedLLM } from '../../src/llm/scripted.js';
import { buildIndex, openRetriever } from '../../src/retrieval/index-dir.js';
import type { Retriever } from '../../src/retrieval/types.js';
import { tempDir } from '../helpers.js';

const tmp = tempDir();
let questions: Question[] = [];
let retriever: Retriever;
before(async () => {
  await writeWorld(join(tmp.dir, 'world'), generateWorld({ seed: 4, entities: 1500, questions: 120 }));
  await buildIndex(join(tmp.dir, 'world', 'corpus.jsonl'), join(tmp.dir, 'index'), { quiet: true });
  retriever = await openRetriever(join(tmp.dir, 'index'));
  questions = (await loadDatasetAll(join(tmp.dir, 'world', 'questions.jsonl'))).questions;
});
after(tmp.cleanup);

const env = (agent: keyof typeof PROTOCOLS) => new RagEnv({ retriever, topK: PROTOCOLS[agent].defaults.topK, maxTurns: PROTOCOLS[agent].defaults.maxTurns, maxSearches: PROTOCOLS[agent].defaults.maxSearches });

describe('non-LLM policies', () => {
  it('oracle follows the gold decomposition and is labelled', async () => {
    const q = questions.find((x) => x.type === 'compositional' && x.decomposition!.length === 3)!;
    const t = await runEpisode(env('search-r1'), new OraclePolicy(PROTOCOLS['search-r1']), q);
    assert.deepEqual(t.steps.filter((s) => s.action.type === 'search').map((s) => (s.action as { query: string }).query), q.decomposition!.map((d) => d.question));
    assert.equal(t.prediction, q.answers[0]);
    assert.equal(t.policy, 'oracle [non-LLM]');
    assert.match(t.steps[0]!.raw, /^<think> .* <\/think>\n<search> /);
  });

  it('oracle grounds each ReasonRAG search on the sentence holding the hop answer', async () => {
    const q = questions.find((x) => x.type === 'compositional')!;
    const t = await runEpisode(env('reasonrag'), new OraclePolicy(PROTOCOLS.reasonrag), q);
    const types = t.steps.map((s) => s.action.type).join(' ');
    assert.match(types, /^(search extract )+answer$/);
    const firstEvidence = t.steps[1]!.action as { evidence: string };
    assert.ok(firstEvidence.evidence.includes(q.decomposition![0]!.answer), firstEvidence.evidence);
  });

  it('sim: more competent is better, answers only with retrieved evidence, and is deterministic per seed', async () => {
    const em = async (c: number, seed = 0) => {
      let s = 0;
      for (const q of questions) s += (await runEpisode(env('search-r1'), new SimPolicy(PROTOCOLS['search-r1'], c), q, { seed })).metrics!.em;
      return s / questions.length;
    };
    const [low, high] = [await em(0.2), await em(0.95)];
    assert.ok(high > low + 0.2, `${low} vs ${high}`);
    assert.equal(await em(0.6, 3), await em(0.6, 3));
    // Right answers only with every supporting passage retrieved.
    for (const q of questions.slice(0, 60)) {
      const t = await runEpisode(env('search-r1'), new SimPolicy(PROTOCOLS['search-r1'], 0.5), q, { seed: 1 });
      if (t.metrics!.em === 1 && q.answers[0] !== 'yes' && q.answers[0] !== 'no') {
        const got = new Set(t.steps.flatMap((s) => (s.docs ?? []).map((d) => d.passageId)));
        assert.ok(q.supporting!.every((id) => got.has(id)), q.id);
      }
    }
  });
});

describe('LLM policy with a scripted model', () => {
  it('sends the protocol prompt and stop strings, and forces an answer when the budget ends', async () => {
    const llm = new ScriptedLLM(['<think>hm</think><search>first query', 'no tags at all', 'still nothing, the answer might be Paris']);
    const policy = new LlmPolicy(PROTOCOLS['search-r1'], llm);
    const e = new RagEnv({ retriever, topK: 2, maxTurns: 2 });
    const t = await runEpisode(e, policy, questions[0]!, { seed: 9 });
    assert.deepEqual(t.steps.map((s) => s.action.type), ['search', 'invalid', 'answer']);
    assert.equal(t.steps[2]!.forced, true);
    assert.match(t.steps[2]!.formatError ?? '', /forced answer did not parse/);
    assert.equal(t.prediction, 'still nothing, the answer might be Paris');
    assert.equal(t.formatFailures, 2);
    assert.equal(t.finished, false);
    assert.deepEqual(llm.requests[0]!.stop, ['</search>', '</answer>']);
    assert.equal(typeof llm.requests[0]!.seed, 'number');
    assert.match(JSON.stringify(t.steps[0]!.prompt), /Question: /);
    assert.equal(t.usage.requests, 3);
  });

  it('rag makes no model call for its first (fixed) search', async () => {
    const llm = new ScriptedLLM(['Reasoning.\nAnswer: Somewhere']);
    const t = await runEpisode(env('rag'), new LlmPolicy(PROTOCOLS.rag, llm), questions[0]!);
    assert.equal(llm.requests.length, 1);
    assert.deepEqual(t.steps.map((s) => s.action.type), ['search', 'answer']);
  });
});

describe('runQuestions', () => {
  it('writes one line per question, resumes without repeats, and refuses different settings', async () => {
    const out = join(tmp.dir, 'run');
    const policy = new SimPolicy(PROTOCOLS['search-r1'], 0.7);
    const base = { outDir: out, env: env('search-r1'), policy, config: { agent: 'search-r1', policy: policy.name }, quiet: true };
    const first = await runQuestions({ ...base, questions: questions.slice(0, 50) });
    assert.equal(first.ran, 50);
    const second = await runQuestions({ ...base, questions });
    assert.deepEqual([second.ran, second.skipped], [70, 50]);
    const ids = readFileSync(join(out, 'trajectories.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).id as string);
    assert.equal(ids.length, 120);
    assert.equal(new Set(ids).size, 120);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    assert.equal(summary.questions, 120);
    assert.equal(summary.policy, 'sim(competence=0.7) [non-LLM]');
    await assert.rejects(runQuestions({ ...base, questions, config: { agent: 'reasonrag', policy: policy.name } }), /made with agent="search-r1", not "reasonrag"/);
  });
});
