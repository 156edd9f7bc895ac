/**
 * Routing baselines: one model call decides, per question, which simpler agent answers it — Adaptive-RAG
 * (no retrieval / one retrieval / multi-step, by question complexity) and SKR (retrieve or not, by the
 * model's self-knowledge). The decision is made in `prepare` before the episode's first step and kept
 * for the question (the same Question object travels through every state of an episode); every other
 * call is the chosen agent's own protocol. A policy that makes no model calls (sim, oracle, the gym) is
 * not routed and takes the fallback route.
 */
import type { Message } from '../core/trajectory.js';
import type { Question } from '../core/types.js';
import type { State } from '../env/env.js';
import type { LLM } from '../llm/types.js';
import type { Protocol, RenderOptions, TemplateKind } from './protocol.js';

/** What a router needs: its routes, the decision prompt and how to read it. */
export interface RouterSpec {
  name: string;
  description: string;
  routes: Record<string, Protocol>;
  /** The route when the decision cannot be read (or was never asked, for non-LLM policies). */
  fallback: string;
  /** The decision prompt for a question. */
  decide: (question: Question) => Message[];
  /** The route a decision reply names, or undefined when it names none. */
  read: (text: string) => string | undefined;
  /** The classifier: the agent's own model unless given (Adaptive-RAG's paper trains a small one). */
  classifier?: LLM;
}

/** A protocol that routes: the route a question was given (the fallback before a model decided). */
export interface RoutedProtocol extends Protocol {
  /** The route `question` was given, or the fallback when no model has decided it. */
  routeOf(question: Question): string;
}

/** A protocol that routes each question to one of `spec.routes` (see the module comment). */
export function routedProtocol(spec: RouterSpec): RoutedProtocol {
  // The decision for a question, and the model (by spec) that made it: a question object is shared by every
  // system an evaluation runs (one after another), so another model decides again (prepare runs before
  // each step, through a wrapper that counts the call's cost, so the model is known by its spec).
  const decided = new WeakMap<Question, { by: string; route: string }>();
  const route = (state: State) => spec.routes[decided.get(state.question)?.route ?? spec.fallback]!;
  const budgets = Object.values(spec.routes).map((p) => p.defaults);
  // Each route's kinds of prompt, named after the route's protocol (`@ircot-main user`), so a template may word each one.
  const kinds: Record<string, TemplateKind> = {};
  for (const p of Object.values(spec.routes)) for (const [k, v] of Object.entries(p.template?.kinds ?? {})) kinds[`${p.name}-${k}`] = v;
  const self: RoutedProtocol = {
    name: spec.name,
    description: spec.description,
    // The widest budget of the routes: the environment is made before the route is known.
    defaults: {
      maxTurns: Math.max(...budgets.map((d) => d.maxTurns)),
      maxSearches: Math.max(...budgets.map((d) => d.maxSearches ?? d.maxTurns)),
      topK: Math.max(...budgets.map((d) => d.topK)),
      maxTokens: Math.max(...budgets.map((d) => d.maxTokens)),
    },
    routeOf: (question) => decided.get(question)?.route ?? spec.fallback,
    async prepare(state: State, llm: LLM): Promise<void> {
      const by = (spec.classifier ?? llm).spec;
      if (decided.get(state.question)?.by !== by) {
        const reply = await (spec.classifier ?? llm).generate({ messages: spec.decide(state.question), temperature: 0, maxTokens: 16 });
        decided.set(state.question, { by, route: spec.read(reply.choices[0]?.text ?? '') ?? spec.fallback });
      }
      await route(state).prepare?.(state, llm);
    },
    allowed: (state) => route(state).allowed(state),
    fixedAction: (state) => route(state).fixedAction?.(state),
    render: (state: State, opts?: RenderOptions) => route(state).render(state, opts),
    parse: (text, state) => route(state).parse(text, state),
    format: (action, state) => route(state).format(action, state),
    template: {
      kinds,
      fill(state, opts) {
        const p = route(state);
        const fill = p.template!.fill(state, opts);
        return { ...fill, kind: `${p.name}-${fill.kind}` };
      },
    },
  };
  return self;
}
