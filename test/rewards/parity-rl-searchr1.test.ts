/**
 * RL parity, Search-R1's token layout: where the sequence reward lands (verl/trainer/main_ppo.py
 * RewardManager.__call__) and which response tokens carry loss (search_r1/llm_agent/generation.py's info
 * mask, ray_trainer.py's _create_loss_mask), against what the authors' code returned at a14dc3a4 on seeded
 * inputs (test/fixtures/parity-rl/searchr1_{reward_placement,info_mask}; scripts/parity/searchr1_masks.py
 * regenerates them). Every case must match exactly: the values are token ids, 0/1 masks, and float32 scores.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cases, type Num, tally, toNum } from './parity-helpers.js';
import { placeSequenceReward, placeSequenceRewards, SEARCH_R1_PLACEMENT, verlScoredIds } from '../../src/rewards/reward-placement.js';
import { infoMaskedConcat, searchR1RolloutLayout, type SearchR1TurnIds } from '../../src/rewards/info-mask.js';

const same = (ours: number, theirs: number) => (Number.isNaN(theirs) ? Number.isNaN(ours) : Object.is(ours, theirs) || ours === theirs);
const sameGrid = (ours: readonly (readonly number[])[], theirs: readonly (readonly number[])[]) =>
  ours.length === theirs.length && theirs.every((row, i) => row.length === ours[i]!.length && row.every((t, j) => same(ours[i]![j]!, t)));

describe("Search-R1's reward placement (verl/trainer/main_ppo.py RewardManager.__call__ at a14dc3a4)", () => {
  interface C {
    id: string; prompts: number[][]; responses: number[][]; attention_mask: number[][]; data_source: string[]; scores: (Num | boolean)[];
    expected: ({ token_level_rewards: Num[][]; dtype: string } | { error: string; message: string }) & { scored_ids: number[][] };
  }
  const set = cases<C>('searchr1_reward_placement');
  // `_select_rm_score_fn`'s list: any other data source raises NotImplementedError before the row is scored. It is
  // the authors' training configuration, not part of the placement; the test keeps it to follow their row order.
  const SOURCES = new Set(['nq', 'triviaqa', 'popqa', 'hotpotqa', '2wikimultihopqa', 'musique', 'bamboogle']);
  const score = (s: Num | boolean) => (typeof s === 'boolean' ? Number(s) : toNum(s)); // Python's True is 1

  /** Runs the rows in the authors' order: the rewards, the ids scored, and the first error. */
  function run(c: C, opts = SEARCH_R1_PLACEMENT) {
    const rewards: number[][] = [];
    const scored: number[][] = [];
    for (let i = 0; i < c.scores.length; i++) {
      const p = c.prompts[i]!.length;
      if (!SOURCES.has(c.data_source[i]!)) return { rewards, scored, error: 'NotImplementedError' };
      scored.push(verlScoredIds(c.prompts[i]!, c.responses[i]!, c.attention_mask[i]!));
      try {
        rewards.push(placeSequenceReward(score(c.scores[i]!), c.attention_mask[i]!.slice(p), opts));
      } catch (e) {
        const m = (e as Error).message;
        return { rewards, scored, error: m.includes('IndexError') ? 'IndexError' : m.includes('RuntimeError') ? 'RuntimeError' : m };
      }
    }
    return { rewards, scored, error: undefined };
  }

  it('compat (SEARCH_R1_PLACEMENT: index valid length − 1, float32): every case matches, exactly, and so do the ids scored', () => {
    tally('searchr1_reward_placement', set.map((c) => {
      const ours = run(c);
      const ids = JSON.stringify(ours.scored) === JSON.stringify(c.expected.scored_ids);
      if ('error' in c.expected) return { id: c.id, ok: ours.error === c.expected.error && ids, detail: JSON.stringify({ ours, theirs: c.expected }) };
      const theirs = c.expected.token_level_rewards.map((r) => r.map(toNum));
      // The batch form, with the prompt columns skipped, gives the same rows.
      const batch = placeSequenceRewards(c.scores.map(score), c.attention_mask, c.prompts[0]!.length, SEARCH_R1_PLACEMENT);
      const ok = ours.error === undefined && ids && sameGrid(ours.rewards, theirs) && sameGrid(batch, theirs);
      return { id: c.id, ok, detail: JSON.stringify({ ours, theirs: c.expected }) };
    }));
    const raising = set.filter((c) => 'error' in c.expected);
    assert.deepEqual(new Set(raising.map((c) => (c.expected as { error: string }).error)), new Set(['IndexError', 'NotImplementedError', 'RuntimeError']));
  });

  it("ragtrail's default differs on purpose: the last token whose mask is 1, and the score as given (no float32)", () => {
    // Right padding (Search-R1's layout): the same token.
    assert.deepEqual(placeSequenceReward(1, [1, 1, 0, 0]), [0, 1, 0, 0]);
    assert.deepEqual(placeSequenceReward(1, [1, 1, 0, 0], SEARCH_R1_PLACEMENT), [0, 1, 0, 0]);
    // A mask with a gap: the authors' index 2 − 1 = 1 is a padding position; the default takes the last valid token.
    assert.deepEqual(placeSequenceReward(1, [1, 0, 1, 0], SEARCH_R1_PLACEMENT), [0, 1, 0, 0]);
    assert.deepEqual(placeSequenceReward(1, [1, 0, 1, 0]), [0, 0, 1, 0]);
    // float32: 0.1 is held as 0.10000000149011612 by verl's reward tensor.
    assert.equal(placeSequenceReward(0.1, [1], SEARCH_R1_PLACEMENT)[0], 0.10000000149011612);
    assert.equal(placeSequenceReward(0.1, [1])[0], 0.1);
    // An empty response: both put the score on the last column.
    assert.deepEqual(placeSequenceReward(0.5, [0, 0, 0]), [0, 0, 0.5]);
    // How often the default agrees with the authors on this set's cases that do not raise.
    const ok = set.filter((c) => !('error' in c.expected));
    const agree = ok.filter((c) => {
      const ours = run(c, {});
      return ours.error === undefined && sameGrid(ours.rewards, (c.expected as { token_level_rewards: Num[][] }).token_level_rewards.map((r) => r.map(toNum)));
    }).length;
    assert.ok(agree > 0 && agree < ok.length, `default agrees on ${agree} of ${ok.length}`);
    console.log(`searchr1_reward_placement: the default agrees on ${agree} of ${ok.length} cases that do not raise`);
  });
});

describe("Search-R1's info mask (search_r1/llm_agent/generation.py, ray_trainer.py _create_loss_mask at a14dc3a4)", () => {
  interface Concat {
    id: string; kind: 'concat'; pad_id: number; pad_to_left: boolean; prompt: number[][]; prompt_with_mask: number[][]; response: number[][]; info: number[][] | null;
    expected: { ids: number[][]; with_info_mask: number[][] };
  }
  interface Rollout {
    id: string; kind: 'rollout'; pad_id: number; max_start_length: number; max_prompt_length: number; prompt: number[][]; turns: SearchR1TurnIds[];
    expected: { prompts: number[][]; responses: number[][]; responses_with_info_mask: number[][]; attention_mask: number[][]; info_mask: number[][]; loss_mask: number[][] };
  }
  const set = cases<Concat | Rollout>('searchr1_info_mask');

  it('_info_masked_concatenate_with_padding and whole rollouts (ids, attention, info and loss masks): every case matches, exactly', () => {
    tally('searchr1_info_mask', set.map((c) => {
      if (c.kind === 'concat') {
        const ours = infoMaskedConcat(c.prompt, c.prompt_with_mask, c.response, c.info ?? undefined, c.pad_id, c.pad_to_left);
        const ok = sameGrid(ours.ids, c.expected.ids) && sameGrid(ours.masked, c.expected.with_info_mask);
        return { id: c.id, ok, detail: JSON.stringify({ ours, theirs: c.expected }) };
      }
      const ours = searchR1RolloutLayout(c.prompt, c.turns, { padId: c.pad_id, maxStartLength: c.max_start_length, maxPromptLength: c.max_prompt_length });
      const e = c.expected;
      const ok = sameGrid(ours.prompts, e.prompts) && sameGrid(ours.responses, e.responses) && sameGrid(ours.responsesWithInfoMask, e.responses_with_info_mask)
        && sameGrid(ours.attentionMask, e.attention_mask) && sameGrid(ours.infoMask, e.info_mask) && sameGrid(ours.lossMask, e.loss_mask);
      return { id: c.id, ok, detail: JSON.stringify({ ours, theirs: e }) };
    }));
  });

  it("the authors' quirks the set exercises: a pad-valued id counts as padding, the prompt limit cuts the response side, an empty side masks by the whole info mask", () => {
    const rollouts = set.filter((c): c is Rollout => c.kind === 'rollout');
    // A generated id equal to the pad id is moved to the right and masked like padding.
    const out = searchR1RolloutLayout([[5]], [{ responses: [[7, 0, 8]], obs: [[9]] }], { padId: 0, maxStartLength: 4, maxPromptLength: 10 });
    assert.deepEqual(out.responses, [[7, 8, 9]]);
    assert.deepEqual(out.lossMask, [[1, 1, 0]]);
    // The set has cases whose response side was cut by max_prompt_length, and cases with an empty response side.
    assert.ok(rollouts.some((c) => c.expected.responses[0]!.length === c.max_prompt_length));
    assert.ok(rollouts.some((c) => c.expected.responses[0]!.length === 0 && c.expected.loss_mask[0]!.length === c.expected.info_mask[0]!.length));
    // Retrieved tokens are masked in every case where there are any.
    assert.ok(rollouts.some((c) => c.expected.loss_mask.flat().includes(0) && c.expected.attention_mask.flat().includes(1)));
  });
});
