/** States built from literal pages, for the readers' tests (chain-reader, comparison). */
import type { State } from '../../src/env/env.js';

/** A retrieved page as the tests write it: passage id, title, text. */
export type Page = [id: string, title: string, text: string];

/** A state whose searches found `groups` of pages, one search per group. */
export function pagesState(question: string, answers: string[], groups: Page[][]): State {
  return {
    question: { id: 'q', question, answers },
    steps: groups.map((pages, i) => ({
      action: { type: 'search' as const, query: `query ${i}` },
      raw: '',
      docs: pages.map(([passageId, title, text]) => ({ passageId, title, text, score: 1 })),
    })),
    done: false, mustAnswer: false, turnsLeft: 10, searchesLeft: 8,
  };
}
