/**
 * Sampling episodes from the gym policy for on-policy training: each step keeps the candidates it
 * chose among, the index taken and its log-probability, so that later updates can re-score the same
 * decisions (the ratio ρ = π_θ / π_old of GRPO/DAPO).
 */
import type { Question } from '../../core/types.js';
import type { Trajectory } from '../../core/trajectory.js';
import { Rng } from '../../core/rng.js';
import type { RagEnv, State } from '../../env/env.js';
import { toTrajectory } from '../../env/trajectory.js';
import { type Choice, choicesFor, type GymPolicy, logSoftmax } from './policy.js';

export interface Decision {
  state: State;
  choice: Choice;
  action: number;
  logp: number;
}

export interface Episode {
  trajectory: Trajectory;
  decisions: Decision[];
}

export function sampleIndex(logProbs: readonly number[], rng: Rng): number {
  let u = rng.next();
  for (let i = 0; i < logProbs.length - 1; i++) {
    u -= Math.exp(logProbs[i]!);
    if (u < 0) return i;
  }
  return logProbs.length - 1;
}

/** One episode at temperature τ (τ ≤ 0: greedy), seeded. */
export async function sampleEpisode(env: RagEnv, policy: GymPolicy, question: Question, tau: number, seed: number | string): Promise<Episode> {
  const t0 = performance.now();
  const rng = new Rng(`${seed}/${question.id}`);
  let state = env.reset(question);
  const decisions: Decision[] = [];
  const limit = env.config.maxTurns + 2;
  while (!state.done && state.steps.length < limit) {
    const choice = choicesFor(state, policy.protocol);
    if (choice.candidates.length === 0) break;
    const lp = policy.logProbs(choice, tau > 0 ? tau : 1);
    const i = tau > 0 ? sampleIndex(lp, rng) : lp.indexOf(Math.max(...lp));
    const action = choice.candidates[i]!.action;
    decisions.push({ state, choice, action: i, logp: lp[i]! });
    state = (await env.step(state, { action, raw: policy.protocol.format(action, state), logprob: lp[i]! })).state;
  }
  return { trajectory: toTrajectory(state, policy, performance.now() - t0), decisions };
}
