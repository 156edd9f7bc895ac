/**
 * The data model every stage shares. Kept deliberately small: loaders map each dataset layout onto
 * these shapes, and everything after (retrieval, agents, rewards, evaluation) sees only them.
 */

/** One retrievable unit of a corpus: a Wikipedia-style paragraph with its page title. */
export interface Passage {
  /** Stable across builds: given by the corpus file, or a content hash for passages built from datasets. */
  id: string;
  title: string;
  text: string;
}

/** One hop of a multi-hop question's gold reasoning chain. */
export interface DecompositionStep {
  question: string;
  answer: string;
  /** The passage that states this hop's answer; absent for hops that only combine earlier answers. */
  passageId?: string;
}

/** A question with its gold answers; metrics take the maximum over `answers`. */
export interface Question {
  id: string;
  question: string;
  /** Gold answer first, then any aliases. Never empty. */
  answers: string[];
  /** Dataset question type, e.g. "bridge", "comparison", "compositional", "single-hop". */
  type?: string;
  /** Ids of the passages that support the answer (HotpotQA supporting facts, MuSiQue is_supporting, ...). */
  supporting?: string[];
  /** Gold decomposition into single-hop sub-questions (MuSiQue, the synthetic world). */
  decomposition?: DecompositionStep[];
  /**
   * Multiple choice (MedQA): the options by letter. The question text lists them; `answers[0]` is the
   * gold letter, and a prediction is scored by the option it picks (core/metrics.ts choiceScores).
   */
  choices?: Record<string, string>;
  /** Passages shipped with the question (distractor setting), in dataset order. ARENA numbers references by this order. */
  context?: Passage[];
  /** Everything else the dataset says about the question, kept verbatim for inspection. */
  metadata?: Record<string, unknown>;
}
