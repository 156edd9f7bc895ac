/**
 * `ragtrail/eval`: the papers' metrics (exactly the reference scripts' normalisation), episodes and
 * runs (resumable), systems (a protocol, a model or stand-in, and an action-selection method), the
 * evaluation harness with paired tests, and the HTML / markdown report.
 * @module
 */
// Systems may name the gym policy (`policy: gym:FILE`), which registers itself from learn/: this entry
// point loads it, so that `runEval` and `buildSystem` accept every built-in policy.
import '../learn/gym/policy.js';
export { answerScores, type AnswerScores, coverMatch, exactMatch, type F1Result, f1Score, normalizeAnswer, type NormalizeOptions } from './metrics.js';
export { bootstrapCI, type BootstrapOptions, type MeanCI, type PairedBootstrap, pairedBootstrap, type PairedTTest, pairedTTest } from './stats.js';
export { type EpisodeOptions, runEpisode, runOrmEpisode, runQuestions, type RunOptions, type RunResult, runVotedEpisode } from './run.js';
export { type BuiltSystem, buildSystem, type SelectMethod, type SystemSpec } from './systems.js';
export { answerCategories, type EvalProgress, readEvalConfig, runEval } from './harness.js';
export type { AnswerCategories, Cell, Curve, DatasetSpec, EvalConfig, EvalResults, LabelCheckSummary } from './results.js';
export { answerInQuestion, emByType, NEEDS_RETRIEVAL, type TypeEm } from './question-types.js';
export { byHops, type HopRow, hopsOf } from './hops.js';
export { type EpisodeSearchUse, episodeSearchUse, type SearchUse, searchUse } from './search-use.js';
export { renderHtml, renderMarkdown, type ReportOptions, writeReport } from './report.js';
export { buildTableEval, loadPaperTable, type PaperTable, paperTableNames, paperTableSchema, TABLES_DIR, type TableRunOptions } from './paper-tables.js';
export { EVAL_SWEEPS, type EvalSweep, parseValues, pointDir, recipePoints, setRecipePath, type SweepPoint, type SweepResult, sweepEval, writeSweep } from './sweep.js';
export type { LinePoint, LineSeries, RefLine } from './svg.js';
export { ANSWER_METRICS, type AnswerMetric, comparePaired, type PairedComparison, type QuestionScore, scorePredictions, type ScoreReport } from './score.js';
export { loadPredictions, type Predictions } from './predictions.js';
export { readTrajectories, summarize, type RunSummary } from './trajectories.js';
export { citationPrecision } from './citations.js';
export {
  arenaAuthorsExactMatch, arenaAuthorsF1, arenaAuthorsJudgeAccuracy, arenaAuthorsJudgeScore, type ArenaJudgeReport, type ArenaPredictionItem,
  arenaAuthorsRulebaseReport, type ArenaRulebaseReport,
} from './arena.js';
