/**
 * ReasonRAG's labeller on trees in the authors' JSON layout (`ReasonRAGPipeline.tree2log`: nodes keyed
 * `intermediate_node_<id>` with id, parent_id, children_ids, action_name, input_prompt, response,
 * answer / next_query / pred, N, Q, step, reward), in two modes:
 *
 *  - `authors`: `preference_data_generatoin.py` at commit 225e249 exactly — `calculate_mcts_reward_bottom_up`
 *    (leaf F1 · 0.9^step with the labeller's own normalisation, inner node = N-weighted mean of its
 *    rewarded children) then `process_node` (sibling pairs with |Δreward| ≥ 0.01), quirks included;
 *  - `default`: the same two steps as the paper describes them (§2.2.3: values from complete trajectories,
 *    branches without an answer pruned, pairs with identical responses or |Δ| < 0.01 dropped), where the
 *    code's quirks are left out. Each difference is listed in the README's table
 *    "ReasonRAG labeller: ragtrail default vs authors' code" and tested by hand-computed cases.
 */
import { f1KeepingArticles, f1Score } from '../core/metrics.js';
import { InputError } from '../core/errors.js';
import { PyError } from '../core/pyjson.js';
import { pyStrip } from '../core/text.js';
import { nWeightedMean } from './values.js';

export type LabellerMode = 'default' | 'authors';

export interface AuthorsMessage {
  role: string;
  content: string;
}

/** One node of an authors' tree; every field may be missing or null in published or corrupted trees. */
export interface AuthorsNode {
  id?: number;
  parent_id?: number | null;
  children_ids?: number[];
  action_name?: string;
  input_prompt?: AuthorsMessage[];
  response?: string;
  answer?: string | null;
  pred?: string;
  N?: number;
  Q?: number;
  step?: number | null;
  reward?: number | null;
  [field: string]: unknown;
}

export type AuthorsTree = Record<string, AuthorsNode>;

export const nodeKey = (id: unknown): string => `intermediate_node_${String(id)}`;

export interface ValueOptions {
  mode: LabellerMode;
  /** Step decay of a leaf's F1 (the labeller's BETA, 0.9). */
  beta?: number;
}

const isNode = (k: string) => k.includes('intermediate_node_');

/** `obj[key] = value` as an own property even for the key "__proto__" (a tree's keys are the user's text). */
function setOwn<T>(obj: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Python's recursion limit, for the authors' recursive descent (process_node): deeper raises RecursionError. */
const PY_RECURSION_LIMIT = 990;

/**
 * Each node's value after bottom-up re-scoring, keyed as the tree is (in its key order), null where it has
 * none — exactly what `updated[key].get('reward')` reads in the authors' mode.
 */
export function bottomUpValues(tree: AuthorsTree, golds: readonly string[], opts: ValueOptions): Record<string, number | null> {
  return opts.mode === 'authors' ? authorsValues(tree, golds, opts.beta ?? 0.9) : defaultValues(tree, golds, opts.beta ?? 0.9);
}

/**
 * `calculate_mcts_reward_bottom_up`, step by step: a queue of nodes whose listed children have all been
 * processed (so a node listing a missing child, and its ancestors, is never processed and keeps the
 * pipeline's running-mean `reward`); a leaf is rewarded when it has a non-null `answer` and a non-empty
 * `response`; sums run left to right as Python 3.11's `sum` does.
 */
function authorsValues(tree: AuthorsTree, golds: readonly string[], beta: number): Record<string, number | null> {
  const keys = Object.keys(tree).filter(isNode);
  const pending = new Map(keys.map((k) => [k, (tree[k]!.children_ids ?? []).length]));
  const queue = keys.filter((k) => pending.get(k) === 0);
  const rewards = new Map<string, number | null>();
  const out: Record<string, number | null> = {};
  for (const k of Object.keys(tree)) setOwn(out, k, tree[k]?.reward ?? null);
  for (let head = 0; head < queue.length; head++) {
    const k = queue[head]!;
    const node = tree[k]!;
    let reward: number | null = null;
    if (!node.children_ids?.length) {
      if (Object.hasOwn(node, 'answer') && node.response && node.answer !== null && node.answer !== undefined) {
        // node.get('step', 0): a step written as null reaches `**` and raises, as Python does.
        if (node.step === null) throw new PyError("unsupported operand type(s) for ** or pow(): 'float' and 'NoneType'", 'TypeError');
        reward = f1KeepingArticles(String(node.answer), golds) * beta ** (node.step ?? 0);
      }
    } else {
      // Children not yet processed count as having no reward, as `c in rewards` fails for them.
      reward = nWeightedMean(node.children_ids.map(nodeKey).map((c) => ({ value: rewards.get(c), n: tree[c]?.N ?? 0 })));
    }
    rewards.set(k, reward);
    setOwn(out, k, reward);
    if (node.parent_id !== undefined && node.parent_id !== null) {
      const parent = nodeKey(node.parent_id);
      if (pending.has(parent)) {
        const left = pending.get(parent)! - 1;
        pending.set(parent, left);
        if (left === 0) queue.push(parent);
      }
    }
  }
  return out;
}

/** The answer a leaf ends the episode with: `answer`, or `pred` for the forced answer-generation step. */
function leafAnswer(node: AuthorsNode): string | undefined {
  if (typeof node.answer === 'string') return node.answer;
  if (node.action_name === 'answer_generation' && typeof node.pred === 'string') return node.pred;
  return undefined;
}

/**
 * The paper's intent: every node valued from the complete trajectories below it — missing child ids are
 * skipped rather than freezing the node and its ancestors at the pipeline's running mean; forced
 * answer-generation leaves count; F1 is ragtrail's (SQuAD normalisation); a node without `step` is decayed
 * by its depth in the tree.
 */
function defaultValues(tree: AuthorsTree, golds: readonly string[], beta: number): Record<string, number | null> {
  const out = new Map<string, number | null>();
  const visiting = new Set<string>();
  /** Parent links followed up to the root (or to a missing or repeated parent). */
  const depth = (k: string): number => {
    const seen = new Set([k]);
    let d = 0;
    for (let n = tree[k]; n?.parent_id !== undefined && n.parent_id !== null; d++) {
      const p = nodeKey(n.parent_id);
      if (!tree[p] || seen.has(p)) break;
      seen.add(p);
      n = tree[p];
    }
    return d;
  };
  const value = (k: string): number | null => {
    if (out.has(k)) return out.get(k)!;
    // A node listed below itself: no tree, and no value to trust for any node on the loop (issue 45).
    if (visiting.has(k)) throw new InputError(`the tree has a cycle: ${k} is listed among its own descendants' children_ids`, 'each node must be the child of one parent, below the root');
    visiting.add(k);
    const node = tree[k]!;
    const kids = (node.children_ids ?? []).map(nodeKey).filter((c) => tree[c] !== undefined);
    let v: number | null = null;
    if (kids.length === 0) {
      const answer = leafAnswer(node);
      if (answer !== undefined && node.response) v = f1Score(answer, golds).f1 * beta ** (typeof node.step === 'number' ? node.step : depth(k));
    } else v = nWeightedMean(kids.map((c) => ({ value: value(c), n: tree[c]!.N ?? 0 })));
    visiting.delete(k);
    out.set(k, v);
    return v;
  };
  const result: Record<string, number | null> = {};
  for (const k of Object.keys(tree)) setOwn(result, k, isNode(k) ? value(k) : null);
  return result;
}

export type ActionTypeName = 'Query Generation' | 'Evidence Extraction' | 'Answer Generation' | 'Other';

/** One preference pair as `process_node` records it (less its `prompt`, which is "System: …\nUser: …"). */
export interface ReasonRagPair {
  chosen: string;
  rejected: string;
  chosen_action_type: ActionTypeName;
  chosen_content: string;
  rejected_action_type: ActionTypeName;
  rejected_content: string;
  layer: number;
  instruction: string;
  input: string;
}

export interface MineResult {
  pairs: ReasonRagPair[];
  actionTypeCounts: Record<string, number>;
}

// Python's str.strip() whitespace (str.isspace), as in core/text.ts.
const TAGS = ['answer', 'query', 'evidence'] as const;
const TYPE_OF_TAG: Record<(typeof TAGS)[number], ActionTypeName> = { answer: 'Answer Generation', query: 'Query Generation', evidence: 'Evidence Extraction' };

/** `get_content`: the first of the answer / query / evidence tags that is closed, stripped ('' if none). */
function tagged(response: string): { tag?: (typeof TAGS)[number]; content: string } {
  for (const tag of TAGS) {
    const m = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(response);
    if (m) return { tag, content: pyStrip(m[1]!) };
  }
  return { content: '' };
}

/**
 * The action type and content of a response. Authors (`get_action_type`): the type by substring, query
 * before evidence before answer, whatever tag the content came from. Default: the type of the tag the
 * content came from, answer first — as the pipeline itself ends the episode on a closed `<answer>` tag.
 */
export function actionOf(response: string, mode: LabellerMode): { type: ActionTypeName; content: string } {
  const { tag, content } = tagged(response);
  if (mode === 'default') return { type: tag ? TYPE_OF_TAG[tag] : 'Other', content };
  const type: ActionTypeName = response.includes('<query>') ? 'Query Generation' : response.includes('<evidence>') ? 'Evidence Extraction' : response.includes('<answer>') ? 'Answer Generation' : 'Other';
  return { type, content };
}

export interface MineOptions {
  mode: LabellerMode;
  /** Smallest |Δreward| kept (0.01). */
  minGap?: number;
}

const sameText = (a: string, b: string) => a.trim().toLowerCase().replace(/\s+/g, ' ') === b.trim().toLowerCase().replace(/\s+/g, ' ');

/**
 * `process_node(tree, 0, results, counts)`: from the root, every pair of rewarded siblings that carry an
 * `input_prompt`, chosen = higher reward, in the authors' order (depth first, pairs of a node before its
 * children's, siblings in `children_ids` order). Instruction and input are the system and user messages of
 * the last such sibling's prompt; `layer` is the parent's depth. Authors: a node with fewer than two
 * children ends the descent, only rewarded children with a prompt are descended into, and a pair is dropped
 * when the two contents are equal whatever their types. Default: the descent goes through every child, and
 * a pair is dropped when the responses are identical or the actions are the same (type and content).
 */
export function mineReasonRagPairs(tree: AuthorsTree, values: Record<string, number | null>, opts: MineOptions): MineResult {
  const minGap = opts.minGap ?? 0.01;
  const authors = opts.mode === 'authors';
  const pairs: ReasonRagPair[] = [];
  const counts: Record<string, number> = {};
  const reward = (k: string) => values[k] ?? null;
  const seen = new Set<string>();
  const visit = (k: string, layer: number): void => {
    const node = Object.hasOwn(tree, k) ? tree[k] : undefined;
    if (!node || (!authors && seen.has(k))) return;
    // The authors' process_node recurses once per level with no visited set: a child cycle, or a tree
    // deeper than Python's limit, raises RecursionError there; here it is that tree's error record.
    if (authors && layer >= PY_RECURSION_LIMIT) throw new PyError('maximum recursion depth exceeded', 'RecursionError');
    seen.add(k);
    const kids = node.children_ids ?? [];
    if (authors && kids.length < 2) return;
    const valid: { key: string; node: AuthorsNode }[] = [];
    let instruction = '';
    let input = '';
    for (const id of kids) {
      const ck = nodeKey(id);
      const child = tree[ck];
      // Python: `if child_node and "reward" in child_node and ... and "input_prompt" in child_node`.
      if (!child || Object.keys(child).length === 0 || reward(ck) === null || !Array.isArray(child.input_prompt) || child.input_prompt.length < 2) continue;
      valid.push({ key: ck, node: child });
      instruction = String(child.input_prompt[0]!.content);
      input = String(child.input_prompt[1]!.content);
    }
    for (let i = 0; i < valid.length; i++) {
      for (let j = i + 1; j < valid.length; j++) {
        const a = valid[i]!;
        const b = valid[j]!;
        const ra = reward(a.key)!;
        const rb = reward(b.key)!;
        if (Math.abs(ra - rb) < minGap) continue;
        const [c, r] = ra > rb ? [a, b] : [b, a];
        // child_node["response"]: a paired node without one raises KeyError in the authors' code.
        if (authors) for (const x of [c, r]) if (!Object.hasOwn(x.node, 'response')) throw new PyError("'response'", 'KeyError');
        const cr = c.node.response ?? '';
        const rr = r.node.response ?? '';
        const ca = actionOf(cr, opts.mode);
        const ra2 = actionOf(rr, opts.mode);
        if (ca.type === 'Other') continue;
        if (authors ? ca.content === ra2.content : cr.trim() === rr.trim() || (ca.type === ra2.type && sameText(ca.content, ra2.content))) continue;
        counts[ca.type] = (counts[ca.type] ?? 0) + 1;
        pairs.push({ chosen: cr, rejected: rr, chosen_action_type: ca.type, chosen_content: ca.content, rejected_action_type: ra2.type, rejected_content: ra2.content, layer, instruction, input });
      }
    }
    if (authors) for (const v of valid) visit(nodeKey(v.node.id), layer + 1);
    else for (const id of kids) visit(nodeKey(id), layer + 1);
  };
  visit(nodeKey(0), 0);
  return { pairs, actionTypeCounts: counts };
}
