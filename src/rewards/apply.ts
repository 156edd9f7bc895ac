/** Scoring every trajectory of a run with a reward scheme. */
import { writeFileSync } from 'node:fs';
import type { Question } from '../core/types.js';
import type { Trajectory } from '../core/trajectory.js';
import type { Embedder } from '../retrieval/embedders/embedder.js';
import type { Judge } from './judge.js';
import type { ComposedScheme } from './schemes.js';
import type { RewardContext } from './types.js';

export interface RewardRecord {
  id: string;
  total: number;
  components: Record<string, number>;
}

export interface ApplyOptions {
  embedder?: Embedder;
  judge?: Judge;
  /** Questions by id, for supporting / context ids a trajectory does not carry (e.g. imported runs). */
  questions?: ReadonlyMap<string, Question>;
}

export function contextFor(t: Trajectory, opts: ApplyOptions): RewardContext {
  const q = opts.questions?.get(t.id);
  const meta = t.meta ?? {};
  const ids = (v: unknown) => (Array.isArray(v) ? (v as string[]) : undefined);
  return {
    trajectory: t,
    supporting: ids(meta['supporting']) ?? q?.supporting,
    contextIds: ids(meta['contextIds']) ?? q?.context?.map((p) => p.id),
    embedder: opts.embedder,
    judge: opts.judge,
  };
}

export async function applyRewards(trajectories: readonly Trajectory[], scheme: ComposedScheme, opts: ApplyOptions = {}): Promise<RewardRecord[]> {
  const out: RewardRecord[] = [];
  for (const t of trajectories) {
    const r = await scheme.compute(contextFor(t, opts));
    out.push({ id: t.id, total: r.total, components: r.components });
  }
  return out;
}

export function writeRewards(path: string, records: readonly RewardRecord[]): void {
  writeFileSync(path, records.map((r) => JSON.stringify(r)).join('\n') + (records.length ? '\n' : ''));
}
