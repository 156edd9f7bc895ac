/**
 * The gym's teacher: a policy over the gym's own candidates (candidates.ts) that knows the gold plan —
 * the warm start's source of demonstrations, standing in for the instruction-tuned or warmed-up model
 * every paper starts from. At each step, with probability `competence`, it takes the best candidate:
 *
 *   answer   the gold answer, once every hop's evidence is retrieved and it is among the candidates
 *            (an answer before that is a guess: a mistake even when it happens to be right)
 *   search   a query whose results hold the next unresolved hop's passage (checked by running it),
 *            the shortest first; with none, the query closest to the hop's sub-question
 *   extract  the evidence holding the last resolved hop's answer
 *
 * otherwise a candidate drawn uniformly — a premature or wrong answer, an off-target or repeated query —
 * the mistakes an LLM agent makes. Its episodes are ones the gym policy could take itself, so SFT on
 * them teaches which candidate to choose; a teacher writing its own queries (the sim policy) takes
 * actions the gym never proposes. Labelled "[non-LLM: reads the gold plan]".
 */
import { docsState, goldPlan, retrieved, searchesSoFar } from '../../agents/gold.js';
import type { Policy, ProposeOptions } from '../../agents/policy.js';
import type { Protocol } from '../../agents/protocol.js';
import { exactMatch, normalizeAnswer, tokenF1 } from '../../core/metrics.js';
import { Rng } from '../../core/rng.js';
import type { Move, State } from '../../env/env.js';
import type { Retriever } from '../../retrieval/types.js';
import { generateCandidates } from './candidates.js';

/** The teacher's name in a recipe (`teacher: gym-teacher`, the base's default). */
export const GYM_TEACHER = 'gym-teacher';

const tokens = (s: string) => normalizeAnswer(s).split(' ').filter(Boolean);

export class CandidateTeacher implements Policy {
  readonly kind = 'oracle';
  readonly name: string;
  private readonly hits = new Map<string, Promise<{ passageId: string; text: string; title: string }[]>>();

  constructor(
    readonly protocol: Protocol,
    private readonly retriever: Retriever,
    private readonly topK: number,
    readonly competence = 0.8,
  ) {
    this.name = `gym teacher(competence=${competence}) [non-LLM: reads the gold plan]`;
  }

  private search(query: string) {
    let h = this.hits.get(query);
    if (!h) this.hits.set(query, (h = this.retriever.search(query, this.topK)));
    return h;
  }

  /** The teacher's score of each candidate's action (higher is better). */
  private async scores(state: State, actions: readonly Move['action'][]): Promise<number[]> {
    const plan = goldPlan(state.question);
    const resolved = plan.map((h) => retrieved(state, h.answer, h.passageId));
    const lastResolved = [...plan].reverse().find((_, i) => resolved[plan.length - 1 - i]);
    const searched = new Set(searchesSoFar(state).map((x) => normalizeAnswer(x)));
    // Every page is in, but the answer is not among the candidates (its page came with a search for
    // something else, so its sentences rank below the spans about that): the page is searched for
    // itself, as an agent would read it, rather than the question searched again and again.
    const unanswerable = !state.mustAnswer && resolved.every(Boolean) && !actions.some((a) => a.type === 'answer' && exactMatch(a.answer, state.question.answers) === 1);
    const next = plan.find((_, i) => !resolved[i]) ?? (unanswerable ? plan[plan.length - 1] : undefined);
    const out: number[] = [];
    for (const a of actions) {
      // Right only once the evidence is in: an option or yes/no named before that is a guess, however lucky.
      if (a.type === 'answer') out.push(exactMatch(a.answer, state.question.answers) === 1 ? (next && !state.mustAnswer ? -10 : 10) : -10);
      else if (a.type === 'extract') out.push(lastResolved?.answer && normalizeAnswer(a.evidence).includes(normalizeAnswer(lastResolved.answer)) ? 2 : a.evidence === 'None' ? 0 : -1);
      else if (a.type === 'search') {
        if (!next) {
          out.push(-5);
          continue;
        }
        // A query already run finds nothing new: never the teacher's choice.
        if (searched.has(normalizeAnswer(a.query))) {
          out.push(-1);
          continue;
        }
        const f1 = tokenF1(tokens(a.query), tokens(next.query)).f1;
        const docs = await this.search(a.query);
        const at = docs.findIndex((d) => d.passageId === next.passageId);
        const finds = at >= 0 || (next.answer !== undefined && docsState(docs, next.answer));
        // Among the queries that find it, the one that ranks it highest (its page searched for itself,
        // not a name that drags it in fifth), then the shortest (the entity alone): one rule throughout.
        out.push(finds ? 5 + 1 / (1 + (at >= 0 ? at : docs.length)) + 0.1 / (1 + tokens(a.query).length) + 0.001 * f1 : f1);
      } else out.push(-10);
    }
    return out;
  }

  async propose(state: State, opts: ProposeOptions = {}): Promise<Move[]> {
    const candidates = generateCandidates(state, this.protocol);
    if (candidates.length === 0) return [];
    const rng = new Rng(`${opts.seed ?? 0}/${state.question.id}/${state.steps.length}/teacher`);
    const moves: Move[] = [];
    const s = await this.scores(state, candidates.map((c) => c.action));
    const best = s.indexOf(Math.max(...s));
    for (let k = 0; k < (opts.n ?? 1); k++) {
      const i = rng.chance(this.competence) ? best : rng.int(candidates.length);
      const action = candidates[i]!.action;
      moves.push({ action, raw: this.protocol.format(action, state) });
    }
    return moves;
  }
}
