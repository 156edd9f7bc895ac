/**
 * SKR (Wang et al., Findings of EMNLP 2023, "Self-Knowledge Guided Retrieval Augmentation for Large
 * Language Models"), a baseline of ReasonRAG's table: the model's self-knowledge decides whether to
 * retrieve — asked whether it knows the answer without outside information (SKR's prompting variant;
 * FlashRAG runs the kNN variant, which needs training questions labelled with the model's own success) —
 * then answers directly (`cot`) or after one search with the question (`rag`). An unreadable reply
 * retrieves.
 */
import type { LLM } from '../llm/types.js';
import { cot, rag } from './rag-gym.js';
import { routedProtocol } from './router.js';

const DECIDE = 'Do you need outside information (a search) to answer this question reliably, or do you already know the answer? Reply "yes" if you need to search, "no" if you know it.';

/** SKR with a judge of your own (default: the agent's model). */
export function skr(opts: { classifier?: LLM } = {}) {
  return routedProtocol({
    name: 'skr',
    description: 'SKR: the model judges whether it knows the answer; if not, one search (rag), else it answers itself (cot)',
    routes: { retrieve: rag, own: cot },
    fallback: 'retrieve',
    decide: (q) => [{ role: 'user', content: `${DECIDE}\n\nQuestion: ${q.question}\nNeed to search:` }],
    read: (text) => {
      const w = /\b(yes|no)\b/i.exec(text)?.[1]?.toLowerCase();
      return w === 'yes' ? 'retrieve' : w === 'no' ? 'own' : undefined;
    },
    ...(opts.classifier && { classifier: opts.classifier }),
  });
}

export const skrProtocol = skr();
