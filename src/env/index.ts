/**
 * `ragtrail/env`: the outer MDP of agentic RAG (RAG-Gym's nested MDP, outer level): `reset(question)`
 * then `step(move)` until the episode ends, with search budgets, and the environment served over
 * HTTP to RL trainers (`createEnvServer`, the OpenEnv / verl-tool / Search-R1 wire formats).
 * @module
 */
export { type EnvConfig, type Move, RagEnv, retrievedDocs, type State, type StepResult } from './env.js';
export { type EpisodeScorer, EnvService, type EnvServiceOptions, type StepScorer } from './serve/env-service.js';
export { createEnvServer, type EnvServer, type EnvServerOptions, withLoopbackEnvServer } from './serve/serve-env.js';
export type { Action, ActionType, Message, RetrievedDoc, Step, Trajectory } from '../core/trajectory.js';
