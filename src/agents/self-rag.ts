/**
 * Self-RAG (Asai et al., ICLR 2024, "Self-RAG: Learning to Retrieve, Generate, and Critique through
 * Self-Reflection"), a baseline of ReasonRAG's and LWS's tables, as its authors run it on short-form
 * QA (PopQA, TriviaQA: `retrieval_lm/run_short_form.py` of github.com/AkariAsai/self-rag). It needs the
 * released Self-RAG model (selfrag/selfrag_llama2_7b or _13b), whose vocabulary holds the reflection
 * tokens, served so that each generated position comes with its top-k alternatives.
 *
 * The prompt is `### Instruction:\n{question}\n\n### Response:\n` (the authors' `prompt_no_input`; a
 * PopQA or TriviaQA question is its own instruction).
 *  1. Decide (one call, one token, greedy): p = P([Retrieval]) / (P([Retrieval]) + P([No Retrieval]))
 *     at the first generated position; retrieve when p > δ (0.2).
 *  2. Without retrieval: one greedy generation after `[No Retrieval]`, which answers.
 *  3. With retrieval: one search with the question (k = 10); for each passage, in parallel, a greedy
 *     generation after `[Retrieval]<paragraph>{title}\n{text}</paragraph>`, scored
 *       score = exp(mean token log-prob) + w_rel·relevance + w_sup·support + w_use·utility
 *     with every probability read from the top-k at the position named:
 *       relevance = P([Relevant]) / (P([Relevant]) + P([Irrelevant]))                 (first position)
 *       support   = (P(Fully) + 0.5·P(Partially)) / (P(Fully) + P(Partially) + P(No support))
 *                     at the first position whose generated token is a support token, else 0
 *       utility   = Σ_{i=1..5} u_i·P([Utility:i]) / Σ_j P([Utility:j]), u = (−1, −0.5, 0, 0.5, 1),
 *                     at the first position whose generated token is a utility token, else 0
 *     and the highest-scoring passage's generation (the first on a tie) answers.
 * Answers lose their reflection tokens, `</s>`, `<|endoftext|>` and line breaks, and one leading `#` or
 * `:` (the authors' `postprocess_answer_option_conditioned`, then their trim of a leading `#` or `:`).
 *
 * Defaults and where they come from (self-rag commit 1fcdc42): δ = 0.2 (README.md:251, the PopQA
 * command, whose flag the script needs: its own default, None, reaches an undefined name; FlashRAG's
 * default too); w_rel = w_sup = w_use = 1.0 (run_short_form.py:281–286, what `main` passes; the
 * function's own default at :54 is w_use = 0.5); grounding, utility and the sequence score on
 * (README.md:253's `--use_groundness --use_utility --use_seqscore`); 10 passages (run_short_form.py:263,
 * README.md:253); 100 new tokens (README.md:250).
 *
 * Probabilities come from an OpenAI-compatible server's top log-probabilities (`topLogprobs`, 20 by
 * default; the authors read the whole vocabulary). A reflection token outside the top-k counts as
 * log-probability −100, the authors' stand-in for a token absent from the returned list (≈ 0).
 * Serve with vLLM `--max-logprobs` ≥ the k requested, and use completion mode (`--llm-mode
 * completion`): the prompt is raw text, not a chat. Tokens are matched by their string (surrounding
 * whitespace ignored); a server that decodes special tokens as empty strings is refused with one line.
 *
 * In ragtrail: `prepare` makes the decision call at the start, and after the search the per-passage
 * calls; the search and the final answer are fixed steps. The search step's `summary` records the
 * decision and every passage's score. Without retrieval the answer is the policy's own call, rendered
 * as the `[No Retrieval]` prompt. A non-LLM policy (no decision) searches, like `rag`.
 */
import { InputError } from '../core/errors.js';
import type { Action, Message, RetrievedDoc, Step } from '../core/trajectory.js';
import type { Question } from '../core/types.js';
import type { State } from '../env/env.js';
import { type Choice, type GenerateRequest, type LLM, messagesToPrompt } from '../llm/types.js';
import { answerDue, firstSearch, hasAnswered, invalid, type Protocol } from './protocol.js';

// ------------------------------------------------------------------------------- reflection tokens

export const RETRIEVE = '[Retrieval]';
export const NO_RETRIEVE = '[No Retrieval]';
export const CONTINUE = '[Continue to Use Evidence]';
export const RELEVANT = '[Relevant]';
export const IRRELEVANT = '[Irrelevant]';
export const FULLY_SUPPORTED = '[Fully supported]';
export const PARTIALLY_SUPPORTED = '[Partially supported]';
export const NO_SUPPORT = '[No support / Contradictory]';
export const UTILITY_TOKENS = ['[Utility:1]', '[Utility:2]', '[Utility:3]', '[Utility:4]', '[Utility:5]'] as const;
const SUPPORT_TOKENS = [FULLY_SUPPORTED, PARTIALLY_SUPPORTED, NO_SUPPORT] as const;
/** The weight of each utility level in the utility score. */
const UTILITY_WEIGHTS = [-1, -0.5, 0, 0.5, 1] as const;
/** Removed from answers, "[No Retrieval]" before "[Retrieval]" (the authors' order, plus the continue token). */
const STRIPPED = [FULLY_SUPPORTED, PARTIALLY_SUPPORTED, NO_SUPPORT, NO_RETRIEVE, RETRIEVE, IRRELEVANT, RELEVANT, '<paragraph>', '</paragraph>', ...UTILITY_TOKENS, CONTINUE, '</s>', '<|endoftext|>'];
/** The log-probability a token absent from the top-k counts as (the authors' −100). */
export const ABSENT_LOGPROB = -100;

// ----------------------------------------------------------------------------------------- options

/** Settings of {@link selfRagProtocol}; each defaults to the authors' (see the module comment). */
export interface SelfRagOptions {
  /** δ: retrieve when the decision ratio exceeds it (0.2). */
  threshold?: number;
  /**
   * How the decision ratio is computed: `probability` (default; the paper and FlashRAG) divides
   * probabilities, P(Ret) / (P(Ret) + P(NoRet)); `logprob-ratio` divides the log-probabilities
   * themselves, lp(Ret) / (lp(Ret) + lp(NoRet)), as run_short_form.py:74–81 literally does.
   */
  decisionRule?: 'probability' | 'logprob-ratio';
  /** `adaptive` (default) decides per question; `always` retrieves, `never` does not (the authors' always_retrieve / no_retrieval). */
  mode?: 'adaptive' | 'always' | 'never';
  wRel?: number;
  wSup?: number;
  wUse?: number;
  /** Add exp(mean token log-prob) to the score (true). */
  useSeqScore?: boolean;
  /** Score support tokens (true). */
  useGroundness?: boolean;
  /** Score utility tokens (true). */
  useUtility?: boolean;
  /** Alternatives asked for per position (20, vLLM's default cap). */
  topLogprobs?: number;
  /** Passages per search (10). */
  topK?: number;
  /** New tokens per generation (100). */
  maxTokens?: number;
}

type Settings = Required<SelfRagOptions>;

export const SELF_RAG_DEFAULTS: Settings = {
  threshold: 0.2,
  decisionRule: 'probability',
  mode: 'adaptive',
  wRel: 1,
  wSup: 1,
  wUse: 1,
  useSeqScore: true,
  useGroundness: true,
  useUtility: true,
  topLogprobs: 20,
  topK: 10,
  maxTokens: 100,
};

// --------------------------------------------------------------------------------------- reading

/** The model's reply must carry top log-probabilities; one line naming the fix otherwise. */
function topOf(c: Choice | undefined, k: number): { tokens: string[]; logprobs: number[]; top: Record<string, number>[] } {
  if (!c?.logprobs?.top) {
    throw new InputError(
      'self-rag: the model server returned no top log-probabilities, which Self-RAG reads its reflection tokens from',
      `serve the released Self-RAG model (e.g. selfrag/selfrag_llama2_7b) with vLLM --max-logprobs ${k} or more, and run with --llm-mode completion`,
    );
  }
  return { tokens: c.logprobs.tokens, logprobs: c.logprobs.logprobs, top: c.logprobs.top };
}

const isToken = (text: string | undefined, token: string) => text !== undefined && (text === token || text.trim() === token);

/** The log-probability of `token` among a position's alternatives (its string, surrounding whitespace aside), or −100 when absent. */
export function reflectionLogprob(top: Record<string, number> | undefined, token: string): number {
  if (!top) return ABSENT_LOGPROB;
  const exact = top[token];
  if (exact !== undefined) return exact;
  let best: number | undefined;
  for (const [k, v] of Object.entries(top)) if (k.trim() === token && (best === undefined || v > best)) best = v;
  return best ?? ABSENT_LOGPROB;
}

/**
 * Reflection tokens decoded as empty strings (an engine that skips special tokens when decoding the
 * alternatives) leave none of `expected` among them but an empty-string key: refused, as every score
 * would silently be the absent-token default.
 */
function checkDecoded(top: Record<string, number> | undefined, expected: readonly string[]): void {
  if (!top || !('' in top)) return;
  if (expected.some((t) => reflectionLogprob(top, t) !== ABSENT_LOGPROB)) return;
  throw new InputError(
    `self-rag: none of ${expected.join(', ')} is among the top log-probabilities, which hold an empty token string: the server decodes Self-RAG's special tokens as ""`,
    `have it keep special tokens when decoding (vLLM: --llm-body '{"skip_special_tokens": false}')`,
  );
}

/** The retrieval decision read from the first generated position. */
export interface RetrievalDecision {
  retrieve: boolean;
  /** P([Retrieval]) and P([No Retrieval]) (e^−100 when outside the top-k). */
  pRetrieve?: number;
  pNoRetrieve?: number;
  /** The ratio compared with δ. */
  ratio?: number;
}

/** The decision of `choice` (the reply to the bare prompt) under `settings`. */
export function retrievalDecision(choice: Choice | undefined, settings: Pick<Settings, 'threshold' | 'decisionRule' | 'topLogprobs'> = SELF_RAG_DEFAULTS): RetrievalDecision {
  const { top } = topOf(choice, settings.topLogprobs);
  checkDecoded(top[0], [RETRIEVE, NO_RETRIEVE, CONTINUE]);
  const lpRet = reflectionLogprob(top[0], RETRIEVE);
  const lpNo = reflectionLogprob(top[0], NO_RETRIEVE);
  const pRetrieve = Math.exp(lpRet);
  const pNoRetrieve = Math.exp(lpNo);
  const ratio = settings.decisionRule === 'logprob-ratio' ? lpRet / (lpRet + lpNo) : pRetrieve / (pRetrieve + pNoRetrieve);
  return { retrieve: ratio > settings.threshold, pRetrieve, pNoRetrieve, ratio };
}

/** One passage's generation and its score's parts. */
export interface PassageScore {
  /** The generation as the server returned it. */
  text: string;
  /** exp(mean token log-prob), 0 when the sequence score is off. */
  seq: number;
  relevance: number;
  support: number;
  utility: number;
  /** seq + w_rel·relevance + w_sup·support + w_use·utility. */
  score: number;
}

/** The probabilities of `tokens` at one position, normalised over them. */
function normalised(top: Record<string, number> | undefined, tokens: readonly string[]): number[] {
  const p = tokens.map((t) => Math.exp(reflectionLogprob(top, t)));
  const sum = p.reduce((s, x) => s + x, 0);
  return p.map((x) => x / sum);
}

/** Scores a passage's generation (`choice`, which must carry top log-probabilities). */
export function scorePassage(choice: Choice | undefined, settings: Pick<Settings, 'wRel' | 'wSup' | 'wUse' | 'useSeqScore' | 'useGroundness' | 'useUtility' | 'topLogprobs'> = SELF_RAG_DEFAULTS): PassageScore {
  const { tokens, logprobs, top } = topOf(choice, settings.topLogprobs);
  checkDecoded(top[0], [RELEVANT, IRRELEVANT]);
  const relevance = normalised(top[0], [IRRELEVANT, RELEVANT])[1]!;
  let support = 0;
  const s = settings.useGroundness ? tokens.findIndex((t) => SUPPORT_TOKENS.some((g) => isToken(t, g))) : -1;
  if (s >= 0) {
    const [full, partial] = normalised(top[s], SUPPORT_TOKENS) as [number, number, number];
    support = full + 0.5 * partial;
  }
  let utility = 0;
  const u = settings.useUtility ? tokens.findIndex((t) => UTILITY_TOKENS.some((g) => isToken(t, g))) : -1;
  if (u >= 0) utility = normalised(top[u], UTILITY_TOKENS).reduce((sum, p, i) => sum + UTILITY_WEIGHTS[i]! * p, 0);
  const seq = settings.useSeqScore ? Math.exp(logprobs.reduce((sum, x) => sum + x, 0) / Math.max(tokens.length, 1)) : 0;
  return { text: choice!.text, seq, relevance, support, utility, score: seq + settings.wRel * relevance + settings.wSup * support + settings.wUse * utility };
}

/** A generation as an answer: reflection tokens, `</s>`, `<|endoftext|>` and line breaks removed, then one leading `#` or `:`. */
export function selfRagAnswer(text: string): string {
  let out = text;
  for (const t of STRIPPED) out = out.split(t).join('');
  out = out.replace(/\r?\n/g, '').trim();
  if (out.startsWith('#') || out.startsWith(':')) out = out.slice(1).trim();
  return out;
}

/** The model's turn after the instruction when given `doc`: `[Retrieval]<paragraph>title\ntext</paragraph>`. */
export const passageContinuation = (doc: Pick<RetrievedDoc, 'title' | 'text'>) => `${RETRIEVE}<paragraph>${doc.title}\n${doc.text}</paragraph>`;

/** The opening of every Self-RAG prompt (a user message; the model's turn follows after a line break). */
export const selfRagInstruction = (question: string) => `### Instruction:\n${question}\n\n### Response:`;

// -------------------------------------------------------------------------------------- protocol

interface PassageRecord {
  decision: RetrievalDecision;
  scores: PassageScore[];
  /** Index of the best passage, −1 when there were none. */
  best: number;
}

const fmt = (x: number | undefined) => (x === undefined ? '?' : String(Number(x.toPrecision(4))));

/** The retrieval decision in words: the two probabilities, the ratio against δ, and the outcome. */
function decisionLine(decision: RetrievalDecision, settings: Settings): string {
  if (decision.ratio === undefined) return `Self-RAG: ${decision.retrieve ? 'retrieval' : 'no retrieval'} (mode ${settings.mode})`;
  return `Self-RAG retrieval decision: P(${RETRIEVE}) ${fmt(decision.pRetrieve)}, P(${NO_RETRIEVE}) ${fmt(decision.pNoRetrieve)}, ${settings.decisionRule === 'probability' ? 'ratio' : 'log-prob ratio'} ${fmt(decision.ratio)} ${decision.retrieve ? '>' : '≤'} δ ${settings.threshold}: ${decision.retrieve ? 'retrieve' : 'answer without retrieval'}`;
}

function summaryOf(decision: RetrievalDecision, settings: Settings, docs: readonly RetrievedDoc[], r: PassageRecord): string {
  const head = decisionLine(decision, settings);
  if (r.scores.length === 0) return `${head}. No passages retrieved.`;
  const formula = `score = ${settings.useSeqScore ? 'exp(mean token log-prob) + ' : ''}${settings.wRel}·relevance + ${settings.wSup}·support + ${settings.wUse}·utility`;
  const rows = r.scores.map((s, i) => `[${i + 1}] ${docs[i]?.passageId ?? '?'}: ${fmt(s.score)} (seq ${fmt(s.seq)}, relevance ${fmt(s.relevance)}, support ${fmt(s.support)}, utility ${fmt(s.utility)}) ${JSON.stringify(selfRagAnswer(s.text))}`);
  return `${head}. Passages (${formula}): ${rows.join('; ')}. Best: [${r.best + 1}].`;
}

/** Self-RAG with settings of your own (see {@link SelfRagOptions}); `selfRag` is the authors' defaults. */
export function selfRagProtocol(options: SelfRagOptions = {}): Protocol {
  const settings: Settings = { ...SELF_RAG_DEFAULTS, ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) };
  // The decision per question (a question object travels through every state of its episodes), with
  // the model that made it; the per-passage scores per search step.
  const decided = new WeakMap<Question, { by: string; decision: RetrievalDecision }>();
  const scored = new WeakMap<Step, PassageRecord>();

  /** The model's turn after the instruction in `state`: the best (else first) passage after a search, `[No Retrieval]` otherwise. */
  const continuation = (state: State): string => {
    const search = firstSearch(state);
    const docs = search?.docs ?? [];
    if (docs.length === 0) return NO_RETRIEVE;
    const best = search ? scored.get(search)?.best : undefined;
    return passageContinuation(docs[best !== undefined && best >= 0 ? best : 0]!);
  };

  const self: Protocol = {
    name: 'self-rag',
    description:
      'Self-RAG (short-form): needs the released Self-RAG model served with top log-probabilities (vLLM --max-logprobs ≥ 20, --llm-mode completion); [Retrieval] vs [No Retrieval] decides, one generation per passage scored by its reflection tokens, the best answers',
    defaults: { maxTurns: 2, maxSearches: 1, topK: settings.topK, maxTokens: settings.maxTokens },
    // The search is never read from text: it is the fixed step (the question itself), as in `rag`.
    allowed: () => ['answer'],
    async prepare(state: State, llm: LLM): Promise<void> {
      // `this` is the protocol as registered (with a --prompt-template, its templated render).
      const p: Protocol = (this as Protocol | undefined)?.render ? this : self;
      if (hasAnswered(state)) return;
      const prefix = messagesToPrompt(p.render(state).slice(0, -1));
      const search = firstSearch(state);
      if (!search) {
        if (answerDue(state) || decided.get(state.question)?.by === llm.spec) return;
        let decision: RetrievalDecision;
        if (settings.mode === 'adaptive') {
          const reply = await llm.generate({ prompt: prefix, temperature: 0, topP: 1, maxTokens: 1, topLogprobs: settings.topLogprobs });
          decision = retrievalDecision(reply.choices[0], settings);
        } else decision = { retrieve: settings.mode === 'always' };
        decided.set(state.question, { by: llm.spec, decision });
        return;
      }
      if (scored.has(search)) return;
      const docs = search.docs ?? [];
      const request = (doc: RetrievedDoc): GenerateRequest => ({ prompt: prefix + passageContinuation(doc), temperature: 0, topP: 1, maxTokens: settings.maxTokens, topLogprobs: settings.topLogprobs });
      const replies = await Promise.all(docs.map((d) => llm.generate(request(d))));
      const scores = replies.map((r) => scorePassage(r.choices[0], settings));
      let best = -1;
      scores.forEach((s, i) => {
        if (best < 0 || s.score > scores[best]!.score) best = i;
      });
      const record: PassageRecord = { decision: decided.get(state.question)?.decision ?? { retrieve: true }, scores, best };
      scored.set(search, record);
      search.summary = summaryOf(record.decision, settings, docs, record);
    },
    // The decision not to retrieve has no search step to hold it: the answer step records it.
    stepNote(state: State): string | undefined {
      const d = decided.get(state.question)?.decision;
      return d && !d.retrieve && !firstSearch(state) && !hasAnswered(state) ? decisionLine(d, settings) : undefined;
    },
    fixedAction(state: State): Action | undefined {
      if (hasAnswered(state)) return undefined;
      const search = firstSearch(state);
      if (!search) {
        // Without a decision (a non-LLM policy) the episode retrieves, as `rag`; with no search left it answers.
        const d = decided.get(state.question)?.decision;
        return (!d || d.retrieve) && !answerDue(state) ? { type: 'search', query: state.question.question } : undefined;
      }
      const r = scored.get(search);
      const answer = r && r.best >= 0 ? selfRagAnswer(r.scores[r.best]!.text) : '';
      // An empty best generation (or no passages) is left to the policy's own call on the rendered prompt.
      return answer ? { type: 'answer', answer } : undefined;
    },
    render: (state: State): Message[] => [
      { role: 'user', content: selfRagInstruction(state.question.question) },
      { role: 'assistant', content: continuation(state) },
    ],
    template: {
      kinds: {
        main: {
          description: 'the instruction before the model\'s turn (built-in: "### Instruction:\\n{question}\\n\\n### Response:"); the reflection token, and a passage when retrieved, follow as the model\'s turn',
          fields: { question: { required: true, description: 'the question' } },
        },
      },
      fill: (state) => ({ kind: 'main', values: { question: state.question.question }, continuation: [{ role: 'assistant', content: continuation(state) }] }),
    },
    parse(text: string): Action {
      const answer = selfRagAnswer(text);
      return answer ? { type: 'answer', answer } : invalid('empty reply');
    },
    // An answer opening with "#" or ":" gets one more, which parsing drops again.
    format: (action) => (action.type === 'answer' ? (/^[#:]/.test(action.answer) ? `#${action.answer}` : action.answer) : action.type === 'search' ? action.query : action.type === 'extract' ? action.evidence : ''),
  };
  return self;
}

/** Self-RAG with the authors' settings: `--agent self-rag`. */
export const selfRag = selfRagProtocol();
