/**
 * LLM-as-judge (as ARENA's evaluation, App. D.3): does the prediction mean the same as any gold answer?
 * The judge model replies YES or NO at temperature 0; with the response cache, each verdict is paid for
 * once. A reply that is neither counts as NO and is reported.
 */
import type { LLM } from '../llm/types.js';

/** A judge's decision on one answer, with the model's raw reply. */
export interface Verdict {
  correct: boolean;
  /** The reply had no YES/NO. */
  malformed: boolean;
  raw: string;
}

export function judgePrompt(question: string, gold: readonly string[], prediction: string): string {
  return `You check answers to questions.\n\nQuestion: ${question}\nReference answer(s): ${gold.map((g) => JSON.stringify(g)).join(', ')}\nCandidate answer: ${JSON.stringify(prediction)}\n\nDoes the candidate answer mean the same thing as one of the reference answers? Minor differences of wording, spelling or format do not matter; extra or missing facts that change the answer do. Reply with one word: YES or NO.`;
}

export function parseVerdict(text: string): { correct: boolean; malformed: boolean } {
  const m = /\b(yes|no)\b/i.exec(text);
  return m ? { correct: m[1]!.toLowerCase() === 'yes', malformed: false } : { correct: false, malformed: true };
}

/**
 * LLM-as-judge (ARENA App. D.3): asks the model whether a prediction means the same as a gold answer
 * (YES/NO at temperature 0). `malformed` counts replies with neither word; those count as NO.
 */
export class Judge {
  malformed = 0;

  constructor(readonly llm: LLM) {}

  /** One model call (none for an empty prediction, which is wrong); the first "yes" or "no" in the reply decides. */
  async verdict(question: string, gold: readonly string[], prediction: string): Promise<Verdict> {
    if (prediction.trim() === '') return { correct: false, malformed: false, raw: '' };
    const res = await this.llm.generate({ messages: [{ role: 'user', content: judgePrompt(question, gold, prediction) }], temperature: 0, maxTokens: 4 });
    const raw = res.choices[0]?.text ?? '';
    const v = parseVerdict(raw);
    if (v.malformed) this.malformed++;
    return { ...v, raw };
  }
}
