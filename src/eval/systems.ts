/**
 * A "system" of an evaluation: an agent protocol driven by a model (or a non-LLM stand-in), with an
 * action-selection method — greedy, PRM best-of-N (RAG-Gym Alg. 1) or self-consistency voting —
 * in the environment of one index. Shared by `ragtrail run` and `ragtrail eval`.
 */
import { InputError } from '../core/errors.js';
import { createPolicy } from '../agents/policies.js';
import { countedInStep, LlmPolicy, type Policy } from '../agents/policy.js';
import { getProtocol, protocolNames } from '../agents/registry.js';
import type { Protocol } from '../agents/protocol.js';
import { RagEnv } from '../env/env.js';
import { createLLM, type LLMOptions } from '../llm/create.js';
import type { MeteredLLM } from '../llm/middleware.js';
import { createPrm, PrmGuidedPolicy, PRM_SPEC_HELP, type PrmCandidates } from '../prm/select.js';
import type { PrmInput } from '../prm/remote.js';
import type { PRM } from '../prm/types.js';
import type { Retriever } from '../retrieval/types.js';

/**
 * How a system picks each action: the policy's own choice (greedy), PRM best-of-N (RAG-Gym Alg. 1), or
 * self-consistency voting over whole episodes.
 */
export type SelectMethod = 'greedy' | 'prm' | 'vote' | 'orm';

/**
 * One system of `ragtrail run` / `ragtrail eval`: a protocol, a model or a non-LLM policy, the
 * selection method, and budgets (unset: the protocol's defaults).
 */
export interface SystemSpec {
  /** Protocol name (--agent). */
  agent: string;
  /** The model, or… */
  llm?: string;
  /** …a non-LLM stand-in: sim, oracle, gym (untrained), gym:FILE (trained with `ragtrail train`) or a registered policy. */
  policy?: string;
  competence?: number;
  select?: SelectMethod;
  /** PRM for select = prm. */
  prm?: string;
  /** Which sampled candidates the PRM chooses among (select = prm): the well-formed ones when there
   * are any (default), or all of them, malformed included (RAG-Gym Alg. 1 as written). */
  prmCandidates?: PrmCandidates;
  /** What a remote text PRM reads of the state (select = prm): step summaries (default) or the steps with the documents found. */
  prmInput?: PrmInput;
  /** Candidates per step (prm) or episodes (vote); default 10. */
  n?: number;
  /** Default 0 for greedy, 1.0 for prm and vote. */
  temperature?: number;
  maxTurns?: number;
  maxSearches?: number;
  topK?: number;
  maxTokens?: number;
  tracePrompts?: boolean;
  /** Ask the model for token log-probabilities (PUCT priors). */
  logprobs?: boolean;
  /** The agent's second model, for protocols that use one (`Protocol.withAux`: a compressor's scorer, a router's classifier). */
  auxLlm?: string;
  /** What identifies the system when a run resumes, instead of the spec (e.g. a checkpoint path when
   * the serving URL changes from one invocation to the next). */
  resumeKey?: string;
}

/**
 * A system ready to run: its policy (PRM-wrapped when selected), its environment, the metered model
 * when it has one, and the sampling settings.
 */
export interface BuiltSystem {
  /** The agent's protocol (with its second model when `auxLlm` gave one). */
  protocol: Protocol;
  policy: Policy;
  env: RagEnv;
  llm?: MeteredLLM;
  /** The agent's second model (`auxLlm`), when it has one: close it with `llm`. */
  aux?: MeteredLLM;
  temperature: number;
  vote?: { n: number; temperature: number };
  /** select = orm: whole episodes scored by the ORM (`prm` names it). */
  outcome?: { n: number; temperature: number; orm: PRM };
}

/**
 * Builds the policy and environment of `spec` over `retriever`. Needs exactly one of `llm` and
 * `policy`
 * (an InputError otherwise), and `prm` for `select: 'prm'`. Close the returned `llm` when done.
 */
export async function buildSystem(spec: SystemSpec, retriever: Retriever, llmOptions: LLMOptions = {}): Promise<BuiltSystem> {
  if (!spec.llm === !spec.policy) throw new InputError('give exactly one of --llm SPEC or --policy sim|oracle|gym:FILE', 'e.g. --llm openai:http://127.0.0.1:8000/v1#model, or --policy sim to run offline');
  let protocol = getProtocol(spec.agent);
  let aux: MeteredLLM | undefined;
  if (spec.auxLlm) {
    if (!protocol.withAux) throw new InputError(`agent ${spec.agent} uses no second model: drop --aux-llm`, `agents that take one: ${protocolNames().filter((n) => getProtocol(n).withAux).join(', ')}`);
    aux = await createLLM(spec.auxLlm, llmOptions);
    // Its calls are the step's cost, as the agent model's are (agents/policy.ts countedInStep).
    protocol = protocol.withAux(countedInStep(aux));
  }
  let llm: MeteredLLM | undefined;
  let policy: Policy;
  if (spec.llm) {
    llm = await createLLM(spec.llm, llmOptions);
    policy = new LlmPolicy(protocol, llm, { maxTokens: spec.maxTokens, tracePrompts: spec.tracePrompts, logprobs: spec.logprobs });
  } else {
    policy = createPolicy(spec.policy!, protocol, spec.competence);
  }
  const select = spec.select ?? 'greedy';
  const temperature = spec.temperature ?? (select === 'greedy' ? 0 : 1);
  const n = spec.n ?? 10;
  if (select === 'prm') {
    if (!spec.prm) throw new InputError('--select prm needs --prm SPEC', PRM_SPEC_HELP);
    policy = new PrmGuidedPolicy(policy, await createPrm(spec.prm, llmOptions, { input: spec.prmInput }), n, temperature, spec.prmCandidates);
  }
  const d = protocol.defaults;
  const env = new RagEnv({ retriever, topK: spec.topK ?? d.topK, maxTurns: spec.maxTurns ?? d.maxTurns, maxSearches: spec.maxSearches ?? d.maxSearches });
  let outcome: BuiltSystem['outcome'];
  if (select === 'orm') {
    if (!spec.prm) throw new InputError('--select orm needs --prm SPEC: the outcome reward model that scores each episode\'s final answer', PRM_SPEC_HELP);
    outcome = { n, temperature, orm: await createPrm(spec.prm, llmOptions, { input: spec.prmInput }) };
  }
  return { protocol, policy, env, llm, ...(aux && { aux }), temperature, vote: select === 'vote' ? { n, temperature } : undefined, ...(outcome && { outcome }) };
}
