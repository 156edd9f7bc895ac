/**
 * Trainer-ready files from annotated trees, in the formats TRL reads (one JSON object a line):
 *
 * trl_preference.jsonl — conversational preference (DPOTrainer):
 *   {"prompt": [{"role": "user", "content": "…question and prior steps…"}],
 *    "chosen": [{"role": "assistant", "content": "<think>…</think>\n<search> … </search>"}],
 *    "rejected": [{"role": "assistant", "content": "…"}]}
 * trl_sft.jsonl — conversational SFT (SFTTrainer), one example per step of each tree's best path (search
 *   trees: the steps, following the highest Q, whose Q ≥ the threshold; ranking: the executed steps of kept trajectories):
 *   {"messages": [{"role": "user", "content": "…"}, …, {"role": "assistant", "content": "…the step…"}]}
 * trl_stepwise.jsonl — stepwise supervision (PRMTrainer), one example per root-to-answer path:
 *   {"prompt": "…question…", "completions": ["step 1 text", "step 2 text", …], "labels": [true, false, …]}
 *   (a search step's completion includes the documents it returned; label = Q ≥ the threshold)
 * prm_pairs.jsonl — pairwise PRM data for ragtrail's own reward model:
 *   {"id", "state": {"question", "steps": [...]}, "chosen": {"type", "action", "raw"}, "rejected": {…}, "gap"}
 */
import type { Message, Step } from '../core/trajectory.js';
import type { Question } from '../core/types.js';
import type { State } from '../env/env.js';
import { getProtocol } from '../agents/registry.js';
import { formatDocs } from '../agents/protocol.js';
import type { Pair } from './mine.js';
import { type SavedNode, type SavedTree, stateAt } from './tree.js';

/**
 * One line of `trl_preference.jsonl`, TRL's conversational preference format (DPO): the prompt at the
 * branching state and the two sibling steps as assistant turns.
 */
export interface PreferenceExample {
  prompt: Message[];
  chosen: Message[];
  rejected: Message[];
}

/** The preference example of a mined pair: the protocol's prompt at the pair's parent state, the chosen and the rejected step's text. */
export function preferenceExample(tree: SavedTree, pair: Pair): PreferenceExample {
  const protocol = getProtocol(tree.agent);
  const state = stateAt(tree, pair.parent);
  return {
    prompt: protocol.render(state, { forced: state.mustAnswer }),
    chosen: [{ role: 'assistant', content: pair.chosen.raw }],
    rejected: [{ role: 'assistant', content: pair.rejected.raw }],
  };
}

function childrenOf(tree: SavedTree, id: number): SavedNode[] {
  return tree.nodes.filter((n) => n.parent === id);
}

/** From the root, the answered child of highest Q at each level (ranking trees: the executed, best-ranked step). */
export function bestPath(tree: SavedTree): SavedNode[] {
  const path: SavedNode[] = [];
  let node = tree.nodes[0]!;
  for (;;) {
    const next = childrenOf(tree, node.id)
      .filter((c) => c.answered && (tree.method !== 'rank' || c.rank === 0))
      .sort((a, b) => b.Q - a.Q || a.id - b.id)[0];
    if (!next) break;
    path.push(next);
    node = next;
  }
  return path;
}

/**
 * SFT examples (TRL conversational format) along the tree's best path: one per step whose Q is at
 * least
 * `threshold` (default 0.5); ranking trees give every executed step of a kept trajectory and nothing
 * otherwise.
 */
export function sftExamples(tree: SavedTree, threshold = 0.5): { messages: Message[] }[] {
  if (tree.method === 'rank' && !tree.kept) return [];
  const protocol = getProtocol(tree.agent);
  return bestPath(tree)
    .filter((node) => tree.method === 'rank' || node.Q >= threshold)
    .map((node) => {
      const state = stateAt(tree, node.parent);
      return { messages: [...protocol.render(state, { forced: state.mustAnswer }), { role: 'assistant' as const, content: node.step!.raw }] };
    });
}

function stepText(step: Step): string {
  const raw = step.raw.trim();
  return step.action.type === 'search' ? `${raw}\n[documents]\n${formatDocs(step.docs ?? [])}` : raw;
}

/** Every root-to-answer path of answered nodes, steps labelled by Q ≥ threshold. */
export function stepwiseExamples(tree: SavedTree, threshold = 0.5): { prompt: string; completions: string[]; labels: boolean[] }[] {
  const out: { prompt: string; completions: string[]; labels: boolean[] }[] = [];
  const walk = (node: SavedNode, path: SavedNode[]) => {
    const kids = childrenOf(tree, node.id).filter((c) => c.answered);
    if (node.terminal && path.length > 0) {
      out.push({ prompt: tree.question.question, completions: path.map((n) => stepText(n.step!)), labels: path.map((n) => n.Q >= threshold) });
      return;
    }
    for (const k of kids) walk(k, [...path, k]);
  };
  walk(tree.nodes[0]!, []);
  return out;
}

export function prmPair(tree: SavedTree, pair: Pair): Record<string, unknown> {
  const state = stateAt(tree, pair.parent);
  return {
    id: pair.id,
    state: { question: tree.question.question, steps: state.steps },
    chosen: { type: pair.chosen.type, action: pair.chosen.action, raw: pair.chosen.raw },
    rejected: { type: pair.rejected.type, action: pair.rejected.action, raw: pair.rejected.raw },
    gap: pair.gap,
  };
}

/**
 * A whole episode as one conversational SFT example (SFTTrainer with assistant-only loss trains
 * every assistant turn): the protocol's rendering of the episode up to its last step, then that
 * step. Used to teach an LLM a protocol from demonstrations (oracle or successful sim episodes).
 */
export function trajectorySftExample(question: Question, steps: readonly Step[], agent: string): { messages: Message[] } {
  const protocol = getProtocol(agent);
  const last = steps[steps.length - 1];
  if (!last) throw new Error(`trajectory of ${question.id} has no steps`);
  const forced = last.forced === true;
  const state: State = { question, steps: steps.slice(0, -1), done: false, mustAnswer: forced, turnsLeft: 0, searchesLeft: 0 };
  return { messages: [...protocol.render(state, { forced }), { role: 'assistant', content: last.raw }] };
}

/** The no-retrieval example: the protocol's first prompt, then an immediate answer. */
export function directAnswerExample(question: Question, agent: string): { messages: Message[] } {
  const protocol = getProtocol(agent);
  const state: State = { question, steps: [], done: false, mustAnswer: false, turnsLeft: 1, searchesLeft: 0 };
  const answer = question.answers[0] ?? '';
  return { messages: [...protocol.render(state), { role: 'assistant', content: protocol.format({ type: 'answer', answer }, state) }] };
}
