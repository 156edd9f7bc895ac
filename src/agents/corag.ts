/**
 * CoRAG (Wang et al., 2025, "Chain-of-Retrieval Augmented Generation"; microsoft/LMOps corag), a
 * baseline of LWS's table, in the format of its released model: separate single-turn calls instead of a
 * running transcript — a sub-query call (the chain so far as "Intermediate query i: … / Intermediate
 * answer i: …" lines, or "Nothing yet"; the task; the main query), the search, a sub-answer call over that
 * search's documents (best last; "No relevant information found" when they do not help), and after a
 * fixed number of sub-queries (the path length: CoRAG does not stop early) a final-answer call over the
 * documents and the chain, whose whole reply is the answer. Sub-queries are read as CoRAG reads them:
 * stripped, surrounding quotes and a leading "Intermediate query N:" dropped. Section headers
 * ("## Documents", …) and line formats carry over; the instructions are in this project's words.
 * Differences: the final call reads the documents the sub-queries found (CoRAG's reads the dataset's own
 * retrieval for the main query, top 20); a repeated sub-query is searched again (CoRAG resamples it).
 */
import type { Action, Message, RetrievedDoc, Step } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import type { LLM } from '../llm/types.js';
import { answerDue, invalid, isBlank, type Protocol, type TemplateFill } from './protocol.js';

/** The reply CoRAG's sub-answer prompt asks for when the documents do not help. */
export const CORAG_NO_INFO = 'No relevant information found';
const TASK = 'answer multi-hop questions';

/** A sub-query as CoRAG keeps it: stripped, quotes around it and an "Intermediate query N:" lead dropped. */
export function normalizeSubquery(text: string): string {
  let q = text.trim();
  if (q.length >= 2 && q.startsWith('"') && q.endsWith('"')) q = q.slice(1, -1).trim();
  return q.replace(/^Intermediate query \d+:\s*/, '').trim();
}

const searches = (state: State) => state.steps.filter((s): s is Step & { action: { type: 'search'; query: string } } => s.action.type === 'search');

/** The chain so far, "Intermediate query i: … / Intermediate answer i: …", or "Nothing yet". */
export function coragChain(state: State): string {
  const lines = searches(state).map((s, i) => `Intermediate query ${i + 1}: ${s.action.query}\nIntermediate answer ${i + 1}: ${s.summary ?? CORAG_NO_INFO}`);
  return lines.length ? lines.join('\n') : 'Nothing yet';
}

/** Documents as CoRAG's sub-answer prompt shows them: title, newline, text; the best last. */
const subanswerDocs = (docs: readonly RetrievedDoc[]) => [...docs].reverse().map((d) => `${d.title}\n${d.text}`.trim()).join('\n\n');

/** The final call's documents: every one the sub-queries found, once, the best last, numbered from 0. */
function finalDocs(state: State): string {
  const seen = new Set<string>();
  const docs = searches(state).flatMap((s) => s.docs ?? []).filter((d) => !seen.has(d.passageId) && seen.add(d.passageId));
  return docs.reverse().map((d, i) => `Doc ${i}: ${`${d.title}\n${d.text}`.trim()}`).join('\n\n');
}

const final = answerDue;

export const corag: Protocol = {
  name: 'corag',
  description: 'CoRAG: sub-query → search → sub-answer calls for a fixed path length, then a final-answer call over the chain',
  // CoRAG's default path length (config.py) and its retriever's top 5.
  defaults: { maxTurns: 4, maxSearches: 3, topK: 5, maxTokens: 128 },
  allowed: (state) => (final(state) ? ['answer'] : ['search']),
  /** The sub-answer of each search not yet answered, one call each at temperature 0 (kept as the step's summary). */
  async prepare(state: State, llm: LLM): Promise<void> {
    for (const s of searches(state)) {
      if (s.summary !== undefined) continue;
      const reply = await llm.generate({
        messages: [{ role: 'user', content: `## Documents\n${subanswerDocs(s.docs ?? [])}\n\n## Query\n${s.action.query}\n\nAnswer the query from the documents alone, briefly; add nothing they do not say. If they do not help, reply "${CORAG_NO_INFO}".` }],
        temperature: 0,
        maxTokens: 128,
      });
      s.summary = (reply.choices[0]?.text ?? '').trim() || CORAG_NO_INFO;
    }
  },
  render(state: State): Message[] {
    const q = state.question.question;
    if (final(state)) {
      return [{ role: 'user', content: `## Documents\n${finalDocs(state) || '(none)'}\n\n## Intermediate queries and answers\n${coragChain(state)}\n\n## Task description\n${TASK}\n\n## Main query\n${q}\n\nUsing the documents and the intermediate answers (which may be wrong), answer the main query. Reply with the answer only.` }];
    }
    return [{ role: 'user', content: `## Previous intermediate queries and answers\n${coragChain(state)}\n\n## Task description\n${TASK}\n\n## Main query to answer\n${q}\n\nWrite one simple follow-up question whose answer helps with the main query (rephrase or break it down if the earlier answers did not help). Reply with the question only.` }];
  },
  template: {
    kinds: {
      subquery: { description: 'the sub-query call', fields: { question: { required: true, description: 'the main query' }, chain: { required: true, description: 'the "Intermediate query i / Intermediate answer i" lines so far ("Nothing yet" before the first)' } } },
      final: { description: 'the final-answer call', fields: { question: { required: true, description: 'the main query' }, chain: { required: true, description: 'the intermediate queries and answers' }, documents: { required: true, description: 'the documents the sub-queries found, "Doc 0: title\\ntext", the best last' } } },
    },
    fill(state): TemplateFill {
      const values: Record<string, string> = { question: state.question.question, chain: coragChain(state) };
      if (!final(state)) return { kind: 'subquery', values, continuation: [] };
      return { kind: 'final', values: { ...values, documents: finalDocs(state) || '(none)' }, continuation: [] };
    },
  },
  parse(text: string, state: State): Action {
    if (final(state)) return isBlank(text) ? invalid('empty answer') : { type: 'answer', answer: text.trim() };
    const query = normalizeSubquery(text);
    return isBlank(query) ? invalid('empty sub-query') : { type: 'search', query };
  },
  format: (action) => (action.type === 'search' ? action.query : action.type === 'answer' ? action.answer : ''),
};
