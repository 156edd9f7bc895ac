/**
 * Training pairs for an outcome reward model (RAG-Gym's ORM baseline, §4): episodes of the same question
 * from several runs (samples at a temperature, other seeds), each final answer in the state it was given
 * in; a right episode's answer (EM 1) is preferred to a wrong one's (EM 0). The pairs are ordinary
 * `prm_pairs.jsonl` records whose rejected step carries its own state (`rejectedState`), so the PRM head
 * trains on them unchanged (`ragtrail prm train`) and scores whole episodes at inference
 * (`--select orm`, eval/run.ts runOrmEpisode).
 */
import { Rng } from '../core/rng.js';
import type { Step, Trajectory } from '../core/trajectory.js';
import type { PrmPairRecord } from './trained.js';

/** What {@link outcomePairs} did: the pairs and the counts of the questions it could and could not pair. */
export interface OutcomePairs {
  pairs: PrmPairRecord[];
  /** Questions with a right and a wrong answered episode. */
  paired: number;
  /** Questions whose answered episodes were all right or all wrong. */
  oneSided: number;
}

/** The final answer of an episode and the steps before it; undefined for an episode that never answered. */
function finalAnswer(t: Trajectory): { before: Step[]; answer: Step } | undefined {
  const at = t.steps.findLastIndex((s) => s.action.type === 'answer');
  return at < 0 ? undefined : { before: t.steps.slice(0, at), answer: t.steps[at]! };
}

/**
 * Pairs each question's right episodes with its wrong ones (at most `perQuestion` pairs, a seeded choice
 * when there are more), episodes grouped by question id across `runs`, in the order of the first run.
 */
export function outcomePairs(runs: readonly (readonly Trajectory[])[], opts: { perQuestion?: number; seed?: number } = {}): OutcomePairs {
  const byQuestion = new Map<string, Trajectory[]>();
  for (const run of runs) for (const t of run) (byQuestion.get(t.id) ?? byQuestion.set(t.id, []).get(t.id)!).push(t);
  const cap = opts.perQuestion ?? 4;
  const pairs: PrmPairRecord[] = [];
  let paired = 0;
  let oneSided = 0;
  for (const [id, ts] of byQuestion) {
    const answered = ts.map((t) => ({ t, final: finalAnswer(t) })).filter((x) => x.final !== undefined);
    const right = answered.filter((x) => x.t.metrics?.em === 1);
    const wrong = answered.filter((x) => x.t.metrics?.em === 0);
    if (!right.length || !wrong.length) {
      if (answered.length) oneSided++;
      continue;
    }
    paired++;
    let combos = right.flatMap((r) => wrong.map((w) => [r, w] as const));
    if (combos.length > cap) combos = new Rng(`orm/${opts.seed ?? 0}/${id}`).sample(combos, cap);
    combos.forEach(([r, w], i) => {
      const a = r.final!;
      const b = w.final!;
      pairs.push({
        id: `${id}:orm:${i}`,
        state: { question: r.t.question, steps: a.before },
        chosen: { type: 'A', action: a.answer.action, raw: a.answer.raw },
        rejected: { type: 'A', action: b.answer.action, raw: b.answer.raw },
        rejectedState: { question: w.t.question, steps: b.before },
      });
    });
  }
  return { pairs, paired, oneSided };
}
