/**
 * A process reward model scores candidate next actions in a state: `score(state, actions) → number[]`,
 * higher is better. Backends: an LLM judge (prompted ranking), a small model trained here on mined
 * pairs with the Bradley–Terry loss, and a remote scorer over HTTP (vLLM reward/pooling models, TEI
 * rerank). PRM-guided inference (select.ts) executes the argmax.
 */
import type { Action } from '../core/trajectory.js';
import type { State } from '../env/env.js';

/** What a PRM sees of a candidate: the parsed action and the text that produced it. */
export interface Candidate {
  action: Action;
  raw: string;
}

/**
 * A process reward model: scores candidate next actions in a state, higher is better. Used for
 * PRM-guided
 * selection, the env service's step rewards and RFT's filter. Add your own kind with `registerPrm`.
 */
export interface PRM {
  readonly name: string;
  /** One score per candidate, in order. Scales differ between PRMs: compare scores within one call only. */
  score(state: State, candidates: readonly Candidate[]): Promise<number[]>;
}
