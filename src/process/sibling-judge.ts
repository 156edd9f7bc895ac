/**
 * ProRAG's PRM data (ProRAG §3.2, the step-level preference pairs before eq. 4): sibling steps of an
 * MCTS tree compared by a judge. The search's Q is outcome-oriented — a step can lead to a right answer
 * through flawed logic — so instead of preferring the higher Q outright (`q-gap`, process/mine.ts), a
 * judge looks at the steps that branch from one state and names one better and one worse step, or none.
 *
 * Jobs, as the authors' prorag/prm/filter.py collects them: at each node whose children the search
 * explored — the root, and nodes visited at least `minParentVisits` times (the authors descend into
 * children with N ≥ 3) — the children visited at least `minVisits` times (1) whose step is well formed
 * are the candidates; a node with fewer than 2 is skipped. The judge sees the question, the prior
 * steps, each candidate's step text and its Q and N. Its verdict is a pair (chosen label 1, rejected
 * label 0), no pair (all about as good, or only rewordings), or a reply it could not read — a parse
 * failure is data: the node is skipped, counted and logged with the raw text. A pair whose two steps
 * are the same action is dropped and counted too.
 *
 * Judges:
 *   LlmSiblingJudge  an LLM at temperature 0 (cached like every model call) with this module's prompt;
 *                    JSON reply {has_valid_pair, positive_id, negative_id, reason} as the authors' judge.
 *   QRuleJudge       no model: a fixed rule for the offline gym — among candidates with N ≥ a minimum
 *                    (2), the one with the unique highest Q is chosen and the lowest-Q one rejected; a
 *                    tie for the highest Q (within 0.01) gives no pair. It reads only Q and N, so it is a
 *                    rule standing in for the judge, not a judgement of the steps' logic.
 *   PlanJudge        no model: reads the question's gold plan (its decomposition and supporting passages),
 *                    as a judge given the reference would — the offline stand-in for the LLM judge on
 *                    data that has a plan (the synthetic world; MuSiQue, 2Wiki). Each candidate gets the
 *                    plan's score (agents/gold.ts judgedPlanScores): a search by what it fetched (the
 *                    passage of the hop the question depends on next, another missing one, or nothing
 *                    new), an answer as right only when correct and grounded — a right answer before
 *                    the history holds its evidence is a guess, the judge's "a step can reach a right
 *                    answer by luck". The best-scored candidate is chosen and the worst rejected, unless
 *                    their scores differ by `margin` (0.5) or less.
 */
import { judgedPlanScores } from '../agents/gold.js';
import { type Action, isFormatFailure, type Step } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import type { LLM } from '../llm/types.js';
import type { Pair, PairSide } from './mine.js';
import { actionLetter, type SavedNode, type SavedTree, sameAction, stateAt } from './tree.js';
import { describeProcess } from './values.js';

/** How search-tree pairs are made: the Q gap of siblings (ReasonRAG) or a judge comparing siblings (ProRAG). */
export const PAIR_SOURCES = ['q-gap', 'judge'] as const;
export type PairSource = (typeof PAIR_SOURCES)[number];

/** One sibling step put before the judge, with its Q and N from the search. */
export interface SiblingCandidate {
  /** The candidate's number in the job (what the judge names). */
  id: number;
  node: number;
  action: Action;
  raw: string;
  /** The step as saved in the tree (documents of a search included). */
  step: Step;
  q: number;
  n: number;
}

/** One set of siblings to compare: the node they branch from, its state, and the candidates. */
export interface SiblingJob {
  questionId: string;
  method: string;
  /** The node the candidates branch from, and its depth (the number of prior steps). */
  parent: number;
  depth: number;
  state: State;
  candidates: SiblingCandidate[];
}

/** A judge's answer for one job. */
export type SiblingVerdict =
  | { kind: 'pair'; chosen: number; rejected: number; reason?: string }
  /** No clear pair: the judge declined (has_valid_pair false) or the rule saw a tie. */
  | { kind: 'none'; reason?: string }
  /** The reply could not be read; the node is skipped. */
  | { kind: 'malformed'; raw: string; error: string };

/** Compares the siblings of one job: an LLM or a fixed rule (see the module header). */
export interface SiblingJudge {
  readonly name: string;
  /** The verdict on one job; an unreadable reply is a `malformed` verdict, not an error. */
  compare(job: SiblingJob): Promise<SiblingVerdict>;
}

/** Which children of which nodes become sibling jobs (defaults as the authors' filter). */
export interface SiblingJobOptions {
  /** A child is a candidate when visited at least this often (the authors: 1). */
  minVisits: number;
  /** Children of a non-root node are compared when it was visited at least this often (the authors: 3). */
  minParentVisits: number;
}

export const SIBLING_JOB_DEFAULTS: SiblingJobOptions = { minVisits: 1, minParentVisits: 3 };

/** The sibling sets of a search tree to put before the judge, in node order (ranking trees have none). */
export function siblingJobs(tree: SavedTree, options: Partial<SiblingJobOptions> = {}): SiblingJob[] {
  const opts = { ...SIBLING_JOB_DEFAULTS, ...options };
  if (tree.method === 'rank') return [];
  const children = new Map<number, SavedNode[]>();
  for (const n of tree.nodes) {
    if (n.parent < 0 || !n.step) continue;
    const list = children.get(n.parent) ?? [];
    list.push(n);
    children.set(n.parent, list);
  }
  const jobs: SiblingJob[] = [];
  for (const parent of tree.nodes) {
    if (parent.id !== 0 && parent.N < opts.minParentVisits) continue;
    const kids = (children.get(parent.id) ?? []).filter((c) => c.N >= opts.minVisits && !isFormatFailure(c.step!));
    if (kids.length < 2) continue;
    jobs.push({
      questionId: tree.id,
      method: tree.method,
      parent: parent.id,
      depth: parent.depth,
      state: stateAt(tree, parent.id),
      candidates: kids.map((c, id) => ({ id, node: c.id, action: c.step!.action, raw: c.step!.raw, step: c.step!, q: c.Q, n: c.N })),
    });
  }
  return jobs;
}

// ------------------------------------------------------------------------------- the rule judge

/** Settings of {@link QRuleJudge}. */
export interface QRuleOptions {
  /** Only candidates visited at least this often are compared. */
  minVisits: number;
  /** Highest Qs closer than this are a tie (no pair). */
  tieGap: number;
}

export const Q_RULE_DEFAULTS: QRuleOptions = { minVisits: 2, tieGap: 0.01 };

/**
 * The offline stand-in for the judge: a rule, not a model. Among candidates with N ≥ `minVisits`, the
 * unique highest Q is chosen and the lowest Q rejected (on a tie for the lowest, the later node); a tie
 * for the highest Q, or fewer than two such candidates, gives no pair.
 */
export class QRuleJudge implements SiblingJudge {
  readonly name: string;
  readonly opts: QRuleOptions;

  constructor(options: Partial<QRuleOptions> = {}) {
    this.opts = { ...Q_RULE_DEFAULTS, ...options };
    this.name = `q-rule(N ≥ ${this.opts.minVisits})`;
  }

  async compare(job: SiblingJob): Promise<SiblingVerdict> {
    const eligible = job.candidates.filter((c) => c.n >= this.opts.minVisits).sort((a, b) => b.q - a.q || a.id - b.id);
    if (eligible.length < 2) return { kind: 'none', reason: `fewer than 2 candidates with N ≥ ${this.opts.minVisits}` };
    const [best, second] = eligible as [SiblingCandidate, SiblingCandidate];
    if (best.q - second.q < this.opts.tieGap) return { kind: 'none', reason: `tie for the highest Q (${best.q.toFixed(3)}, ${second.q.toFixed(3)})` };
    const worst = eligible[eligible.length - 1]!;
    return { kind: 'pair', chosen: best.id, rejected: worst.id, reason: `highest Q ${best.q.toFixed(3)} against lowest ${worst.q.toFixed(3)}` };
  }
}

// ------------------------------------------------------------------------------- the plan judge

/** Settings of {@link PlanJudge}. */
export interface PlanJudgeOptions {
  /** Plan scores that differ by this much or less are a tie (no pair). The scores span −2 … 3. */
  margin: number;
}

/** The plan judge's margin: 0.5, chosen on the comparison recipe's development seed 0 (README, the fifth re-test design). */
export const PLAN_JUDGE_DEFAULTS: PlanJudgeOptions = { margin: 0.5 };

/**
 * The offline stand-in for the judge on questions with a gold plan (see the module header): the
 * best-scored sibling by the plan, grounded answers, against the worst; no pair when they are within
 * `margin`. It reads the reference, so its pairs are as good as the plan. A question without a
 * decomposition or supporting passages has only itself for a plan: answers are judged by EM alone and
 * queries by their overlap with the question, a weak judge — give an LLM judge there.
 */
export class PlanJudge implements SiblingJudge {
  readonly name: string;
  readonly opts: PlanJudgeOptions;

  constructor(options: Partial<PlanJudgeOptions> = {}) {
    this.opts = { ...PLAN_JUDGE_DEFAULTS, ...options };
    this.name = `plan(margin ${this.opts.margin}) [non-LLM: reads the gold plan]`;
  }

  async compare(job: SiblingJob): Promise<SiblingVerdict> {
    const scores = judgedPlanScores(job.state, job.candidates.map((c) => c.step));
    const ranked = job.candidates.map((c, i) => ({ c, s: scores[i]! })).sort((a, b) => b.s - a.s || a.c.id - b.c.id);
    const best = ranked[0]!;
    const worst = ranked[ranked.length - 1]!;
    if (best.s - worst.s <= this.opts.margin) return { kind: 'none', reason: `plan scores within ${this.opts.margin} (${best.s.toFixed(2)} … ${worst.s.toFixed(2)})` };
    return { kind: 'pair', chosen: best.c.id, rejected: worst.c.id, reason: `plan score ${best.s.toFixed(2)} against ${worst.s.toFixed(2)}` };
  }
}

// -------------------------------------------------------------------------------- the LLM judge

function describeCandidate(c: SiblingCandidate): string {
  const found = c.action.type === 'search' ? `\n(this search returned: ${(c.step.docs ?? []).map((d) => d.title).join('; ') || 'nothing'})` : '';
  return `ID ${c.id}\nStep: ${c.raw.trim()}${found}\nTree search: Q = ${c.q.toFixed(2)}, N = ${c.n}`;
}

export function siblingPrompt(job: SiblingJob): string {
  return `You are labelling training data for a model that scores the individual steps of a search agent. The agent answers a question by searching a knowledge base one step at a time. A tree search tried several different next steps from the same point; you see the question, the agent's steps so far, and those alternative next steps. Each alternative comes with the tree search's statistics: Q, the average reward (0 to 1) of the answers reached after taking that step, and N, how many times the search went through it.

Question: ${job.state.question.question}

Steps so far:
${describeProcess(job.state)}

Alternative next steps:
${job.candidates.map(describeCandidate).join('\n\n')}

Pick one clearly better step and one clearly worse step, judging the logic of the step itself. A good step is the most sensible and direct move towards the answer given what is already known. A bad step contains a reasoning error, assumes or invents facts that have not been found, asks for something irrelevant, or repeats a search whose results the history already holds. Treat Q and N as evidence, not as the verdict: a step can reach a right answer by luck, and a Q from few visits says little. The two steps must differ in substance, not only in wording. If all the steps are about equally good, or equally bad, or differ only in wording, report that there is no pair rather than forcing one.

Reply with JSON only: {"has_valid_pair": true or false, "positive_id": the ID of the better step, "negative_id": the ID of the worse step, "reason": "one sentence"}`;
}

function asId(v: unknown, count: number): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*\d+\s*$/.test(v) ? Number(v) : NaN;
  return Number.isInteger(n) && n >= 0 && n < count ? n : undefined;
}

/** Reads the judge's JSON reply (code fences and text around it tolerated); never throws. */
export function parseSiblingVerdict(text: string, count: number): SiblingVerdict {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end < start) return { kind: 'malformed', raw: text, error: 'no JSON object in the reply' };
  let obj: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(text.slice(start, end + 1));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { kind: 'malformed', raw: text, error: 'the reply is not a JSON object' };
    obj = parsed as Record<string, unknown>;
  } catch {
    return { kind: 'malformed', raw: text, error: 'the JSON object does not parse' };
  }
  const reason = typeof obj['reason'] === 'string' ? obj['reason'] : undefined;
  const flag = obj['has_valid_pair'];
  const hasPair = flag === true || flag === 'true' ? true : flag === false || flag === 'false' ? false : undefined;
  if (hasPair === undefined) return { kind: 'malformed', raw: text, error: 'has_valid_pair is not true or false' };
  if (!hasPair) return { kind: 'none', ...(reason !== undefined && { reason }) };
  const chosen = asId(obj['positive_id'], count);
  const rejected = asId(obj['negative_id'], count);
  if (chosen === undefined || rejected === undefined) return { kind: 'malformed', raw: text, error: `positive_id and negative_id must be candidate IDs from 0 to ${count - 1}` };
  if (chosen === rejected) return { kind: 'malformed', raw: text, error: 'positive_id and negative_id name the same candidate' };
  return { kind: 'pair', chosen, rejected, ...(reason !== undefined && { reason }) };
}

/** An LLM comparing siblings with `siblingPrompt` at temperature 0. */
export class LlmSiblingJudge implements SiblingJudge {
  readonly name: string;

  constructor(
    private readonly llm: LLM,
    private readonly maxTokens = 256,
  ) {
    this.name = `llm(${llm.spec})`;
  }

  async compare(job: SiblingJob): Promise<SiblingVerdict> {
    const res = await this.llm.generate({ messages: [{ role: 'user', content: siblingPrompt(job) }], temperature: 0, maxTokens: this.maxTokens });
    return parseSiblingVerdict(res.choices[0]?.text ?? '', job.candidates.length);
  }
}

// ----------------------------------------------------------------------------------- labelling

/** One judged node, as judge_log.jsonl records it. */
export interface JudgeRecord {
  questionId: string;
  parent: number;
  depth: number;
  /** The candidates' node ids, Q and N, in the order the judge saw them. */
  candidates: { id: number; node: number; q: number; n: number }[];
  verdict: 'pair' | 'none' | 'malformed' | 'duplicate';
  chosen?: number;
  rejected?: number;
  reason?: string;
  /** Malformed replies: the text, and what was wrong with it. */
  raw?: string;
  error?: string;
}

export interface JudgeCounts {
  judge: string;
  /** Sibling sets put before the judge. */
  nodes: number;
  pairs: number;
  /** No clear pair (declined, or a tie for the rule). */
  declined: number;
  /** Unreadable replies (the node skipped). */
  malformed: number;
  /** Pairs dropped because both sides are the same action. */
  duplicates: number;
}

export interface JudgedPairs {
  pairs: Pair[];
  records: JudgeRecord[];
  counts: JudgeCounts;
}

function side(c: SiblingCandidate, label: number): PairSide {
  return { node: c.node, action: c.action, raw: c.raw, type: actionLetter(c.action.type), q: c.q, n: c.n, value: label };
}

/**
 * Judge-labelled step pairs of search trees (chosen label 1, rejected 0; `gap` = Q(chosen) − Q(rejected),
 * negative where the judge overrules the search), in tree order then node order. `concurrency` judge
 * calls run at once (default 8); the result does not depend on it.
 */
export async function judgePairs(trees: readonly SavedTree[], judge: SiblingJudge, options: Partial<SiblingJobOptions> & { concurrency?: number } = {}): Promise<JudgedPairs> {
  const jobs = trees.flatMap((t) => siblingJobs(t, options));
  const verdicts = new Array<SiblingVerdict>(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      verdicts[i] = await judge.compare(jobs[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency ?? 8) }, worker));
  const pairs: Pair[] = [];
  const records: JudgeRecord[] = [];
  const counts: JudgeCounts = { judge: judge.name, nodes: jobs.length, pairs: 0, declined: 0, malformed: 0, duplicates: 0 };
  jobs.forEach((job, i) => {
    const v = verdicts[i]!;
    const rec: JudgeRecord = { questionId: job.questionId, parent: job.parent, depth: job.depth, candidates: job.candidates.map((c) => ({ id: c.id, node: c.node, q: c.q, n: c.n })), verdict: v.kind };
    if (v.kind === 'malformed') {
      counts.malformed++;
      Object.assign(rec, { raw: v.raw, error: v.error });
    } else if (v.kind === 'none') {
      counts.declined++;
      if (v.reason !== undefined) rec.reason = v.reason;
    } else {
      const c = job.candidates[v.chosen]!;
      const r = job.candidates[v.rejected]!;
      Object.assign(rec, { chosen: c.node, rejected: r.node, ...(v.reason !== undefined && { reason: v.reason }) });
      if (sameAction(c.action, r.action) || c.raw.trim() === r.raw.trim()) {
        counts.duplicates++;
        rec.verdict = 'duplicate';
      } else {
        counts.pairs++;
        pairs.push({
          id: `${job.questionId}:${job.parent}:${c.node}:${r.node}`,
          questionId: job.questionId,
          method: job.method,
          parent: job.parent,
          depth: job.depth,
          chosen: side(c, 1),
          rejected: side(r, 0),
          gap: c.q - r.q,
          judge: { name: judge.name, ...(v.reason !== undefined && { reason: v.reason }) },
        });
      }
    }
    records.push(rec);
  });
  return { pairs, records, counts };
}
