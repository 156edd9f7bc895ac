/**
 * The evaluation's data: its config and the results the harness computes and the report draws. Kept
 * apart from both so that neither imports the other's code (harness → report, both → results).
 */
import type { AnnotationStats } from '../process/stats.js';
import type { PairEval } from '../prm/trained.js';
import type { SearchMethod } from '../retrieval/index-dir.js';
import type { TypeEm } from './question-types.js';
import type { SearchUse } from './search-use.js';
import type { MeanCI } from './stats.js';
import type { LineSeries, RefLine } from './svg.js';
import type { SystemSpec } from './systems.js';
import type { QuestionSelection } from '../corpus/select.js';
import type { HopRow } from './hops.js';

/** One dataset of an evaluation. */
export interface DatasetSpec extends QuestionSelection {
  name: string;
  path: string;
  split?: string;
}

/** An evaluation: which systems on which datasets over which index (`ragtrail eval --config`). */
export interface EvalConfig {
  index: string;
  out: string;
  datasets: DatasetSpec[];
  systems: (SystemSpec & { name: string })[];
  /** Name of the system the others are tested against. */
  baseline?: string;
  /**
   * LWS's answer categories (§4, Fig. 4): pairs of systems, one answering with retrieval and one
   * without, each question counted as right in both, only with retrieval, only without, or neither.
   */
  answerCategories?: { withRetrieval: string; without: string }[];
  /** Judge model for the LLM-as-judge metric. */
  judge?: string;
  /** A trained PRM and held-out pairs: pair accuracy by action type in the report. */
  prm?: { model: string; pairs: string };
  /** An annotation folder: its reward-gap histogram in the report. */
  annotation?: string;
  retrieval?: SearchMethod;
  concurrency?: number;
  seed?: number;
  cacheDir?: string;
  apiKey?: string;
  /** `i/n`: only shard i of n of every dataset's questions (core/shard; `ragtrail merge` joins the shards). */
  shard?: string;
}

/** One pair of systems on one dataset, over the questions both answered: shares of the four categories. */
export interface AnswerCategories {
  withRetrieval: string;
  without: string;
  dataset: string;
  n: number;
  /** Right with and without retrieval. */
  both: number;
  /** Right only with retrieval: the documents helped. */
  onlyWith: number;
  /** Right only without retrieval: the documents misled. */
  onlyWithout: number;
  /** Wrong both ways. */
  neither: number;
}

/** A PRM's training pairs checked against the gold plan (prm/label-check.ts): where its accuracy is lost. */
export interface LabelCheckSummary {
  /** Among pairs the gold PRM does not tie, the share where it prefers the annotation's chosen step. */
  goldAgreement: number;
  /** Share of pairs the gold PRM ties. */
  goldTies: number;
  /** Held-out accuracy of the same head trained on the gold verdicts. */
  featuresCeiling: number | null;
  /** The same per kind of pair, `chosen/rejected` by step letter (A answer, Q query, E evidence). */
  byKind?: Record<string, { pairs: number; goldAgreement: number | null; goldTies: number }>;
}

/** One system on one dataset: its metrics with 95% CIs, and its test against the baseline. */
export interface Cell {
  system: string;
  dataset: string;
  n: number;
  em: MeanCI;
  f1: MeanCI;
  acc: MeanCI;
  judge?: MeanCI;
  retrievalCount: number;
  /**
   * Over- and under-search against the questions' supporting passages (eval/search-use.ts): searches
   * made after every supporting passage was retrieved, and episodes that ended before. Absent where no
   * question names its supporting passages, and in results from before it was measured.
   */
  searchUse?: SearchUse;
  /** Share of questions without a format failure. */
  format: number;
  /** ARENA: mean relevance reward of the cited references. */
  relevance?: number;
  /** ARENA: mean citation precision, |cited ∩ gold| / |cited| (0 for an answer citing nothing; eval/citations.ts). */
  citationPrecision?: number;
  /**
   * Mean seconds per question: the whole episode (wall time, with the run's concurrency), and of it the
   * model calls and the searches (summed over steps). Absent in results from before it was measured.
   */
  latency?: { seconds: number; llmSeconds: number; retrievalSeconds: number };
  /** EM (and, for citing protocols, relevance) by the hops a question needs (eval/hops.ts; ARENA Table 13); absent when no hop count is known. */
  byHops?: HopRow[];
  /** Mean F1 of the questions answered after k searches (k = 0 … 5+). */
  f1ByRetrievals: { rc: string; n: number; f1: number }[];
  tokensPerQuestion: number;
  /** EM per question type, then on the questions that need retrieval (eval/question-types.ts); empty for untyped datasets. */
  emByType?: TypeEm[];
  vsBaseline?: Record<'em' | 'f1', { diff: number; t: number; pT: number; low: number; high: number; pBoot: number }>;
}

/** A plot of the report beyond the evaluation's own: training curves, EM against a budget. */
export interface Curve {
  title: string;
  xLabel: string;
  yLabel: string;
  series: LineSeries[];
  yMin?: number;
  yMax?: number;
  /** A centred moving mean over this many points drawn over the raw ones (noisy curves: RL rewards by batch); the caption says so. */
  trend?: number;
  /** A dashed reference line, e.g. chance (0.5) on a pair accuracy. */
  refLine?: RefLine;
}

/** Everything `runEval` measured, as written to results.json. */
export interface EvalResults {
  config: EvalConfig;
  cells: Cell[];
  /** Extra plots (the demo's training curves). */
  curves?: Curve[];
  /** Paragraphs shown above the tables (what produced the systems). */
  notes?: string[];
  prm?: PairEval & { model: string; pairs: string; labels?: LabelCheckSummary };
  /** The answer categories of `config.answerCategories`, per dataset (EM decides right). */
  answerCategories?: AnswerCategories[];
  annotation?: AnnotationStats;
  createdAt: string;
}
