/**
 * ARENA's evaluation parity (ren258/ARENA at 53f9569e): its EM / F1 and normalisation, how its evaluation
 * scripts average per-question scores into the reported numbers, and its LLM-judge reply parse, against the
 * values the authors' code returned on seeded inputs (test/fixtures/parity-rl/arena_{f1,eval_averages,
 * judge_parse}; scripts/parity/arena_eval.py regenerates them). Every case must match exactly: the same
 * operations in the same order give the same doubles.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cases, tally } from '../rewards/parity-helpers.js';
import {
  arenaAuthorsExactMatch, arenaAuthorsF1, arenaAuthorsJudgeAccuracy, arenaAuthorsJudgeScore, arenaAuthorsRulebaseReport, type ArenaPredictionItem,
} from '../../src/eval/arena.js';
import { arenaNormalize } from '../../src/rewards/arena.js';
import { exactMatch, f1Score } from '../../src/core/metrics.js';
import { PyError } from '../../src/core/pyjson.js';
import { parseVerdict } from '../../src/rewards/judge.js';
import { scorePredictions } from '../../src/eval/score.js';

type Raised = { error: string; message: string };
const raised = (e: unknown): Raised => ({ error: e instanceof PyError ? e.pythonType : 'Error', message: (e as Error).message });
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

describe("ARENA's EM, F1 and normalisation (src/evaluate.py at 53f9569e)", () => {
  interface C { id: string; prediction: string; golds: string[]; expected: { em: number; f1: number; normalized_prediction: string; normalized_golds: string[] } }
  const all = cases<C>('arena_f1');

  it('normalize_answer, exact_match_score, f1_score: every case matches', () => {
    tally('arena_f1', all.map((c) => {
      const ours = {
        em: arenaAuthorsExactMatch(c.prediction, c.golds), f1: arenaAuthorsF1(c.prediction, c.golds),
        normalized_prediction: arenaNormalize(c.prediction), normalized_golds: c.golds.map(arenaNormalize),
      };
      return { id: c.id, ok: same(ours, c.expected), detail: `ours ${JSON.stringify(ours)}, theirs ${JSON.stringify(c.expected)}` };
    }));
    assert.ok(all.filter((c) => c.expected.f1 > 0 && c.expected.f1 < 1).length > 30);
  });

  it("ragtrail's default metrics differ on purpose (SQuAD's punctuation removal, HotpotQA's yes/no rule)", () => {
    const agree = all.filter((c) => exactMatch(c.prediction, c.golds, { underscoreToSpace: true }) === c.expected.em
      && f1Score(c.prediction, c.golds, { underscoreToSpace: true }).f1 === c.expected.f1).length;
    assert.equal(agree, 266); // of 300 (EM alone 297: deleting punctuation or spacing it rarely changes equality; F1 266)
    // ARENA turns punctuation into a space, SQuAD deletes it: "U.S." is "u s" against "us".
    assert.equal(arenaAuthorsExactMatch('U.S.', ['US']), 0);
    assert.equal(exactMatch('U.S.', ['US'], { underscoreToSpace: true }), 1);
    // No yes/no rule in ARENA's F1.
    assert.equal(arenaAuthorsF1('yes it is', ['yes']), 0.5);
    assert.equal(f1Score('yes it is', ['yes']).f1, 0);
  });
});

describe("ARENA's reported averages (evaluate.py eval_jsonl_rulebase, gpt_eval.py __main__ at 53f9569e)", () => {
  type Rulebase = { total: number; details: number[][] } & Record<string, number | number[][]>;
  interface C {
    id: string; kind: 'rulebase' | 'judge'; items: Record<string, unknown>[]; replies?: (string | null)[]; limit?: number;
    expected: (Rulebase | { correct: number; total: number; accuracy: number; scores: number[]; calls: number } | Raised) & { calls?: number };
  }
  const all = cases<C>('arena_eval_averages');

  it('rule-based means (null responses skipped; KeyError, TypeError, ZeroDivisionError as the script) and the LLM-judge accuracy (Σ scores / items, errors 0, empty answers 0 without a call): every case matches', async () => {
    const results = [];
    for (const c of all) {
      const replies = [...(c.replies ?? [])];
      let calls = 0;
      const judge = () => {
        calls++;
        return replies.shift() ?? null;
      };
      let ours: unknown;
      try {
        ours = c.kind === 'rulebase' ? arenaAuthorsRulebaseReport(c.items as ArenaPredictionItem[]) : { ...(await arenaAuthorsJudgeAccuracy(c.items, judge, c.limit)), calls };
      } catch (e) {
        ours = c.kind === 'rulebase' ? raised(e) : { ...raised(e), calls };
      }
      results.push({ id: c.id, ok: same(ours, c.expected) && replies.length === 0, detail: `ours ${JSON.stringify(ours)}, theirs ${JSON.stringify(c.expected)}` });
    }
    tally('arena_eval_averages', results);
    const rulebase = all.filter((c) => c.kind === 'rulebase');
    assert.ok(rulebase.length >= 140 && all.length - rulebase.length >= 140 && rulebase.filter((c) => 'error' in c.expected).length >= 20);
  });

  it("ragtrail's scoring differs on purpose: a question without a prediction scores 0 instead of leaving the mean", () => {
    const items = [
      { prompt: 'q0', model_response: '<answer>Paris</answer>', answers: ['Paris'] },
      { prompt: 'q1', model_response: null, answers: ['Rome'] },
    ];
    assert.equal(arenaAuthorsRulebaseReport(items).em_score, 1);
    const questions = [{ id: 'q0', question: '', answers: ['Paris'] }, { id: 'q1', question: '', answers: ['Rome'] }];
    assert.equal(scorePredictions(questions, new Map([['q0', 'Paris']]), { resamples: 10 }).means.em, 0.5);
  });
});

describe("ARENA's judge-reply parse (get_score in src/gpt_eval.py and src/rewards.py at 53f9569e)", () => {
  interface C { id: string; reply: string | null; expected: Record<'eval' | 'reward', number | Raised> }
  const all = cases<C>('arena_judge_parse');

  it('"yes" anywhere → 1, else "no" anywhere → 0, else 0.5 (the reward copy first checks the start): every case matches', () => {
    tally('arena_judge_parse', all.map((c) => {
      const ours: Record<string, number | Raised> = {};
      for (const v of ['eval', 'reward'] as const) {
        try {
          ours[v] = arenaAuthorsJudgeScore(c.reply, v);
        } catch (e) {
          ours[v] = raised(e);
        }
      }
      return { id: c.id, ok: same(ours, c.expected), detail: `ours ${JSON.stringify(ours)}, theirs ${JSON.stringify(c.expected)}` };
    }));
    assert.ok(all.some((c) => c.expected.eval !== c.expected.reward && typeof c.expected.eval === 'number'));
  });

  it("ragtrail's judge reads the first whole word yes / no and counts neither as NO, on purpose", () => {
    const agree = all.filter((c) => c.reply !== null && (parseVerdict(c.reply).correct ? 1 : 0) === c.expected.eval).length;
    assert.equal(agree, 122); // of the 290 replies that are text; the 135 ARENA scores 0.5 never agree
    assert.equal(arenaAuthorsJudgeScore('I don\'t know'), 0);
    assert.equal(arenaAuthorsJudgeScore('Yesterday'), 1);
    assert.equal(arenaAuthorsJudgeScore('maybe'), 0.5);
    assert.deepEqual(parseVerdict('Yesterday'), { correct: false, malformed: true });
  });
});
