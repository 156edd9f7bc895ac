/**
 * Non-LLM policies by spec (`--policy NAME` or `--policy NAME:ARG`): the simulated agent and the
 * oracle here, the trained gym policy registered by `learn/` (it lives with its trainer), and any a
 * user registers with `registerPolicy`. An LLM-driven policy is not in this table: `--llm SPEC` builds
 * it (see llm/create and agents/policy LlmPolicy).
 */
import { InputError } from '../core/errors.js';
import { type RegisterOptions, Registry, splitSpec } from '../core/registry.js';
import { OraclePolicy } from './oracle.js';
import type { Policy } from './policy.js';
import type { Protocol } from './protocol.js';
import { SimPolicy } from './sim.js';

/** Settings passed to every {@link PolicyFactory}. */
export interface PolicyOptions {
  /** The simulated agent's competence in [0, 1] (default 0.7); other policies may ignore it. */
  competence?: number;
}

/** Builds a policy for `protocol` from the spec's argument (after `name:`; empty for a bare name). */
export type PolicyFactory = (arg: string, protocol: Protocol, opts: PolicyOptions) => Policy;

/** The policy table; names: sim, oracle, gym (once `ragtrail/learn` is loaded) and registered ones. */
export const policies = new Registry<PolicyFactory>('policy');

policies.register('sim', (_arg, protocol, o) => new SimPolicy(protocol, o.competence ?? 0.7));
policies.register('oracle', (_arg, protocol) => new OraclePolicy(protocol));

/** Makes `--policy NAME[:ARG]` build with `factory` wherever a non-LLM policy is accepted. */
export function registerPolicy(name: string, factory: PolicyFactory, opts?: RegisterOptions): void {
  policies.register(name, factory, opts);
}

/** The accepted `--policy` specs, in words, for help texts and error messages. */
export const POLICY_SPEC_HELP = 'sim (simulated imperfect agent), oracle (follows the gold decomposition), gym (the untrained gym policy) or gym:FILE (a gym policy from `ragtrail train`), or a registered policy NAME[:ARG]';

/** Checks a spec's name without building it (for early flag validation). */
export function knownPolicy(spec: string): boolean {
  return policies.has(splitSpec(spec).kind);
}

/** A non-LLM policy from its spec (see POLICY_SPEC_HELP). */
export function createPolicy(spec: string, protocol: Protocol, competence = 0.7): Policy {
  const { kind, rest } = splitSpec(spec);
  const factory = policies.find(kind);
  if (!factory) {
    const hint = kind === 'gym' ? "the gym policy is registered by ragtrail's learn module: import 'ragtrail/learn' (the CLI always does)" : `use ${POLICY_SPEC_HELP}`;
    throw new InputError(`unknown policy "${spec}"`, hint);
  }
  return factory(rest, protocol, { competence });
}
