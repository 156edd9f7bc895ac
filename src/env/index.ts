/**
 * `ragtrail/env`: the outer MDP of agentic RAG (RAG-Gym's nested MDP, outer level): `reset(question)`
 * then `step(move)` until the episode ends, with search budgets. The environment served over HTTP to
 * RL trainers (`createEnvServer`, `EnvService`) lives in `ragtrail/learn`; it is re-exported here so
 * that imports from `ragtrail/env` written before the move keep working.
 * @module
 */
export { type EnvConfig, type Move, RagEnv, retrievedDocs, type State, type StepResult } from './env.js';
// Compatibility re-exports (the one sanctioned upward edge, listed in test/core/layering.test.ts): the
// server needs agents' protocols, so it moved to learn/, the stage that serves environments to trainers.
export { type EpisodeScorer, EnvService, type EnvServiceOptions, type StepScorer } from '../learn/serve/env-service.js';
export { createEnvServer, type EnvServer, type EnvServerOptions, withLoopbackEnvServer } from '../learn/serve/serve-env.js';
export type { Action, ActionType, Message, RetrievedDoc, Step, TokenUsage, Trajectory } from '../core/trajectory.js';
