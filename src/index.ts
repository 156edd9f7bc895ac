/**
 * `ragtrail`: the data model (questions, passages, trajectories), dataset and corpus loaders, the
 * synthetic multi-hop world, the answer metrics and statistics, and plugins (`definePlugin`). Each
 * stage has its own entry point: `ragtrail/retrieval`, `ragtrail/llm`, `ragtrail/env`,
 * `ragtrail/agents`, `ragtrail/rewards`, `ragtrail/process`, `ragtrail/prm`, `ragtrail/learn`, `ragtrail/eval`.
 * @module
 */
export type { DecompositionStep, Passage, Question } from './core/types.js';
export { type ErrorRecord, InputError, RagtrailError, RecordError, type SourceLocation } from './core/errors.js';
export { Rng } from './core/rng.js';
export { type LocatedValue, readJsonl, readJsonRecords, writeJsonl } from './core/io.js';
export { DATASET_FORMATS, type DatasetFormat, detectFormat, loadDataset, loadDatasetAll, type LoadOptions } from './corpus/dataset.js';
export { checkSelection, describeSelection, inValidationPart, type QuestionSelection, selectQuestions } from './corpus/select.js';
export { CORPUS_FORMATS, type CorpusBuildStats, type CorpusFormat, corpusFromQuestions, type CorpusReadOptions, readCorpus, writeCorpus } from './corpus/corpus.js';
export { toFlashrag } from './corpus/formats/flashrag.js';
export type { Json } from './corpus/formats/fields.js';
export { type Entity, type EntityType, generateWorld, type Graph, type QuestionMix, writeWorld, type World, type WorldOptions, type WorldStats, QUESTION_TYPES, WORLD_PROFILES, type WorldProfileName } from './corpus/world/index.js';
export { answerScores, type AnswerScores, coverMatch, exactMatch, type F1Result, f1Score, normalizeAnswer, type NormalizeOptions } from './eval/metrics.js';
export { bootstrapCI, type BootstrapOptions, type PairedBootstrap, pairedBootstrap, type PairedTTest, pairedTTest } from './eval/stats.js';
export { loadPredictions, type Predictions } from './eval/predictions.js';
export { ANSWER_METRICS, type AnswerMetric, comparePaired, type PairedComparison, type QuestionScore, scorePredictions, type ScoreReport } from './eval/score.js';
export type { Action, ActionType, Message, RetrievedDoc, Step, TokenUsage, Trajectory } from './core/trajectory.js';
export { isFormatFailure } from './core/trajectory.js';
export { Registry, type RegisterOptions } from './core/registry.js';
export { definePlugin, loadPlugin, pluginApi, type PluginApi, type RagtrailPlugin } from './plugin.js';
export { parseShard, selectShard, type Shard, shardOf } from './core/shard.js';
