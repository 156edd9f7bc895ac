/**
 * The shapes a pipeline run and its seed processes share: the options, a seed's result, the run's result,
 * and the messages between the parent and a seed's child process (pipelines/seed-processes.ts,
 * seed-worker.ts). In a module of their own so that the parent, the worker and the pipeline do not import
 * each other round a cycle.
 */
import type { EvalResults } from '../eval/harness.js';
import type { ClaimRow } from './claims.js';
import type { LlmEngineOptions } from './pipeline-llm.js';
import type { Recipe } from './recipe.js';

export interface PipelineOptions {
  recipe: Recipe;
  /** Where the recipe came from (recorded). */
  recipePath: string;
  out: string;
  /** Overrides of the recipe's own values (smaller runs, tests). */
  seeds?: number[];
  entities?: number;
  trainQuestions?: number;
  testQuestions?: number;
  /** The policy is a served LLM and training goes to TRL (pipelines/pipeline-llm.ts). */
  llm?: Omit<LlmEngineOptions, 'out' | 'log'>;
  /**
   * Seeds run at once, each in its own process (pipelines/seed-processes.ts); default 1: one after
   * another in this process. The CLI's `--jobs` defaults to the number of cores.
   */
  jobs?: number;
  log?: (line: string) => void;
}

export interface SeedResult {
  seed: number;
  results: EvalResults;
  timings: Record<string, number>;
}

export interface PipelineResult {
  recipe: string;
  paper: string;
  claims: ClaimRow[];
  seeds: SeedResult[];
  seconds: number;
}

/** Parent → child: the one job of this process. */
export interface SeedJobMessage {
  type: 'run';
  options: Omit<PipelineOptions, 'log'>;
  seed: number;
}

/** Child → parent. */
export type SeedWorkerMessage =
  | { type: 'log'; line: string }
  | { type: 'result'; result: SeedResult }
  | { type: 'error'; kind: 'input' | 'ragtrail' | 'unexpected'; message: string; stack?: string }
  | { type: 'interrupted' };
