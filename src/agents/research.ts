/**
 * RAG-Gym's ReSearch agent: over a summarised history (query/answer pairs), reason to a candidate
 * answer, list the claims of that reasoning that the history does not support, and emit JSON
 * {"predicted_answer": …, "generated_query": … | "None"}. A query means search (the first
 * unsupported claim, as an atomic query); "None" means answer. Answer-driven query formulation.
 */
import type { Action, Message } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import { invalid, isBlank, type Protocol, type RenderOptions, thoughtFor } from './protocol.js';
import { summarizedHistory, summarizeSearches } from './summarize.js';

// RAG-Gym's ReSearch template (rag_gym/agents/research.py `research_user_template`; paper §4.1,
// answer-driven query formulation), in ragtrail's words.
const INSTRUCTIONS = `Write three sections:

### Reasoning
Work through the question step by step and arrive at a candidate answer.

### Unsupported Claims
List the claims your reasoning relies on that the search history above does not back up. If there are any, turn the first one into a single, self-contained search query. If every claim is supported, say that no query is needed.

### Output
A JSON object in a \`\`\`json block:
{"predicted_answer": "<short answer: one letter for a multiple-choice question, else a number, a word or a brief phrase>", "generated_query": "<an entity, question or statement to search for, or \\"None\\" when no search is needed>"}`;

const FORCED = 'You cannot search any more. Write the three sections, with "generated_query": "None" and your best short answer as "predicted_answer".';

/** The last JSON object in the text that has a "predicted_answer" field. */
export function extractDecision(text: string): { predicted_answer?: unknown; generated_query?: unknown } | undefined {
  const starts: number[] = [];
  for (let i = text.indexOf('{'); i >= 0; i = text.indexOf('{', i + 1)) starts.push(i);
  // Where the object opened at a brace closes (-1: never), for the braces already tried. Scanning from
  // an earlier brace and meeting one of them outside a string, the scan goes on exactly as it went
  // from there, so it jumps to that close, or stops at a never. Without it, text of many unclosed
  // braces is rescanned to the end from each (quadratic: 1 s at 40 kB).
  const closeOf = new Map<number, number>();
  const keys: number[] = [];
  for (let i = text.indexOf('predicted_answer'); i >= 0; i = text.indexOf('predicted_answer', i + 1)) keys.push(i);
  const keyWithin = (from: number, to: number): boolean => {
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (keys[mid]! < from) lo = mid + 1;
      else hi = mid;
    }
    return lo < keys.length && keys[lo]! < to;
  };
  for (let s = starts.length - 1; s >= 0; s--) {
    const start = starts[s]!;
    let depth = 0;
    let inString = false;
    let close = -1;
    for (let i = start; i < text.length; i++) {
      const c = text[i];
      if (inString) {
        if (c === '\\') i++;
        else if (c === '"') inString = false;
        continue;
      }
      if (c === '"') inString = true;
      else if (c === '{') {
        const known = i === start ? undefined : closeOf.get(i);
        if (known === undefined) depth++;
        else if (known < 0) break;
        else i = known;
      } else if (c === '}' && --depth === 0) {
        close = i;
        break;
      }
    }
    closeOf.set(start, close);
    // Parse only an object that holds the key (as written; a key spelt with \u escapes is not looked
    // for): parsing every object of deeply nested JSON was quadratic (32 s at depth 20,000).
    if (close < 0 || !keyWithin(start, close)) continue;
    try {
      const obj = JSON.parse(text.slice(start, close + 1)) as Record<string, unknown>;
      if (obj && typeof obj === 'object' && 'predicted_answer' in obj) return obj;
    } catch {
      // not JSON: try an earlier brace
    }
  }
  return undefined;
}

const NO_QUERY = /^(none|null|n\/a|no query|)$/i;

export const research: Protocol = {
  name: 'research',
  description: 'RAG-Gym ReSearch: reasoning → unsupported claims → JSON {predicted_answer, generated_query}',
  defaults: { maxTurns: 10, topK: 5, maxTokens: 1024 },
  allowed: (state) => (state.mustAnswer ? ['answer'] : ['search', 'answer']),
  prepare: summarizeSearches,
  render(state: State, opts: RenderOptions = {}): Message[] {
    return [
      { role: 'system', content: 'You answer questions, searching an external knowledge base for facts you cannot support from the search history.' },
      { role: 'user', content: `### Search History\n${summarizedHistory(state)}\n\n### Question\n${state.question.question}\n\n${INSTRUCTIONS}${opts.forced ? `\n\n${FORCED}` : ''}` },
    ];
  },
  template: {
    kinds: { main: { description: 'the whole prompt', fields: { question: { required: true, description: 'the question' }, history: { required: true, description: 'the searches so far as "Query i: … / Answer i: …" pairs (documents summarised per query)' } } } },
    fill: (state, opts) => ({ kind: 'main', values: { question: state.question.question, history: summarizedHistory(state) }, continuation: [], ...(opts.forced ? { forcedNote: FORCED } : {}) }),
  },
  parse(text: string, state: State): Action {
    const d = extractDecision(text);
    if (!d) return invalid('no JSON object with "predicted_answer"');
    const answer = typeof d.predicted_answer === 'string' ? d.predicted_answer.trim() : d.predicted_answer == null ? '' : String(d.predicted_answer);
    const query = typeof d.generated_query === 'string' ? d.generated_query.trim() : d.generated_query == null ? '' : String(d.generated_query);
    if (!NO_QUERY.test(query) && !state.mustAnswer) return { type: 'search', query };
    if (isBlank(answer)) return invalid('empty "predicted_answer"');
    return { type: 'answer', answer };
  },
  format(action: Action, state: State): string {
    const reasoning = `### Reasoning\n${thoughtFor(action, state)}`;
    if (action.type === 'search') {
      return `${reasoning}\n\n### Unsupported Claims\nThis still needs checking: ${action.query}\n\n### Output\n\`\`\`json\n${JSON.stringify({ predicted_answer: 'unknown', generated_query: action.query })}\n\`\`\``;
    }
    if (action.type === 'answer') {
      return `${reasoning}\n\n### Unsupported Claims\nEvery claim is supported by the history; no query is needed.\n\n### Output\n\`\`\`json\n${JSON.stringify({ predicted_answer: action.answer, generated_query: 'None' })}\n\`\`\``;
    }
    return reasoning;
  },
};
