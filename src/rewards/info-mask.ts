/**
 * Search-R1's loss mask for retrieved text: which response tokens of a multi-turn rollout carry loss. The
 * response side of a rollout is the policy's turns with the retrieved `<information>` blocks between them;
 * the retrieved tokens are the environment's, not the policy's, so the actor's loss skips them (Jin et al. 2025,
 * Search-R1, "loss masking for retrieved tokens"). The authors build the mask alongside the ids, in
 * `search_r1/llm_agent/generation.py` (@a14dc3a4): a second copy of the response side in which each
 * observation is replaced by pad ids (`_info_masked_concatenate_with_padding`, called turn by turn from
 * `_update_right_side`), then `info_mask` = that copy ≠ pad (`_compose_final_output`), and the trainer's
 * `RayPPOTrainer._create_loss_mask` takes its response columns as the actor's loss mask when
 * `actor.state_masking` is on. Both copies are re-padded after every turn by moving every pad-valued id to one
 * side (a stable sort), so the rule is the authors' as written: an id equal to the pad id counts as padding
 * wherever it is, generated or retrieved.
 */

/** Token-id rows of one batch; every row of a matrix has the same length. */
export type IdMatrix = readonly (readonly number[])[];

/** Stable partition of a row: pad-valued ids to the left (`padToLeft`) or to the right, the rest in order. */
function repad(row: readonly number[], keys: readonly number[], padId: number, padToLeft: boolean): number[] {
  const pads: number[] = [];
  const rest: number[] = [];
  keys.forEach((k, j) => (k === padId ? pads : rest).push(row[j]!));
  return padToLeft ? [...pads, ...rest] : [...rest, ...pads];
}

/**
 * `_info_masked_concatenate_with_padding`: concatenates [prefix, response, info] row by row, and alongside it
 * [prefixMasked, response, info replaced by pad ids]; then moves the columns whose id in the first
 * concatenation is the pad id to the left (`padToLeft`) or to the right, keeping the order of the others
 * (torch's stable argsort), and applies the same move to the masked copy. `info` may be omitted (the final
 * answer turn has no observation).
 */
export function infoMaskedConcat(
  prefix: IdMatrix,
  prefixMasked: IdMatrix,
  response: IdMatrix,
  info: IdMatrix | undefined,
  padId: number,
  padToLeft: boolean,
): { ids: number[][]; masked: number[][] } {
  const ids: number[][] = [];
  const masked: number[][] = [];
  prefix.forEach((p, i) => {
    const r = response[i]!;
    const inf = info?.[i] ?? [];
    const row = [...p, ...r, ...inf];
    const rowMasked = [...prefixMasked[i]!, ...r, ...inf.map(() => padId)];
    // Both copies move by the first one's pad positions (the authors sort the masked copy with the same indices).
    ids.push(repad(row, row, padId, padToLeft));
    masked.push(repad(rowMasked, row, padId, padToLeft));
  });
  return { ids, masked };
}

/** One turn of a rollout for {@link searchR1RolloutLayout}: the policy's response ids, and the observation ids after it. */
export interface SearchR1TurnIds {
  /** The turn's response ids, one row per rollout (padded with the pad id). */
  responses: IdMatrix;
  /** The observation's ids (the `<information>` block, or the note after an invalid turn); none on the final answer turn. */
  obs?: IdMatrix | null;
}

/** The batch {@link searchR1RolloutLayout} returns, as verl's trainer receives it. */
export interface SearchR1Layout {
  /** The prompt the rollout started from, its last `maxStartLength` columns. */
  prompts: number[][];
  /** The response side: turns and observations, pad ids moved to the right. */
  responses: number[][];
  /** The same with every observation id replaced by the pad id. */
  responsesWithInfoMask: number[][];
  /** prompt ≠ pad, then responses ≠ pad. */
  attentionMask: number[][];
  /** prompt ≠ pad, then responsesWithInfoMask ≠ pad: 0 on retrieved tokens. */
  infoMask: number[][];
  /** The actor's loss mask under `state_masking`: the last (response width) columns of `infoMask`. */
  lossMask: number[][];
}

/**
 * The token layout and loss mask of a Search-R1 rollout, built as `run_llm_loop` builds it from the ids of
 * each turn: the response side starts empty; each turn appends the response and its observation with
 * {@link infoMaskedConcat} (pad ids moved to the right) and the side is cut to its longest row of non-pad ids,
 * but to no more than `maxPromptLength` columns (the authors cut the response side by the prompt limit,
 * `config.max_prompt_length`). Then `_compose_final_output` and `_create_loss_mask`: the loss mask is the last
 * (response width) columns of the info mask — and all of it, prompt included, when the response side is
 * empty, because `info_mask[:, -0:]` is the whole tensor in Python.
 */
export function searchR1RolloutLayout(
  prompt: IdMatrix,
  turns: readonly SearchR1TurnIds[],
  opts: { padId: number; maxStartLength: number; maxPromptLength: number },
): SearchR1Layout {
  const { padId } = opts;
  const prompts = prompt.map((row) => row.slice(opts.maxStartLength === 0 ? 0 : Math.max(0, row.length - opts.maxStartLength)));
  let responses: number[][] = prompt.map(() => []);
  let withMask: number[][] = prompt.map(() => []);
  for (const turn of turns) {
    const next = infoMaskedConcat(responses, withMask, turn.responses, turn.obs ?? undefined, padId, false);
    const effective = Math.max(0, ...next.ids.map((row) => row.filter((t) => t !== padId).length));
    const width = Math.min(opts.maxPromptLength, effective);
    responses = next.ids.map((row) => row.slice(0, width));
    withMask = next.masked.map((row) => row.slice(0, width));
  }
  const valid = (row: readonly number[]) => row.map((t) => (t !== padId ? 1 : 0));
  const attentionMask = prompts.map((p, i) => [...valid(p), ...valid(responses[i]!)]);
  const infoMask = prompts.map((p, i) => [...valid(p), ...valid(withMask[i]!)]);
  const width = responses[0]?.length ?? 0;
  const lossMask = infoMask.map((row) => row.slice(width === 0 ? 0 : row.length - width));
  return { prompts, responses, responsesWithInfoMask: withMask, attentionMask, infoMask, lossMask };
}
