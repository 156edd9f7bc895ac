/** EM split by question type and by whether the question offers its own answer (eval/question-types.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Trajectory } from '../../src/core/trajectory.js';
import type { Question } from '../../src/core/types.js';
import { answerInQuestion, emByType, NEEDS_RETRIEVAL } from '../../src/eval/question-types.js';
import { testClaim } from '../../src/pipelines/claims.js';

const q = (id: string, type: string, question: string, answers: string[]): Question => ({ id, type, question, answers });
const t = (id: string, em: number) => ({ id, metrics: { em, f1: em, acc: em } }) as unknown as Trajectory;

describe('question types', () => {
  it('a question offers its answer when it is yes/no or names a gold answer (whole words, normalised)', () => {
    assert.equal(answerInQuestion({ question: 'Are A and B of the same nationality?', answers: ['yes'] }), true);
    assert.equal(answerInQuestion({ question: 'Who was born first, Ana Lind or Bo Ek?', answers: ['Bo Ek'] }), true);
    assert.equal(answerInQuestion({ question: 'Which film came out first, The Tide or Red Sky?', answers: ['the tide'] }), true);
    assert.equal(answerInQuestion({ question: 'Who directed The Tide?', answers: ['Ana Lind'] }), false);
    // "Lind" is in the question, "Ana Lind" is not: not offered.
    assert.equal(answerInQuestion({ question: 'Where was Lindqvist born?', answers: ['Lind'] }), false);
  });

  it('EM per type in order of appearance, then on the questions that need retrieval', () => {
    const qs = [
      q('a', 'comparison', 'Who was born first, Ana or Bo?', ['Ana']),
      q('b', 'comparison', 'Are Ana and Bo from the same country?', ['no']),
      q('c', 'compositional', 'Who directed the film that Ana wrote?', ['Cy']),
      q('d', 'single-hop', 'Who wrote X?', ['Di']),
    ];
    const rows = emByType([t('a', 1), t('b', 1), t('c', 0), t('d', 1)], new Map(qs.map((x) => [x.id, x])));
    assert.deepEqual(rows, [
      { type: 'comparison', n: 2, em: 1 },
      { type: 'compositional', n: 1, em: 0 },
      { type: 'single-hop', n: 1, em: 1 },
      { type: NEEDS_RETRIEVAL, n: 2, em: 0.5 },
    ]);
    assert.deepEqual(emByType([t('a', 1)], new Map([['a', { id: 'a', question: 'Who?', answers: ['x'] }]])), [], 'untyped: no split');
  });

  it('a claim is also tested on the questions that need retrieval, where a guess cannot score', () => {
    const m = (xs: number[]) => new Map(xs.map((x, i) => [`q${i}`, x]));
    // q0–q3 are guessable (the control guesses them wrong), q4–q7 need retrieval: equal there.
    const need = new Set(['q4', 'q5', 'q6', 'q7']);
    const row = testClaim('P', { claim: 'c', metric: 'em', treatment: 'a', control: 'b', expect: 'higher', margin: 0.02 }, [
      { seed: 0, treatment: m([1, 1, 1, 1, 1, 0, 1, 0]), control: m([0, 0, 0, 0, 1, 0, 1, 0]), needsRetrieval: need },
    ]);
    assert.equal(row.delta, 0.5);
    assert.equal(row.needsRetrieval?.n, 4);
    assert.equal(row.needsRetrieval?.delta, 0);
    assert.equal(row.needsRetrieval?.holds, false);
    const without = testClaim('P', { claim: 'c', metric: 'em', treatment: 'a', control: 'b', expect: 'higher', margin: 0.02 }, [{ seed: 0, treatment: m([1]), control: m([0]) }]);
    assert.equal(without.needsRetrieval, undefined);
  });
});

describe('PRM calibration on pairs', () => {
  it('bins σ(|score gap|) and weighs |accuracy − confidence| by pairs (hand-computed)', async () => {
    const { pairCalibration } = await import('../../src/prm/trained.js');
    // Gaps ln 3 (confidence 0.75, right), −ln 3 (0.75, wrong), 0 (0.5, a tie: 0.5), 3 (σ(3) = 0.952574, right).
    const c = pairCalibration([Math.log(3), -Math.log(3), 0, 3]);
    const used = c.bins.filter((b) => b.n > 0).map((b) => [b.from, b.n, Number(b.confidence.toFixed(6)), b.accuracy]);
    assert.deepEqual(used, [[0.5, 1, 0.5, 0.5], [0.7, 2, 0.75, 0.5], [0.9, 1, 0.952574, 1]]);
    // ECE = ¼·0 + ½·0.25 + ¼·(1 − 0.952574) = 0.136856.
    assert.ok(Math.abs(c.ece - 0.136856) < 1e-6, String(c.ece));
  });
});
