/**
 * FLARE (Jiang et al., EMNLP 2023, "Active Retrieval Augmented Generation"), the direct variant
 * FLARE_direct (§3.2), a baseline of ReasonRAG's Table 2 and of ProRAG's table. The answer is written
 * one sentence at a time. At step t the model writes a temporary next sentence ŝ_t (the look-ahead)
 * after the question x and the output so far y_<t. Confidence-based active retrieval (§3.2.1): when
 * every token of ŝ_t has probability ≥ θ, y_t = ŝ_t is kept without retrieval; otherwise the query
 * q_t is formed from ŝ_t, the documents D_{q_t} are retrieved, and the sentence is regenerated,
 * y_t = LM([D_{q_t}, x, y_<t]), and kept without a further check. Query formulation (§3.2.2, the
 * implicit query, which the authors' configuration uses): ŝ_t with its tokens of probability ≤ β
 * masked out. The first query is the input itself, q_1 = x (§2.2). Generation ends when the model
 * stops (end of text or a blank line) or after {@link FLARE_MAX_GENERATION_TOKENS} tokens. For
 * short-form QA the output is a chain of thought ending "So the answer is X." and the answer is what
 * follows "answer is" (the authors' scorer, prep.py, reads `answer is (.*)`).
 *
 * Defaults, from the authors' 2WikiMultihopQA setting (jzbjyb/FLARE configs/2wikihop_flare_config.json
 * and openai.sh, the paper's multihop-QA experiments): θ = 0.8 (`look_ahead_filter_prob`), β = 0.4
 * (`look_ahead_mask_prob`, mask method "simple"), 2 documents per search (`topk`), look-ahead of 64
 * tokens (`look_ahead_steps`), 256 generated tokens at most (`max_generation_len`), retrieval with
 * the question before the first look-ahead (`look_ahead_pre_retrieval: "first"`), the masked
 * look-ahead alone as later queries (`only_use_look_ahead`), only the latest search's documents in
 * the prompt (the paper's §2.2 discards earlier ones; the code's context is replaced, not appended),
 * generation stopped at a blank line (`final_stop_sym`), temperature 0.
 *
 * In the step model: the first step is the search with the question (fixed). Before every later step,
 * `prepare` runs FLARE with the model (greedy, `logprobs: true`): after a masked-query search it first
 * regenerates the pending sentence over that search's documents; then it generates look-aheads over
 * the latest documents, keeping the confident ones in the draft. The first unconfident look-ahead
 * makes the step a search for its masked text (fixed); a draft holding "answer is" with text after it
 * makes the step the answer read from the draft (fixed; the step's raw text is the whole draft). When
 * the draft ends without an answer, the generation budget is spent, or a look-ahead is unconfident
 * with no searches left, the step is one model call through `render` asking the model to finish the
 * answer ("So the answer is …"); once the env forces the answer (turns spent) that call is the forced
 * answer. What FLARE decided over each search's documents — the regenerated sentence, each look-ahead
 * with its lowest token probability, kept or searched for — is written on that search step's `summary`.
 * A reply to the concluding call without "answer is" is an invalid step, and the call is made again
 * until the env forces the answer. The look-aheads and regenerations are 64 tokens at temperature 0;
 * the concluding call has the policy's settings (`defaults.maxTokens` 128). `--prompt-template`
 * replaces every prompt (one kind, `main`; `{forced}` is the concluding note). A backend that returns
 * no token log-probabilities stops the run with one InputError line.
 *
 * Differences from the paper and the authors' code:
 * - Prompts: the authors continue text-davinci-003 after 8 few-shot chain-of-thought exemplars with
 *   the documents as "Search results" / "Reference" lines at the top; here one zero-shot chat prompt in
 *   this project's words (documents, question, rules, "Answer so far:"), whose reply continues the draft.
 * - A confident look-ahead is kept as it is (the paper's rule). The authors' code instead makes one
 *   more call that regenerates the sentence over the same documents, identical at temperature 0.
 * - The look-ahead sees the latest search's documents, as in the authors' code (the context is kept
 *   across steps); the paper writes ŝ_t = LM([x, y_<t]), without documents (FlashRAG follows that).
 * - Sentences: by core/text `proseSentences` within each line (a line break also ends a sentence),
 *   not NLTK Punkt; tokens are matched to a sentence by their character lengths. A chat model may
 *   restate the answer so far before continuing it, so the look-ahead is the reply's first sentence
 *   that the draft does not already hold (a completion model's continuation never repeats it).
 * - Thresholds: confident is p ≥ θ for every token, as the paper writes (the code: p > θ). Masked
 *   tokens become spaces as in the code, and runs of whitespace are then collapsed; a look-ahead
 *   with every token masked is kept without retrieval (the code skips an empty query). The code's
 *   64-token query truncation is not applied (a look-ahead has at most 64 tokens).
 * - End of generation: the draft ends at its first sentence holding "answer is" and text after it
 *   (the authors' scorer reads the first one and ignores the rest), or when the model stops. A draft
 *   without an answer gets one concluding call instead of an empty prediction ("wrong format" in
 *   prep.py). A final period of the answer is dropped.
 * - Budgets: the authors bound only the generated tokens; here the env's budgets also apply: 6
 *   searches (the question and 5 look-ahead queries) and 7 turns. With no searches left, an
 *   unconfident look-ahead ends the generation with the concluding call.
 * - Not implemented: explicit queries (questions generated for low-confidence spans, §3.2.2) and
 *   FLARE_instruct (§3.1).
 *
 * FlashRAG (flashrag/pipeline/active_pipeline.py, FLAREPipeline) differs from both: one threshold 0.2
 * on token probabilities for the trigger and the masking (θ = β = 0.2); no retrieval with the
 * question, and look-aheads without documents (only the regeneration sees a search, that one only);
 * at most 5 iterations (sentences), 256 tokens, 64-token look-aheads; every character of
 * "!@#$%^&*()" and the newline stops a generation; sentences split by a regular expression; its
 * global top-k (5); the prediction is the whole generated text, not the text after "answer is".
 */
import { InputError } from '../core/errors.js';
import { proseSentences } from '../core/text.js';
import type { Action, Message } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import type { Choice, LLM } from '../llm/types.js';
import { answerDue, invalid, isBlank, latestSearchDocs, type Protocol, type RenderOptions, type TemplateFill } from './protocol.js';
import { SYSTEM } from './rag-gym.js';

/** θ: a look-ahead is kept without retrieval when every token has at least this probability. */
export const FLARE_THETA = 0.8;
/** β: tokens of an unconfident look-ahead with at most this probability are masked out of the query. */
export const FLARE_BETA = 0.4;
/** Tokens generated for each look-ahead (and each regeneration). */
export const FLARE_LOOK_AHEAD_TOKENS = 64;
/** Tokens the draft may hold before the answer is asked for. */
export const FLARE_MAX_GENERATION_TOKENS = 256;
/** The sentence that ends a FLARE answer (the authors' 2WikiMultihopQA exemplars). */
export const FLARE_ANSWER_CUE = 'So the answer is';

/** FLARE's thresholds and lengths (defaults: the authors' 2WikiMultihopQA configuration). */
export interface FlareOptions {
  theta: number;
  beta: number;
  lookAheadTokens: number;
  maxGenerationTokens: number;
}

const STOP = ['\n\n'];
const RULES = `Answer the question in short, plain sentences, one step of reasoning per sentence, and end with a sentence of the form "${FLARE_ANSWER_CUE} <short answer>."`;
const CONTINUE = 'Continue the answer from where it stops: write only what comes next, without repeating it.';
const CONCLUDE = `No more documents will be looked up. Finish the answer now, ending with "${FLARE_ANSWER_CUE} <short answer>."`;

/**
 * The answer in `text`: what follows the first "answer is" (any case) to the end of its line, one
 * colon right after "is" and one final period dropped. Undefined without the phrase; "" when nothing follows.
 */
export function readFlareAnswer(text: string): string | undefined {
  const m = /\banswer is(?::|\b)[ \t]*(.*)/i.exec(text);
  if (!m) return undefined;
  const rest = m[1]!.trim();
  return (rest.endsWith('.') ? rest.slice(0, -1) : rest).trim();
}

/** One sentence of a generation with the tokens that make it up. */
export interface FlareSentence {
  text: string;
  tokens: string[];
  logprobs: number[];
  /** The generation stopped on its own right after this sentence (nothing follows it). */
  last: boolean;
}

/**
 * The first sentence of a generation that the draft does not already hold (core/text `proseSentences`
 * within each line: a line break ends a sentence too), with the tokens that cover it, matched by their
 * character lengths. A chat model may restate the answer so far before continuing it: sentences equal
 * to one of `draft` (case and spacing aside) are passed over. Undefined when nothing new is left.
 */
export function firstFlareSentence(choice: Choice | undefined, draft: readonly string[] = []): FlareSentence | undefined {
  const text = choice?.text ?? '';
  const norm = (x: string) => x.replace(/\s+/g, ' ').trim().toLowerCase();
  const seen = new Set(draft.map(norm));
  let start = -1;
  let sentence = '';
  for (let from = 0; from <= text.length && start < 0; ) {
    const nl = text.indexOf('\n', from);
    const lineEnd = nl < 0 ? text.length : nl;
    const line = text.slice(from, lineEnd);
    let cursor = 0;
    for (const s of proseSentences(line)) {
      const at = line.indexOf(s, cursor);
      cursor = at + s.length;
      if (!seen.has(norm(s))) {
        start = from + at;
        sentence = s;
        break;
      }
    }
    from = lineEnd + 1;
  }
  if (start < 0) return undefined;
  const end = start + sentence.length;
  const tokens: string[] = [];
  const logprobs: number[] = [];
  const lp = choice?.logprobs;
  if (lp) {
    let offset = 0;
    for (let i = 0; i < lp.tokens.length && offset < end; i++) {
      const next = offset + lp.tokens[i]!.length;
      if (next > start) {
        tokens.push(lp.tokens[i]!);
        logprobs.push(lp.logprobs[i] ?? 0);
      }
      offset = next;
    }
  }
  return { text: sentence, tokens, logprobs, last: choice?.finishReason === 'stop' && text.slice(end).trim() === '' };
}

/** The implicit query of an unconfident sentence: its tokens with probability ≤ β replaced by spaces, whitespace collapsed. */
export function maskedQuery(sentence: Pick<FlareSentence, 'tokens' | 'logprobs'>, beta = FLARE_BETA): string {
  return sentence.tokens
    .map((t, i) => (Math.exp(sentence.logprobs[i]!) > beta ? t : ' '))
    .join('')
    .replace(/\s+/g, ' ')
    .trim();
}

/** What a step was decided on: the draft (sentences kept) before it, and what its outcome leads to. */
interface Memo {
  draft: string[];
  tokens: number;
  /** regenerate: a masked-query search, whose documents regenerate the unconfident sentence; conclude: the answer was asked for. */
  next: 'continue' | 'regenerate' | 'conclude';
}

type Decision = { kind: 'act'; action: Action; draft: string[] } | { kind: 'conclude'; draft: string[]; tokens: number };

/** A FLARE protocol with its own thresholds (`flare` uses the defaults). */
export function flareProtocol(options: Partial<FlareOptions> = {}): Protocol {
  const opts: FlareOptions = { theta: FLARE_THETA, beta: FLARE_BETA, lookAheadTokens: FLARE_LOOK_AHEAD_TOKENS, maxGenerationTokens: FLARE_MAX_GENERATION_TOKENS, ...options };
  /** Per action taken: the draft it was decided on (the next prepare reads it). */
  const memos = new WeakMap<Action, Memo>();
  /** Per state: what prepare decided there (fixedAction, render, parse and format read it). */
  const decisions = new WeakMap<State, Decision>();
  /** Views of a state with a draft in progress, for prepare's own calls through `render`. */
  const drafting = new WeakMap<State, { draft: string[]; conclude: boolean }>();

  const questionFirst = (s: State) => s.steps.length === 0 && !s.mustAnswer && s.searchesLeft > 0;
  /** The latest memo of the episode's steps (the draft known so far). */
  const knownMemo = (s: State): Memo | undefined => {
    for (let i = s.steps.length - 1; i >= 0; i--) {
      const m = memos.get(s.steps[i]!.action);
      if (m) return m;
    }
    return undefined;
  };
  /** The draft a prompt for `s` shows and whether it asks for the conclusion. */
  const view = (s: State, ro: RenderOptions): { draft: string[]; conclude: boolean } => {
    const d = drafting.get(s);
    if (d) return d;
    const dec = decisions.get(s);
    return { draft: dec?.draft ?? knownMemo(s)?.draft ?? [], conclude: !!ro.forced || answerDue(s) || dec?.kind === 'conclude' };
  };
  const values = (s: State, draft: string[]) => ({ question: s.question.question, documents: latestSearchDocs(s), draft: draft.join(' ') || '(nothing yet)' });

  const protocol: Protocol = {
    name: 'flare',
    description: `FLARE (direct): look-ahead sentences kept when every token has p ≥ ${FLARE_THETA}, else searched with tokens of p ≤ ${FLARE_BETA} masked and regenerated over the documents; needs a backend that returns token logprobs (e.g. vLLM)`,
    defaults: { maxTurns: 7, maxSearches: 6, topK: 2, maxTokens: 128, stop: STOP },
    allowed: (state) => (answerDue(state) ? ['answer'] : questionFirst(state) ? ['search'] : ['search', 'answer']),

    async prepare(state: State, llm: LLM): Promise<void> {
      if (state.done || state.mustAnswer || questionFirst(state) || decisions.has(state)) return;
      const self: Protocol = this && typeof (this as Protocol).render === 'function' ? (this as Protocol) : protocol;
      const last = state.steps.at(-1);
      const memo = last ? memos.get(last.action) : undefined;
      const known = memo ?? knownMemo(state);
      const draft = [...(known?.draft ?? [])];
      let tokens = known?.tokens ?? 0;
      const log: string[] = [];
      const decide = (d: Decision) => {
        decisions.set(state, d);
        if (last && last.summary === undefined && log.length) last.summary = `FLARE: ${log.join('; ')}`;
      };
      const conclude = (why: string) => {
        log.push(why);
        decide({ kind: 'conclude', draft, tokens });
      };
      if (memo?.next === 'conclude') return conclude(`no "${FLARE_ANSWER_CUE}" in the reply: asked again`);

      const generate = async (): Promise<Choice | undefined> => {
        const v: State = { ...state };
        drafting.set(v, { draft: [...draft], conclude: false });
        const r = await llm.generate({ messages: self.render(v), temperature: 0, maxTokens: opts.lookAheadTokens, stop: STOP, logprobs: true });
        return r.choices[0];
      };
      const keep = (s: FlareSentence) => {
        draft.push(s.text);
        tokens += Math.max(1, s.tokens.length || Math.ceil(s.text.length / 4));
      };
      const answered = () => !isBlank(readFlareAnswer(draft.join(' ')));
      const p = (s: FlareSentence) => Math.exp(Math.min(...s.logprobs)).toFixed(2);

      let ended = false;
      if (memo?.next === 'regenerate' && last?.action.type === 'search') {
        // y_t = LM([D_qt, x, y_<t]): the sentence again, over the search's documents, kept without a check.
        const s = firstFlareSentence(await generate(), draft);
        if (s) {
          keep(s);
          log.push(`regenerated "${s.text}"`);
        } else log.push('regeneration empty');
        ended = !s || s.last || answered();
      }
      while (!ended) {
        if (tokens >= opts.maxGenerationTokens) return conclude(`${opts.maxGenerationTokens} tokens generated without "${FLARE_ANSWER_CUE}": asked for the answer`);
        const choice = await generate();
        if (choice && !isBlank(choice.text) && !choice.logprobs?.logprobs.length) {
          throw new InputError(`agent flare needs token log-probabilities, but the model ${llm.spec} returned none`, 'serve it where token logprobs come back, e.g. vLLM; a llama.cpp server without them and node-llama-cpp give none');
        }
        const s = firstFlareSentence(choice, draft);
        if (!s) {
          log.push('generation ended');
          break;
        }
        const confident = s.logprobs.every((x) => Math.exp(x) >= opts.theta);
        const query = confident ? '' : maskedQuery(s, opts.beta);
        if (confident || query === '') {
          keep(s);
          log.push(confident ? `kept "${s.text}" (min p ${p(s)})` : `kept "${s.text}" (min p ${p(s)} < θ ${opts.theta}, every token masked: no query)`);
          ended = s.last || answered();
          continue;
        }
        if (state.searchesLeft <= 0) return conclude(`unconfident "${s.text}" (min p ${p(s)} < θ ${opts.theta}), no searches left: asked for the answer`);
        log.push(`unconfident "${s.text}" (min p ${p(s)} < θ ${opts.theta}): search "${query}"`);
        const action: Action = { type: 'search', query };
        memos.set(action, { draft, tokens, next: 'regenerate' });
        return decide({ kind: 'act', action, draft });
      }
      const answer = readFlareAnswer(draft.join(' '));
      if (isBlank(answer)) return conclude(`draft ended without "${FLARE_ANSWER_CUE}": asked for the answer`);
      log.push(`answer: ${answer}`);
      const action: Action = { type: 'answer', answer };
      memos.set(action, { draft, tokens, next: 'continue' });
      decide({ kind: 'act', action, draft });
    },

    fixedAction(state: State): Action | undefined {
      if (questionFirst(state)) return { type: 'search', query: state.question.question };
      const d = decisions.get(state);
      return d?.kind === 'act' ? d.action : undefined;
    },

    render(state: State, ro: RenderOptions = {}): Message[] {
      const v = view(state, ro);
      const x = values(state, v.draft);
      return [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: `Documents:\n${x.documents}\n\nQuestion: ${x.question}\n${RULES}\n\nAnswer so far: ${x.draft}\n\n${v.conclude ? CONCLUDE : CONTINUE}` },
      ];
    },
    template: {
      kinds: {
        main: {
          description: 'every prompt: the look-aheads and regenerations, and (with the note asking to finish) the concluding call',
          fields: {
            question: { required: true, description: 'the question' },
            documents: { required: true, description: 'the latest search\'s documents, "Doc 1 (Title: …) text" lines ("(none)" before one)' },
            draft: { required: true, description: 'the sentences of the answer kept so far, space-separated ("(nothing yet)" before the first)' },
          },
        },
      },
      fill(state: State, ro: RenderOptions): TemplateFill {
        const v = view(state, ro);
        return { kind: 'main', values: values(state, v.draft), continuation: [], ...(v.conclude ? { forcedNote: CONCLUDE } : {}) };
      },
    },

    /**
     * The answer after "answer is" when the text has one. Otherwise: invalid once the answer is due or
     * was asked for; before that (non-LLM policies' text) the first non-blank line is a query.
     */
    parse(text: string, state: State): Action {
      const answer = readFlareAnswer(text);
      if (answer !== undefined) return answer === '' ? invalid('empty answer after "answer is"') : { type: 'answer', answer };
      const d = decisions.get(state);
      if (answerDue(state) || d?.kind === 'conclude') {
        const a = invalid(`no "${FLARE_ANSWER_CUE}"`);
        if (d?.kind === 'conclude') memos.set(a, { draft: d.draft, tokens: d.tokens, next: 'conclude' });
        return a;
      }
      const line = text.split('\n').find((l) => l.trim() !== '')?.trim();
      return isBlank(line) ? invalid('empty text') : { type: 'search', query: line };
    },
    /** A search is its query; an answer FLARE decided is its whole draft, any other "So the answer is X.". */
    format(action: Action): string {
      if (action.type === 'search') return action.query;
      if (action.type !== 'answer') return '';
      const draft = memos.get(action)?.draft.join(' ');
      return draft !== undefined && readFlareAnswer(draft) === action.answer ? draft : `${FLARE_ANSWER_CUE} ${action.answer}.`;
    },
  };
  return protocol;
}

export const flare: Protocol = flareProtocol();
