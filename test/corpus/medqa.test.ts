/** MedQA: the multiple-choice layout read into questions with choices, and predictions scored by the option they pick. */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { LlmPolicy } from '../../src/agents/policy.js';
import { PROTOCOLS } from '../../src/agents/registry.js';
import { choiceScores, readChoice } from '../../src/core/metrics.js';
import { InputError } from '../../src/core/errors.js';
import { loadDatasetAll } from '../../src/corpus/dataset.js';
import { RagEnv } from '../../src/env/env.js';
import { runEpisode } from '../../src/eval/run.js';
import { scoreTrajectory } from '../../src/eval/trajectories.js';
import { ScriptedLLM } from '../../src/llm/scripted.js';
import type { Retriever } from '../../src/retrieval/types.js';

const sample = join(import.meta.dirname, '..', 'fixtures', 'medqa', 'sample.jsonl');

describe('MedQA layout', () => {
  it('is detected; the question lists its options, answers are [letter, text], ids come from the text; a bad gold letter is an error record', async () => {
    const invalid: InputError[] = [];
    const { questions } = await loadDatasetAll(sample, { skipInvalid: true, onInvalid: (e) => invalid.push(e) });
    assert.equal(questions.length, 3);
    const q = questions[0]!;
    assert.equal(q.question, 'A 45-year-old man has crushing chest pain for 30 minutes. Which drug given at once lowers mortality?\nA. Acetaminophen\nB. Aspirin\nC. Ibuprofen\nD. Morphine');
    assert.deepEqual(q.answers, ['B', 'Aspirin']);
    assert.deepEqual(q.choices, { A: 'Acetaminophen', B: 'Aspirin', C: 'Ibuprofen', D: 'Morphine' });
    assert.equal(q.type, 'multiple-choice');
    assert.match(q.id, /^medqa-[0-9a-f]{16}$/);
    assert.equal((await loadDatasetAll(sample, { skipInvalid: true })).questions[0]!.id, q.id, 'stable');
    assert.equal(invalid.length, 1);
    assert.match(invalid[0]!.message, /sample\.jsonl:4: field "answer_idx" must be the letter of one of the options \(A, B, C, D\)/);
  });
});

describe('multiple-choice scoring', () => {
  const choices = { A: 'Acetaminophen', B: 'Aspirin', C: 'Ibuprofen', D: 'Morphine' };
  it('reads the option a prediction picks: a leading letter, "answer is X", or the one option it names', () => {
    for (const p of ['B', '(B)', 'B. Aspirin', 'b) aspirin', 'The answer is B.', 'Answer: (B)', 'Aspirin', 'It should be aspirin.']) assert.equal(readChoice(p, choices), 'B', p);
    assert.equal(readChoice('Aspirin or ibuprofen', choices), undefined, 'two options named');
    assert.equal(readChoice('E', choices), undefined, 'not an option');
    assert.equal(readChoice('', choices), undefined);
  });

  it('EM, F1 and Acc are all the accuracy of the picked option (RAG-Gym); an article-like letter is not lost to normalisation', () => {
    assert.deepEqual(choiceScores('A. Acetaminophen', choices, 'A'), { em: 1, f1: 1, acc: 1 });
    assert.deepEqual(choiceScores('Aspirin', choices, 'A'), { em: 0, f1: 0, acc: 0 });
  });

  it('an episode on a MedQA question is scored by its option, and the run carries the choices to rescore it', async () => {
    const { questions } = await loadDatasetAll(sample, { skipInvalid: true });
    const none: Retriever = { name: 'none', search: async () => [], searchBatch: async (qs) => qs.map(() => []) };
    const env = new RagEnv({ retriever: none, topK: 1, maxTurns: 1, maxSearches: 0 });
    const right = await runEpisode(env, new LlmPolicy(PROTOCOLS.direct, new ScriptedLLM(['C. Vitamin C'])), questions[1]!);
    const wrong = await runEpisode(env, new LlmPolicy(PROTOCOLS.direct, new ScriptedLLM(['Vitamin D'])), questions[1]!);
    assert.deepEqual([right.metrics!.em, wrong.metrics!.em], [1, 0]);
    assert.deepEqual(right.meta!['choices'], questions[1]!.choices);
    assert.deepEqual(scoreTrajectory(JSON.parse(JSON.stringify(right))), { em: 1, f1: 1, acc: 1 });
  });
});
