/**
 * PRM-guided action selection (RAG-Gym Alg. 1): at each step sample N candidate actions from the policy
 * (T = 1.0, N = 10), score them with the PRM, execute the argmax. Wrapped as a Policy, so the runner,
 * the evaluation harness and anything else that takes a policy can use it unchanged.
 *
 * Candidates that break the protocol (no action could be parsed, or one was only recovered from a
 * malformed text) are not actions the agent meant to take; by default the PRM chooses among the
 * well-formed ones and sees malformed ones only when nothing else was sampled (`candidates`).
 * A PRM trained on few pairs scores format badly, and executing a malformed step wastes a turn.
 */
import { InputError } from '../core/errors.js';
import { type RegisterOptions, Registry, splitSpec } from '../core/registry.js';
import { type Policy, PolicyWrapper, type ProposeOptions } from '../agents/policy.js';
import type { Move, State } from '../env/env.js';
import { createLLM, type LLMOptions } from '../llm/create.js';
import { isFormatFailure } from '../core/trajectory.js';
import { sameAction } from '../process/tree.js';
import { GoldPRM } from './gold.js';
import { JudgePRM } from './judge.js';
import { type PrmInput, REMOTE_SHAPES, RemotePRM, type RemoteShape } from './remote.js';
import { TrainedPRM } from './trained.js';
import type { PRM } from './types.js';

/** Index of the highest score; the first on ties. */
export function argmax(scores: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < scores.length; i++) if (scores[i]! > scores[best]!) best = i;
  return best;
}

/** Which sampled candidates a {@link PrmGuidedPolicy} lets the PRM choose among. */
export const PRM_CANDIDATES = ['well-formed', 'all'] as const;
/** `well-formed`: only candidates that follow the protocol, unless none does; `all`: every distinct candidate. */
export type PrmCandidates = (typeof PRM_CANDIDATES)[number];

/**
 * PRM-guided action selection (RAG-Gym Alg. 1) as a Policy: sample `n` candidates (default 10) from
 * the
 * inner policy at `temperature` (default 1.0), score them with the PRM, take the argmax. `calls`
 * counts PRM calls.
 */
export class PrmGuidedPolicy extends PolicyWrapper {
  calls = 0;

  constructor(
    inner: Policy,
    readonly prm: PRM,
    readonly n = 10,
    readonly temperature = 1.0,
    readonly candidates: PrmCandidates = 'well-formed',
  ) {
    super(inner);
  }

  override get name(): string {
    return `${this.inner.name} + best-of-${this.n} by ${this.prm.name}`;
  }

  /**
   * The single best move, with its `selection` (candidates scored and the winning score). Duplicate
   * candidates are scored once; with one candidate left the PRM is not called. Only `opts.seed` is used.
   */
  override async propose(state: State, opts: ProposeOptions = {}): Promise<Move[]> {
    const sampled = await this.inner.propose(state, { n: this.n, temperature: this.temperature, seed: opts.seed });
    // Identical candidates are scored once.
    const distinct: Move[] = [];
    for (const m of sampled) if (!distinct.some((d) => d.raw.trim() === m.raw.trim() || sameAction(d.action, m.action))) distinct.push(m);
    const wellFormed = distinct.filter((m) => !isFormatFailure(m));
    const pool = this.candidates === 'well-formed' && wellFormed.length > 0 ? wellFormed : distinct;
    if (pool.length <= 1) return pool;
    this.calls++;
    const scores = await this.prm.score(state, pool);
    const best = argmax(scores);
    return [{ ...pool[best]!, selection: { candidates: pool.length, score: scores[best]!, scored: pool.map((m, i) => ({ action: m.action, score: scores[i]! })) } }];
  }
}

/** The accepted built-in `--prm` specs, in words, for help texts and error messages. */
export const PRM_SPEC_HELP = 'a model file from `ragtrail prm train`, judge:<llm spec>, remote:<vllm-pooling|vllm-classify|tei-rerank>:<url>[#model], or gold (a diagnostic that reads the gold plan, non-LLM)';

/** Builds a PRM from the rest of its spec (after `kind:`; empty for a bare `kind`). */
export type PrmFactory = (rest: string, llmOptions: LLMOptions, opts?: PrmOptions) => PRM | Promise<PRM>;

/** Settings a spec does not carry: what a text PRM reads of the state (remote PRMs; see {@link PrmInput}). */
export interface PrmOptions {
  input?: PrmInput;
}

/** PRM kinds by spec prefix: `gold`, `judge`, `remote`, and any registered with `registerPrm`. A spec
 * whose prefix is not registered is the path of a model file from `ragtrail prm train`. */
export const prmKinds = new Registry<PrmFactory>('prm kind');

prmKinds.register('gold', () => new GoldPRM());
prmKinds.register('judge', async (rest, llmOptions) => new JudgePRM(await createLLM(rest, llmOptions)));
prmKinds.register('remote', (rest, llmOptions, opts) => {
  const colon = rest.indexOf(':');
  const shape = rest.slice(0, colon) as RemoteShape;
  if (colon < 0 || !REMOTE_SHAPES.includes(shape)) throw new InputError(`prm "remote:${rest}": expected remote:<${REMOTE_SHAPES.join('|')}>:<url>[#model]`);
  const target = rest.slice(colon + 1);
  const hash = target.lastIndexOf('#');
  return new RemotePRM(hash > 0 ? target.slice(0, hash) : target, { shape, model: hash > 0 ? target.slice(hash + 1) : undefined, apiKey: llmOptions.apiKey, input: opts?.input });
});

/** Makes `KIND` / `KIND:…` PRM specs build with `factory`, wherever a --prm spec is accepted. */
export function registerPrm(kind: string, factory: PrmFactory, opts?: RegisterOptions): void {
  prmKinds.register(kind, factory, opts);
}

/** The PRM of a spec (see PRM_SPEC_HELP and `registerPrm`). */
export async function createPrm(spec: string, llmOptions: LLMOptions = {}, opts: PrmOptions = {}): Promise<PRM> {
  const { kind, rest } = splitSpec(spec);
  const factory = prmKinds.find(kind);
  return factory ? factory(rest, llmOptions, opts) : TrainedPRM.load(spec);
}
