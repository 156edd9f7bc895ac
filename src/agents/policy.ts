/**
 * `Policy.propose(state, {n, temperature, seed})` is the one entry point through which MCTS,
 * annotation, PRM-guided selection and training obtain actions. An LLM policy is a protocol (prompt
 * builder + parser) plus a backend; non-LLM policies (oracle, sim, the trained gym policy) implement
 * the same interface and write their actions in the protocol's format, labelled as what they are.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { State, Move } from '../env/env.js';
import type { GenerateRequest, GenerateResult, LLM } from '../llm/types.js';
import { sequenceLogprob } from '../llm/types.js';
import { fallbackAnswer, type Protocol } from './protocol.js';

/** Options of {@link Policy.propose}. */
export interface ProposeOptions {
  /** Number of candidate actions (default 1). */
  n?: number;
  temperature?: number;
  /** Seed of the sampling; the same state, options and seed give the same proposals. */
  seed?: number;
}

/**
 * What produces a policy's actions: a language model (`llm`), one of the built-in non-LLM policies
 * (`oracle`, `sim`, the trained `gym` policy), or a user's own policy (`custom`), about which ragtrail
 * assumes nothing: it may call a model or not, so runs neither label it a non-LLM stand-in nor apply
 * the simulated agent's data checks.
 */
export type PolicyKind = 'llm' | 'oracle' | 'sim' | 'gym' | 'custom';

/** Anything that proposes actions for a state: an LLM behind a protocol, or a non-LLM policy writing in the protocol's format. */
export interface Policy {
  /** Written into every trajectory, e.g. "llm:openai:…#Qwen2.5-7B" or "sim(competence=0.7) [non-LLM]". */
  readonly name: string;
  readonly kind: PolicyKind;
  readonly protocol: Protocol;
  /**
   * `opts.n` candidate moves (default 1) for `state`, each an action with the text it was parsed from;
   * once `state.mustAnswer` is set every move must be an answer. Does not change `state`.
   */
  propose(state: State, opts?: ProposeOptions): Promise<Move[]>;
}

/**
 * A policy around another one (counting, recording, re-ranking): its name, kind and protocol are the
 * inner policy's and `propose` passes through, unless a subclass overrides them.
 */
export abstract class PolicyWrapper implements Policy {
  constructor(readonly inner: Policy) {}
  get name(): string {
    return this.inner.name;
  }
  get kind(): PolicyKind {
    return this.inner.kind;
  }
  get protocol(): Protocol {
    return this.inner.protocol;
  }
  propose(state: State, opts?: ProposeOptions): Promise<Move[]> {
    return this.inner.propose(state, opts);
  }
}

/** Sampling settings of an {@link LlmPolicy}; per-call options of `propose` take precedence. */
export interface LlmPolicyOptions {
  /** Default sampling temperature (default 0). */
  temperature?: number;
  topP?: number;
  maxTokens?: number;
  /** Ask the backend for log-probabilities (for PUCT priors). */
  logprobs?: boolean;
  /** Keep each step's prompt in the trace (default true). */
  tracePrompts?: boolean;
}

/** When the budget is spent the protocol is asked for an answer; text that still is not one is read as one. */
function forceAnswer(move: Move): Move {
  if (move.action.type === 'answer') return move;
  return { ...move, action: { type: 'answer', answer: fallbackAnswer(move.raw) }, formatError: `forced answer did not parse (${move.action.type === 'invalid' ? move.action.reason : move.action.type})` };
}

/**
 * A protocol plus an LLM backend: renders the state into chat messages, samples `n` replies in one
 * request and parses each into an action. Named `llm:<backend spec>` in trajectories.
 */
export class LlmPolicy implements Policy {
  readonly kind = 'llm';
  readonly name: string;

  constructor(
    readonly protocol: Protocol,
    readonly llm: LLM,
    private readonly opts: LlmPolicyOptions = {},
  ) {
    this.name = `llm:${llm.spec}`;
  }

  /**
   * One model request for `opts.n` samples, after any calls the protocol's `prepare` makes (a fixed
   * step makes no request of its own). Each move gets an equal share of the request's token usage, its
   * log-probability when the backend reports one, and, when the answer is forced, text that does not
   * parse as an answer is taken as the answer itself (recorded as a format error).
   */
  async propose(state: State, opts: ProposeOptions = {}): Promise<Move[]> {
    const p = this.protocol;
    // Before the fixed step: a routing protocol (agents/router.ts) decides there which agent answers,
    // and with it whether the first step is a fixed search. Its calls (summaries, a router's decision,
    // SuRe's candidates) are the next step's cost: counted into its usage and model time.
    const prep = countingLLM(this.llm);
    // A second model's calls (`--aux-llm`: a summariser, a scorer, a classifier) made while preparing
    // count here too (countedInStep), also when episodes run concurrently.
    await STEP.run(prep, async () => p.prepare?.(state, prep.llm));
    const fixed = state.mustAnswer ? undefined : p.fixedAction?.(state);
    const note = p.stepNote?.(state);
    if (fixed) return [{ action: fixed, raw: p.format(fixed, state), ...(prep.calls > 0 && { usage: { ...prep.usage }, llmMs: prep.ms }), ...(note !== undefined && { summary: note }) }];
    const messages = p.render(state, { forced: state.mustAnswer });
    const t0 = performance.now();
    const result = await this.llm.generate({
      messages,
      n: opts.n ?? 1,
      temperature: opts.temperature ?? this.opts.temperature ?? 0,
      topP: this.opts.topP,
      maxTokens: this.opts.maxTokens ?? p.defaults.maxTokens,
      stop: p.defaults.stop,
      seed: opts.seed,
      logprobs: this.opts.logprobs,
    });
    const llmMs = performance.now() - t0;
    const n = result.choices.length;
    return result.choices.map((c) => {
      let move: Move = {
        action: p.parse(c.text, state),
        raw: c.text,
        // The request's usage (and the preparation's) is shared by its samples: split it so totals add up.
        usage: { promptTokens: Math.round((result.usage.promptTokens + prep.usage.promptTokens) / n), completionTokens: Math.round((result.usage.completionTokens + prep.usage.completionTokens) / n) },
        llmMs: llmMs + prep.ms,
        ...(note !== undefined && { summary: note }),
      };
      if (this.opts.tracePrompts !== false) move.prompt = messages;
      const lp = sequenceLogprob(c);
      if (lp !== undefined) {
        move.logprob = lp;
        move.logprobTokens = c.logprobs!.logprobs.length;
      }
      if (state.mustAnswer) move = forceAnswer(move);
      return move;
    });
  }
}

/** What the calls of one step's preparation add up to. */
interface StepCalls {
  calls: number;
  usage: { promptTokens: number; completionTokens: number };
  ms: number;
}

/** Adds one call, started at `t0`, to a step's counts. */
function addCall(step: StepCalls, r: GenerateResult, t0: number): void {
  step.calls++;
  step.ms += performance.now() - t0;
  step.usage.promptTokens += r.usage.promptTokens;
  step.usage.completionTokens += r.usage.completionTokens;
}

/** The step being prepared, for the calls of models the protocol holds itself (countedInStep). */
const STEP = new AsyncLocalStorage<StepCalls>();

/**
 * A protocol's second model (`--aux-llm`) whose calls count toward the step that makes them, as the
 * agent model's own calls in `prepare` do: its tokens and time go into that step's usage and model time.
 */
export function countedInStep(inner: LLM): LLM {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop !== 'generate') {
        const v = Reflect.get(target, prop, receiver);
        // Methods run on the model itself (its private state is not the proxy's).
        return typeof v === 'function' ? v.bind(target) : v;
      }
      return async (req: GenerateRequest): Promise<GenerateResult> => {
        const t0 = performance.now();
        const r = await target.generate(req);
        const step = STEP.getStore();
        if (step) addCall(step, r, t0);
        return r;
      };
    },
  });
}

/** An LLM that adds up the tokens and time of the calls made through it (a protocol's `prepare`). */
function countingLLM(inner: LLM): StepCalls & { llm: LLM } {
  const c = {
    calls: 0,
    usage: { promptTokens: 0, completionTokens: 0 },
    ms: 0,
    llm: {
      spec: inner.spec,
      async generate(req: GenerateRequest): Promise<GenerateResult> {
        const t0 = performance.now();
        const r = await inner.generate(req);
        addCall(c, r, t0);
        return r;
      },
    } as LLM,
  };
  return c;
}
