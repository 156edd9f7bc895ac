/**
 * An LLM judge as a PRM: the candidates are ranked by a judge model with RAG-Gym's criteria
 * (the ranking prompt of process/rank.ts) and scored 1 / (1 + rank). Deterministic (temperature 0)
 * and cached by the LLM machinery.
 */
import type { State } from '../env/env.js';
import type { LLM } from '../llm/types.js';
import { parseRanking, rankingPrompt } from '../process/rank.js';
import type { Candidate, PRM } from './types.js';

/**
 * An LLM judge as a PRM: one call ranks all candidates with RAG-Gym's criteria (the prompt of
 * process/rank.ts) at temperature 0. `malformed` counts replies with no usable ranking.
 */
export class JudgePRM implements PRM {
  readonly name: string;
  malformed = 0;

  constructor(private readonly llm: LLM) {
    this.name = `judge(${llm.spec})`;
  }

  /**
   * 1 / (1 + rank) with rank 0 for the best, so scores are 1, 1/2, 1/3, …; candidates the reply leaves
   * out
   * rank after the listed ones in their original order. A single candidate scores 1 without a call.
   */
  async score(state: State, candidates: readonly Candidate[]): Promise<number[]> {
    if (candidates.length <= 1) return candidates.map(() => 1);
    const res = await this.llm.generate({ messages: [{ role: 'user', content: rankingPrompt(state, candidates) }], temperature: 0, maxTokens: 128 });
    const { order, malformed } = parseRanking(res.choices[0]?.text ?? '', candidates.length);
    if (malformed) this.malformed++;
    const scores = new Array<number>(candidates.length).fill(0);
    order.forEach((c, rank) => (scores[c] = 1 / (1 + rank)));
    return scores;
  }
}
