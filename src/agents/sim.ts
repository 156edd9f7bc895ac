/**
 * The simulated agent (non-LLM): an imperfect searcher with a competence parameter c ∈ [0, 1], for
 * the offline gym and CI where no model can run. At each step, with probability c it takes the gold
 * step; otherwise a plausible mistake — an off-target query, a repeated query, or a premature answer
 * drawn from the retrieved text. It only knows what it has retrieved: a later hop's query uses the
 * bridge entity only if the passage naming it was found (else it guesses an entity from the
 * documents), and its answer is right only if the evidence for it was retrieved. Sampling is seeded
 * (seed, question, step, sample); temperature above 1 lowers the effective competence to c / T.
 * With probability (1 − c)/10 a step's text is malformed (its tags dropped), to exercise format handling.
 * Every trajectory it writes is labelled "sim(competence=c) [non-LLM]".
 */
import { Rng } from '../core/rng.js';
import type { Action } from '../core/trajectory.js';
import type { Question } from '../core/types.js';
import type { Move, State } from '../env/env.js';
import { retrievedDocs } from '../env/env.js';
import { arenaReferences } from './arena.js';
import { answerAction, citationsOf, evidenceFrom, goldPlan, retrieved, searchesSoFar } from './gold.js';
import type { Policy, ProposeOptions } from './policy.js';
import type { Protocol } from './protocol.js';

const ENTITY = /\b[A-Z][\p{L}'’-]+(?:\s+(?:of|the|de|von|van|in|and)?\s*[A-Z][\p{L}'’-]+)*/gu;
const NUMBER = /\b\d{1,4}(?:,\d{3})*\b/g;

/** Candidate answer spans of a text, of the same kind as the gold answer (a number, yes/no, or a name). */
function spans(text: string, gold: string): string[] {
  if (/^(yes|no)$/i.test(gold.trim())) return ['yes', 'no'];
  if (/^\d[\d,]*$/.test(gold.trim())) return [...text.matchAll(NUMBER)].map((m) => m[0]);
  return [...text.matchAll(ENTITY)].map((m) => m[0]).filter((s) => s.length > 2);
}

/**
 * Why the sim policy's numbers would say nothing on these questions, or undefined when they can. It
 * follows the gold plan (the decomposition, else the supporting passages' titles); a question with
 * neither (Bamboogle, PopQA, NQ) leaves it one search for the question as asked and a right answer
 * only when some retrieved passage happens to contain the gold string: EM near 0 that measures the
 * data, not the pipeline.
 */
export function simDataWarning(questions: readonly Question[]): string | undefined {
  const bare = questions.filter((q) => goldPlan(q).every((hop) => hop.answer === undefined && hop.passageId === undefined));
  if (bare.length === 0) return undefined;
  return (
    `the sim policy has no gold plan for ${bare.length} of ${questions.length} questions (no decomposition or supporting passages, e.g. ${bare[0]!.id}): ` +
    'it searches each such question as asked and is right only when a retrieved passage contains the gold answer, so expect EM near 0. ' +
    'Use questions with gold plans (the synthetic world, HotpotQA, MuSiQue) for sim, or a model (--llm) for this dataset'
  );
}

/**
 * Simulated imperfect searcher (non-LLM) for offline runs and CI: takes the gold step with probability
 * `competence` (in [0, 1], default 0.7), else a plausible mistake; it answers right only once the
 * evidence was retrieved.
 */
export class SimPolicy implements Policy {
  readonly kind = 'sim';
  readonly name: string;

  constructor(
    readonly protocol: Protocol,
    readonly competence = 0.7,
  ) {
    if (!(competence >= 0 && competence <= 1)) throw new RangeError(`competence must be in [0, 1], got ${competence}`);
    this.name = `sim(competence=${competence}) [non-LLM]`;
  }

  /** A wrong answer taken from what was retrieved (or from the question when nothing was). */
  private guess(state: State, rng: Rng): string {
    const gold = state.question.answers[0] ?? '';
    const text = retrievedDocs(state).map((d) => `${d.title}. ${d.text}`).join(' ') || state.question.question;
    const options = spans(text, gold).filter((s) => s.toLowerCase() !== gold.toLowerCase());
    return options.length ? rng.pick(options) : rng.pick(['unknown', 'none', 'yes']);
  }

  /**
   * One action drawn with `rng`: the gold step with probability `competence`, otherwise an off-target or
   * repeated search or a premature guessed answer.
   */
  act(state: State, rng: Rng, competence: number): Action {
    const p = this.protocol;
    const fixed = state.mustAnswer ? undefined : p.fixedAction?.(state);
    if (fixed) return fixed;
    const allowed = p.allowed(state);
    const plan = goldPlan(state.question);
    const asked = searchesSoFar(state);
    const gold = state.question.answers[0] ?? '';
    const good = rng.chance(competence);
    const cite = () => (p.name === 'arena' ? citationsOf(state.question, arenaReferences(state)).filter(() => good || rng.chance(0.5)) : undefined);

    if (allowed.length === 1 && allowed[0] === 'extract') {
      return { type: 'extract', evidence: good ? evidenceFrom(state, plan[asked.length - 1]?.answer) : evidenceFrom(state) };
    }
    const canSearch = allowed.includes('search');
    const canAnswer = allowed.includes('answer');
    const planDone = asked.length >= plan.length;
    // A good step searches the next hop, or answers once the plan is done; a mistake is an
    // off-target or repeated search, or a premature answer.
    const search = !canAnswer || (canSearch && (good ? !planDone : rng.chance(0.6)));
    if (search && canSearch) return { type: 'search', query: good && !planDone ? this.query(state, rng, true, plan, asked) : this.query(state, rng, false, plan, asked) };
    // Answer: right only when the evidence has been retrieved — every supporting passage when the data
    // names them (HotpotQA, MuSiQue, the synthetic world), else a document stating the gold answer.
    const support = state.question.supporting ?? [];
    const evidence = support.length > 0 ? support.every((id) => retrieved(state, undefined, id)) : retrieved(state, gold);
    const answer = evidence && (good || rng.chance(0.5)) ? gold : this.guess(state, rng);
    return answerAction(answer, cite());
  }

  private query(state: State, rng: Rng, good: boolean, plan: ReturnType<typeof goldPlan>, asked: string[]): string {
    const i = Math.min(asked.length, plan.length - 1);
    const hop = plan[i]!;
    if (good) {
      // The bridge entity of a later hop is known only if the previous hop's answer was retrieved.
      const prev = plan[i - 1];
      if (prev?.answer && !retrieved(state, prev.answer, prev.passageId) && hop.query.includes(prev.answer)) {
        return hop.query.replace(prev.answer, this.guess(state, rng));
      }
      return hop.query;
    }
    const r = rng.next();
    if (r < 0.35 && asked.length > 0) return rng.pick(asked); // repeated query
    // Off-target: a few words of the question around an entity from the documents.
    const words = state.question.question.replace(/[?.,]/g, '').split(/\s+/).filter((w) => w.length > 3);
    const picked = rng.sample(words, Math.min(3, words.length));
    return `${this.guess(state, rng)} ${picked.join(' ')}`.trim();
  }

  /**
   * `opts.n` independent samples, each seeded from (seed, question id, step, sample index) so results
   * are
   * reproducible; a temperature T above 1 (default 1) lowers competence to c / T. With probability
   * (1 − c)/10 a sample's text is malformed and re-parsed by the protocol.
   */
  async propose(state: State, opts: ProposeOptions = {}): Promise<Move[]> {
    const t = opts.temperature ?? 1;
    const competence = t > 1 ? this.competence / t : this.competence;
    const n = opts.n ?? 1;
    return Array.from({ length: n }, (_, k) => {
      const rng = new Rng(`${opts.seed ?? 0}/${state.question.id}/${state.steps.length}/${k}`);
      const action = this.act(state, rng, competence);
      const raw = this.protocol.format(action, state);
      // Now and then the text itself is malformed (tags dropped), as a real model's sometimes is:
      // the protocol's parser decides what is left of it.
      if (rng.chance((1 - competence) * 0.1)) {
        const broken = raw.replace(/<\/?[a-z_]+>/g, '').replace(/\b(?:Action|Answer)\s*:/g, '').replace(/[{}]/g, '');
        return { action: this.protocol.parse(broken, state), raw: broken };
      }
      return { action, raw };
    });
  }
}
