/**
 * The outer MDP of RAG-Gym (§2.1, the nested MDP's outer level), with Gymnasium's small contract made
 * functional: `reset(question)` gives the first state, `step(state, move)` returns the next one without
 * changing the old, so that search trees (MCTS) can branch from any state. The retriever lives inside;
 * budgets on turns and searches end an episode, after which the agent must answer (one forced
 * answer-only call, a choice made here). Every step keeps its trace: prompt, raw text, parsed action,
 * documents with ids and scores, timings and usage.
 */
import type { Question } from '../core/types.js';
import type { Action, Message, RetrievedDoc, Step, TokenUsage } from '../core/trajectory.js';
import type { Retriever } from '../retrieval/types.js';

/** The reason of a search made after the search budget ran out (the step becomes invalid). */
export const SEARCH_OVER_BUDGET = 'search after the budget ran out';

/** The retriever an environment searches with and the budgets that end an episode. */
export interface EnvConfig {
  retriever: Retriever;
  /** Documents per search. */
  topK: number;
  /** Agent steps before the answer is forced. */
  maxTurns: number;
  /** Searches before the answer is forced (default: maxTurns). */
  maxSearches?: number;
}

/**
 * Where an episode stands: the question, the steps taken so far and the budgets left. Immutable:
 * {@link RagEnv.step}
 * returns a new state, so search trees can branch from any of them.
 */
export interface State {
  question: Question;
  steps: readonly Step[];
  /** An answer was given. */
  done: boolean;
  /** The budget is spent: the next action must be an answer. */
  mustAnswer: boolean;
  turnsLeft: number;
  searchesLeft: number;
}

/** What a policy proposes: an action plus the record of how it was produced. */
export interface Move {
  action: Action;
  raw: string;
  prompt?: Message[] | string;
  usage?: TokenUsage;
  llmMs?: number;
  /** log-probability of the generated text (sum over its tokens), and how many tokens it sums. */
  logprob?: number;
  logprobTokens?: number;
  /** Set for answers given after the budget ran out. */
  forced?: boolean;
  /** The text did not follow the protocol although an action was recovered from it (a format failure). */
  formatError?: string;
  /**
   * Chosen among candidates by a selector (PRM best-of-N): how many were scored, the winner's score, and
   * each candidate's action with its score (the chosen one is the highest), for reading a run afterwards.
   */
  selection?: { candidates: number; score: number; scored?: { action: Action; score: number }[] };
  /** What the agent decided before this step that no earlier step records (the step's `summary`). */
  summary?: string;
}

/** What {@link RagEnv.step} returns: the next state and whether the episode ended. */
export interface StepResult {
  state: State;
  /** The episode ended with an answer. */
  done: boolean;
  /** The budget ran out without an answer (Gymnasium's `truncated`): a forced answer comes next. */
  truncated: boolean;
}

/**
 * The retrieval MDP (RAG-Gym §2.1): a search action runs the retriever for `topK` documents; turn and
 * search budgets force an answer. Functional, so MCTS can step from any earlier state.
 */
export class RagEnv {
  readonly maxSearches: number;

  constructor(readonly config: EnvConfig) {
    this.maxSearches = config.maxSearches ?? config.maxTurns;
  }

  /** The first state of an episode on `question` (no steps, full budgets). */
  reset(question: Question): State {
    return { question, steps: [], done: false, mustAnswer: this.config.maxTurns <= 0, turnsLeft: this.config.maxTurns, searchesLeft: this.maxSearches };
  }

  /**
   * Applies `move` to `state` and returns the next state without changing `state`. A search runs the
   * retriever (timed), once per query when the action carries several `queries`; a search once the
   * search budget is spent or an answer is due becomes an `invalid` step. Throws if the episode already
   * ended.
   */
  async step(state: State, move: Move): Promise<StepResult> {
    if (state.done) throw new Error('step() after the episode ended');
    let action = move.action;
    const step: Step = { action, raw: move.raw };
    if (move.prompt !== undefined) step.prompt = move.prompt;
    if (move.usage) step.usage = move.usage;
    if (move.llmMs !== undefined) step.llmMs = move.llmMs;
    if (move.logprob !== undefined) step.logprob = move.logprob;
    if (move.forced || state.mustAnswer) step.forced = true;
    if (move.formatError) step.formatError = move.formatError;
    if (move.selection) step.selection = move.selection;
    if (move.summary !== undefined) step.summary = move.summary;
    let searchesLeft = state.searchesLeft;
    if (action.type === 'search') {
      if (searchesLeft <= 0 || state.mustAnswer) {
        action = { type: 'invalid', reason: SEARCH_OVER_BUDGET };
        step.action = action;
      } else {
        const t0 = performance.now();
        // Several queries in one step (O2-Searcher): each retrieved on its own, the lists concatenated in order.
        const lists = action.queries?.length ? await this.config.retriever.searchBatch(action.queries, this.config.topK) : [await this.config.retriever.search(action.query, this.config.topK)];
        step.retrievalMs = performance.now() - t0;
        // A server may return more than it was asked for: each list is cut to top-k.
        for (const [i, l] of lists.entries()) if (l.length > this.config.topK) lists[i] = l.slice(0, this.config.topK);
        step.docs = lists.flat().map((h): RetrievedDoc => ({ passageId: h.passageId, title: h.title, text: h.text, score: h.score }));
        if (action.queries?.length) step.docsPerQuery = lists.map((l) => l.length);
        searchesLeft--;
      }
    }
    const done = action.type === 'answer';
    const turnsLeft = state.turnsLeft - 1;
    // Out of turns, or out of searches once the last search has been dealt with (ReasonRAG still
    // grounds the final search's documents before answering).
    const mustAnswer = !done && (state.mustAnswer || turnsLeft <= 0 || (searchesLeft <= 0 && action.type !== 'search'));
    const next: State = { question: state.question, steps: [...state.steps, step], done, mustAnswer, turnsLeft, searchesLeft };
    return { state: next, done, truncated: mustAnswer && !state.mustAnswer };
  }
}

/** Documents retrieved so far, in order, without repeats. */
export function retrievedDocs(state: Pick<State, 'steps'>): RetrievedDoc[] {
  const seen = new Set<string>();
  const out: RetrievedDoc[] = [];
  for (const s of state.steps) for (const d of s.docs ?? []) if (!seen.has(d.passageId)) (seen.add(d.passageId), out.push(d));
  return out;
}
