/**
 * `ragtrail/learn`: training. The offline gym policy (a small non-LLM model over generated candidate
 * actions) trains here in TypeScript — SFT, step-DPO, GRPO / DAPO / LWS / ProRAG RL, RFT; LLM weights
 * train in TRL through the configs and process written by `runTrl`. Importing this module registers
 * `--policy gym` / `gym:FILE`. The environment server for RL trainers (`createEnvServer` over an
 * `EnvService`: the OpenEnv / verl-tool / Search-R1 wire formats) lives here too.
 * @module
 */
export { type Choice, GymPolicy, type SavedGymPolicy } from './gym/policy.js';
export type { StateAction, StatePair } from './gym/data.js';
export type { GymCandidate } from './gym/candidates.js';
export { DPO_BETA, GYM_ALGOS, type GymAlgo, type LogEntry, type OfflineConfig, OFFLINE_DEFAULTS, type OnEpoch, type RlAlgo, type RlConfig, type RlContext, rlDefaults, trainDpo, trainRl, trainSft } from './gym/train.js';
export { type RftConfig, type RftContext, type RftCounts, RFT_DEFAULTS, type RftFilter, type RftResult, type RftVerdict, trainRft } from './gym/rft.js';
export { defaultVenv, ensureVenv, runTrl, type TrlAlgo, type TrlConfig, type VenvOptions, writeTrlConfig } from './trl.js';
export { type EpisodeScorer, EnvService, type EnvServiceOptions, type StepPayload, type StepScorer, type ToolSpec } from './serve/env-service.js';
export { createEnvServer, type EnvServer, type EnvServerOptions, withLoopbackEnvServer } from './serve/serve-env.js';
export type { EnvPeers } from './serve/env-router.js';
