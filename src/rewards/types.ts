/**
 * Rewards are small, named, pure functions of a trajectory (and, where a paper needs more, of the
 * question's supporting passages, an embedder or a judge), returning a total and its components.
 * They compose by weighted sums (`composeScheme` in schemes.ts). Each scheme cites its paper and equations.
 */
import type { Trajectory } from '../core/trajectory.js';
import type { Embedder } from '../retrieval/embedders/embedder.js';
import type { AgentName } from '../agents/protocol.js';
import type { EpisodeText } from './episode.js';
import type { Judge } from './judge.js';

/**
 * What a reward scheme may read: the trajectory, plus what some schemes need beyond it (supporting
 * ids,
 * an embedder, a judge, the episode's raw text).
 */
export interface RewardContext {
  trajectory: Trajectory;
  /** Ids of the passages that support the answer (from the trajectory's meta or a dataset). */
  supporting?: readonly string[];
  /** Ids of the question's own context passages, in order (ARENA's numbered references). */
  contextIds?: readonly string[];
  embedder?: Embedder;
  judge?: Judge;
  /** The episode's text, when the trajectory was read from one (`reward --texts`); compat modes read it. */
  episode?: EpisodeText;
}

/** A scheme's reward: the scalar `total` and the named parts it was made of (as listed in the scheme's `components`). */
export interface RewardResult {
  total: number;
  components: Record<string, number>;
}

/** A scheme option's value; `--option k=v` text is read as a boolean, a number, or else a string. */
export type OptionValue = number | string | boolean;

/**
 * A named reward over a trajectory, as the papers define them. Built-ins are in `SCHEMES`; add your
 * own
 * with `registerRewardScheme`, then use it in `--scheme`, alone or in a weighted sum.
 */
export interface RewardScheme {
  name: string;
  description: string;
  /** Component names, in output order. */
  components: readonly string[];
  /** Options with defaults (`--option k=v` overrides). */
  defaults: Record<string, OptionValue>;
  /** The protocol whose parser reads an episode text for this scheme (default mode). */
  protocol?: AgentName;
  /**
   * The component that checks an episode against `protocol`'s format. Trajectories of another
   * protocol fail it every time, so scoring them is warned about (`protocolMismatch`).
   */
  formatComponent?: string;
  /**
   * The reward of `ctx.trajectory` under `options` (the scheme's defaults with any overrides applied).
   * Should be a pure function of its inputs; throw an InputError when it needs something `ctx` lacks.
   */
  compute(ctx: RewardContext, options: Record<string, OptionValue>): Promise<RewardResult> | RewardResult;
}
