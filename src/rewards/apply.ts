/** Scoring every trajectory of a run, or every line of an episode-text file, with a reward scheme. */
import { writeFileSync } from 'node:fs';
import { type ErrorRecord, errorRecord, errorRecordText, InputError, recordId } from '../core/errors.js';
import { InterruptedError } from '../core/interrupt.js';
import { readJsonlEach, writeJsonl } from '../core/io.js';
import { exactScalarList } from '../core/pyjson.js';
import type { Question } from '../core/types.js';
import type { AgentName, Protocol } from '../agents/protocol.js';
import type { State } from '../env/env.js';
import { toTrajectory } from '../env/trajectory.js';
import { getProtocol } from '../agents/registry.js';
import { episodeFromJson, episodeTrajectory } from './episode.js';
import type { Trajectory } from '../core/trajectory.js';
import type { Embedder } from '../retrieval/embedders/embedder.js';
import type { Judge } from './judge.js';
import { type ComposedScheme, SCHEMES } from './schemes.js';
import type { RewardContext } from './types.js';

/** One line of a rewards file: the question id with the scheme's total and components. */
export interface RewardRecord {
  id: string;
  total: number;
  components: Record<string, number>;
}

/** What reward schemes may need beyond the trajectory: an embedder, a judge, and questions for supporting ids. */
export interface ApplyOptions {
  embedder?: Embedder;
  judge?: Judge;
  /** Questions by id, for supporting / context ids a trajectory does not carry (e.g. imported runs). */
  questions?: ReadonlyMap<string, Question>;
}

/**
 * A scheme as the environment server's outcome scorer (learn/serve/env-service.ts `EpisodeScorer`):
 * the scheme's total and components for a finished trajectory.
 */
export function episodeScorer(scheme: ComposedScheme, opts: ApplyOptions = {}): (t: Trajectory) => Promise<Omit<RewardRecord, 'id'>> {
  return async (t) => {
    const r = await scheme.compute(contextFor(t, opts));
    return { total: r.total, components: r.components };
  };
}

/**
 * A reward scheme as the outcome score of annotation rollouts (process/values `OutcomeScore`): the
 * finished episode becomes a trajectory of `protocol` and the scheme's total is its value. Keep the
 * scheme's range in [0, 1] for SPRE's values to stay comparable to the papers' F1.
 */
export function stateOutcome(scheme: ComposedScheme, protocol: Protocol, opts: ApplyOptions = {}): (final: State) => Promise<number> {
  const who = { protocol, name: `outcome:${scheme.expression}` };
  return async (final) => (await scheme.compute(contextFor(toTrajectory(final, who, 0), opts))).total;
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

/** Scores each trajectory with the scheme, one after another; records come back in input order. */
export async function applyRewards(trajectories: readonly Trajectory[], scheme: ComposedScheme, opts: ApplyOptions = {}): Promise<RewardRecord[]> {
  const out: RewardRecord[] = [];
  for (const t of trajectories) {
    const r = await scheme.compute(contextFor(t, opts));
    out.push({ id: t.id, total: r.total, components: r.components });
  }
  return out;
}

/**
 * Scores each readable trajectory; an unreadable line (from readTrajectoriesEach) or a trajectory the scheme
 * cannot score becomes an ErrorRecord in its place, and the others go on. Records come back in input order.
 */
export async function applyRewardsEach(
  items: readonly ({ trajectory: Trajectory } | { error: unknown; value?: unknown })[],
  scheme: ComposedScheme,
  opts: ApplyOptions = {},
): Promise<(RewardRecord | ErrorRecord)[]> {
  const out: (RewardRecord | ErrorRecord)[] = [];
  for (const item of items) {
    if (!('trajectory' in item)) {
      out.push(errorRecord(item.error, item.value));
      continue;
    }
    const t = item.trajectory;
    try {
      const r = await scheme.compute(contextFor(t, opts));
      out.push({ id: t.id, total: r.total, components: r.components });
    } catch (e) {
      if (e instanceof InterruptedError) throw e;
      out.push(errorRecord(e, t));
    }
  }
  return out;
}

/** Writes the records to `path` as JSON Lines, replacing the file. */
export function writeRewards(path: string, records: readonly (RewardRecord | ErrorRecord)[]): void {
  writeFileSync(path, records.map((r) => JSON.stringify(r)).join('\n') + (records.length ? '\n' : ''));
}

/** Adds a reward's total and components into running sums (for the printed means). */
export function addToSums(sums: Record<string, number>, r: { total: number; components: Record<string, number> }): void {
  sums['total'] = (sums['total'] ?? 0) + r.total;
  for (const [k, v] of Object.entries(r.components)) sums[k] = (sums[k] ?? 0) + v;
}

/**
 * A warning when a term of the scheme checks one protocol's format and the trajectories follow
 * another (`lws-*` on a reasonrag run, `arena` on a search-r1 run): every such trajectory would score
 * as a format failure. `agents` are the trajectories' protocols, one entry per trajectory.
 */
export function protocolMismatch(scheme: ComposedScheme, agents: readonly string[]): string | undefined {
  const problems: string[] = [];
  const others = new Set<string>();
  const wanted = new Set<string>();
  for (const { scheme: s } of scheme.terms) {
    if (!s.protocol || !s.formatComponent) continue;
    const off = agents.filter((a) => a !== s.protocol);
    if (off.length === 0) continue;
    off.forEach((a) => others.add(a));
    wanted.add(s.protocol);
    problems.push(`${s.name} checks the ${s.protocol} format (its "${s.formatComponent}" component) but ${off.length} of ${agents.length} trajectories follow ${[...new Set(off)].join(', ')}`);
  }
  if (problems.length === 0) return undefined;
  const fitting = Object.values(SCHEMES).filter((s) => s.protocol !== undefined && others.has(s.protocol)).map((s) => s.name);
  const own = fitting.length ? `a scheme of their protocol (${fitting.join(', ')}) or ` : '';
  return `${problems.join('; ')}: each of those scores as a format failure. To fix, score them with ${own}a protocol-free scheme (em, f1, correct, discounted), or run the agent with ${[...wanted].map((p) => `--agent ${p}`).join(' / ')}`;
}

/** The protocol that reads episode texts for a scheme: `agent` if given, else the first term's own. */
export function textProtocol(scheme: ComposedScheme, agent?: string): AgentName {
  if (agent !== undefined) return getProtocol(agent).name;
  const own = scheme.terms.find((t) => t.scheme.protocol)?.scheme.protocol;
  if (!own) throw new InputError(`"${scheme.expression}" does not say how to read an answer from a text`, 'pass --agent NAME (the protocol the texts follow, e.g. --agent search-r1)');
  return own;
}

export type { ErrorRecord } from '../core/errors.js';

/**
 * Scores every line of an episode-text file (`reward --texts`), streaming: lines are read, checked,
 * scored and written in order, so files of any length run in bounded memory. A line that cannot be
 * scored (not JSON, a missing field, an input on which the authors' code raises in compat mode) is
 * written as an ErrorRecord and counted in `errors`; the other lines go on. `count` is the lines
 * scored; means are over those.
 */
export async function scoreTexts(file: string, out: string, scheme: ComposedScheme, opts: ApplyOptions & { agent?: string } = {}): Promise<{ count: number; errors: number; sums: Record<string, number> }> {
  const agent = textProtocol(scheme, opts.agent);
  const sums: Record<string, number> = { total: 0 };
  let count = 0;
  let errors = 0;
  async function* records(): AsyncGenerator<RewardRecord | ErrorRecord> {
    for await (const line of readJsonlEach(file)) {
      if ('error' in line) {
        errors++;
        yield { id: null, error: errorRecordText(line.error) };
        continue;
      }
      let r: Awaited<ReturnType<ComposedScheme['compute']>>;
      let id: string;
      try {
        const episode = episodeFromJson(line.value, line.loc);
        id = episode.id;
        // A gold reference number past 2^53 is rounded by JSON.parse; ARENA's code compares Python's exact ints.
        if (episode.gold_reference_ids?.some((g) => typeof g === 'number' && Number.isInteger(g) && !Number.isSafeInteger(g))) episode.gold_reference_ids = exactScalarList(line.text, 'gold_reference_ids') ?? episode.gold_reference_ids;
        const trajectory = episodeTrajectory(episode, agent);
        r = await scheme.compute({ trajectory, episode, embedder: opts.embedder, judge: opts.judge });
      } catch (e) {
        if (e instanceof InterruptedError) throw e;
        errors++;
        yield { id: recordId(line.value), error: errorRecordText(e) };
        continue;
      }
      addToSums(sums, r);
      count++;
      yield { id, total: r.total, components: r.components };
    }
  }
  await writeJsonl(out, records());
  return { count, errors, sums };
}
