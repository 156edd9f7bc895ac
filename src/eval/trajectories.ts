/**
 * Reading runs and summarising them: `RUN/trajectories.jsonl` → per-run figures (EM, F1, Acc,
 * retrieval count, format failures, tokens, latency), the `summary.json` every run writes.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { InputError, RecordError } from '../core/errors.js';
import { readJsonlEach, readJsonlValues, type UnreadableRecord } from '../core/io.js';
import { type Trajectory, trajectoryChoices } from '../core/trajectory.js';
import { scoreAnswer } from './metrics.js';
import { mean } from './stats.js';

/** The trajectories file of a run folder, or the file itself. */
export function trajectoriesPath(location: string): string {
  if (existsSync(location) && statSync(location).isDirectory()) return join(location, 'trajectories.jsonl');
  return location;
}

/** Every trajectory of a run, from its folder or a trajectories.jsonl file; throws an InputError when there is none. */
export async function readTrajectories(location: string): Promise<Trajectory[]> {
  const path = trajectoriesPath(location);
  if (!existsSync(path)) throw new InputError(`${path}: no such file`, 'pass a run folder written by `ragtrail run` or `ragtrail import`');
  return readJsonlValues<Trajectory>(path);
}

/** The field and problem that keep a parsed line from being a trajectory, or undefined when it is one. */
function notATrajectory(v: unknown): [string, string] | undefined {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return ['(record)', 'is not a JSON object'];
  const t = v as Partial<Trajectory>;
  if (typeof t.id !== 'string' && typeof t.id !== 'number') return ['id', 'is missing'];
  if (!Array.isArray(t.steps)) return ['steps', 'must be a list of steps'];
  return undefined;
}

/**
 * Every line of a run's trajectories file, in order, where a line that is not JSON, not UTF-8 or not a
 * trajectory (an object with an id and a steps list) comes back as its error, with the line's value when it
 * had one: for commands that score each trajectory on its own (`reward RUN`) and give a bad line an error
 * record instead of stopping.
 */
export async function* readTrajectoriesEach(location: string): AsyncGenerator<{ trajectory: Trajectory } | (UnreadableRecord & { value?: unknown })> {
  const path = trajectoriesPath(location);
  if (!existsSync(path)) throw new InputError(`${path}: no such file`, 'pass a run folder written by `ragtrail run` or `ragtrail import`');
  for await (const r of readJsonlEach(path)) {
    if ('error' in r) {
      yield r;
      continue;
    }
    const problem = notATrajectory(r.value);
    if (problem) yield { error: new RecordError(r.loc, problem[0], problem[1], 'lines must be trajectories as `ragtrail run` writes them'), loc: r.loc, value: r.value };
    else {
      const v = r.value as Trajectory;
      yield { trajectory: { ...v, id: String(v.id) } };
    }
  }
}

/** Metrics of a trajectory's prediction against the gold answers it carries (by option, for multiple choice). */
export function scoreTrajectory(t: Pick<Trajectory, 'prediction' | 'answers' | 'meta'>): { em: number; f1: number; acc: number } {
  return scoreAnswer(t.prediction, t.answers, trajectoryChoices(t));
}

/**
 * Means over a run's trajectories (`summary.json`): answer metrics, retrieval count, steps, format
 * failures, forced answers, tokens and latency.
 */
export interface RunSummary {
  agent: string;
  policy: string;
  questions: number;
  em: number;
  f1: number;
  acc: number;
  /** Mean retrieval count (search actions) per question. */
  retrievalCount: number;
  /** Mean agent steps per question. */
  steps: number;
  /** Share of steps that did not follow the protocol, and of questions with at least one such step. */
  formatFailureRate: number;
  questionsWithFormatFailure: number;
  /** Share of questions answered only because the budget forced it, and of those without any answer. */
  forcedAnswerRate: number;
  tokens: { prompt: number; completion: number; perQuestion: number };
  latencyMs: { mean: number; p50: number; p90: number };
}

function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

/**
 * Summarises trajectories (metrics are recomputed for any that do not carry them). Agents and policies
 * that differ are listed comma-separated; latency quantiles are nearest-rank.
 */
export function summarize(trajectories: readonly Trajectory[]): RunSummary {
  const scores = trajectories.map((t) => t.metrics ?? scoreTrajectory(t));
  const steps = trajectories.reduce((s, t) => s + t.steps.length, 0);
  const failures = trajectories.reduce((s, t) => s + t.formatFailures, 0);
  const prompt = trajectories.reduce((s, t) => s + t.usage.promptTokens, 0);
  const completion = trajectories.reduce((s, t) => s + t.usage.completionTokens, 0);
  const lat = trajectories.map((t) => t.latencyMs);
  const n = trajectories.length;
  return {
    agent: [...new Set(trajectories.map((t) => t.agent))].join(', '),
    policy: [...new Set(trajectories.map((t) => t.policy))].join(', '),
    questions: n,
    em: mean(scores.map((s) => s.em)),
    f1: mean(scores.map((s) => s.f1)),
    acc: mean(scores.map((s) => s.acc)),
    retrievalCount: mean(trajectories.map((t) => t.retrievalCount)),
    steps: n ? steps / n : 0,
    formatFailureRate: steps ? failures / steps : 0,
    questionsWithFormatFailure: n ? trajectories.filter((t) => t.formatFailures > 0).length / n : 0,
    forcedAnswerRate: n ? trajectories.filter((t) => t.steps.some((s) => s.forced)).length / n : 0,
    tokens: { prompt, completion, perQuestion: n ? (prompt + completion) / n : 0 },
    latencyMs: { mean: mean(lat), p50: quantile(lat, 0.5), p90: quantile(lat, 0.9) },
  };
}
