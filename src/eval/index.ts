/**
 * `ragtrail/eval`: the papers' metrics (exactly the reference scripts' normalisation), episodes and
 * runs (resumable), systems (a protocol, a model or stand-in, and an action-selection method), the
 * evaluation harness with paired tests, and the HTML / markdown report.
 * @module
 */
// Systems may name the gym policy (`policy: gym:FILE`), which registers itself from learn/: this entry
// point loads it, so that `runEval` and `buildSystem` accept every built-in policy.
import '../learn/gym/policy.js';
export { answerScores, coverMatch, exactMatch, f1Score, normalizeAnswer } from './metrics.js';
export { bootstrapCI, type MeanCI, pairedBootstrap, pairedTTest } from './stats.js';
export { type EpisodeOptions, runEpisode, runQuestions, type RunOptions, type RunResult, runVotedEpisode } from './run.js';
export { type BuiltSystem, buildSystem, type SelectMethod, type SystemSpec } from './systems.js';
export { readEvalConfig, runEval } from './harness.js';
export type { Cell, Curve, DatasetSpec, EvalConfig, EvalResults } from './results.js';
export { renderHtml, renderMarkdown, writeReport } from './report.js';
export { comparePaired, scorePredictions, type ScoreReport } from './score.js';
export { loadPredictions, type Predictions } from './predictions.js';
export { readTrajectories, summarize, type RunSummary } from './trajectories.js';
export { citationPrecision } from './citations.js';
