/**
 * ProRAG's PRM preference pairs as the authors' code makes them from their MCTS trees
 * (`prorag/prm/filter.py` at c7a6411, with the reply handling of `AsyncLLMEngine.run_batch` in
 * `prorag/utils/llm.py`; ProRAG §3.2), for `compat=authors` and the parity set `prorag_prm_labels`. It reads
 * the trees in the authors' format (`Node.to_dict`: action, q the SUM of rewards, n, prior, depth, children).
 *
 *   jobs    `traverse_and_collect_jobs`: at a node, the children with n ≥ 1 whose action passes
 *           `format_check` are the candidates (numbered from 0, q normalised to q / n); two or more make a
 *           job. The walk descends into those candidates with n ≥ 3, the history growing by their action.
 *   format  `format_check`: the action's ASCII-letter tags, in order, are exactly
 *           <step></step><subquery></subquery><retrieval></retrieval>, <step></step><subanswer></subanswer>
 *           or <step></step><answer></answer>.
 *   label   the judge's reply read with Python's json.loads, else the text from its first "{" to its last
 *           "}"; `parse_result`: when has_valid_pair is exactly true and positive_id and negative_id each
 *           equal (Python's ==: 1.0 and true equal 1) a candidate's id, the pair (chosen reward 1, rejected
 *           0) — the same candidate on both sides included. Anything else, or a reply that is not an
 *           object, gives no pair.
 *
 * ragtrail's own pair step (sibling-judge.ts) differs on purpose: it reads its own trees, asks with its own
 * prompt, accepts "true" and numeric strings as ids, and calls a pair of one candidate with itself
 * malformed (counted and logged) rather than a pair.
 */
import { PyError, pyEquals, pyJsonLoads, type PyValue, pyToJs } from '../core/pyjson.js';

/** A node of the authors' search tree as `Node.to_dict` writes it (fields may be missing in a hand-made tree). */
export interface ProragTreeDict {
  action?: unknown;
  q?: unknown;
  n?: unknown;
  children?: ProragTreeDict[] | null;
  [key: string]: unknown;
}

/** One candidate step of a job: its number, its action text, q / n and n. */
export interface ProragCandidate {
  id: number;
  action: string;
  q: number;
  n: number;
}

/** One set of sibling steps for the judge, as `traverse_and_collect_jobs` makes it. */
export interface ProragJob {
  question: string;
  history: string;
  candidates: ProragCandidate[];
}

/** One side of a pair: the step and its search statistics. */
export interface ProragPairSide {
  new_step: string;
  mcts_stats: { q: number; n: number };
}

/** A preference pair as `parse_result` returns it (and run_batch writes it). */
export interface ProragPair {
  type: 'gpt_selection';
  input: { question: string; history: string };
  chosen: ProragPairSide;
  rejected: ProragPairSide;
  /** `gpt_reason` is the reply's "reason", whatever JSON value it is (null when missing). */
  label: { gpt_reason: unknown; chosen_reward: 1; rejected_reward: 0 };
}

/** `normalize_mcts_q(q, n)`: q / n when n > 0, else 0. */
export function proragAuthorsNormalizeQ(q: number, n: number): number {
  return n > 0 ? q / n : 0;
}

function pyTypeName(v: unknown): string {
  if (v === null || v === undefined) return 'NoneType';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (Array.isArray(v)) return 'list';
  return typeof v === 'object' ? 'dict' : typeof v;
}

const FORMATS = [
  ['<step>', '</step>', '<subquery>', '</subquery>', '<retrieval>', '</retrieval>'],
  ['<step>', '</step>', '<subanswer>', '</subanswer>'],
  ['<step>', '</step>', '<answer>', '</answer>'],
].map((tags) => tags.join('\n'));

/** `format_check(action)`: its `</?[a-zA-Z]+>` tags in order are one of the three step forms (see the header). */
export function proragAuthorsFormatCheck(action: unknown): boolean {
  if (typeof action !== 'string') throw new PyError(`expected string or bytes-like object, got '${pyTypeName(action)}'`, 'TypeError');
  return FORMATS.includes((action.match(/<\/?[a-zA-Z]+>/g) ?? []).join('\n'));
}

// dict.get(key, default): the default only when the key is absent (a null value stays None).
const get = (d: ProragTreeDict, key: string, fallback: unknown): unknown => (Object.hasOwn(d, key) ? d[key] : fallback);

function atLeast(n: unknown, bound: number): boolean {
  if (typeof n !== 'number' && typeof n !== 'boolean') throw new PyError(`'>=' not supported between instances of '${pyTypeName(n)}' and 'int'`, 'TypeError');
  return Number(n) >= bound;
}

/**
 * `traverse_and_collect_jobs(node, question, history)`: the jobs of a tree in the authors' walk order (a
 * node's own job, then its candidates' subtrees in order). Throws PyError where Python raises on a
 * malformed tree (a null action or count).
 */
export function proragAuthorsCollectJobs(node: ProragTreeDict, question: string, history = ''): ProragJob[] {
  const children = get(node, 'children', []);
  if (!Array.isArray(children) || children.length === 0) return [];
  const visited = (children as ProragTreeDict[]).filter((c) => atLeast(get(c, 'n', 0), 1) && proragAuthorsFormatCheck(get(c, 'action', '')));
  const jobs: ProragJob[] = [];
  if (visited.length >= 2) {
    jobs.push({
      question,
      history,
      candidates: visited.map((c, id) => {
        const n = get(c, 'n', 0) as number;
        return { id, action: c['action'] as string, q: proragAuthorsNormalizeQ(Number(get(c, 'q', 0)), Number(n)), n };
      }),
    });
  }
  for (const c of visited) if (atLeast(get(c, 'n', 0), 3)) jobs.push(...proragAuthorsCollectJobs(c, question, history + (c['action'] as string)));
  return jobs;
}

/**
 * The judge's reply as `run_batch` reads it (extract_json): Python's json.loads of the whole text, else of
 * the text from the first "{" to the last "}"; undefined where both fail (or the first fails with an error
 * other than a decoding one, which run_batch does not catch there).
 */
export function proragAuthorsReadReply(text: string): PyValue | undefined {
  try {
    return pyJsonLoads(text);
  } catch (e) {
    // RecursionError and the int digit limit are not JSONDecodeError: the item fails outright.
    if (!(e instanceof PyError) || e.pythonType !== 'ValueError' || e.message.startsWith('Exceeds the limit')) return undefined;
  }
  const start = text.indexOf('{');
  if (start < 0) return undefined;
  // rfind("}") + 1: 0 when there is none, so the slice is empty and fails to decode.
  const end = text.lastIndexOf('}') + 1;
  try {
    return pyJsonLoads(text.slice(start, Math.max(start, end)));
  } catch {
    return undefined;
  }
}

const field = (d: Extract<PyValue, { kind: 'dict' }>, key: string): PyValue => {
  const at = d.keys.indexOf(key);
  return at < 0 ? { kind: 'none' } : d.values[at]!;
};

/**
 * The pair the authors' pipeline makes from one job and the judge's reply text (`run_batch` reading the
 * reply, then `parse_result`); null where it writes nothing (see the header).
 */
export function proragAuthorsLabel(job: ProragJob, reply: string): ProragPair | null {
  const parsed = proragAuthorsReadReply(reply);
  // parse_result calls .get on it: anything but a dict raises AttributeError, which run_batch swallows.
  if (parsed?.kind !== 'dict') return null;
  const flag = field(parsed, 'has_valid_pair');
  if (!(flag.kind === 'num' && flag.bool === true && flag.value === 1)) return null;
  const pick = (key: string) => {
    const id = field(parsed, key);
    return job.candidates.find((c) => pyEquals({ kind: 'num', value: c.id }, id));
  };
  const pos = pick('positive_id');
  const neg = pick('negative_id');
  if (!pos || !neg) return null;
  const side = (c: ProragCandidate): ProragPairSide => ({ new_step: c.action, mcts_stats: { q: c.q, n: c.n } });
  return {
    type: 'gpt_selection',
    input: { question: job.question, history: job.history },
    chosen: side(pos),
    rejected: side(neg),
    label: { gpt_reason: pyToJs(field(parsed, 'reason')), chosen_reward: 1, rejected_reward: 0 },
  };
}
