/**
 * `ragtrail/process`: process supervision. MCTS (UCT / PUCT) with SPRE rollouts (ReasonRAG) or a value
 * judge, judge ranking of sampled actions (RAG-Gym), step preference pairs, and their export in the
 * formats trainers read (TRL preference / SFT / stepwise).
 * @module
 */
export { annotate, ANNOTATE_METHODS, type AnnotateMethod, type AnnotateOptions, annotateQuestion, type AnnotateResult } from './annotate.js';
export { Mcts, type MctsOptions, type MctsStats, type PriorMode, PUCT_DEFAULTS, puctScore, UCT_DEFAULTS, uctScore } from './mcts.js';
export { type OutcomeScore, type Rollout, rollout, spre } from './values.js';
export { minePairs, type MineOptions, type Pair, type PairSide } from './mine.js';
export { annotateByRanking, type RankOptions, type RankResult, type RankSource } from './rank.js';
export { lenientRerankRewards, ragGymRerankRewards } from './rag-gym-rerank.js';
export {
  type ProragAuthorsChild, proragAuthorsBackup, proragAuthorsIsTerminal, proragAuthorsPuctScore, proragAuthorsSelect, proragAuthorsTerminalReward,
} from './prorag-mcts.js';
export {
  proragAuthorsCollectJobs, proragAuthorsFormatCheck, proragAuthorsLabel, proragAuthorsNormalizeQ, type ProragCandidate,
  type ProragJob, type ProragPair, type ProragPairSide, type ProragTreeDict,
} from './prorag-filter.js';
export {
  REASONRAG_AUTHORS_UCT, reasonragAuthorsBackpropagate, reasonragAuthorsSelectChild, type ReasonRagAuthorsStats, reasonragAuthorsStats,
  reasonragAuthorsUct, reasonragAuthorsUpdateQ, reasonragAuthorsUpdateReward,
} from './reasonrag-mcts.js';
export {
  ragGymAuthorsPrmPairs, type RagGymHistoryStep, type RagGymPairOptions, type RagGymPairSets, type RagGymPrmPair, type RagGymRolloutFile,
} from './rag-gym-pairs.js';
export { PLAN_JUDGE_DEFAULTS, PlanJudge, type PlanJudgeOptions, QRuleJudge, type QRuleOptions, type SiblingCandidate, type SiblingJob, type SiblingJobOptions, type SiblingJudge, type SiblingVerdict } from './sibling-judge.js';
export { type PreferenceExample, preferenceExample, sftExamples, stepwiseExamples } from './export.js';
export { readTrees, type SavedNode, type SavedTree, Tree, type TreeNode } from './tree.js';
export { type AnnotationStats, annotationStats, type Summary } from './stats.js';
export { type ArenaSftData, arenaSftExamples, type ArenaSftMode, templateAnalysis } from './arena-sft.js';
