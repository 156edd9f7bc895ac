/**
 * Running an agent over a question set: one episode per question through the environment, written
 * to `RUN/trajectories.jsonl` as each finishes (append-only, one line per question) and summarised
 * in `RUN/summary.json`. Re-running the same command skips the questions already written; `RUN/
 * run.json` records the settings, and a re-run with different settings is refused rather than mixed.
 */
import { checkRunConfig } from '../core/run-config.js';
import { ensureOutDir, writeJsonAtomicSync } from '../core/io.js';
import { inDatasetOrder } from '../core/order.js';
import { join } from 'node:path';
import { AppendLog } from '../core/append-log.js';
import { withPriority } from '../core/limiter.js';
import { DirLock } from '../core/lock.js';
import { InterruptedError, interrupted, whileInterruptible } from '../core/interrupt.js';
import { Progress } from '../core/progress.js';
import { Rng } from '../core/rng.js';
import type { Question } from '../core/types.js';
import type { Trajectory } from '../core/trajectory.js';
import type { Policy } from '../agents/policy.js';
import type { RagEnv, State } from '../env/env.js';
import type { UsageTotals } from '../llm/middleware.js';
import type { PRM } from '../prm/types.js';
import { normalizeAnswer } from '../core/text.js';
import { toTrajectory } from '../env/trajectory.js';
import { readTrajectories, type RunSummary, summarize } from './trajectories.js';

export { toTrajectory };

/** Sampling settings of one episode (temperature, when unset, is the policy's own default). */
export interface EpisodeOptions {
  temperature?: number;
  /** Run seed; each step's sampling seed derives from it, the question id and the step number. */
  seed?: number;
}

export function stepSeed(seed: number, questionId: string, step: number): number {
  return new Rng(`${seed}/${questionId}/${step}`).nextUint32() & 0x7fffffff;
}

/** One question, start to answer. */
export async function runEpisode(env: RagEnv, policy: Policy, question: Question, opts: EpisodeOptions = {}): Promise<Trajectory> {
  const t0 = performance.now();
  let state = env.reset(question);
  // The budget ends every episode; the margin guards against a policy that never answers when forced.
  const limit = env.config.maxTurns + 2;
  while (!state.done && state.steps.length < limit) {
    const [move] = await policy.propose(state, { n: 1, temperature: opts.temperature, seed: stepSeed(opts.seed ?? 0, question.id, state.steps.length) });
    if (!move) break;
    state = (await env.step(state, move)).state;
  }
  return toTrajectory(state, policy, performance.now() - t0);
}

/**
 * Self-consistency (the "vote" baseline of PRM-guided selection): n episodes sampled at a temperature,
 * the most frequent normalised answer wins (ties: the earliest). The trajectory kept is the first
 * episode that gave it; usage and latency add up over all n, and meta.vote records the counts.
 */
export async function runVotedEpisode(env: RagEnv, policy: Policy, question: Question, opts: { n: number; temperature: number; seed?: number }): Promise<Trajectory> {
  const samples: Trajectory[] = [];
  for (let k = 0; k < opts.n; k++) samples.push(await runEpisode(env, policy, question, { temperature: opts.temperature, seed: (opts.seed ?? 0) * 1009 + k }));
  const counts = new Map<string, number>();
  for (const t of samples) {
    const key = normalizeAnswer(t.prediction);
    if (key) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  let winner = '';
  for (const [k, c] of counts) if (c > (counts.get(winner) ?? 0)) winner = k;
  const chosen = samples.find((t) => normalizeAnswer(t.prediction) === winner) ?? samples[0]!;
  const usage = samples.reduce((u, t) => ({ promptTokens: u.promptTokens + t.usage.promptTokens, completionTokens: u.completionTokens + t.usage.completionTokens, requests: u.requests + t.usage.requests }), { promptTokens: 0, completionTokens: 0, requests: 0 });
  return {
    ...chosen,
    policy: `${policy.name} + vote of ${opts.n}`,
    usage,
    latencyMs: samples.reduce((s, t) => s + t.latencyMs, 0),
    meta: { ...chosen.meta, vote: { n: opts.n, counts: Object.fromEntries(counts), retrievalCountAllSamples: samples.reduce((s, t) => s + t.retrievalCount, 0) } },
  };
}

/**
 * RAG-Gym's outcome-reward-model baseline (ORM best-of-N, against its PRM-guided selection): n whole
 * episodes sampled at a temperature, each scored once by the ORM on its final answer in the state that
 * answer was given in (the episode so far), the best kept (the first on a tie; an episode without an
 * answer scores −∞). The ORM is any PRM backend: a head trained on outcome pairs (`ragtrail prm
 * outcome-pairs`), a served reward model, or the gold PRM as a diagnostic. Usage and latency add up over
 * all n; meta.orm records the scores.
 */
export async function runOrmEpisode(env: RagEnv, policy: Policy, question: Question, opts: { n: number; temperature: number; orm: PRM; seed?: number }): Promise<Trajectory> {
  const samples: Trajectory[] = [];
  for (let k = 0; k < opts.n; k++) samples.push(await runEpisode(env, policy, question, { temperature: opts.temperature, seed: (opts.seed ?? 0) * 1009 + k }));
  const scores: number[] = [];
  for (const t of samples) {
    const at = t.steps.findLastIndex((s) => s.action.type === 'answer');
    if (at < 0) {
      scores.push(-Infinity);
      continue;
    }
    const state: State = { question, steps: t.steps.slice(0, at), done: false, mustAnswer: false, turnsLeft: 0, searchesLeft: 0 };
    const step = t.steps[at]!;
    scores.push((await opts.orm.score(state, [{ action: step.action, raw: step.raw }]))[0]!);
  }
  let best = 0;
  for (let k = 1; k < samples.length; k++) if (scores[k]! > scores[best]!) best = k;
  const chosen = samples[best]!;
  const usage = samples.reduce((u, t) => ({ promptTokens: u.promptTokens + t.usage.promptTokens, completionTokens: u.completionTokens + t.usage.completionTokens, requests: u.requests + t.usage.requests }), { promptTokens: 0, completionTokens: 0, requests: 0 });
  return {
    ...chosen,
    policy: `${policy.name} + ORM best-of-${opts.n} (${opts.orm.name})`,
    usage,
    latencyMs: samples.reduce((s, t) => s + t.latencyMs, 0),
    meta: { ...chosen.meta, orm: { n: opts.n, chosen: best, scores: scores.map((x) => (Number.isFinite(x) ? x : null)) } },
  };
}

/** Options of {@link runQuestions}. */
export interface RunOptions extends EpisodeOptions {
  outDir: string;
  env: RagEnv;
  policy: Policy;
  questions: readonly Question[];
  /** Questions in flight at once (default 4). */
  concurrency?: number;
  /** Settings written to run.json and checked on resume. */
  config: Record<string, unknown>;
  /** LLM usage of this session, added to the summary. */
  usage?: () => UsageTotals;
  /** Self-consistency instead of single episodes. */
  vote?: { n: number; temperature: number };
  /** ORM best-of-N over whole episodes instead of single episodes ({@link runOrmEpisode}). */
  outcome?: { n: number; temperature: number; orm: PRM };
  quiet?: boolean;
}

/**
 * What {@link runQuestions} did: the summary written to `summary.json` (all questions of the run
 * folder, plus this session's counts and LLM usage), and how many questions ran or were skipped.
 */
export interface RunResult {
  summary: RunSummary & { session: Record<string, unknown> };
  /** Questions run in this session. */
  ran: number;
  /** Questions skipped because the run already had them. */
  skipped: number;
}

/**
 * `ragtrail run` as a function: one episode per question not yet in `OUTDIR/trajectories.jsonl`
 * (`concurrency` at a time, each line appended as it finishes), then `summary.json` over every
 * trajectory of the folder. Locks `outDir`; refuses to resume with settings that differ from
 * `run.json`.
 */
export async function runQuestions(opts: RunOptions): Promise<RunResult> {
  ensureOutDir(opts.outDir);
  const lock = DirLock.acquire(join(opts.outDir, '.lock'), `run folder ${opts.outDir}`);
  try {
    return await runLocked(opts);
  } finally {
    lock.release();
  }
}

async function runLocked(opts: RunOptions): Promise<RunResult> {
  checkRunConfig(join(opts.outDir, 'run.json'), opts.config, 'run');
  const log = AppendLog.open<Trajectory>(join(opts.outDir, 'trajectories.jsonl'), { total: opts.questions.length });
  const todo = opts.questions.filter((q) => !log.has(q.id));
  const skipped = opts.questions.length - todo.length;
  const progress = new Progress('run', { unit: 'questions', total: todo.length, quiet: opts.quiet });
  const t0 = performance.now();
  let em = 0;
  let f1 = 0;
  let ran = 0;
  let failure: unknown;
  let next = 0;
  const worker = async () => {
    // After Ctrl-C no new question starts; those in flight finish and are kept.
    while (failure === undefined && !interrupted() && next < todo.length) {
      const index = next++;
      const q = todo[index]!;
      try {
        const t = await withPriority(index, () =>
          opts.outcome
            ? runOrmEpisode(opts.env, opts.policy, q, { ...opts.outcome, seed: opts.seed })
            : opts.vote
              ? runVotedEpisode(opts.env, opts.policy, q, { ...opts.vote, seed: opts.seed })
              : runEpisode(opts.env, opts.policy, q, opts),
        );
        log.append(t);
        ran++;
        em += t.metrics?.em ?? 0;
        f1 += t.metrics?.f1 ?? 0;
        progress.tick(1, `EM ${(em / ran).toFixed(3)} F1 ${(f1 / ran).toFixed(3)}`);
      } catch (e) {
        failure ??= e;
      }
    }
  };
  await whileInterruptible(() => Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? 4) }, worker)));
  log.close();
  progress.finish();
  if (failure !== undefined) throw failure;
  if (interrupted()) throw new InterruptedError();
  // In dataset order: the means add floats, and the file's completion order changes with a resume.
  const all = inDatasetOrder(await readTrajectories(opts.outDir), opts.questions);
  const summary = {
    ...summarize(all),
    session: { ran, skipped, wallSeconds: (performance.now() - t0) / 1000, ...(opts.usage ? { llm: opts.usage() } : {}) },
  };
  writeJsonAtomicSync(join(opts.outDir, 'summary.json'), summary);
  return { summary, ran, skipped };
}
