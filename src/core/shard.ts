/**
 * Sharded jobs: `--shard i/n` keeps the questions whose id hashes to shard i of n (0 ≤ i < n), so n
 * processes — on one machine or many — split a run, an annotation or an evaluation with no
 * coordination, and `ragtrail merge` joins their folders. The hash is SHA-1 of the id, so a question
 * lands in the same shard whatever the order, the split or the limit of the dataset.
 */
import { createHash } from 'node:crypto';
import { InputError } from './errors.js';

/** Shard `index` of `count` (0 ≤ index < count). */
export interface Shard {
  index: number;
  count: number;
}

/** "i/n" → { index: i, count: n }; an InputError naming the fix otherwise. */
export function parseShard(text: string): Shard {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || index >= count) throw new InputError(`--shard ${text}: expected i/n with 0 ≤ i < n`, 'e.g. --shard 0/4 … --shard 3/4 for four processes');
  return { index, count };
}

/** Whether `text` is a valid "i/n" (parseShard would accept it). */
export function isShard(text: string): boolean {
  try {
    parseShard(text);
    return true;
  } catch {
    return false;
  }
}

/** The shard (0 … count − 1) a question id belongs to. */
export function shardOf(id: string, count: number): number {
  return createHash('sha1').update(id).digest().readUInt32BE(0) % count;
}

/** The items of one shard, in their order (all of them without a shard). */
export function selectShard<T extends { id: string }>(items: readonly T[], shard: Shard | undefined): T[] {
  return shard ? items.filter((q) => shardOf(q.id, shard.count) === shard.index) : [...items];
}

/** The form recorded in run configs ("2/4"), undefined without a shard. */
export function shardLabel(shard: Shard | undefined): string | undefined {
  return shard ? `${shard.index}/${shard.count}` : undefined;
}
