/**
 * Which questions of a dataset a command takes, after `--split`: the first N (`--limit`), the last N
 * (`--tail`), a seeded random N (`--sample N --seed S`), and a validation part carved out of them
 * (`--val-fraction F --val-part train|val`) — the papers each evaluate on one such selection (RAG-Gym
 * and LWS a random sample of the dev set, ARENA a fixed slice). Every selection is deterministic for
 * its seed, keeps the file's order, and is applied before `--shard`, so shards partition it.
 */
import { InputError } from '../core/errors.js';
import { Rng } from '../core/rng.js';
import type { Question } from '../core/types.js';

/** A selection of questions: at most one of limit / tail / sample; a validation part before it. */
export interface QuestionSelection {
  /** The first N. */
  limit?: number;
  /** The last N. */
  tail?: number;
  /** N drawn at random (without replacement) for `seed`, in the file's order. */
  sample?: number;
  /** Seed of `sample` and of the validation part (default 0). */
  seed?: number;
  /** Share of the questions held out as the validation part, chosen by a seeded hash of each id. */
  valFraction?: number;
  /** Which part `valFraction` keeps: the validation questions or the rest. */
  valPart?: 'train' | 'val';
}

/** The flags' names, for the errors. */
const FLAGS = { limit: '--limit', tail: '--tail', sample: '--sample' } as const;

/**
 * Checks a selection's flags together: one of limit / tail / sample, and a val part named exactly when
 * there is a val fraction. Throws an InputError naming the fix.
 */
export function checkSelection(sel: QuestionSelection): void {
  const given = (Object.keys(FLAGS) as (keyof typeof FLAGS)[]).filter((k) => sel[k] !== undefined);
  if (given.length > 1) throw new InputError(`${given.map((k) => FLAGS[k]).join(' and ')} both choose how many questions`, 'give one of --limit (first N), --tail (last N) or --sample (random N)');
  if (sel.valFraction !== undefined && !(sel.valFraction > 0 && sel.valFraction < 1)) throw new InputError(`--val-fraction ${sel.valFraction} must be between 0 and 1`, 'e.g. --val-fraction 0.1');
  if (sel.valFraction !== undefined && !sel.valPart) throw new InputError('--val-fraction needs --val-part train or val', 'say which part to take: --val-part val (the held-out share) or --val-part train (the rest)');
  if (sel.valPart && sel.valFraction === undefined) throw new InputError('--val-part without --val-fraction', 'add --val-fraction F (the held-out share, e.g. 0.1)');
}

/** The selection a command's flags describe (the seed of `--sample` and `--val-fraction`: `sampleSeed`, else `seed`), checked. */
export function selectionFromFlags(f: { limit?: number; tail?: number; sample?: number; sampleSeed?: number; seed?: number; valFraction?: number; valPart?: 'train' | 'val' }): QuestionSelection {
  const sel: QuestionSelection = { limit: f.limit, tail: f.tail, sample: f.sample, seed: f.sampleSeed ?? f.seed, valFraction: f.valFraction, valPart: f.valPart };
  for (const k of Object.keys(sel) as (keyof QuestionSelection)[]) if (sel[k] === undefined) delete sel[k];
  checkSelection(sel);
  return sel;
}

/** Whether a question falls in the validation part: a seeded hash of its id, so the parts do not depend on the file's order. */
export function inValidationPart(id: string, fraction: number, seed = 0): boolean {
  return new Rng(`val/${seed}/${id}`).next() < fraction;
}

/** The selected questions of `questions` (already filtered by split), in their order. */
export function selectQuestions(questions: readonly Question[], sel: QuestionSelection): Question[] {
  checkSelection(sel);
  let out = [...questions];
  if (sel.valFraction !== undefined) out = out.filter((q) => inValidationPart(q.id, sel.valFraction!, sel.seed) === (sel.valPart === 'val'));
  if (sel.limit !== undefined) return out.slice(0, sel.limit);
  if (sel.tail !== undefined) return out.slice(Math.max(0, out.length - sel.tail));
  if (sel.sample !== undefined && sel.sample < out.length) {
    const order = out.map((_, i) => i);
    new Rng(`sample/${sel.seed ?? 0}`).shuffle(order);
    const keep = new Set(order.slice(0, sel.sample));
    return out.filter((_, i) => keep.has(i));
  }
  return out;
}

/** Whether the selection needs every question of the split before choosing (all but a plain first-N). */
export const needsAll = (sel: QuestionSelection) => sel.tail !== undefined || sel.sample !== undefined || sel.valFraction !== undefined;

/** A line saying what was taken, for logs and summaries. */
export function describeSelection(sel: QuestionSelection, chosen: number, of: number): string {
  const val = sel.valFraction !== undefined ? `${sel.valPart === 'val' ? 'the validation part' : 'the training part'} (--val-fraction ${sel.valFraction}, seed ${sel.seed ?? 0}) of ` : '';
  const how = sel.limit !== undefined ? `the first ${sel.limit}` : sel.tail !== undefined ? `the last ${sel.tail}` : sel.sample !== undefined ? `a random ${sel.sample} (seed ${sel.seed ?? 0})` : 'all';
  return `${chosen} questions: ${how} of ${val}${of}`;
}
