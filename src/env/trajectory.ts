/** The trajectory record of an episode, built from its final state: what every later stage reads. */
import { scoreAnswer } from '../core/metrics.js';
import { isFormatFailure, type Trajectory } from '../core/trajectory.js';
import type { State } from './env.js';

/**
 * What a trajectory records of the policy that acted: its name and its protocol's name. Any agents/
 * `Policy` has this shape; it is spelled out here so that the environment does not import agents/
 * (agents import the environment's `State`, not the other way round).
 */
export interface PolicyLabel {
  readonly name: string;
  readonly protocol: { readonly name: string };
}

/** Builds the trajectory record of a finished (or abandoned) episode. */
export function toTrajectory(state: State, policy: PolicyLabel, latencyMs: number, source = 'native'): Trajectory {
  const q = state.question;
  const steps = [...state.steps];
  const last = steps[steps.length - 1];
  const prediction = last?.action.type === 'answer' ? last.action.answer : '';
  const usage = steps.reduce(
    (u, s) => ({ promptTokens: u.promptTokens + (s.usage?.promptTokens ?? 0), completionTokens: u.completionTokens + (s.usage?.completionTokens ?? 0), requests: u.requests + (s.usage ? 1 : 0) }),
    { promptTokens: 0, completionTokens: 0, requests: 0 },
  );
  const t: Trajectory = {
    id: q.id,
    question: q.question,
    answers: q.answers,
    agent: policy.protocol.name,
    policy: policy.name,
    steps,
    prediction,
    finished: last?.action.type === 'answer' && !last.forced,
    retrievalCount: steps.filter((s) => s.action.type === 'search' && s.docs !== undefined).length,
    formatFailures: steps.filter(isFormatFailure).length,
    usage,
    latencyMs,
    source,
  };
  // What rewards need from the question (ARENA's gold references), so that a run is self-contained.
  const meta: Record<string, unknown> = {};
  if (q.supporting?.length) meta['supporting'] = q.supporting;
  if (q.context?.length) meta['contextIds'] = q.context.map((p) => p.id);
  if (q.type) meta['type'] = q.type;
  // Multiple choice is scored by the option picked: the choices travel with the run too.
  if (q.choices) meta['choices'] = q.choices;
  if (Object.keys(meta).length) t.meta = meta;
  t.metrics = scoreAnswer(t.prediction, t.answers, q.choices);
  return t;
}

