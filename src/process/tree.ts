/**
 * Search trees over agent steps: a node is an environment state reached by one action from its
 * parent, with visit count N and mean value Q (ReasonRAG App. A: {N(s), Q(s), Stage(s)}). Trees
 * are saved as JSON lines (one per question) holding every node's step — so each node's state can
 * be rebuilt exactly, for exports and for inspection.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../core/errors.js';
import { readJsonlValues } from '../core/io.js';
import type { Question } from '../core/types.js';
import type { Action, ActionType, Step } from '../core/trajectory.js';
import type { State } from '../env/env.js';

/**
 * A node of a search tree: the state reached by one step from its parent, with MCTS statistics (N, W,
 * Q = W/N; ReasonRAG App. A). Mutated in place by the search.
 */
export interface TreeNode {
  id: number;
  parent: number;
  children: number[];
  depth: number;
  state: State;
  /** The step that led here from the parent (absent at the root). */
  step?: Step;
  /** Visits, and the sum of backed-up values (Q = W / N). */
  N: number;
  W: number;
  /** The value the node was first evaluated at (SPRE, judge, simulation, rank reward). */
  value: number;
  /** Policy prior P(a|s) of the step (PUCT). */
  prior: number;
  terminal: boolean;
  /** Terminal nodes: the answer's F1 against the gold answers. */
  score?: number;
  /** Expansion attempts (duplicates of existing children do not add a child). */
  attempts: number;
  /** A pending visit during batched selection (virtual loss). */
  pending: number;
  /** Some answer was reached from here (in the tree or by a rollout); others are pruned. */
  answered: boolean;
  /** RAG-Gym ranking: 0 for the best candidate. */
  rank?: number;
}

export function q(node: Pick<TreeNode, 'N' | 'W'>): number {
  return node.N > 0 ? node.W / node.N : 0;
}

/** A search tree over agent steps, rooted at an episode's first state; node ids are indices into `nodes`. */
export class Tree {
  readonly nodes: TreeNode[] = [];

  constructor(root: State) {
    this.nodes.push({ id: 0, parent: -1, children: [], depth: 0, state: root, N: 0, W: 0, value: 0, prior: 1, terminal: root.done, attempts: 0, pending: 0, answered: false });
  }

  get root(): TreeNode {
    return this.nodes[0]!;
  }

  /**
   * Adds a child of `parent` holding `state`, whose last step is the one that led there; `extra`
   * overrides
   * the fresh node's fields (prior, value, …). Terminal states start as answered.
   */
  add(parent: TreeNode, state: State, extra: Partial<TreeNode> = {}): TreeNode {
    const step = state.steps[state.steps.length - 1];
    const node: TreeNode = {
      id: this.nodes.length,
      parent: parent.id,
      children: [],
      depth: parent.depth + 1,
      state,
      step,
      N: 0,
      W: 0,
      value: 0,
      prior: 1,
      terminal: state.done,
      attempts: 0,
      pending: 0,
      answered: state.done,
      ...extra,
    };
    this.nodes.push(node);
    parent.children.push(node.id);
    return node;
  }

  /** The node's children, in the order they were added. */
  children(node: TreeNode): TreeNode[] {
    return node.children.map((id) => this.nodes[id]!);
  }

  /** Root to node, inclusive. */
  path(node: TreeNode): TreeNode[] {
    const out: TreeNode[] = [];
    for (let n: TreeNode | undefined = node; n; n = n.parent >= 0 ? this.nodes[n.parent] : undefined) out.push(n);
    return out.reverse();
  }

  /** Marks a node and its ancestors as leading to an answer. */
  markAnswered(node: TreeNode): void {
    for (const n of this.path(node)) n.answered = true;
  }
}

/** A → answer, Q → query (search), E → evidence (extract), as RAG-ProGuide counts them. */
export function actionLetter(type: ActionType): 'A' | 'Q' | 'E' | 'X' {
  return type === 'answer' ? 'A' : type === 'search' ? 'Q' : type === 'extract' ? 'E' : 'X';
}

/** A node as stored in trees.jsonl. */
export interface SavedNode {
  id: number;
  parent: number;
  depth: number;
  step?: Step;
  N: number;
  Q: number;
  value: number;
  prior: number;
  terminal: boolean;
  score?: number;
  answered: boolean;
  mustAnswer: boolean;
  rank?: number;
}

/**
 * One line of `trees.jsonl`: a question's annotated tree with how it was built. Prompts and timings
 * are
 * left out, so the same seed gives byte-identical files; `stateAt` rebuilds any node's state.
 */
export interface SavedTree {
  /** The question id. */
  id: string;
  question: Question;
  method: string;
  agent: string;
  policy: string;
  seed: number;
  /** Search iterations run (simulations, or steps for ranking). */
  iterations: number;
  nodes: SavedNode[];
  /** RAG-Gym ranking keeps only trajectories whose answer is correct. */
  kept: boolean;
  meta?: Record<string, unknown>;
}

export function saveTree(tree: Tree, info: Omit<SavedTree, 'nodes' | 'question'> & { question: Question }): SavedTree {
  const nodes = tree.nodes.map((n): SavedNode => {
    const s: SavedNode = { id: n.id, parent: n.parent, depth: n.depth, N: n.N, Q: q(n), value: n.value, prior: n.prior, terminal: n.terminal, answered: n.answered, mustAnswer: n.state.mustAnswer };
    if (n.step) s.step = stripPrompt(n.step);
    if (n.score !== undefined) s.score = n.score;
    if (n.rank !== undefined) s.rank = n.rank;
    return s;
  });
  return { ...info, nodes };
}

/**
 * Prompts are rebuilt from the state on export (storing them in every node would repeat the history at
 * each depth), and timings are left out so that the same seed gives byte-identical trees.
 */
function stripPrompt(step: Step): Step {
  const { prompt: _prompt, retrievalMs: _r, llmMs: _l, ...rest } = step;
  return rest;
}

/** The state at a saved node, rebuilt from the steps on its path (for rendering prompts). */
export function stateAt(tree: SavedTree, nodeId: number): State {
  const steps: Step[] = [];
  let id = nodeId;
  const byId = new Map(tree.nodes.map((n) => [n.id, n]));
  while (id > 0) {
    const n = byId.get(id)!;
    steps.push(n.step!);
    id = n.parent;
  }
  steps.reverse();
  const node = byId.get(nodeId)!;
  const last = steps[steps.length - 1];
  return { question: tree.question, steps, done: last?.action.type === 'answer', mustAnswer: node.mustAnswer, turnsLeft: 0, searchesLeft: 0 };
}

export function sameAction(a: Action, b: Action): boolean {
  if (a.type !== b.type) return false;
  const norm = (s: string) => s.trim().toLowerCase().replace(/\s+/g, ' ');
  if (a.type === 'search' && b.type === 'search') return norm(a.query) === norm(b.query);
  if (a.type === 'answer' && b.type === 'answer') return norm(a.answer) === norm(b.answer);
  if (a.type === 'extract' && b.type === 'extract') return norm(a.evidence) === norm(b.evidence);
  return a.type === 'invalid';
}

/** The trees of an annotation folder (its trees.jsonl). */
export async function readTrees(dir: string): Promise<SavedTree[]> {
  const path = join(dir, 'trees.jsonl');
  if (!existsSync(path)) throw new InputError(`${path} not found`, 'give the --out folder of `ragtrail annotate` as --data');
  return readJsonlValues<SavedTree>(path);
}
