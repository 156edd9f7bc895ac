/**
 * History summarisation of Search-o1 and ReSearch (RAG-Gym): the documents of each past query are
 * turned into a short, grounded answer to that query by a separate, deterministic model call, and
 * the agent then sees query/answer pairs instead of documents. Summaries are stored on the step
 * (they depend only on the question, the query and its documents, so sharing them across branches
 * of a search tree is safe) and, being temperature-0 calls, replay from the response cache.
 */
import type { Step } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import type { LLM } from '../llm/types.js';
import { formatDocs } from './protocol.js';

export function summaryPrompt(question: string, query: string, docsText: string): string {
  return `Here are documents found for a follow-up query.\n\nDocuments:\n${docsText}\n\nThe follow-up query was asked while working on this question: ${question}\nFollow-up query: ${query}\n\nAnswer the follow-up query in one or two sentences, using only what the documents say. If they do not contain the answer, say so plainly rather than guessing. Leave out anything unrelated.`;
}

export async function summarizeSearches(state: State, llm: LLM): Promise<void> {
  const pending = state.steps.filter((s): s is Step & { action: { type: 'search'; query: string } } => s.action.type === 'search' && s.summary === undefined);
  await Promise.all(
    pending.map(async (step) => {
      const result = await llm.generate({
        messages: [{ role: 'user', content: summaryPrompt(state.question.question, step.action.query, formatDocs(step.docs ?? [])) }],
        temperature: 0,
        maxTokens: 160,
      });
      step.summary = (result.choices[0]?.text ?? '').trim() || 'The documents did not answer this.';
    }),
  );
}

/** Query/answer pairs of the searches so far, for the prompt. */
export function summarizedHistory(state: State): string {
  const pairs = state.steps
    .filter((s) => s.action.type === 'search')
    .map((s, i) => `Query ${i + 1}: ${(s.action as { query: string }).query}\nAnswer ${i + 1}: ${s.summary ?? '(not summarised)'}`);
  return pairs.length ? pairs.join('\n\n') : '(nothing searched yet)';
}
