/**
 * ProRAG's PRM-guided rejection-sampling fine-tuning (§3.3) for a served language model: the same
 * selection as the gym's (learn/gym/rft.ts: K episodes per question at temperature T, correct ones
 * kept, each step scored by the PRM in the state it was taken in and kept when sigmoid(PRM) passes
 * the threshold), with the kept (context, step) pairs written as TRL prompt-completion SFT rows —
 * the prompt the model was actually sent, the completion its own text — for `ragtrail_trl.train`.
 */
import type { Policy } from '../agents/policy.js';
import type { Question } from '../core/types.js';
import type { Message } from '../core/trajectory.js';
import type { RagEnv, State } from '../env/env.js';
import { stepSeed, toTrajectory } from '../eval/run.js';
import { RFT_DEFAULTS, type RftConfig, type RftCounts, rftCounts, type RftVerdict, rftKeptSteps } from '../learn/gym/rft.js';
import type { PRM } from '../prm/types.js';
import { sigmoid } from '../rewards/prorag.js';

/** One TRL SFT row (prompt-completion; conversational unless the model was prompted with plain text): only the completion is trained on. */
export interface RftRow {
  prompt: Message[] | string;
  completion: Message[] | string;
  question_id: string;
}

/** The sampling settings of {@link rftRows}: the gym RFT's, minus its SFT fields. */
export type RftSampling = Pick<RftConfig, 'samples' | 'temperature' | 'threshold' | 'correct' | 'f1Threshold' | 'filter' | 'seed'>;

/** Samples, judges and keeps (ProRAG §3.3) with any policy; returns the SFT rows and what happened. */
export async function rftRows(env: RagEnv, policy: Policy, questions: readonly Question[], prm: PRM, config: Partial<RftSampling> = {}): Promise<{ rows: RftRow[]; counts: RftCounts; verdicts: RftVerdict[] }> {
  const cfg = { ...RFT_DEFAULTS, ...config };
  const rows: RftRow[] = [];
  const verdicts: RftVerdict[] = [];
  for (const q of questions) {
    for (let k = 0; k < cfg.samples; k++) {
      const states: State[] = [];
      let state = env.reset(q);
      const t0 = performance.now();
      while (!state.done && state.steps.length < env.config.maxTurns + 2) {
        const [move] = await policy.propose(state, { n: 1, temperature: cfg.temperature, seed: stepSeed(cfg.seed * 1009 + k, q.id, state.steps.length) });
        if (!move) break;
        states.push(state);
        state = (await env.step(state, move)).state;
      }
      const trajectory = toTrajectory(state, policy, performance.now() - t0);
      const m = trajectory.metrics;
      const correct = !!m && (cfg.correct === 'em' ? m.em === 1 : m.f1 >= cfg.f1Threshold);
      const scores: number[] = [];
      if (correct) for (const [i, before] of states.entries()) scores.push(sigmoid((await prm.score(before, [{ action: state.steps[i]!.action, raw: state.steps[i]!.raw }]))[0]!));
      const keptSteps = rftKeptSteps(correct, scores, cfg.threshold, cfg.filter);
      for (const i of keptSteps) {
        const step = state.steps[i]!;
        // The prompt the model was sent (an LLM policy records it), else the protocol's rendering.
        const prompt = step.prompt ?? policy.protocol.render(states[i]!, { forced: states[i]!.mustAnswer });
        rows.push({ prompt, completion: typeof prompt === 'string' ? step.raw : [{ role: 'assistant', content: step.raw }], question_id: q.id });
      }
      verdicts.push({ questionId: q.id, sample: k, correct, scores, keptSteps });
    }
  }
  return { rows, counts: rftCounts(questions.length, verdicts), verdicts };
}
