/**
 * ProRAG's RFT selection with a language-model policy (pipelines/rft-llm.ts): K episodes per question,
 * correct ones kept, steps kept where sigmoid(PRM) passes, and each kept step written as a TRL
 * prompt-completion row whose prompt is exactly what the model was sent.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LlmPolicy } from '../../src/agents/policy.js';
import { getProtocol } from '../../src/agents/registry.js';
import type { Question } from '../../src/core/types.js';
import { loadDatasetAll } from '../../src/corpus/dataset.js';
import { generateWorld, writeWorld } from '../../src/corpus/world/index.js';
import { RagEnv } from '../../src/env/env.js';
import { ScriptedLLM } from '../../src/llm/scripted.js';
import { rftRows } from '../../src/pipelines/rft-llm.js';
import type { PRM } from '../../src/prm/types.js';
import { buildIndex, openRetriever } from '../../src/retrieval/index-dir.js';
import { tempDir } from '../helpers.js';

const tmp = tempDir();
let env: RagEnv;
let questions: Question[];

before(async () => {
  await writeWorld(join(tmp.dir, 'world'), generateWorld({ seed: 5, entities: 300, questions: 20 }));
  await buildIndex(join(tmp.dir, 'world', 'corpus.jsonl'), join(tmp.dir, 'index'), { quiet: true });
  env = new RagEnv({ retriever: await openRetriever(join(tmp.dir, 'index')), topK: 2, maxTurns: 4, maxSearches: 2 });
  questions = (await loadDatasetAll(join(tmp.dir, 'world', 'questions.jsonl'))).questions.slice(0, 4);
});
after(tmp.cleanup);

/** Searches once, then answers: right on even-numbered questions, wrong on odd ones. */
function model(): ScriptedLLM {
  return new ScriptedLLM((req) => {
    const messages = req.messages ?? [];
    const q = questions.findIndex((x) => messages[0]?.content.includes(x.question));
    if (!messages.some((m) => m.role === 'assistant')) return `<step>Find the fact.</step>\n<subquery>${questions[q]!.question}</subquery>`;
    return `<step>Combine.</step>\n<answer>${q % 2 === 0 ? questions[q]!.answers[0] : 'nobody at all'}</answer>`;
  });
}

/** A PRM that passes searches (logit +2) and fails answers (−2). */
const prm: PRM = { name: 'test', score: async (_s, cands) => cands.map((c) => (c.action.type === 'search' ? 2 : -2)) };

describe('rftRows: ProRAG RFT selection with an LLM policy', () => {
  it('keeps the passing steps of correct episodes, with the prompts the model was sent', async () => {
    const llm = model();
    const r = await rftRows(env, new LlmPolicy(getProtocol('prorag'), llm), questions, prm, { samples: 2, temperature: 0.8, seed: 1 });
    // 4 questions × 2 samples; questions 0 and 2 answered right (2 × 2 episodes), each keeping its search step.
    assert.deepEqual(r.counts, { questions: 4, sampled: 8, correct: 4, kept: 4, keptSteps: 4, keptQuestions: 2 });
    assert.deepEqual(r.verdicts.map((v) => v.keptSteps), [[0], [0], [], [], [0], [0], [], []]);
    assert.deepEqual(r.verdicts[0]!.scores.map((s) => +s.toFixed(4)), [0.8808, 0.1192]);
    // Each row is the first call of a correct episode: the messages sent, then the model's own text.
    const firstCalls = llm.requests.filter((req) => !(req.messages ?? []).some((m) => m.role === 'assistant'));
    const sent = firstCalls.filter((req) => /* correct questions */ [0, 2].some((q) => req.messages![0]!.content.includes(questions[q]!.question)));
    assert.equal(r.rows.length, 4);
    for (const [i, row] of r.rows.entries()) {
      assert.deepEqual(row.prompt, sent[i]!.messages);
      assert.deepEqual(row.completion, [{ role: 'assistant', content: `<step>Find the fact.</step>\n<subquery>${questions[i < 2 ? 0 : 2]!.question}</subquery>` }]);
    }
  });

  it('keeps nothing when the threshold is above every score, and the answer steps too when it is below', async () => {
    const strict = await rftRows(env, new LlmPolicy(getProtocol('prorag'), model()), questions, prm, { samples: 1, threshold: 0.95 });
    assert.equal(strict.rows.length, 0);
    assert.equal(strict.counts.correct, 2);
    const loose = await rftRows(env, new LlmPolicy(getProtocol('prorag'), model()), questions, prm, { samples: 1, threshold: 0.1 });
    assert.equal(loose.rows.length, 4); // both steps of the two correct episodes
    assert.equal((loose.rows[1]!.completion as { content: string }[])[0]!.content, `<step>Combine.</step>\n<answer>${questions[0]!.answers[0]}</answer>`);
  });
});
