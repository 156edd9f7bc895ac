/**
 * ReasonRAG's search-tree statistics and UCT selection as its released code computes them
 * (pipeline/reasonrag_pipeline.py @225e249: `MCTSRAGNode.update_Q`, `update_reward`,
 * `ReasonRAGPipeline.backpropagate`, `_uct`, `_select_child`), for compat=authors and the parity sets
 * `reasonrag_running_mean`, `reasonrag_q_update` and `reasonrag_uct`.
 *
 * It differs from ragtrail's own search (mcts.ts) in the UCT formula: the paper's eq. 5 there,
 * Q + c·√(Σ_j N_j) / (1 + N), and here the code's Q + c·√(ln N_parent / N). Q is the mean of every value
 * backed up through the node (NumPy's mean, so its rounding too), and the terminal rewards have a running
 * mean of their own, kept only in the node's log. Python's errors are raised as PyError where the code
 * raises: ln of a parent with no visits is ValueError("math domain error").
 */
import { numpyMean } from '../core/numpy.js';
import { PyError } from '../core/pyjson.js';

/** The statistics an `MCTSRAGNode` keeps: visits N, the values backed up and their mean Q, the terminal rewards and their mean. */
export interface ReasonRagAuthorsStats {
  N: number;
  Q: number;
  qList: number[];
  rewardList: number[];
  /** `node_dict["reward"]`: the mean of `rewardList`; absent until a reward is backed up. */
  reward?: number;
}

/** A fresh node's statistics: N 0, Q 0.0, no values. */
export const reasonragAuthorsStats = (): ReasonRagAuthorsStats => ({ N: 0, Q: 0, qList: [], rewardList: [] });

/** `update_Q(reward)`: N += 1 and Q = np.mean of every value so far. */
export function reasonragAuthorsUpdateQ(node: ReasonRagAuthorsStats, value: number): void {
  node.N += 1;
  node.qList.push(value);
  node.Q = numpyMean(node.qList);
}

/** `update_reward(reward)`: the running mean of the terminal rewards, `node_dict["reward"]`. */
export function reasonragAuthorsUpdateReward(node: ReasonRagAuthorsStats, reward: number): void {
  node.rewardList.push(reward);
  node.reward = numpyMean(node.rewardList);
}

/**
 * `backpropagate(node, Q, reward)`: from the node up to the root, each updates Q with the node's value and,
 * where the node was terminal (reward not null), its reward mean. `path` runs from the root to the node.
 */
export function reasonragAuthorsBackpropagate(path: readonly ReasonRagAuthorsStats[], value: number, reward: number | null): void {
  for (let i = path.length - 1; i >= 0; i--) {
    reasonragAuthorsUpdateQ(path[i]!, value);
    if (reward !== null) reasonragAuthorsUpdateReward(path[i]!, reward);
  }
}

/** ReasonRAG's code's settings: c = 1.414 and +∞ for a child never visited (`ReasonRAGPipeline.__init__`). */
export const REASONRAG_AUTHORS_UCT: Readonly<{ c: number; defaultScore: number }> = { c: 1.414, defaultScore: Infinity };

/**
 * `_uct(child)`: `defaultScore` when the child has no visits, else Q + c·√(ln N_parent / N) with Python's
 * float rules (c = ∞ times √0 is NaN); `math.log` of N_parent ≤ 0 raises ValueError.
 */
export function reasonragAuthorsUct(child: Pick<ReasonRagAuthorsStats, 'N' | 'Q'>, parentN: number, c = REASONRAG_AUTHORS_UCT.c, defaultScore = REASONRAG_AUTHORS_UCT.defaultScore): number {
  if (child.N === 0) return defaultScore;
  if (!(parentN > 0)) throw new PyError('math domain error', 'ValueError');
  const ratio = Math.log(parentN) / child.N;
  if (ratio < 0) throw new PyError('math domain error', 'ValueError');
  return child.Q + c * Math.sqrt(ratio);
}

/**
 * `_select_child(parent)`: Python's `max` over the children by {@link reasonragAuthorsUct}, the index of the
 * first child with the greatest score (ties go to the earlier child; a later score replaces the best only
 * when strictly greater, so a NaN first child is kept and a NaN later one never chosen). The first error
 * raised in child order propagates.
 */
export function reasonragAuthorsSelectChild(children: readonly Pick<ReasonRagAuthorsStats, 'N' | 'Q'>[], parentN: number, c = REASONRAG_AUTHORS_UCT.c, defaultScore = REASONRAG_AUTHORS_UCT.defaultScore): number {
  if (children.length === 0) throw new PyError('max() arg is an empty sequence', 'ValueError');
  let best = 0;
  let bestScore = reasonragAuthorsUct(children[0]!, parentN, c, defaultScore);
  for (let i = 1; i < children.length; i++) {
    const s = reasonragAuthorsUct(children[i]!, parentN, c, defaultScore);
    if (s > bestScore) {
      best = i;
      bestScore = s;
    }
  }
  return best;
}
