/**
 * `ragtrail/rewards`: the papers' reward functions (ReasonRAG, Search-R1, LWS, ProRAG, ARENA) as named
 * schemes composed by weighted sums (`composeScheme("0.5*f1+lws-stage1")`), schemes of your own
 * (`registerRewardScheme`), applying them to trajectories, and the RL math (GRPO/DAPO advantages,
 * clipped surrogates, KL estimators, the dual-granularity advantage, the DPO loss), and where a sequence
 * reward and the loss mask over retrieved tokens fall on the token grid (Search-R1's verl layout).
 * @module
 */
export type { OptionValue, RewardContext, RewardResult, RewardScheme } from './types.js';
export { type ComposedScheme, composeScheme, registerRewardScheme, rewardSchemes, SCHEMES } from './schemes.js';
export { applyRewards, type ApplyOptions, episodeScorer, type RewardRecord, scoreTexts, writeRewards } from './apply.js';
export { type CorrectnessRule, discountedReturn, isCorrect, metricOf, spreValue } from './outcome.js';
export type { EpisodeText } from './episode.js';
export type { ProragForm } from './prorag.js';
export { Judge, type Verdict } from './judge.js';
export {
  aggregateLoss,
  ARENA_GRPO,
  clippedSurrogate,
  decoupledClipSurrogate,
  dpoLoss,
  type DualAdvantage,
  dualGranularityAdvantages,
  type DualSample,
  dynamicSamplingKeep,
  gaeAdvantages,
  grpoAdvantages,
  grpoOutcomeAdvantages,
  type GroupNormOptions,
  grpoTokenLoss,
  klEstimate,
  klPenalty,
  ratioFromLogprobs,
  SEARCH_R1_GRPO,
  type VerlKlKind,
} from './rl.js';
export { placeSequenceReward, placeSequenceRewards, type RewardPlacementOptions, SEARCH_R1_PLACEMENT, verlScoredIds } from './reward-placement.js';
export { type IdMatrix, infoMaskedConcat, type SearchR1Layout, searchR1RolloutLayout, type SearchR1TurnIds } from './info-mask.js';
