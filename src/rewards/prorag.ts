/**
 * ProRAG rewards (ProRAG §3.4.2: step reward eq. 5, outcome reward eq. 6). The equations did not survive
 * in the paper's text, only their description; two forms are offered. `code`, the default, is what the
 * authors' released code computes; `spec` is a plain reading of the description (PRM score or F1 plus
 * a λ-weighted format indicator), a choice made here.
 *   Outcome, code:  (0 if F1 < 0.2 else 2·F1) + (+1 if the whole trajectory follows the workflow else −1)
 *   Outcome, spec:  F1 + λ_o · 1[workflow]
 *   Step, code:     sigmoid(PRM logit) + (+1 if the step follows the tag schema else −2)
 *   Step, spec:     PRM(context, step) + λ_f · 1[step follows the schema]
 */
import type { Trajectory } from '../core/trajectory.js';
import { f1Score, tokenF1 } from '../core/metrics.js';
import { pyLower, pySplit, pyStrip } from '../core/text.js';
import { proragStepFormat, proragWorkflow } from './format.js';

/**
 * Which form of ProRAG's rewards to compute: `code`, the authors' released code (the default), or
 * `spec`, the plain reading of the paper's description (see the module header).
 */
export type ProragForm = 'code' | 'spec';

export function sigmoid(x: number): number {
  return x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x));
}

/** The two parts of the outcome reward: `answer` (the F1 term) and `workflow` (the format term). */
export function proragOutcome(t: Pick<Trajectory, 'steps' | 'prediction' | 'answers'>, form: ProragForm = 'code', lambdaO = 1): { answer: number; workflow: number; total: number } {
  const f1 = f1Score(t.prediction, t.answers).f1;
  const valid = proragWorkflow(t);
  if (form === 'spec') return { answer: f1, workflow: valid ? lambdaO : 0, total: f1 + (valid ? lambdaO : 0) };
  const answer = f1 < 0.2 ? 0 : 2 * f1;
  const workflow = valid ? 1 : -1;
  return { answer, workflow, total: answer + workflow };
}

/**
 * Per-step rewards of a trajectory. `prm` is one PRM output per step (a logit in the code form, a
 * score in the spec form); without a PRM the PRM term is 0 (code form: sigmoid(0) is not used — 0).
 */
export function proragStepRewards(t: Pick<Trajectory, 'steps'>, prm?: readonly number[], form: ProragForm = 'code', lambdaF = 1): number[] {
  return t.steps.map((step, i) => {
    const ok = proragStepFormat(step);
    const p = prm?.[i];
    if (form === 'spec') return (p ?? 0) + (ok ? lambdaF : 0);
    return (p === undefined ? 0 : sigmoid(p)) + (ok ? 1 : -2);
  });
}

// ------------------------------------------------------------------------------ authors' code
// ProRAG's prorag/rl/reward.py (lilinwz/ProRAG @c7a6411) reproduced exactly for `--option
// compat=authors`; it reads the whole completion text, retrieved documents included.

const TAG_MAP: Record<string, [string, string]> = {
  '<step>': ['</step>', 'S'],
  '<subquery>': ['</subquery>', 'Q'],
  '<retrieval>': ['</retrieval>', 'R'],
  '<subanswer>': ['</subanswer>', 'A'],
  '<answer>': ['</answer>', 'F'],
};

// The code prepends "<step>\n" (the prompt ends in an opened step) and reads every ASCII-letter tag.
function authorsTags(completion: string): string[] {
  return [...`<step>\n${completion}`.matchAll(/<\/?[a-zA-Z]+>/g)].map((m) => m[0]);
}

/** `format_reward`: strict open/close pairs mapped to S Q R A F; (S Q R S A)* S F → +1, else −1. */
export function proragAuthorsFormat(completion: string): number {
  const tags = authorsTags(completion);
  const symbols: string[] = [];
  for (let i = 0; i < tags.length; i += 2) {
    const pair = TAG_MAP[tags[i]!];
    if (!pair || tags[i + 1] !== pair[0]) return -1;
    symbols.push(pair[1]);
  }
  return /^(SQRSA)*SF$/.test(symbols.join('')) ? 1 : -1;
}

/** `calculate_f1_score`: token F1 on `lower().split()` tokens, no other normalisation, one gold string. */
export function proragAuthorsF1(prediction: string, truth: string): number {
  return tokenF1(pySplit(pyLower(prediction)), pySplit(pyLower(truth))).f1;
}

/** `outcome_reward`: first <answer>…</answer> anywhere (any case), F1 → 0 below 0.2 else 2·F1; plus `format_reward`. */
export function proragAuthorsOutcome(completion: string, truth: string): { answer: number; workflow: number; total: number; extracted?: string; f1: number } {
  const m = /<answer>([\s\S]*?)<\/answer>/iu.exec(completion);
  let answer = 0;
  let f1 = 0;
  if (m) {
    f1 = proragAuthorsF1(pyStrip(m[1]!), truth);
    answer = f1 < 0.2 ? 0 : f1 * 2;
  }
  const workflow = proragAuthorsFormat(completion);
  return { answer, workflow, total: answer + workflow, extracted: m ? pyStrip(m[1]!) : undefined, f1 };
}

/**
 * `format_reward_step` as committed: it prepends "<step>\n" and then compares the tag list with
 * lists that do not start with "<step>", so it returns −2 for every input (the paper means +1 / −2).
 */
export function proragAuthorsStepFormat(turnText: string): number {
  const tags = authorsTags(turnText).join(' ');
  const valid = ['</step> <subquery> </subquery> <retrieval> </retrieval>', '</step> <subanswer> </subanswer>', '</step> <answer> </answer>'];
  return valid.includes(tags) ? 1 : -2;
}

// ------------------------------------------------------------- authors' code: the RL rollout's step scores
// prorag/rl/trainer.py `get_prm_score` and prorag/rl/rollout.py `rag_rollout_with_prm` (lilinwz/ProRAG @c7a6411).

const F32 = new Float32Array(1);
const U32 = new Uint32Array(F32.buffer);

/**
 * `x` rounded to bfloat16 (8 bits of mantissa, nearest even) by way of float32, as torch converts a Python
 * float into a bfloat16 tensor. ProRAG's train.py and filter_prm.py load the PRM in bfloat16, so its logits
 * and their sigmoid come out on this grid.
 */
export function roundBf16(x: number): number {
  F32[0] = x;
  if (Number.isNaN(F32[0])) return NaN;
  const bits = U32[0]!;
  U32[0] = (bits + 0x7fff + ((bits >>> 16) & 1)) & 0xffff0000;
  return F32[0];
}

/** The PRM's dtype in the authors' code: bfloat16 (train.py, filter_prm.py) or float32. */
export type PrmDtype = 'bfloat16' | 'float32';

/** `x` rounded to the given dtype. */
export function roundToDtype(x: number, dtype: PrmDtype): number {
  return dtype === 'bfloat16' ? roundBf16(x) : Math.fround(x);
}

/**
 * `RAGTrainer.get_prm_score`: `torch.sigmoid(logits[0]).item()` of the PRM's one logit, computed in the PRM's
 * dtype (the logit rounded to it, the sigmoid in float32 and rounded back), so a bfloat16 PRM's scores carry 8
 * bits; 0.0 without a PRM. ragtrail's own step reward ({@link proragStepRewards}) takes the sigmoid in float64.
 */
export function proragAuthorsPrmScore(logit: number | undefined, dtype: PrmDtype = 'bfloat16'): number {
  if (logit === undefined) return 0;
  return roundToDtype(Math.fround(sigmoid(roundToDtype(logit, dtype))), dtype);
}

/**
 * The step score of rollout.py: `get_prm_score(context + step) + format_reward_step(step)`, where `step` is the
 * hop's generated text plus the retrieval block appended to it; with the committed format check always −2
 * ({@link proragAuthorsStepFormat}), it is sigmoid(logit) − 2.
 */
export function proragAuthorsStepScore(logit: number | undefined, stepText: string, dtype: PrmDtype = 'bfloat16'): number {
  return proragAuthorsPrmScore(logit, dtype) + proragAuthorsStepFormat(stepText);
}

/** What one hop of the authors' RL rollout does with the text a row generated; see {@link proragAuthorsRolloutHop}. */
export interface ProragAuthorsHop {
  /** The hop ends the episode: its text contains "</answer>". */
  finished: boolean;
  /** The query sent to the retriever: the first <subquery>…</subquery> stripped, when the text has "</subquery>" (and no "</answer>"). */
  query?: string;
  /** "\n<retrieval>\n{documents}\n</retrieval>" after a search, else "". */
  retrieval: string;
  /** The text the PRM scores: context + generated text + retrieval. */
  scored: string;
  /** The row's context for the next hop: `scored` + "\n<|im_end|>" (finished) or "\n<step>\n". */
  next: string;
  /** The tokens that follow the generated ones, all with mask 0 and score 0: the retrieval block's, then the tag's. */
  tail: string[];
}

/**
 * One hop of `rag_rollout_with_prm` for one row: `context` is the row's text so far (the prompt, then each
 * hop's `next`), `generated` what the model wrote, `search` the retriever (called only for a query). `tokenize`
 * is the policy tokenizer's `encode`, used for the retrieval block and the closing tag. The hop's generated
 * tokens get mask 1 and the step score; `tail` lists the masked tokens that follow.
 */
export function proragAuthorsRolloutHop(context: string, generated: string, search: (query: string) => string, tokenize: (text: string) => string[]): ProragAuthorsHop {
  const finished = generated.includes('</answer>');
  let query: string | undefined;
  let retrieval = '';
  if (!finished && generated.includes('</subquery>')) {
    const m = /<subquery>([\s\S]*?)<\/subquery>/u.exec(generated);
    if (m) {
      query = pyStrip(m[1]!);
      retrieval = `\n<retrieval>\n${search(query)}\n</retrieval>`;
    }
  }
  const scored = context + generated + retrieval;
  const tag = finished ? '\n<|im_end|>' : '\n<step>\n';
  return { finished, query, retrieval, scored, next: scored + tag, tail: [...(retrieval ? tokenize(retrieval) : []), ...tokenize(tag)] };
}
