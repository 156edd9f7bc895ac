/**
 * `ragtrail/prm`: process reward models (`PRM.score(state, candidates)`): the TypeScript head trained
 * on step pairs, an LLM judge, remote scoring servers, the gold-plan diagnostic, PRMs of your own
 * (`registerPrm`), and PRM-guided best-of-N action selection (RAG-Gym Alg. 1).
 * @module
 */
export type { Candidate, PRM } from './types.js';
export { createPrm, PRM_CANDIDATES, PRM_SPEC_HELP, type PrmCandidates, type PrmFactory, type PrmOptions, PrmGuidedPolicy, prmKinds, registerPrm } from './select.js';
export { type PairEval, pairCalibration, type PrmPairRecord, type PrmTrainOptions, readPrmPairs, rejectedPairState, type SavedPrm, scorePair, TrainedPRM, trainPrm } from './trained.js';
export { type ModelKind, type ModelState, pairCredit, ScoreModel } from './model.js';
export { JudgePRM } from './judge.js';
export { type PrmInput, PRM_INPUTS, RemotePRM, type RemoteOptions, type RemoteShape } from './remote.js';
export { GoldPRM, openHops } from './gold.js';
export { type OutcomePairs, outcomePairs } from './outcome.js';
export { checkLabels, type KindCheck, type LabelCheck } from './label-check.js';
