/**
 * Trajectories: what an agent did on one question, step by step. The record every later stage reads
 * (rewards, process supervision, training, evaluation), for native runs and imported ones alike.
 * One JSON line per question in `RUN/trajectories.jsonl`.
 */

/** A chat message, as OpenAI-compatible servers take them. */
export interface Message {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** Tokens one model call used, as the server reported them. */
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

/**
 * An action of the outer MDP (RAG-Gym §2.1): search the corpus, record evidence (ReasonRAG's grounding,
 * ProRAG's sub-answers), or answer (terminal). `invalid` is model text that did not parse: it costs
 * a turn and is counted as a format failure.
 */
export type Action =
  | {
      type: 'search';
      query: string;
      /**
       * Several queries issued in one step (O2-Searcher): the environment retrieves each on its own and
       * concatenates the documents in order, without removing repeats; `query` is then their join
       * (`queries.join('; ')`), for whatever reads one query. Absent for a step of one query.
       */
      queries?: string[];
    }
  | { type: 'extract'; evidence: string }
  | { type: 'answer'; answer: string; citations?: number[] }
  | { type: 'invalid'; reason: string };

/** The kind of an {@link Action}: "search", "extract", "answer" or "invalid". */
export type ActionType = Action['type'];

/** A retrieved passage as the environment returned it. */
export interface RetrievedDoc {
  passageId: string;
  title: string;
  text: string;
  score: number;
}

/** One turn of an episode: the action taken, the text it came from, and what the environment returned for it. */
export interface Step {
  action: Action;
  /** The model's text (or the protocol's rendering of a non-LLM action). */
  raw: string;
  /** What the model saw: chat messages or a completion prompt. Omitted when tracing is off. */
  prompt?: Message[] | string;
  /** Documents returned by a search. */
  docs?: RetrievedDoc[];
  /** A search of several `queries`: how many of `docs` each query returned, in order. */
  docsPerQuery?: number[];
  /** Agent-side digest of the documents (Search-o1 / ReSearch summaries), or what the agent decided around the step (SuRe's candidates, FLARE's look-aheads, Self-RAG's decision and scores, a compressor's output). */
  summary?: string;
  /** The answer was forced because the step budget ran out. */
  forced?: boolean;
  /** Recovered from text that did not follow the protocol (counted as a format failure). */
  formatError?: string;
  usage?: TokenUsage;
  /** Wall time of the model call(s) and of the retrieval, in ms. */
  llmMs?: number;
  retrievalMs?: number;
  /** Log-probability of the generated text, when the backend reports it. */
  logprob?: number;
  /** How many candidates a selector (PRM best-of-N) chose this step among, and its score. */
  selection?: { candidates: number; score: number };
}

/**
 * One episode on one question: every step, the final prediction, and its cost (steps, searches,
 * tokens, time).
 * Written as one JSON line of `RUN/trajectories.jsonl`.
 */
export interface Trajectory {
  /** The question id. */
  id: string;
  question: string;
  /** Gold answers travel with the trajectory, so a run can be scored without its dataset. */
  answers: string[];
  /** Agent protocol, e.g. "search-r1". */
  agent: string;
  /** What produced the actions: "llm:<spec>", or a non-LLM policy such as "sim(competence=0.7)". */
  policy: string;
  steps: Step[];
  /** Final answer ("" when the episode ended without one). */
  prediction: string;
  /** Ended by an answer rather than by running out of budget. */
  finished: boolean;
  /** Number of search actions executed (RC). */
  retrievalCount: number;
  formatFailures: number;
  usage: TokenUsage & { requests: number };
  latencyMs: number;
  /** Answer metrics against `answers`, filled when the trajectory is written. */
  metrics?: { em: number; f1: number; acc: number };
  /** Where it came from: "native" or an import such as "import:search-r1". */
  source: string;
  meta?: Record<string, unknown>;
}

/** A step (or a sampled move) that broke the protocol: no action parsed, or one recovered from malformed text. */
export function isFormatFailure(s: { action: Action; formatError?: string }): boolean {
  return s.action.type === 'invalid' || s.formatError !== undefined;
}

/** The lettered options a multiple-choice trajectory carries (`meta.choices`, from Question.choices), if any. */
export function trajectoryChoices(t: Pick<Trajectory, 'meta'>): Record<string, string> | undefined {
  const c = t.meta?.['choices'];
  return c && typeof c === 'object' && !Array.isArray(c) ? (c as Record<string, string>) : undefined;
}
