/**
 * Where a response's sequence-level score goes on the token grid of an RL batch. verl trains on one reward per
 * token; an outcome reward (exact match, format score) is written on one token of a row of zeros, and the
 * advantage estimators (GRPO sums the row, GAE runs backwards from it) take it from there. This follows
 * Search-R1's reward manager, `verl/trainer/main_ppo.py` `RewardManager.__call__` (@a14dc3a4).
 */

/** Options of {@link placeSequenceReward}; {@link SEARCH_R1_PLACEMENT} reproduces Search-R1's reward manager. */
export interface RewardPlacementOptions {
  /**
   * Which token gets the score.
   * 'last-valid' (default): the last response token whose attention-mask value is 1 — the last token the
   * policy generated, whatever the mask's shape.
   * 'count': index (number of 1s in the response mask) − 1, as the authors write
   * `reward_tensor[i, valid_response_length - 1]`. It is the last valid token when the mask is a prefix of
   * ones (right padding, which is how Search-R1 lays responses out), and another position when the mask has
   * gaps or leading zeros.
   * With no valid token both rules put the score on the last column (Python's index −1 in the authors' code):
   * the response still counts in its GRPO group's mean and standard deviation, and its mask carries no loss.
   */
  rule?: 'last-valid' | 'count';
  /**
   * Hold the score as float32, as verl's reward tensor does (`torch.zeros_like(responses, dtype=torch.float32)`):
   * 0.1 is stored as 0.10000000149011612, and a finite score beyond float32's range throws, as torch refuses to
   * write it ("value cannot be converted to type float without overflow"). Default false: the score as given.
   */
  float32?: boolean;
}

/** Search-R1's reward manager: the score at index (valid response length − 1) of a float32 row. */
export const SEARCH_R1_PLACEMENT: Readonly<RewardPlacementOptions> = Object.freeze({ rule: 'count', float32: true });

const FLOAT32_MAX = 3.4028234663852886e38;

/**
 * One response's row of token rewards: zeros, with `score` on the token {@link RewardPlacementOptions.rule}
 * picks. `responseMask` is the response part of the attention mask (1 for a generated token, 0 for padding);
 * its length is the row's. A row of width 0 has no token to hold the score and throws (the authors' code
 * raises IndexError there).
 */
export function placeSequenceReward(score: number, responseMask: readonly number[], opts: RewardPlacementOptions = {}): number[] {
  const width = responseMask.length;
  if (width === 0) {
    throw new Error('placeSequenceReward: the response has no token position to hold its score (verl raises IndexError: index -1 is out of bounds for dimension 1 with size 0)');
  }
  let value = score;
  if (opts.float32) {
    if (Number.isFinite(score) && Math.abs(score) > FLOAT32_MAX) {
      throw new Error(`placeSequenceReward: score ${score} is beyond float32's range (torch raises RuntimeError: value cannot be converted to type float without overflow)`);
    }
    value = Math.fround(score);
  }
  let at: number;
  if ((opts.rule ?? 'last-valid') === 'count') {
    at = responseMask.reduce((s, m) => s + m, 0) - 1;
  } else {
    at = responseMask.lastIndexOf(1);
  }
  const row = new Array<number>(width).fill(0);
  row[at < 0 ? width - 1 : at] = value;
  return row;
}

/**
 * The batch form of {@link placeSequenceReward}: one score and one response mask per row.
 * `attentionMask` rows may hold the prompt part too; `promptLength` columns are skipped (verl's
 * `attention_mask[prompt_length:]`).
 */
export function placeSequenceRewards(
  scores: readonly number[],
  attentionMask: readonly (readonly number[])[],
  promptLength = 0,
  opts: RewardPlacementOptions = {},
): number[][] {
  if (scores.length !== attentionMask.length) {
    throw new Error(`placeSequenceRewards: ${scores.length} scores for ${attentionMask.length} mask rows; give one score per response`);
  }
  return scores.map((s, i) => placeSequenceReward(s, attentionMask[i]!.slice(promptLength), opts));
}

/**
 * The token ids Search-R1's reward manager decodes and scores for one row: the last (number of 1s in the
 * prompt part of the mask) prompt ids, then the first (number of 1s in the response part) response ids. The
 * counts are sums, so a mask with gaps shifts what is read; and a prompt with no valid token gives all its
 * ids, padding included, because `prompt_ids[-0:]` is the whole tensor in Python.
 */
export function verlScoredIds(prompt: readonly number[], response: readonly number[], attentionMask: readonly number[]): number[] {
  const sum = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0);
  const validPrompt = sum(attentionMask.slice(0, prompt.length));
  const validResponse = sum(attentionMask.slice(prompt.length));
  return [...prompt.slice(validPrompt === 0 ? 0 : prompt.length - validPrompt), ...response.slice(0, validResponse)];
}
