/**
 * RAG-Gym's PRM preference pairs as its training code builds them from a folder of rollout files
 * (`reward_training` in rag_gym/algorithms/prm/reward/reward.py @2abbdd48, the same statements as
 * `dpo_training` in .../dpo/dpo.py), for compat=authors and the parity set `raggym_prm_pairs`.
 *
 * The rule: files are read in sorted name order (`*.json`, not the history / cache files; unreadable ones
 * and ones without a "prediction" skipped, as are trajectories whose last action is a search). For the
 * direct agent, the gold answer is preferred over each distinct answer the first step's candidates gave with
 * reward < 0.5, whatever the outcome. Otherwise a trajectory counts only when its prediction's outcome
 * reward (EM or F1 against the gold answer) is > 0.75; then at every step each distinct candidate string with
 * reward > 0.75 is preferred over each distinct one with reward < 0.5 (a step without both gives none), in the
 * state of that step (its search history, with documents from the file's query cache). Rewards in [0.5, 0.75]
 * and NaN are on neither side.
 *
 * ragtrail's own builder (`minePairs` on ranking trees, mine.ts) applies the same thresholds to its trees'
 * 1/(1 + rank) rewards; this one reads the authors' files and reproduces their errors as PyError: a query
 * missing from the cache is KeyError, a missing gold answer AssertionError, more cached steps than states
 * IndexError. The questions are then split as the function splits them: unless the ratio is 0, shuffled by
 * Python's `random.seed(0); random.shuffle(...)`, the first round(n · ratio) (half to even) for evaluation,
 * the rest for training, in the shuffled order.
 */
import { exactMatch, f1Score } from '../core/metrics.js';
import { PyError, pyJsonLoads, type PyValue } from '../core/pyjson.js';
import { PyRandom, pyRoundHalfEven } from '../core/pyrandom.js';

/** One file of a rollout folder: its name and its text. */
export interface RagGymRolloutFile {
  name: string;
  text: string;
}

/** One search step of a pair's state: the query and the documents the query cache holds for it. */
export interface RagGymHistoryStep {
  query: unknown;
  documents: unknown;
}

/** One preference pair: the question, the state's history, and the preferred and rejected assistant texts. */
export interface RagGymPrmPair {
  question: string;
  history: RagGymHistoryStep[];
  chosen: string;
  rejected: string;
}

/** Options of {@link ragGymAuthorsPrmPairs}: the agent type (`direct` has its own rule) and the outcome reward. */
export interface RagGymPairOptions {
  agentType: string;
  /** "em" (EMReward, the script's choice for MedQA) or anything else for F1Reward. */
  outcomeReward: string;
  /** Share of the questions held out for evaluation (`eval_ratio`, default 0.1). */
  evalRatio?: number;
}

/** What {@link ragGymAuthorsPrmPairs} returns: the questions in reading order and the two datasets. */
export interface RagGymPairSets {
  /** `question_keys` before the shuffle: each question once, in the order its first file was read. */
  questions: string[];
  /** `train_dataset`: the pairs of the training questions, question by question in the shuffled order. */
  train: RagGymPrmPair[];
  /** `eval_dataset`: null when no question is held out (the function then evaluates nothing). */
  eval: RagGymPrmPair[] | null;
}

function toJs(v: PyValue): unknown {
  switch (v.kind) {
    case 'num':
      return v.bool ? v.value === 1 : v.value;
    case 'str':
      return v.value;
    case 'none':
      return null;
    case 'list':
      return v.items.map(toJs);
    case 'dict':
      return Object.fromEntries(v.keys.map((k, i) => [k, toJs(v.values[i]!)]));
  }
}

const pyRepr = (x: unknown): string => (typeof x === 'string' ? (x.includes("'") && !x.includes('"') ? `"${x}"` : `'${x.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`) : String(x));

/** `obj[key]` with Python's errors: KeyError for a dict's missing key, IndexError past a list's end. */
function at(obj: unknown, key: string | number): unknown {
  if (Array.isArray(obj) && typeof key === 'number') {
    const i = key < 0 ? obj.length + key : key;
    if (i < 0 || i >= obj.length) throw new PyError('list index out of range', 'IndexError');
    return obj[i];
  }
  if (obj !== null && typeof obj === 'object' && !Array.isArray(obj) && typeof key === 'string') {
    if (!Object.hasOwn(obj, key)) throw new PyError(pyRepr(key), 'KeyError');
    return (obj as Record<string, unknown>)[key];
  }
  throw new PyError(`cannot index ${Array.isArray(obj) ? 'list' : typeof obj} with ${typeof key}`, 'TypeError');
}

const list = (x: unknown): unknown[] => {
  if (!Array.isArray(x)) throw new PyError(`'${typeof x}' object is not iterable`, 'TypeError');
  return x;
};

/** Python's `<` between code points, which `sorted` of file names uses (JavaScript's sort compares UTF-16 units). */
function codePointCompare(a: string, b: string): number {
  const x = Array.from(a, (c) => c.codePointAt(0)!);
  const y = Array.from(b, (c) => c.codePointAt(0)!);
  for (let k = 0; k < Math.min(x.length, y.length); k++) if (x[k] !== y[k]) return x[k]! - y[k]!;
  return x.length - y.length;
}

/** `f"{x}"` for the values a rollout's answers hold. */
const pyStr = (x: unknown): string => (x === null ? 'None' : x === true ? 'True' : x === false ? 'False' : String(x));

/**
 * The training and evaluation pairs `reward_training` builds from a rollout folder (see the module header).
 * Throws PyError where the authors' function raises.
 */
export function ragGymAuthorsPrmPairs(files: readonly RagGymRolloutFile[], opts: RagGymPairOptions): RagGymPairSets {
  const byName = new Map(files.map((f) => [f.name, f.text]));
  const names = files
    .map((f) => f.name)
    .filter((n) => n.endsWith('.json') && !n.includes('history') && !n.includes('qa_cache') && !n.includes('qd_cache'))
    .sort(codePointCompare);
  const questions: string[] = [];
  const pairs = new Map<string, RagGymPrmPair[]>();
  const read = (name: string): unknown => toJs(pyJsonLoads(byName.get(name)!));
  for (const name of names) {
    let item: unknown;
    let qd: unknown = {};
    try {
      item = read(name);
      // `"prediction" not in item`: a dict's keys, a list's items; other values are skipped.
      if (Array.isArray(item) ? !item.includes('prediction') : item === null || typeof item !== 'object' || !Object.hasOwn(item, 'prediction')) continue;
      const qdName = name.replaceAll('.json', '_qd_cache.json');
      if (byName.has(qdName)) qd = read(qdName);
      const qaName = name.replaceAll('.json', '_qa_cache.json');
      if (byName.has(qaName)) read(qaName);
    } catch {
      continue; // the bare except around the reading
    }
    if (at(at(at(at(item, 'history'), -2), 'content'), 'query') !== null) continue;
    const question = at(at(at(at(item, 'history'), 0), 'content'), 'question') as string;
    if (!pairs.has(question)) {
      pairs.set(question, []);
      questions.push(question);
    }
    const out = pairs.get(question)!;
    if (opts.agentType === 'direct') {
      const actions = list(at(at(at(item, 'action_cache'), 0), 'actions'));
      const neg = actions.filter((a) => (at(a, 'reward') as number) < 0.5);
      if (neg.length === 0) continue;
      const answers = [...new Set(neg.map((a) => at(at(a, 'action'), 'answer')))];
      const gold = pyStr(at(item, 'answer'));
      for (const ans of answers) out.push({ question, history: [], chosen: `{\n"predicted_answer": "${gold}"\n}`, rejected: `{\n"predicted_answer": "${pyStr(ans)}"\n}` });
      continue;
    }
    const truth = at(item, 'answer');
    if (truth === null) throw new PyError('', 'AssertionError');
    const prediction = at(item, 'prediction');
    const outcome = prediction === null ? 0 : opts.outcomeReward.toLowerCase() === 'em' ? exactMatch(prediction as string, truth as string) : f1Score(prediction as string, truth as string).f1;
    if (outcome <= 0.75) continue;
    const cache = list(at(item, 'action_cache'));
    for (let i = 0; i < cache.length; i++) {
      const actions = list(at(cache[i], 'actions'));
      const pos = actions.filter((a) => (at(a, 'reward') as number) > 0.75);
      const neg = actions.filter((a) => (at(a, 'reward') as number) < 0.5);
      if (pos.length === 0 || neg.length === 0) continue;
      const history = list(at(at(at(at(item, 'history'), i * 2), 'content'), 'history')).map((h) => {
        const query = at(h, 'query');
        return { query, documents: at(qd, query as string) };
      });
      const chosen = [...new Set(pos.map((a) => at(a, 'action_string') as string))];
      const rejected = [...new Set(neg.map((a) => at(a, 'action_string') as string))];
      for (const c of chosen) for (const r of rejected) out.push({ question, history, chosen: c, rejected: r });
    }
  }
  const ratio = opts.evalRatio ?? 0.1;
  const order = [...questions];
  let evalKeys: string[] = [];
  if (ratio !== 0) {
    new PyRandom(0).shuffle(order);
    evalKeys = order.slice(0, pyRoundHalfEven(order.length * ratio));
  }
  const trainKeys = order.filter((q) => !evalKeys.includes(q));
  return {
    questions,
    train: trainKeys.flatMap((q) => pairs.get(q)!),
    eval: evalKeys.length === 0 ? null : evalKeys.flatMap((q) => pairs.get(q)!),
  };
}
