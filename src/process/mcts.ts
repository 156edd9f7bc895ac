/**
 * Monte Carlo tree search over agent steps, in the two flavours of the papers.
 *
 * ReasonRAG (App. A), "uct": select children by UCT (eq. 5)
 *     s* = argmax_i Q(s_i) + c · √(Σ_j N(s_j)) / (1 + N(s_i)),   unvisited = ∞, c = 1.414;
 *   expand one step from a node with fewer than `maxChildren` children; value the new node by SPRE
 *   rollouts (eq. 1) or by the judge value of the partial process (eq. 6); back up: N += 1 on the path
 *   (eq. 7) and Q the running mean of the values (a choice made here: the appendix only says Q is
 *   updated from eq. 1).
 * ProRAG (§3.2), "puct": select by PUCT
 *     a* = argmax_a Q(s,a) + c · P(a|s) · √N(s) / (1 + N(s,a)),   c = 2.5,
 *   P the prior of the sampled step (`prior`): by default its length-normalised sequence probability
 *   (the softmax over siblings of each step's mean token log-probability, so a long step is not
 *   penalised for its length), `sequence` the softmax of summed log-probabilities, `uniform` 1/n as
 *   ProRAG's code does (prorag/prm/mcts.py; also the fallback without logprobs); at a leaf,
 *   sample `maxChildren` steps at high temperature, simulate one of them to an answer, and back up its
 *   reward (F1 by default as in the authors' code; binary correctness as an option) decayed by
 *   γ^distance (γ = 0.99).
 *
 * Parallel and deterministic: each round selects up to `batch` leaves one after another with a
 * virtual loss on their paths, evaluates them concurrently (rollouts too run concurrently), then
 * backs them up in selection order. Every sample is seeded from (seed, node, attempt), so a re-run —
 * after a crash, say — rebuilds the same tree, and with the response cache it costs nothing.
 */
import type { Policy } from '../agents/policy.js';
import type { Move, RagEnv, State } from '../env/env.js';
import { f1Score } from '../core/metrics.js';
import type { LLM } from '../llm/types.js';
import { q, sameAction, Tree, type TreeNode } from './tree.js';
import { judgeValue, type OutcomeScore, rollout, seedFor, spre } from './values.js';

/** How the PUCT prior P(a|s) of a sampled step is set (see the module header). */
export type PriorMode = 'length-normalised' | 'sequence' | 'uniform';
export const PRIOR_MODES: readonly PriorMode[] = ['length-normalised', 'sequence', 'uniform'];

/** Settings of {@link Mcts}; start from {@link UCT_DEFAULTS} or {@link PUCT_DEFAULTS} and override. */
export interface MctsOptions {
  flavour: 'uct' | 'puct';
  /** Iterations (simulations). ReasonRAG's code: 7; ProRAG: 200. */
  simulations: number;
  /** Children per node: ReasonRAG 2 (one per expansion), ProRAG 5 (sampled at once). */
  maxChildren: number;
  /** Steps below the root after which nodes are not expanded (ProRAG: 10). */
  maxDepth: number;
  /** Exploration constant: 1.414 (UCT), 2.5 (PUCT). */
  c: number;
  /** UCT node value: SPRE rollouts or the judge value. */
  value: 'spre' | 'judge';
  /** SPRE rollouts per node (k) and decay α. */
  rollouts: number;
  alpha: number;
  /** PUCT prior P(a|s) of sampled steps (see the header). */
  prior: PriorMode;
  /** PUCT backup decay γ per step of distance, and the simulation's reward. */
  gamma: number;
  reward: 'f1' | 'binary';
  /** Expansion and rollout sampling temperatures. */
  temperature: number;
  rolloutTemperature: number;
  /** Leaves evaluated concurrently per round. */
  batch: number;
  seed: number;
  judge?: LLM;
  /** Score of a finished episode (rollouts and terminal nodes); default the answer's F1, as in the
   * papers. A reward scheme stands in through rewards/apply `stateOutcome`. */
  outcome?: OutcomeScore;
}

/**
 * ReasonRAG's settings (App. A): UCT with c = 1.414, 7 simulations, 2 children per node, SPRE values
 * from 4 rollouts with α = 0.9; 4 leaves per round.
 */
export const UCT_DEFAULTS: MctsOptions = {
  flavour: 'uct', simulations: 7, maxChildren: 2, maxDepth: 10, c: 1.414, value: 'spre', rollouts: 4, alpha: 0.9,
  gamma: 0.99, reward: 'f1', temperature: 1, rolloutTemperature: 1, batch: 4, seed: 0, prior: 'length-normalised',
};

/**
 * ProRAG's settings (§3.2): PUCT with c = 2.5, 200 simulations, 5 children sampled at T = 0.9, the
 * simulation's F1 backed up with γ = 0.99 per step.
 */
export const PUCT_DEFAULTS: MctsOptions = {
  ...UCT_DEFAULTS, flavour: 'puct', simulations: 200, maxChildren: 5, c: 2.5, temperature: 0.9, rolloutTemperature: 0.9,
};

/** UCT score of a child given the sum of its siblings' visits (eq. 5); virtual visits count as losses. */
export function uctScore(child: Pick<TreeNode, 'N' | 'W' | 'pending'>, siblingVisits: number, c: number): number {
  const n = child.N + child.pending;
  if (n === 0) return Infinity;
  return child.W / n + (c * Math.sqrt(siblingVisits)) / (1 + n);
}

/** PUCT score of a child given its parent's visits (unvisited children have Q = 0). */
export function puctScore(child: Pick<TreeNode, 'N' | 'W' | 'pending' | 'prior'>, parentVisits: number, c: number): number {
  const n = child.N + child.pending;
  const qv = n > 0 ? child.W / n : 0;
  return qv + (c * child.prior * Math.sqrt(parentVisits)) / (1 + n);
}

/**
 * Backpropagation along a root-to-leaf path: N += 1 on every node (ReasonRAG eq. 7) and W += value,
 * so that Q = W / N is the running mean (UCT, decay 1); PUCT adds γ^d · value at distance d from the leaf.
 */
export function backup(path: readonly Pick<TreeNode, 'N' | 'W'>[], value: number, decay = 1): void {
  for (let i = path.length - 1, d = 0; i >= 0; i--, d++) {
    const n = path[i]!;
    n.N += 1;
    n.W += decay ** d * value;
  }
}

/** Index of the best child by score; ties go to the earlier child. */
function argmax<T>(items: readonly T[], score: (t: T) => number): T | undefined {
  let best: T | undefined;
  let bestScore = -Infinity;
  for (const it of items) {
    const s = score(it);
    if (best === undefined || s > bestScore) {
      best = it;
      bestScore = s;
    }
  }
  return best;
}

/** Counts of one search: iterations run, nodes expanded and policy calls made. */
export interface MctsStats {
  iterations: number;
  expansions: number;
  policyCalls: number;
}

interface Job {
  node: TreeNode;
  path: TreeNode[];
  kind: 'expand' | 'revisit';
}

/** Priors of sibling moves: a softmax of their (mean-per-token or summed) log-probabilities, or uniform. */
export function priorsOf(moves: readonly Move[], mode: PriorMode = 'length-normalised'): number[] {
  if (moves.length === 0) return [];
  if (mode === 'uniform' || moves.some((m) => m.logprob === undefined)) return moves.map(() => 1 / moves.length);
  const score = (m: Move) => (mode === 'sequence' ? m.logprob! : m.logprob! / Math.max(1, m.logprobTokens ?? 1));
  const top = Math.max(...moves.map(score));
  const w = moves.map((m) => Math.exp(score(m) - top));
  const z = w.reduce((s, x) => s + x, 0);
  return w.map((x) => x / z);
}

/**
 * Monte Carlo tree search over agent steps from `root`, in ReasonRAG's UCT or ProRAG's PUCT flavour
 * (see
 * the module header). Each sample is seeded from (seed, node, attempt), so a re-run rebuilds the same
 * tree.
 */
export class Mcts {
  readonly tree: Tree;
  readonly stats: MctsStats = { iterations: 0, expansions: 0, policyCalls: 0 };

  constructor(
    private readonly env: RagEnv,
    private readonly policy: Policy,
    root: State,
    private readonly opts: MctsOptions,
  ) {
    this.tree = new Tree(root);
  }

  private expandable(node: TreeNode): boolean {
    if (node.terminal || node.depth >= this.opts.maxDepth) return false;
    if (this.opts.flavour === 'puct') return node.children.length === 0 && node.attempts === 0;
    return node.children.length < this.opts.maxChildren && node.attempts < 2 * this.opts.maxChildren;
  }

  /** Walks down from the root to the node to evaluate this iteration. */
  private select(): Job {
    const path: TreeNode[] = [this.tree.root];
    let node = this.tree.root;
    for (;;) {
      if (this.expandable(node)) return { node, path, kind: 'expand' };
      const children = this.tree.children(node);
      if (children.length === 0) return { node, path, kind: 'revisit' };
      let next: TreeNode | undefined;
      if (this.opts.flavour === 'uct') {
        const visits = children.reduce((s, ch) => s + ch.N + ch.pending, 0);
        next = argmax(children, (ch) => uctScore(ch, visits, this.opts.c));
      } else {
        const visits = node.N + node.pending;
        next = argmax(children, (ch) => puctScore(ch, visits, this.opts.c));
      }
      node = next!;
      path.push(node);
    }
  }

  private async propose(state: State, n: number, temperature: number, seed: number): Promise<Move[]> {
    this.stats.policyCalls++;
    return this.policy.propose(state, { n, temperature, seed });
  }

  /** Value of a freshly created node (UCT flavour). */
  private async evaluate(node: TreeNode): Promise<number> {
    const o = this.opts;
    if (o.value === 'judge' && !node.terminal) {
      if (!o.judge) throw new Error('mcts-judge needs a judge model');
      return (await judgeValue(o.judge, node.state)).value;
    }
    const { value, rollouts } = await spre(this.env, this.policy, node.state, { k: o.rollouts, alpha: o.alpha, temperature: o.rolloutTemperature, seed: seedFor(o.seed, node.state.question.id, 'node', node.id), outcome: o.outcome });
    if (rollouts.some((r) => r.answered)) this.tree.markAnswered(node);
    return value;
  }

  /** One UCT expansion: a new child valued by SPRE or the judge; a duplicate step revisits its twin. */
  private async expandUct(job: Job): Promise<{ leaf: TreeNode; value: number; path: TreeNode[] }> {
    const { node } = job;
    const attempt = node.attempts++;
    const [move] = await this.propose(node.state, 1, this.opts.temperature, seedFor(this.opts.seed, node.state.question.id, node.id, attempt));
    const twin = move && this.tree.children(node).find((ch) => ch.step && (ch.step.raw.trim() === move.raw.trim() || sameAction(ch.step.action, move.action)));
    if (!move || twin) {
      const target = twin ?? node;
      return { leaf: target, value: twin ? q(twin) : q(node), path: twin ? [...job.path, twin] : job.path };
    }
    const child = this.tree.add(node, (await this.env.step(node.state, move)).state);
    this.stats.expansions++;
    if (child.terminal) {
      child.score = this.opts.outcome ? await this.opts.outcome(child.state) : this.answerScore(child.state);
      if (lastAnswer(child.state).trim() !== '') this.tree.markAnswered(child);
    }
    const value = await this.evaluate(child);
    child.value = value;
    return { leaf: child, value, path: [...job.path, child] };
  }

  /** One PUCT expansion: sample the leaf's children, simulate the most promising one to an answer. */
  private async expandPuct(job: Job): Promise<{ leaf: TreeNode; value: number; path: TreeNode[] }> {
    const { node } = job;
    node.attempts++;
    const moves = await this.propose(node.state, this.opts.maxChildren, this.opts.temperature, seedFor(this.opts.seed, node.state.question.id, node.id));
    // Identical steps are one child, whose prior is the sum of theirs.
    const priors = priorsOf(moves, this.opts.prior);
    const distinct: { move: Move; prior: number }[] = [];
    moves.forEach((m, i) => {
      const same = distinct.find((d) => d.move.raw.trim() === m.raw.trim() || sameAction(d.move.action, m.action));
      if (same) same.prior += priors[i]!;
      else distinct.push({ move: m, prior: priors[i]! });
    });
    for (const d of distinct) {
      const child = this.tree.add(node, (await this.env.step(node.state, d.move)).state, { prior: d.prior });
      if (child.terminal) child.score = this.opts.outcome ? await this.opts.outcome(child.state) : this.answerScore(child.state);
      this.stats.expansions++;
    }
    const children = this.tree.children(node);
    if (children.length === 0) return { leaf: node, value: 0, path: job.path };
    const pick = argmax(children, (ch) => ch.prior)!;
    const value = await this.simulate(pick);
    pick.value = value;
    return { leaf: pick, value, path: [...job.path, pick] };
  }

  /** F1 of a finished episode's answer. Synchronous on purpose: an extra await here would reorder the
   * concurrent expansions of a batch (node ids, hence seeds), changing every tree the default makes. */
  private answerScore(state: State): number {
    return f1Score(lastAnswer(state), state.question.answers).f1;
  }

  /** PUCT simulation: one rollout from the node to an answer, scored by F1 or binary correctness. */
  private async simulate(node: TreeNode): Promise<number> {
    const r = await rollout(this.env, this.policy, node.state, { temperature: this.opts.rolloutTemperature, seed: seedFor(this.opts.seed, node.state.question.id, 'sim', node.id, node.N), outcome: this.opts.outcome });
    if (r.answered) this.tree.markAnswered(node);
    return this.opts.reward === 'binary' ? (r.score === 1 ? 1 : 0) : r.score;
  }

  /** Re-evaluating a node that cannot be expanded (terminal, too deep, or exhausted). */
  private async revisit(job: Job): Promise<{ leaf: TreeNode; value: number; path: TreeNode[] }> {
    const { node } = job;
    if (this.opts.flavour === 'puct') {
      const value = node.terminal ? (this.opts.reward === 'binary' ? (node.score === 1 ? 1 : 0) : (node.score ?? 0)) : await this.simulate(node);
      return { leaf: node, value, path: job.path };
    }
    return { leaf: node, value: node.N > 0 ? q(node) : node.value, path: job.path };
  }

  private backup(path: readonly TreeNode[], value: number): void {
    backup(path, value, this.opts.flavour === 'puct' ? this.opts.gamma : 1);
  }

  /**
   * Runs up to `simulations` iterations, `batch` leaves per round evaluated concurrently with virtual
   * losses, and returns the tree. A UCT search stops early when no node is left to expand.
   */
  async run(): Promise<Tree> {
    const o = this.opts;
    while (this.stats.iterations < o.simulations) {
      // Select a batch, with virtual losses so that the batch spreads over the tree.
      const jobs: Job[] = [];
      const round = Math.min(o.batch, o.simulations - this.stats.iterations);
      for (let b = 0; b < round; b++) {
        const job = this.select();
        if (job.kind === 'expand' && jobs.some((j) => j.node === job.node)) break;
        jobs.push(job);
        for (const n of job.path) n.pending++;
        if (job.kind === 'revisit' && jobs.length > 1) break;
      }
      const results = await Promise.all(
        jobs.map((job) => (job.kind === 'revisit' ? this.revisit(job) : o.flavour === 'uct' ? this.expandUct(job) : this.expandPuct(job))),
      );
      for (const job of jobs) for (const n of job.path) n.pending--;
      for (const r of results) this.backup(r.path, r.value);
      this.stats.iterations += jobs.length;
      if (jobs.every((j) => j.kind === 'revisit') && this.tree.nodes.length > 1 && this.tree.nodes.every((n) => !this.expandable(n))) {
        // Nothing left to expand anywhere: further iterations would only repeat values.
        if (o.flavour === 'uct') break;
      }
    }
    return this.tree;
  }
}

function lastAnswer(state: State): string {
  const last = state.steps[state.steps.length - 1];
  return last?.action.type === 'answer' ? last.action.answer : '';
}
