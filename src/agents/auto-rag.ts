/**
 * Auto-RAG (Yu, Zhang & Feng, 2024, "Auto-RAG: Autonomous Retrieval-Augmented Generation for Large
 * Language Models"; ictnlp/Auto-RAG; checkpoint ICTNLP/Auto-RAG-Llama-3-8B-Instruct; the "AutoRAG" row of
 * ReasonRAG's Table 2), in the format its released model was fine-tuned on and evaluated with. Read from
 * Auto-RAG/autorag.py at commit 32be4f0e795e01dd67dacb0eaeaa43638cfc7fa8 (the FlexRAG assistant that
 * scripts/run_evaluation.sh runs) and Auto-RAG/test.py at f0c9a893e4ff898ce4e9ec92d90d86638d122704 (the
 * earlier FlashRAG loop; eval.py at e1308da9 scores it).
 *
 * The format is a plain multi-turn chat with line markers, no tags: the instructions are the system
 * message, the first user message is "Question: Q". Each model turn is free text, kept stripped; the
 * model writes "Analysis: … Initial Query: q" first and "Intermediate Answer_N: … Refined Query: q"
 * after each document. A turn that contains "query:" (case ignored) is a search for the text after its
 * last "Query:" ("[Dense]" removed) — a turn with "query:" but no "Query:" searches for the whole turn,
 * as the authors' split does; otherwise a turn that contains "final answer" ends the episode with the
 * text after its last "Final Answer:" (case ignored here; the whole turn when there is no colon). The
 * environment answers a search with one user message "Retrieved Document_N: TEXT", N counting the
 * episode's searches from 1, TEXT the first {@link AUTO_RAG_PASSAGES} retrieved passages not shown
 * earlier in the episode, each as the last line of its text (the corpus's `contents.split('\n')[-1]`,
 * i.e. without the title), joined by a space. Ten searches, then one more turn with no notice; 200
 * tokens a turn; no stop string (the chat's end of turn ends it).
 *
 * Differences from the authors' code, each deliberate:
 * - A turn with neither marker: the authors print "Follow Failed" and retrieve again with the previous
 *   query (the question, before any) under the same document number. Here it is an invalid step (a
 *   format failure), answered by a notice in this project's words asking for a query or the answer.
 * - An empty query ("Refined Query:" and nothing after) is a format failure; the authors search "".
 * - The pool: the authors take their retriever's top 10 (FlexRAG's default; top 50 in test.py) and show
 *   the first two not yet shown (one in test.py's default). Here the environment's top-k (default 10) is
 *   that pool: a step's `docs` record all of it, of which the model saw the first two not seen before.
 * - When the ten searches are spent without an answer, the authors' one extra turn is ragtrail's forced
 *   turn; their "elicitation" after it (while the reply has "Refined Query:", up to five documents the
 *   model writes from its own knowledge with their Knowledge_Prompt) is not run: a forced turn that is
 *   not a final answer is read as ragtrail reads any forced turn.
 * - eval.py replaces the answer of an episode that reached the search cap or never wrote "final answer"
 *   by a no-retrieval baseline's answer (`mix_eval`); an evaluation choice, not reproduced.
 * The system prompt is in this project's words (it also spells out the markers, which the authors' does
 * not); `--prompt-template FILE` loads the authors' exact system message.
 */
import { pyStrip } from '../core/text.js';
import type { Action, Message, RetrievedDoc } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import { invalid, type Protocol, thoughtFor } from './protocol.js';

/** Passages shown per search (autorag.py's `max_passages`). */
export const AUTO_RAG_PASSAGES = 2;

const INSTRUCTIONS =
  'Answer the question with knowledge you retrieve. Take from each retrieved document what is useful to the question; when what you have is not enough, or not relevant, refine your query and search again, until you can answer. Begin with an analysis of what you need, ending with "Initial Query: <query>". After each retrieved document, write "Intermediate Answer_N:" with what it tells you, then either "Refined Query: <query>" to search again or "Final Answer: <answer>" once you can answer.';

/** The environment's reply to a turn with neither a query nor a final answer (the authors have none: they search again). */
export const AUTO_RAG_RETRY = 'Write your next query after "Refined Query:", or give the answer after "Final Answer:".';

/**
 * The document text a search shows: its first `n` passages whose ids are not in `seen` (added to it),
 * each the last line of its text, joined by a space and stripped.
 */
export function autoRagDocument(docs: readonly RetrievedDoc[], seen: Set<string>, n = AUTO_RAG_PASSAGES): string {
  const shown: string[] = [];
  for (const d of docs) {
    if (!seen.has(d.passageId)) {
      seen.add(d.passageId);
      shown.push(d.text.split('\n').at(-1)!);
    }
    if (shown.length >= n) break;
  }
  return pyStrip(shown.join(' '));
}

export const autoRag: Protocol = {
  name: 'auto-rag',
  description: 'Auto-RAG: "Initial/Refined Query: q" → "Retrieved Document_N: …" (two passages not seen before), "Final Answer: a"',
  // Ten retrieval iterations and 200 tokens a turn (autorag.py, test.py); the pool the two passages are taken from.
  defaults: { maxTurns: 10, topK: 10, maxTokens: 200 },
  allowed: (state) => (state.mustAnswer ? ['answer'] : ['search', 'answer']),
  render(state: State): Message[] {
    const messages: Message[] = [
      { role: 'system', content: INSTRUCTIONS },
      { role: 'user', content: `Question: ${pyStrip(state.question.question)}` },
    ];
    const seen = new Set<string>();
    let n = 0;
    for (const step of state.steps) {
      messages.push({ role: 'assistant', content: pyStrip(step.raw) });
      if (step.action.type === 'search') messages.push({ role: 'user', content: `Retrieved Document_${++n}: ${autoRagDocument(step.docs ?? [], seen)}` });
      else if (step.action.type === 'invalid') messages.push({ role: 'user', content: AUTO_RAG_RETRY });
    }
    return messages;
  },
  template: {
    kinds: { main: { description: 'the instructions (system) and "Question: Q" (user); the turns after them are the loop\'s', fields: { question: { required: true, description: 'the question' } } } },
    fill: (state) => ({ kind: 'main', values: { question: state.question.question }, continuation: autoRag.render(state).slice(2) }),
  },
  /** A search when the turn says "query:" anywhere (the text after its last "Query:"); else a final answer when it says "final answer". */
  parse(text: string): Action {
    // Python's strip, then JavaScript's: an action's text is trimmed either way.
    const strip = (s: string) => pyStrip(s).trim();
    const out = strip(text);
    if (/query:/i.test(out)) {
      const query = strip(pyStrip(out.split('Query:').at(-1)!).replaceAll('[Dense]', ''));
      return query === '' ? invalid('empty query after "Query:"') : { type: 'search', query };
    }
    if (/final answer/i.test(out)) {
      let last: RegExpExecArray | undefined;
      for (const m of out.matchAll(/final answer:/gi)) last = m;
      const answer = strip(last ? out.slice(last.index + last[0].length) : out);
      return answer === '' ? invalid('empty "Final Answer:"') : { type: 'answer', answer };
    }
    return invalid('neither a "Query:" nor a "Final Answer:"');
  },
  format(action: Action, state: State): string {
    const first = !state.steps.some((s) => s.action.type === 'search');
    const lead = first ? 'Analysis: ' : `Intermediate Answer_${state.steps.filter((s) => s.action.type === 'search').length}: `;
    const thought = `${lead}${thoughtFor(action, state) || 'The information so far settles it.'}`;
    if (action.type === 'search') return `${thought}\n\n${first ? 'Initial' : 'Refined'} Query: ${action.query}`;
    if (action.type === 'answer') return `${thought}\n\nFinal Answer: ${action.answer}`;
    return thought;
  },
};
