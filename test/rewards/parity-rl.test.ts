/**
 * RL parity: ragtrail's RL math against the values the papers' authors' own functions returned on seeded
 * inputs (test/fixtures/parity-rl/<set>/dev.jsonl; each SOURCE.md names the repository, commit, function and
 * call; scripts/parity/ regenerates them from a checkout). Every case of every set must match.
 *
 * Tolerance: float64 cases to 1e-9 relative (1e-12 absolute near 0): the same operations in another order.
 * float32 cases (the dtype verl trains in) are recomputed here in float64 from the float32 inputs, which
 * doubles hold exactly, so they differ by float32 rounding: to 1e-5 of the magnitudes involved.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agrees, cases, grid, gridsAgree, type Num, tally, toNum } from './parity-helpers.js';
import {
  aggregateLoss, ARENA_GRPO, gaeAdvantages, grpoAdvantages, grpoOutcomeAdvantages, grpoTokenLoss, klPenalty, SEARCH_R1_GRPO, type VerlKlKind,
} from '../../src/rewards/rl.js';
import { lenientRerankRewards, ragGymRerankRewards } from '../../src/process/rag-gym-rerank.js';
import { coverMatch, exactMatch, f1Score } from '../../src/core/metrics.js';
import { ragGymLocateAnswer } from '../../src/eval/metrics.js';
import { parseSearchR1Turn } from '../../src/agents/search-r1.js';
import { reasonragAuthorsEvalAnswer, reasonragAuthorsJudgeScore } from '../../src/rewards/reasonrag.js';
import { PyError } from '../../src/core/pyjson.js';

describe('Search-R1 verl RL math (core_algos.py at a14dc3a4)', () => {
  it('GRPO outcome advantage (ε 1e-6, a group of one → r / (1 + ε)): every case matches', () => {
    interface C { id: string; dtype: string; token_level_rewards: Num[][]; eos_mask: number[][]; index: string[]; expected: { advantages: Num[][] } }
    tally('searchr1_grpo_outcome', cases<C>('searchr1_grpo_outcome').map((c) => {
      const rewards = grid(c.token_level_rewards);
      const ours = grpoOutcomeAdvantages(rewards, c.eos_mask, c.index, SEARCH_R1_GRPO);
      const theirs = grid(c.expected.advantages);
      // (r − mean) / (std + ε) loses the digits the rewards share: its rounding error is the rewards' own
      // (an ulp of the dtype) times max |r| / (std + ε), which is large for near-ties (0.5 and 0.5 + 1e-7).
      const scores = rewards.map((r) => r.reduce((s, x) => s + x, 0));
      const cond = (i: number) => {
        const g = scores.filter((_, k) => c.index[k] === c.index[i]);
        const m = g.reduce((s, x) => s + x, 0) / g.length;
        const sd = g.length > 1 ? Math.sqrt(g.reduce((s, x) => s + (x - m) ** 2, 0) / (g.length - 1)) : 1;
        return Math.max(...g.map(Math.abs)) / (sd + 1e-6);
      };
      return { id: c.id, ok: gridsAgree(ours, theirs, c.dtype, () => 1, cond), detail: JSON.stringify({ ours, theirs }) };
    }));
  });

  it('GAE with batch whitening (and ValueError below 2 valid tokens): every case matches', () => {
    interface C {
      id: string; dtype: string; token_level_rewards: Num[][]; values: Num[][]; eos_mask: number[][]; gamma: number; lam: number;
      expected: { advantages: Num[][]; returns: Num[][] } | { error: string; message: string };
    }
    tally('searchr1_gae', cases<C>('searchr1_gae').map((c) => {
      const run = () => gaeAdvantages(grid(c.token_level_rewards), grid(c.values), c.eos_mask, c.gamma, c.lam);
      if ('error' in c.expected) {
        let message = '';
        try {
          run();
        } catch (e) {
          message = (e as Error).message;
        }
        return { id: c.id, ok: message.includes(c.expected.error), detail: `expected ${c.expected.error}, got "${message}"` };
      }
      const ours = run();
      const values = grid(c.values);
      const length = values[0]!.length;
      const scale = (1 + length) * Math.max(1, ...values.flat().map(Math.abs), ...grid(c.token_level_rewards).flat().map(Math.abs));
      // Whitening divides by the batch's spread √(var + 1e-8): rounding in the raw advantages grows by scale / that.
      const raw = ours.returns.flatMap((row, i) => row.map((r, t) => [r - values[i]![t]!, c.eos_mask[i]![t]!] as const));
      const n = raw.reduce((s, [, m]) => s + m, 0);
      const m = raw.reduce((s, [a, k]) => s + a * k, 0) / n;
      const spread = Math.sqrt(raw.reduce((s, [a, k]) => s + (a - m) ** 2 * k, 0) / (n - 1) + 1e-8);
      const ok = gridsAgree(ours.returns, grid(c.expected.returns), c.dtype, () => scale, () => scale)
        && gridsAgree(ours.advantages, grid(c.expected.advantages), c.dtype, () => 1, () => scale / spread);
      return { id: c.id, ok, detail: JSON.stringify({ ours, theirs: c.expected }) };
    }));
  });

  it('KL penalties kl / abs / mse / low_var_kl (and NotImplementedError for any other name): every case matches', () => {
    interface C { id: string; dtype: string; kind: string; logprob: Num[][]; ref_logprob: Num[][]; expected: { kl: Num[][] } | { error: string } }
    tally('searchr1_kl_penalty', cases<C>('searchr1_kl_penalty').map((c) => {
      const lp = grid(c.logprob);
      const ref = grid(c.ref_logprob);
      const run = () => lp.map((row, i) => row.map((x, j) => klPenalty(x, ref[i]![j]!, c.kind as VerlKlKind)));
      if ('error' in c.expected) {
        assert.throws(run, new RegExp(c.expected.error));
        return { id: c.id, ok: true, detail: '' };
      }
      const ours = run();
      // float32: exp(log ρ) carries the rounding of log ρ times ρ.
      const scale = (i: number, j: number) => Math.max(Math.abs(lp[i]![j]!), Math.abs(ref[i]![j]!), c.kind === 'low_var_kl' ? Math.min(Math.exp(ref[i]![j]! - lp[i]![j]!), 1e6) : 0) ** (c.kind === 'mse' ? 2 : 1);
      return { id: c.id, ok: gridsAgree(ours, grid(c.expected.kl), c.dtype, scale), detail: JSON.stringify({ ours, theirs: c.expected.kl }) };
    }));
  });
});

describe("ARENA's GRPO trainer (its copy of TRL's grpo_trainer.py at 53f9569e)", () => {
  it('GRPO advantage (weighted sum of the four rewards, ε 1e-4 on the std of each block of num_generations): every case matches', () => {
    interface C { id: string; num_generations: number; reward_weights: number[]; rewards_per_func: number[][]; expected: { rewards: Num[]; advantages: Num[] } }
    tally('arena_grpo_advantage', cases<C>('arena_grpo_advantage').map((c) => {
      const rewards = c.rewards_per_func.map((r) => r.reduce((s, x, j) => s + x * c.reward_weights[j]!, 0));
      const g = c.num_generations;
      const ours = rewards.flatMap((_, i) => (i % g ? [] : grpoAdvantages(rewards.slice(i, i + g), ARENA_GRPO)));
      const scale = (i: number) => Math.max(...c.rewards_per_func[i]!.map((x, j) => Math.abs(x * c.reward_weights[j]!))) * 4;
      const cond = (i: number) => {
        const block = rewards.slice(i - (i % g), i - (i % g) + g);
        const m = block.reduce((s, x) => s + x, 0) / g;
        const sd = Math.sqrt(block.reduce((s, x) => s + (x - m) ** 2, 0) / (g - 1));
        return Math.max(...block.map(Math.abs)) * 4 / (sd + 1e-4);
      };
      const ok = rewards.every((r, i) => agrees(r, toNum(c.expected.rewards[i]!), 'float32', scale(i)))
        && ours.every((a, i) => agrees(a, toNum(c.expected.advantages[i]!), 'float32', 1, cond(i)));
      return { id: c.id, ok, detail: JSON.stringify({ ours, theirs: c.expected.advantages }) };
    }));
  });

  it('loss: clipped surrogate + β·k2, summed over the batch\'s completion tokens / their count: every case matches', () => {
    interface C {
      id: string; beta: number; epsilon: number; num_iterations: number; per_token_logps: number[][]; old_per_token_logps: number[][] | null;
      ref_per_token_logps: number[][]; advantages: number[]; completion_mask: number[][]; expected: { loss: Num };
    }
    tally('arena_grpo_loss', cases<C>('arena_grpo_loss').map((c) => {
      // num_iterations 1: the old log-probabilities are the current ones, detached (ratio 1).
      const old = c.old_per_token_logps ?? c.per_token_logps;
      const perToken = c.per_token_logps.map((row, i) => row.map((logp, t) => grpoTokenLoss(
        { logp, logpOld: old[i]![t]!, logpRef: c.ref_per_token_logps[i]![t]!, advantage: c.advantages[i]! },
        { epsLow: c.epsilon, epsHigh: c.epsilon, beta: c.beta, kl: 'k2' },
      )));
      const ours = aggregateLoss(perToken, c.completion_mask, 'token');
      const scale = Math.max(...perToken.flat().map(Math.abs));
      return { id: c.id, ok: agrees(ours, toNum(c.expected.loss), 'float32', scale), detail: JSON.stringify({ ours, theirs: c.expected.loss }) };
    }));
  });
});

describe("RAG-Gym's LLM-rerank process reward (rag_gym/rewards/lm_rerank.py at 2abbdd48)", () => {
  interface C { id: string; count: number; reply: string; expected: { rewards: number[] } }
  const set = cases<C>('raggym_rerank');

  it('compat reader: 1 / (1 + position), all 0 when the reply cannot be read as the authors read it: every case matches, exactly', () => {
    tally('raggym_rerank', set.map((c) => {
      const ours = ragGymRerankRewards(c.reply, c.count);
      return { id: c.id, ok: JSON.stringify(ours) === JSON.stringify(c.expected.rewards), detail: JSON.stringify({ reply: c.reply, ours, theirs: c.expected.rewards }) };
    }));
  });

  it("ragtrail's lenient reader differs on purpose: it ranks what it can read, and positions count only valid indices", () => {
    // Out-of-range 8 listed first: the authors' code keeps its position (the best candidate gets 1/2).
    assert.deepEqual(ragGymRerankRewards('```json{"ranked_indices": [8, 0, 1]}```', 2), [1 / 2, 1 / 3]);
    assert.deepEqual(lenientRerankRewards('```json{"ranked_indices": [8, 0, 1]}```', 2), [1, 1 / 2]);
    // No ```json fence: all 0 for the authors, the listed order for ragtrail.
    assert.deepEqual(ragGymRerankRewards('{"ranked_indices": [1, 0]}', 2), [0, 0]);
    assert.deepEqual(lenientRerankRewards('{"ranked_indices": [1, 0]}', 2), [1 / 2, 1]);
  });
});

describe("Search-R1's text functions (qa_em.py and generation.py at a14dc3a4)", () => {
  it('substring EM (subem_check): the normalised gold inside the normalised prediction — every case matches', () => {
    interface C { id: string; prediction: string; golden_answers: string | string[]; expected: number }
    const all = cases<C>('searchr1_subem');
    tally('searchr1_subem', all.map((c) => {
      const ours = coverMatch(c.prediction, c.golden_answers);
      return { id: c.id, ok: ours === c.expected, detail: `ours ${ours}, theirs ${c.expected}` };
    }));
    // The set exercises both outcomes, not one.
    assert.ok(all.filter((c) => c.expected === 1).length > 100 && all.filter((c) => c.expected === 0).length > 100);
  });

  it("per-turn action extraction (postprocess_predictions): the first complete <search>/<answer> pair — every case matches", () => {
    interface C { id: string; prediction: string; expected: { action: 'search' | 'answer' | null; content: string } }
    tally('searchr1_postprocess', cases<C>('searchr1_postprocess').map((c) => {
      const a = parseSearchR1Turn(c.prediction);
      const ours = a.type === 'search' ? { action: 'search', content: a.query } : a.type === 'answer' ? { action: 'answer', content: a.answer } : { action: null, content: '' };
      const ok = ours.action === c.expected.action && ours.content === c.expected.content;
      return { id: c.id, ok, detail: `ours ${JSON.stringify(ours).slice(0, 120)}, theirs ${JSON.stringify(c.expected).slice(0, 120)}` };
    }));
  });
});

describe("ReasonRAG's judge-score parse and evaluation answer (pipeline/reasonrag_pipeline.py at 225e249a)", () => {
  it('judge score (extract_last_number, then float(Q) / 100): every case matches, TypeError where there is no number', () => {
    interface C { id: string; reply: string; expected?: Num; error?: { type: string; message: string } }
    const all = cases<C>('reasonrag_judge_score');
    tally('reasonrag_judge_score', all.map((c) => {
      let ours: number | { type: string; message: string };
      try {
        ours = reasonragAuthorsJudgeScore(c.reply);
      } catch (e) {
        ours = { type: e instanceof PyError ? e.pythonType : 'Error', message: (e as Error).message };
      }
      const ok = c.error ? typeof ours === 'object' && ours.type === c.error.type && ours.message === c.error.message : ours === toNum(c.expected!);
      return { id: c.id, ok, detail: `ours ${JSON.stringify(ours)}, theirs ${JSON.stringify(c.expected ?? c.error)}` };
    }));
    assert.ok(all.filter((c) => c.error).length > 30);
  });

  it('evaluation answer (reason_rag_pred_parse): every case matches', () => {
    interface C { id: string; pred: string; expected: string }
    tally('reasonrag_eval_answer', cases<C>('reasonrag_eval_answer').map((c) => {
      const ours = reasonragAuthorsEvalAnswer(c.pred);
      return { id: c.id, ok: ours === c.expected, detail: `ours ${JSON.stringify(ours).slice(0, 120)}, theirs ${JSON.stringify(c.expected).slice(0, 120)}` };
    }));
  });
});

describe("RAG-Gym's EM/F1 rewards and evaluation answer location (rag_gym/rewards, src/evaluate.py at 2abbdd48)", () => {
  it('EMReward and F1Reward: 0 for a search or no answer, else HotpotQA EM / F1 against the truth — every case matches', () => {
    interface C { id: string; truth: string; action: { query: string | null; answer: string | null }; expected: { em: number; f1: number } }
    tally('raggym_em_f1', cases<C>('raggym_em_f1').map((c) => {
      const answered = c.action.query === null && c.action.answer !== null;
      const ours = answered ? { em: exactMatch(c.action.answer!, c.truth), f1: f1Score(c.action.answer!, c.truth).f1 } : { em: 0, f1: 0 };
      const ok = ours.em === c.expected.em && Math.abs(ours.f1 - c.expected.f1) <= 1e-12;
      return { id: c.id, ok, detail: `ours ${JSON.stringify(ours)}, theirs ${JSON.stringify(c.expected)}` };
    }));
  });

  it('locate_answer: every case matches', () => {
    interface C { id: string; s: string | null; expected: string }
    tally('raggym_locate_answer', cases<C>('raggym_locate_answer').map((c) => {
      const ours = ragGymLocateAnswer(c.s);
      return { id: c.id, ok: ours === c.expected, detail: `ours ${JSON.stringify(ours).slice(0, 120)}, theirs ${JSON.stringify(c.expected).slice(0, 120)}` };
    }));
  });
});
