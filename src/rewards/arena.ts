/**
 * ARENA's adaptive rewards (§3.3): format (1 when <relevance>, <analysis>, <answer> appear once each
 * in order, else 0), accuracy (normalised exact match of the answer), relevance (the cited reference
 * numbers against the gold ones: equal 1, overlapping 0.5, disjoint 0) and a bonus of 10 when all
 * three are 1. Total = format + accuracy + relevance + bonus (weights 1).
 */
import type { Trajectory } from '../core/trajectory.js';
import { exactMatch } from '../core/metrics.js';
import { pyEquals, PyError, pyFromJs, pyJsonLoads, pySet, pySorted } from '../core/pyjson.js';
import { PY_SPACE_CLASS, PY_WORD_CHAR, pyLower, pySplit } from '../core/text.js';
import { arenaFormat } from './format.js';

export interface ArenaRewards {
  format: number;
  accuracy: number;
  relevance: number;
  bonus: number;
}

/** Full match 1, partial overlap 0.5, none 0. With no gold references, citing none is the full match. */
export function relevanceReward(predicted: readonly number[] | undefined, gold: readonly number[]): number {
  if (predicted === undefined) return 0;
  const p = new Set(predicted);
  const g = new Set(gold);
  if (p.size === g.size && [...p].every((x) => g.has(x))) return 1;
  return [...p].some((x) => g.has(x)) ? 0.5 : 0;
}

/** Gold reference numbers (1-based) of the supporting passages among the references shown. */
export function goldReferenceNumbers(referenceIds: readonly string[], supporting: readonly string[]): number[] {
  const s = new Set(supporting);
  return referenceIds.flatMap((id, i) => (s.has(id) ? [i + 1] : []));
}

/** The references an ARENA trajectory saw: the question's context, else its first search's documents. */
export function referenceIds(t: Pick<Trajectory, 'steps'>, contextIds?: readonly string[]): string[] {
  if (contextIds?.length) return [...contextIds];
  const search = t.steps.find((s) => s.action.type === 'search');
  return (search?.docs ?? []).map((d) => d.passageId);
}

/**
 * The four rewards of an ARENA episode. `bonusNeedsRelevance: false` (for training without the
 * relevance reward, schemes.ts `relevance_weight=0`) pays the bonus on format and accuracy alone.
 * `accuracy` replaces the normalised EM (ARENA's ablations score accuracy by F1 or by an LLM judge).
 */
export function arenaRewards(t: Pick<Trajectory, 'steps' | 'prediction' | 'answers'>, gold: readonly number[], opts: { bonus?: number; underscoreToSpace?: boolean; bonusNeedsRelevance?: boolean; accuracy?: number } = {}): ArenaRewards {
  const answerStep = [...t.steps].reverse().find((s) => s.action.type === 'answer');
  const format = answerStep ? arenaFormat(answerStep.raw) : 0;
  const accuracy = opts.accuracy ?? exactMatch(t.prediction, t.answers, { underscoreToSpace: opts.underscoreToSpace ?? true });
  const citations = answerStep?.action.type === 'answer' ? answerStep.action.citations : undefined;
  const relevance = relevanceReward(citations, gold);
  const bonus = format === 1 && accuracy === 1 && (relevance === 1 || opts.bonusNeedsRelevance === false) ? (opts.bonus ?? 10) : 0;
  return { format, accuracy, relevance, bonus };
}

// ------------------------------------------------------------------------------ authors' code
// ARENA's src/evaluate.py (ren258/ARENA @53f9569) as its GRPO rewards call it, reproduced exactly
// for `--option compat=authors`. The README lists where it differs from the paper's intent above.

const SP = PY_SPACE_CLASS;
// format_score: re.match with MULTILINE, so `$` also matches right before any "\n" (trailing lines pass);
// `[^<]*` forbids any "<" inside a section, and nothing may precede <relevance>.
const AUTHORS_FORMAT = new RegExp(`^<relevance>[^<]*</relevance>${SP}*<analysis>[^<]*</analysis>${SP}*<answer>[^<]*</answer>(?:$|(?=\\n))`);
const AUTHORS_ANSWER = new RegExp(`<answer>${SP}*([\\s\\S]*?)${SP}*</answer>`);
const AUTHORS_RELEVANCE = new RegExp(`<relevance>${SP}*([\\s\\S]*?)${SP}*</relevance>`);
// string.punctuation plus ‘ ’ ´ `, each mapped to a space (not removed, as SQuAD's normaliser does).
const AUTHORS_PUNCT = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~\u2018\u2019\u00b4]/g;
// `\b(a|an|the)\b` with Python 3.11's word characters (Unicode 14).
const ARTICLE = new RegExp(`(?<!${PY_WORD_CHAR})(?:a|an|the)(?!${PY_WORD_CHAR})`, 'gu');

/** ARENA's `normalize_answer`: "_" → space, lower, punctuation → space, articles → space, collapse, strip. */
export function arenaNormalize(s: string): string {
  return pySplit(pyLower(s.replaceAll('_', ' ')).replace(AUTHORS_PUNCT, ' ').replace(ARTICLE, ' ')).join(' ');
}

/** `relevance_score`: json.loads of the first <relevance> block, `sorted(set(ids)) == gold` → 1, overlap → 0.5, else or on any exception 0. */
export function arenaAuthorsRelevance(response: string, gold: readonly unknown[]): number {
  const raw = AUTHORS_RELEVANCE.exec(response)?.[1] ?? '';
  const goldList = gold.map(pyFromJs);
  try {
    const predicted = pySorted(pySet(pyJsonLoads(raw)));
    if (pyEquals({ kind: 'list', items: predicted }, { kind: 'list', items: goldList })) return 1;
    // `set(pred) & set(gold)`: needs gold hashable too.
    const goldSet = pySet({ kind: 'list', items: goldList });
    return predicted.some((p) => goldSet.some((g) => pyEquals(p, g))) ? 0.5 : 0;
  } catch (e) {
    if (e instanceof PyError) return 0;
    throw e;
  }
}

/** ARENA's four rewards as its code computes them on the model's whole output. */
export function arenaAuthorsRewards(response: string, golds: readonly string[], goldReferenceIds: readonly unknown[], bonus = 10): ArenaRewards {
  const format = AUTHORS_FORMAT.test(response) ? 1 : 0;
  const answer = AUTHORS_ANSWER.exec(response)?.[1] ?? '';
  const accuracy = golds.some((g) => arenaNormalize(g) === arenaNormalize(answer)) ? 1 : 0;
  const relevance = arenaAuthorsRelevance(response, goldReferenceIds);
  return { format, accuracy, relevance, bonus: format === 1 && accuracy === 1 && relevance === 1 ? bonus : 0 };
}

/** What the authors' helpers extract: `extract_answer` and `extract_support_ids`. */
export function arenaAuthorsExtract(response: string): { answer: string; relevance: string } {
  return { answer: AUTHORS_ANSWER.exec(response)?.[1] ?? '', relevance: AUTHORS_RELEVANCE.exec(response)?.[1] ?? '' };
}
