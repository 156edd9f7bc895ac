/**
 * ProRAG's search-tree arithmetic as the authors' code computes it (`prorag/prm/mcts.py` at c7a6411, the
 * MCTS that builds the PRM's training trees; ProRAG §3.2), for `compat=authors` and the parity sets
 * `prorag_mcts_*` (test/fixtures/parity-rl).
 *
 *   select      `Node.select_best_child`: argmax of Q/(N + 1e-8) + c · P · (√N_parent / (1 + N)), Q being the
 *               node's SUM of backed-up rewards; the first strictly greater score wins, starting from −∞, so
 *               when no score beats −∞ (all −∞ or NaN) no child is chosen.
 *   backprop    `Node.backpropagate`: from the node up to the root, N += 1 and Q += r, then r ← r · γ
 *               (a running product, not γ^d).
 *   terminal    `AsyncMCTS._is_terminal`: the stripped text ends in `<|im_end|>` or `</answer>`;
 *               `_compute_terminal_reward`: the F1 (prorag/utils/metric.py `calculate_f1_score`: lower-cased
 *               whitespace tokens, no other normalisation, one gold string) of the first
 *               `<answer>…</answer>` (case-sensitive, across lines), stripped; 0 without one.
 *
 * ragtrail's own search (mcts.ts) differs on purpose: its PUCT exploits the exact mean W / N (0 when
 * unvisited) and picks the first child even when every score is −∞ or NaN; its backup adds γ^d · value; its
 * terminal value is the answer its agent parsed, scored by the SQuAD-normalised F1 against every gold answer.
 */
import { PyError } from '../core/pyjson.js';
import { pyStrip } from '../core/text.js';
import { proragAuthorsF1 } from '../rewards/prorag.js';
import type { TreeNode } from './tree.js';

/** A child as the authors' `Node` holds it: `W` the sum of its backed-up rewards (their `Q`), `N` its visits, `prior` P(a|s). */
export type ProragAuthorsChild = Pick<TreeNode, 'W' | 'N' | 'prior'>;

/** `Node.select_best_child`'s score of one child: Q / (N + 1e-8) + c · P · (√N_parent / (1 + N)), in the authors' order of operations. */
export function proragAuthorsPuctScore(child: ProragAuthorsChild, parentVisits: number, c: number): number {
  // Python's math.sqrt raises on a negative count and its float division on a zero divisor, where JS gives NaN / ∞.
  // Checked in the order Python evaluates the expression.
  if (child.N + 1e-8 === 0) throw new PyError('float division by zero', 'ZeroDivisionError');
  if (parentVisits < 0) throw new PyError('math domain error', 'ValueError');
  if (1 + child.N === 0) throw new PyError('float division by zero', 'ZeroDivisionError');
  return child.W / (child.N + 1e-8) + c * child.prior * (Math.sqrt(parentVisits) / (1 + child.N));
}

/**
 * `Node.select_best_child(c_puct)`: the index of the child with the highest score, the first of a tie;
 * undefined (their None) when there are no children or no score is above −∞ (all −∞ or NaN).
 */
export function proragAuthorsSelect(children: readonly ProragAuthorsChild[], parentVisits: number, c: number): number | undefined {
  let best = -Infinity;
  let at: number | undefined;
  children.forEach((ch, i) => {
    const s = proragAuthorsPuctScore(ch, parentVisits, c);
    if (s > best) {
      best = s;
      at = i;
    }
  });
  return at;
}

/**
 * `Node.backpropagate(init_reward, gamma)` along `path` (root first, the node backed up from last): each node
 * from the last up gets N += 1 and W += r, then r ← r · γ. Mutates the nodes.
 */
export function proragAuthorsBackup(path: readonly Pick<TreeNode, 'N' | 'W'>[], reward: number, gamma: number): void {
  let r = reward;
  for (let i = path.length - 1; i >= 0; i--) {
    const n = path[i]!;
    n.N += 1;
    n.W += r;
    r *= gamma;
  }
}

/** `AsyncMCTS._is_terminal(state)`: the text, stripped as Python strips, ends in `<|im_end|>` or `</answer>`. */
export function proragAuthorsIsTerminal(state: string): boolean {
  const s = pyStrip(state);
  return s.endsWith('<|im_end|>') || s.endsWith('</answer>');
}

/**
 * `AsyncMCTS._compute_terminal_reward(action)` with `final_answer` = `finalAnswer`: the authors' F1 of the
 * first `<answer>…</answer>` (exact lower-case tags, shortest match, across lines), stripped; 0 without one.
 */
export function proragAuthorsTerminalReward(action: string, finalAnswer: string): number {
  const m = /<answer>([\s\S]*?)<\/answer>/.exec(action);
  return m ? proragAuthorsF1(pyStrip(m[1]!), finalAnswer) : 0;
}
