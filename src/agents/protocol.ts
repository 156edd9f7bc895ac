/**
 * A protocol is the text format of one agent design: how a state becomes a prompt, and how the
 * model's reply becomes an action. Parsers never throw — text that does not fit becomes an
 * `invalid` action with the raw text kept, which the format metrics count. `format` is the inverse
 * of `parse`: it writes an action as the model should have, so that non-LLM policies (oracle, sim)
 * produce trajectories in the same format (for SFT data) and parse(format(a)) = a.
 */
import type { Passage } from '../core/types.js';
import type { Action, ActionType, Message, RetrievedDoc, Step } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import type { LLM } from '../llm/types.js';
import { groundingQuote } from './gold.js';

/** The built-in protocols' names; `protocolNames()` (agents/registry) adds registered ones. */
export const AGENT_NAMES = [
  'reasonrag', 'search-r1', 'direct', 'cot', 'rag', 'react', 'search-o1', 'research', 'prorag', 'arena', 'ircot', 'iter-retgen', 'self-ask',
  'search-r1-released', 'zerosearch', 'autorefine', 'r1-searcher', 're-search', 'adaptive-rag', 'skr', 'hiprag', 'sure', 'corag', 'simple-deep-searcher', 'arena-direct',
  'auto-rag', 'o2-searcher', 'self-rag', 'flare', 'recomp', 'recomp-extractive', 'longllmlingua', 'selective-context',
] as const;
/** A protocol name: a built-in one or one registered with `registerProtocol`. */
export type AgentName = string;

/** Budgets and generation limits a protocol runs with unless the caller overrides them. */
export interface ProtocolDefaults {
  /** Agent steps before the answer is forced. */
  maxTurns: number;
  /** Searches allowed (default: maxTurns). */
  maxSearches?: number;
  /** Documents per search. */
  topK: number;
  /** Completion budget per call. */
  maxTokens: number;
  /** Stop strings (the generation ends before them). */
  stop?: string[];
}

/** Options of {@link Protocol.render}. */
export interface RenderOptions {
  /** The budget is spent: ask for the final answer only. */
  forced?: boolean;
}

/**
 * The text format of one agent design: prompt building, reply parsing, and writing actions back as
 * text. Register your own with `registerProtocol`.
 */
export interface Protocol {
  /** The --agent name. */
  readonly name: string;
  /** One line, for --help and reports. */
  readonly description: string;
  readonly defaults: ProtocolDefaults;
  /** Action types the protocol may take in this state (oracle and sim choose among them). */
  allowed(state: State): ActionType[];
  /** A step taken without a model call (RAG's first search is the question itself), if any. */
  fixedAction?(state: State): Action | undefined;
  /** Model calls to make before rendering (Search-o1 / ReSearch summarise documents per query). */
  prepare?(state: State, llm: LLM): Promise<void>;
  /** The chat messages the model is sent for `state`; with `opts.forced`, a prompt that asks for the final answer only. */
  render(state: State, opts?: RenderOptions): Message[];
  /**
   * Protocols whose answers cite (ARENA): the references shown in this state, in their numbered order,
   * so that reference number i (an answer's `citations`) is element i − 1. Absent for the others.
   */
  references?(state: State): Passage[];
  /** The action in a model reply. Never throws: text that does not fit is an `invalid` action naming what was expected. */
  parse(text: string, state: State): Action;
  /**
   * Writes `action` as the model should have (inverse of `parse`: parse(format(a)) = a), so non-LLM
   * policies leave trajectories in the protocol's own format.
   */
  format(action: Action, state: State): string;
  /** What a `--prompt-template FILE` may replace, and the values of its placeholders (agents/prompt-template). */
  template?: TemplateHooks;
  /**
   * For protocols that use a second model of their own — a compressor's scorer or summariser, a router's
   * classifier — the same protocol with `aux` as that model (`--aux-llm SPEC`); without it they ask the
   * agent's own model. Its calls are not counted in the steps' usage.
   */
  withAux?(aux: LLM): Protocol;
  /**
   * A note for the step about to be taken in `state` (its `summary`), for what `prepare` decided that no
   * earlier step can hold: Self-RAG's decision not to retrieve, made before the episode's only step.
   */
  stepNote?(state: State): string | undefined;
}

/** One placeholder of a prompt template. */
export interface TemplateField {
  /** Whether a template of this kind must use it (a template without it is refused). */
  required: boolean;
  /** One line, for the docs and the error messages. */
  description: string;
}

/** One kind of prompt a protocol sends (ReasonRAG has two: reasoning and grounding). */
export interface TemplateKind {
  description: string;
  fields: Record<string, TemplateField>;
}

/** The prompt a template fills for one state. */
export interface TemplateFill {
  /** Which of `kinds` this prompt is. */
  kind: string;
  /** A value for every field of the kind. */
  values: Record<string, string>;
  /** Messages after the templated opening (the turns of a multi-turn transcript), as the protocol renders them. */
  continuation: Message[];
  /** When the budget is spent and the continuation does not already say so: the note asking for the answer. */
  forcedNote?: string;
}

/** A protocol's template hooks: its kinds of prompt (the first is the default kind) and their placeholder values. */
export interface TemplateHooks {
  kinds: Record<string, TemplateKind>;
  /** Which kind of prompt `state` gets, its placeholder values, and the protocol's messages after it. */
  fill(state: State, opts: RenderOptions): TemplateFill;
}

// ---------------------------------------------------------------------------------------- helpers

/**
 * Contents of the first `<tag>…</tag>` in the text; an unclosed tag at the very end also counts
 * (generation stops before the closing tag when it is a stop string). Undefined when absent.
 */
export function tagContent(text: string, tag: string): string | undefined {
  const open = text.indexOf(`<${tag}>`);
  if (open < 0) return undefined;
  const start = open + tag.length + 2;
  const close = text.indexOf(`</${tag}>`, start);
  return (close < 0 ? text.slice(start) : text.slice(start, close)).trim();
}

/**
 * The action tag of a model turn: the first of the tags (by where it opens) that is closed — as
 * Search-R1's `<(search|answer)>(.*?)</\1>` and ProRAG's rollout read turns, so a tag merely named in
 * the reasoning ("I will write it in <answer> later") is not the action. Failing that, the last tag
 * opened, unclosed, when no closing tag follows it: generation stopped at its closing stop string.
 */
export function firstTag(text: string, tags: readonly string[]): { tag: string; content: string } | undefined {
  const opens: { tag: string; at: number }[] = [];
  for (const tag of tags) for (let at = text.indexOf(`<${tag}>`); at >= 0; at = text.indexOf(`<${tag}>`, at + 1)) opens.push({ tag, at });
  if (opens.length === 0) return undefined;
  opens.sort((a, b) => a.at - b.at);
  // A tag with no closing after one opening has none after its later openings either: skipping them
  // keeps text of many unclosed tags linear (searching again from each was 0.7 s at 160 kB).
  const unclosed = new Set<string>();
  for (const { tag, at } of opens) {
    if (unclosed.has(tag)) continue;
    const start = at + tag.length + 2;
    const close = text.indexOf(`</${tag}>`, start);
    if (close >= 0) return { tag, content: text.slice(start, close).trim() };
    unclosed.add(tag);
  }
  const last = opens[opens.length - 1]!;
  const rest = text.slice(last.at + last.tag.length + 2);
  if (/<\/[a-z_]+>/i.test(rest)) return undefined; // closed by another tag: crossed, not cut off
  return { tag: last.tag, content: rest.trim() };
}

/** Documents as Search-R1 shows them: `Doc 1 (Title: …) text`, one per line. */
export function formatDocs(docs: readonly RetrievedDoc[]): string {
  if (docs.length === 0) return '(no documents found)';
  return docs.map((d, i) => `Doc ${i + 1} (Title: ${d.title}) ${d.text}`).join('\n');
}

/** The documents of the episode's latest search, as `formatDocs` writes them ("(none)" before one): what Iter-RetGen and Self-Ask show. */
export function latestSearchDocs(state: State): string {
  const last = [...state.steps].reverse().find((s) => s.action.type === 'search' && s.docs);
  return last ? formatDocs(last.docs ?? []) : '(none)';
}

/** The episode's first search that ran (the one search of `rag`-shaped protocols: SuRe, Self-RAG, the compressors). */
export const firstSearch = (state: State): Step | undefined => state.steps.find((s) => s.action.type === 'search' && s.docs);

/** The episode has its answer step. */
export const hasAnswered = (state: State): boolean => state.steps.some((s) => s.action.type === 'answer');

/** The answer is due: forced, or no searches left (a protocol whose next step would be a search must answer instead). */
export const answerDue = (state: State) => state.mustAnswer || state.searchesLeft <= 0;

/** A prompt's opening when the instructions are the system message and the question alone the user's (R1-Searcher, ReSearch). */
export function systemThenQuestion(system: string, state: State): Message[] {
  return [
    { role: 'system', content: system },
    { role: 'user', content: state.question.question },
  ];
}

/** Makes an invalid action naming what was expected. */
export function invalid(reason: string): Action {
  return { type: 'invalid', reason };
}

export function isBlank(s: string | undefined): s is undefined | '' {
  return s === undefined || s.trim() === '';
}

/**
 * A short, model-like thought for non-LLM actions (oracle, sim), so their text reads naturally. After
 * a search it quotes the retrieved sentence the action rests on (gold.ts `groundingQuote`): the
 * demonstrations then show reading as copying, which is what a small model learns first.
 */
export function thoughtFor(action: Action, state: State): string {
  const quote = groundingQuote(action, state);
  switch (action.type) {
    case 'search':
      if (quote) return `${quote} Next I need: ${action.query}`;
      return state.steps.length === 0 ? `To answer this I first need to know: ${action.query}` : `What I have so far is not enough; next I need: ${action.query}`;
    case 'extract':
      return 'These documents contain what I was looking for.';
    case 'answer':
      return quote ? `${quote} That answers the question.` : 'The information gathered is enough to answer.';
    default:
      return '';
  }
}

/** The last answer-looking thing in free text: a trailing "Answer: …" line, else the last non-empty line. */
export function fallbackAnswer(text: string): string {
  const lines = text.trim().split('\n').map((l) => l.trim()).filter(Boolean);
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = /^(?:final\s+)?answer\s*[:：]\s*(.+)$/i.exec(lines[i]!);
    if (m?.[1]) return m[1].trim();
  }
  return lines[lines.length - 1] ?? '';
}
