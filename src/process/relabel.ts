/**
 * `ragtrail annotate relabel`: re-label trees in ReasonRAG's JSON layout (lines `{id, question,
 * golden_answers, tree}`, as the authors' pipeline logs them and as RAG-ProGuide-style releases hold
 * them) with the bottom-up values and pair mining of reasonrag-tree.ts, and write:
 *   values.jsonl          {id, node_rewards: {node_key: value | null}}
 *   pairs.jsonl           {id, pairs: [{chosen, rejected, chosen_action_type, chosen_content, rejected_action_type,
 *                          rejected_content, layer, instruction, input}]} — one line per tree
 *   trl_preference.jsonl  {prompt: [system, user], chosen: [assistant], rejected: [assistant]} per pair
 *   trl_sft.jsonl         {messages: [...input_prompt, assistant]} per step of the best path whose value ≥ the threshold
 *   trl_stepwise.jsonl    {prompt, completions, labels} per root-to-answer path of valued nodes (label = value ≥ threshold)
 *   stats.json            trees, pairs, action-type counts, the settings
 * (ragtrail's prm_pairs.jsonl needs parsed actions and states, which these trees do not carry.)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorRecordText, InputError, RecordError, recordId, type SourceLocation } from '../core/errors.js';
import { InterruptedError } from '../core/interrupt.js';
import { invalidUtf8Error, type LocatedValue, readJsonlEach, readLines, writeJsonl } from '../core/io.js';
import { PyError, pyJsonLoads, pyToJs } from '../core/pyjson.js';
import type { Message } from '../core/trajectory.js';
import { type AuthorsNode, type AuthorsTree, bottomUpValues, type LabellerMode, mineReasonRagPairs, nodeKey, type ReasonRagPair } from './reasonrag-tree.js';

export interface RelabelOptions {
  mode: LabellerMode;
  /** Leaf decay per step (0.9). */
  beta: number;
  /** Smallest |Δvalue| of a pair (0.01). */
  minGap: number;
  /** SFT steps and stepwise labels: value at or above this is good (0.5). */
  labelThreshold: number;
}

export const RELABEL_FILES = ['values.jsonl', 'pairs.jsonl', 'trl_preference.jsonl', 'trl_sft.jsonl', 'trl_stepwise.jsonl', 'stats.json'] as const;

export interface RelabelStats {
  mode: LabellerMode;
  beta: number;
  minGap: number;
  labelThreshold: number;
  trees: number;
  /** Lines written as error records {id, error} instead of values and pairs. */
  errors: number;
  treesWithPairs: number;
  nodes: number;
  valuedNodes: number;
  pairs: number;
  actionTypeCounts: Record<string, number>;
}

export interface TreeLine {
  id: string;
  question: string;
  golden_answers: string[];
  tree: AuthorsTree;
}

const HINT = 'each line must be {id, question, golden_answers, tree} with the tree in ReasonRAG\'s layout (intermediate_node_<id> → node)';

/**
 * Checks the fields the labeller reads; anything else in a node is kept as data. `authors`: only the line's
 * own shape (id, golden_answers, tree of objects) is checked, since the authors' code takes any JSON in a
 * node and either values it or raises (which the caller writes as that tree's error record).
 */
export function parseTreeLine(value: unknown, loc: SourceLocation, authors = false): TreeLine {
  const bad = (field: string, problem: string): never => {
    throw new RecordError(loc, field, problem, HINT);
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) bad('(line)', 'is not a JSON object');
  const v = value as Record<string, unknown>;
  if (typeof v['id'] !== 'string' && typeof v['id'] !== 'number') bad('id', 'is missing or not a string');
  if (typeof v['question'] !== 'string') bad('question', 'is missing or not a string');
  const golds = v['golden_answers'];
  if (!Array.isArray(golds) || golds.length === 0 || golds.some((g) => typeof g !== 'string')) bad('golden_answers', 'must be a non-empty list of strings');
  const tree = v['tree'];
  if (typeof tree !== 'object' || tree === null || Array.isArray(tree)) bad('tree', 'is missing or not an object');
  for (const [key, node] of Object.entries(tree as Record<string, unknown>)) {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) {
      if (!authors || key.includes('intermediate_node_')) bad(`tree.${key}`, 'is not an object');
      continue;
    }
    if (authors) continue;
    const n = node as Record<string, unknown>;
    const kids = n['children_ids'];
    if (kids !== undefined && (!Array.isArray(kids) || kids.some((k) => !Number.isInteger(k)))) bad(`tree.${key}.children_ids`, 'must be a list of integer node ids');
    for (const f of ['N', 'step', 'reward'] as const) if (n[f] !== undefined && n[f] !== null && typeof n[f] !== 'number') bad(`tree.${key}.${f}`, 'must be a number');
    for (const f of ['response', 'answer', 'pred'] as const) if (n[f] !== undefined && n[f] !== null && typeof n[f] !== 'string') bad(`tree.${key}.${f}`, 'must be a string');
    const prompt = n['input_prompt'];
    if (prompt !== undefined && (!Array.isArray(prompt) || prompt.some((m) => typeof m !== 'object' || m === null || typeof (m as Record<string, unknown>)['content'] !== 'string'))) {
      bad(`tree.${key}.input_prompt`, 'must be a list of {role, content} messages');
    }
  }
  return { id: String(v['id']), question: v['question'] as string, golden_answers: golds as string[], tree: tree as AuthorsTree };
}

/**
 * The fields holding node ids: one written `1.0` is a float to the authors' code, and
 * `f"intermediate_node_{1.0}"` names no node, so it is read as the text "1.0" (core/pyjson pyToJs).
 */
const ID_FIELDS = new Set(['id', 'parent_id', 'children_ids']);

/** Lines of a JSON Lines file read with Python's json.loads (authors' mode), bad lines as their error. */
async function* readPythonJsonl(file: string): AsyncGenerator<LocatedValue | { error: Error; loc: SourceLocation }> {
  for await (const { text, line, invalidUtf8 } of readLines(file)) {
    const loc = { file, line };
    if (invalidUtf8) yield { error: invalidUtf8Error(file, line), loc };
    else if (text.trim() !== '') {
      try {
        yield { value: pyToJs(pyJsonLoads(text), ID_FIELDS), loc };
      } catch (e) {
        if (!(e instanceof PyError)) throw e;
        yield { error: new InputError(`${file}:${line}: invalid JSON (${e.pythonType}: ${e.message})`, 'fix or remove that line'), loc };
      }
    }
  }
}

const childrenOf = (tree: AuthorsTree, node: AuthorsNode): string[] =>
  (Array.isArray(node.children_ids) ? node.children_ids : []).map(nodeKey).filter((k) => Object.hasOwn(tree, k) && typeof tree[k] === 'object' && tree[k] !== null);

const isMessages = (m: unknown): m is Message[] =>
  Array.isArray(m) && m.every((x) => typeof x === 'object' && x !== null && typeof (x as Record<string, unknown>)['role'] === 'string' && typeof (x as Record<string, unknown>)['content'] === 'string');

/** From the root, the valued child of highest value with a prompt and a response, at each level (first on ties). */
function bestPath(tree: AuthorsTree, values: Record<string, number | null>): string[] {
  const path: string[] = [];
  const seen = new Set<string>();
  for (let k = nodeKey(0); tree[k] && !seen.has(k); ) {
    seen.add(k);
    let best: string | undefined;
    for (const c of childrenOf(tree, tree[k]!)) {
      const v = values[c];
      // The TRL files need real messages: in the authors' mode a node's prompt or response may be anything.
      if (v === null || v === undefined || !isMessages(tree[c]!.input_prompt) || typeof tree[c]!.response !== 'string') continue;
      if (best === undefined || v > values[best]!) best = c;
    }
    if (best === undefined) break;
    path.push(best);
    k = best;
  }
  return path;
}

function sftExamples(tree: AuthorsTree, values: Record<string, number | null>, threshold: number): { messages: Message[] }[] {
  return bestPath(tree, values)
    .filter((k) => values[k]! >= threshold)
    .map((k) => ({ messages: [...(tree[k]!.input_prompt as Message[]), { role: 'assistant' as const, content: tree[k]!.response! }] }));
}

/** Every root-to-leaf path of valued nodes ending at a valued leaf (an answer), labelled by value ≥ threshold. */
function stepwiseExamples(line: TreeLine, values: Record<string, number | null>, threshold: number): { prompt: string; completions: string[]; labels: boolean[] }[] {
  const out: { prompt: string; completions: string[]; labels: boolean[] }[] = [];
  const walk = (k: string, path: string[], seen: Set<string>) => {
    const kids = childrenOf(line.tree, line.tree[k]!).filter((c) => !seen.has(c));
    if (kids.length === 0) {
      if (path.length > 0 && values[k] !== null) out.push({ prompt: line.question, completions: path.map((p) => (typeof line.tree[p]!.response === 'string' ? line.tree[p]!.response! : '')), labels: path.map((p) => values[p]! >= threshold) });
      return;
    }
    for (const c of kids) if (values[c] !== null && values[c] !== undefined) walk(c, [...path, c], new Set([...seen, c]));
  };
  if (line.tree[nodeKey(0)]) walk(nodeKey(0), [], new Set([nodeKey(0)]));
  return out;
}

const preference = (p: ReasonRagPair) => ({
  prompt: [{ role: 'system', content: p.instruction }, { role: 'user', content: p.input }],
  chosen: [{ role: 'assistant', content: p.chosen }],
  rejected: [{ role: 'assistant', content: p.rejected }],
});

/** Re-labels every tree of `file` and writes the files of RELABEL_FILES into `outDir`. */
export async function relabel(file: string, outDir: string, opts: RelabelOptions): Promise<RelabelStats> {
  const values: unknown[] = [];
  const pairs: unknown[] = [];
  const prefs: unknown[] = [];
  const sft: unknown[] = [];
  const stepwise: unknown[] = [];
  const stats: RelabelStats = { mode: opts.mode, beta: opts.beta, minGap: opts.minGap, labelThreshold: opts.labelThreshold, trees: 0, errors: 0, treesWithPairs: 0, nodes: 0, valuedNodes: 0, pairs: 0, actionTypeCounts: {} };
  const authors = opts.mode === 'authors';
  for await (const read of authors ? readPythonJsonl(file) : readJsonlEach(file)) {
    // One tree that cannot be valued (a bad line, a cycle, an input the authors' code raises on) is an
    // error record {id, error} in values.jsonl and pairs.jsonl; the other trees go on (issue 45).
    let line: TreeLine;
    let v: Record<string, number | null>;
    let mined: ReturnType<typeof mineReasonRagPairs>;
    let sftLines: ReturnType<typeof sftExamples>;
    let stepLines: ReturnType<typeof stepwiseExamples>;
    try {
      if ('error' in read) throw read.error;
      line = parseTreeLine(read.value, read.loc, authors);
      v = bottomUpValues(line.tree, line.golden_answers, { mode: opts.mode, beta: opts.beta });
      mined = mineReasonRagPairs(line.tree, v, { mode: opts.mode, minGap: opts.minGap });
      sftLines = sftExamples(line.tree, v, opts.labelThreshold);
      stepLines = stepwiseExamples(line, v, opts.labelThreshold);
    } catch (e) {
      if (e instanceof InterruptedError) throw e;
      const record = { id: 'value' in read ? recordId(read.value) : null, error: errorRecordText(e) };
      values.push(record);
      pairs.push(record);
      stats.errors++;
      continue;
    }
    values.push({ id: line.id, node_rewards: v });
    pairs.push({ id: line.id, pairs: mined.pairs });
    prefs.push(...mined.pairs.map(preference));
    sft.push(...sftLines);
    stepwise.push(...stepLines);
    stats.trees++;
    stats.nodes += Object.keys(v).length;
    stats.valuedNodes += Object.values(v).filter((x) => x !== null).length;
    stats.pairs += mined.pairs.length;
    if (mined.pairs.length > 0) stats.treesWithPairs++;
    for (const [t, n] of Object.entries(mined.actionTypeCounts)) stats.actionTypeCounts[t] = (stats.actionTypeCounts[t] ?? 0) + n;
  }
  mkdirSync(outDir, { recursive: true });
  await writeJsonl(join(outDir, 'values.jsonl'), values);
  await writeJsonl(join(outDir, 'pairs.jsonl'), pairs);
  await writeJsonl(join(outDir, 'trl_preference.jsonl'), prefs);
  await writeJsonl(join(outDir, 'trl_sft.jsonl'), sft);
  await writeJsonl(join(outDir, 'trl_stepwise.jsonl'), stepwise);
  writeFileSync(join(outDir, 'stats.json'), JSON.stringify(stats, null, 2) + '\n');
  return stats;
}
