/**
 * ARENA's supervised fine-tuning baselines (appendix E), as TRL conversational SFT data:
 *   direct     the question with every reference (the dataset's own paragraphs, in their order) → the
 *              gold answer alone (protocol `arena-direct`);
 *   reasoning  the ARENA prompt → `<relevance>[gold reference numbers]</relevance><analysis>…</analysis>
 *              <answer>gold</answer>`, the gold numbers being the references that hold the supporting
 *              facts. The analysis is written by a model given the question, the references, the gold
 *              numbers and the answer (the paper's reasoning prompt, Table 7, in this project's words), or,
 *              without one, put together from the gold references' own sentences (a template, offline).
 * A question without its own paragraphs, or (reasoning) without supporting facts among them, gives no
 * example and is counted.
 */
import { arena, arenaDirect, numberedReferences } from '../agents/arena.js';
import { normalizeAnswer, proseSentences } from '../core/text.js';
import type { Message } from '../core/trajectory.js';
import type { Question } from '../core/types.js';
import type { State } from '../env/env.js';
import type { LLM } from '../llm/types.js';
import { goldReferenceNumbers } from '../rewards/arena.js';

/** Which of ARENA's two SFT baselines. */
export type ArenaSftMode = 'direct' | 'reasoning';

/** What {@link arenaSftExamples} made, and the questions it could not use, with the reason. */
export interface ArenaSftData {
  examples: { messages: Message[] }[];
  skipped: { id: string; why: string }[];
}

const start = (question: Question): State => ({ question, steps: [], done: false, mustAnswer: false, turnsLeft: 2, searchesLeft: 0 });

/** The offline analysis: each gold reference's sentence that names the answer (else its first), then the answer. */
export function templateAnalysis(question: Question, gold: readonly number[], answer: string): string {
  const refs = question.context ?? [];
  const want = normalizeAnswer(answer);
  const parts = gold.map((n) => {
    const sentences = proseSentences(refs[n - 1]?.text ?? '');
    const pick = sentences.find((x) => want && ` ${normalizeAnswer(x)} `.includes(` ${want} `)) ?? sentences[0] ?? '';
    return `Reference ${n} says: ${pick}`;
  });
  return `${parts.join(' ')} So the answer is ${answer}.`;
}

/** SFT examples of one mode for the questions (see the module comment); `traceWriter` writes the reasoning mode's analyses. */
export async function arenaSftExamples(questions: readonly Question[], mode: ArenaSftMode, opts: { traceWriter?: LLM } = {}): Promise<ArenaSftData> {
  const out: ArenaSftData = { examples: [], skipped: [] };
  for (const q of questions) {
    const answer = q.answers[0];
    if (!q.context?.length || answer === undefined) {
      out.skipped.push({ id: q.id, why: 'no paragraphs of its own (ARENA trains on the dataset\'s contexts)' });
      continue;
    }
    const state = start(q);
    if (mode === 'direct') {
      out.examples.push({ messages: [...arenaDirect.render(state), { role: 'assistant', content: answer }] });
      continue;
    }
    const gold = goldReferenceNumbers(q.context.map((p) => p.id), q.supporting ?? []);
    if (!gold.length) {
      out.skipped.push({ id: q.id, why: 'no supporting paragraph among its references' });
      continue;
    }
    const analysis = opts.traceWriter
      ? ((await opts.traceWriter.generate({
          messages: [{ role: 'user', content: `Write the reasoning that leads to the given answer, using only the references with the given numbers, and say which reference each step rests on.\n\nQuestion: ${q.question}\nReferences:\n${numberedReferences(state)}\nRelevant reference numbers: ${JSON.stringify(gold)}\nAnswer: ${answer}\n\nReasoning:` }],
          temperature: 0,
          maxTokens: 256,
        })).choices[0]?.text ?? '').trim() || templateAnalysis(q, gold, answer)
      : templateAnalysis(q, gold, answer);
    out.examples.push({ messages: [...arena.render(state), { role: 'assistant', content: `<relevance>${JSON.stringify(gold)}</relevance>\n<analysis>${analysis}</analysis>\n<answer>${answer}</answer>` }] });
  }
  return out;
}
