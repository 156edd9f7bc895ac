/**
 * Adaptive-RAG (Jeong et al., NAACL 2024, "Adaptive-RAG: Learning to Adapt Retrieval-Augmented Large
 * Language Models through Question Complexity"), a baseline of ReasonRAG's and LWS's tables: a
 * classifier labels each question's complexity — A, answerable without retrieval; B, one retrieval
 * suffices; C, it needs multi-step retrieval — and the question goes to the matching strategy: `direct`,
 * `rag` (one search with the question, then an answer) or `ircot` (interleaved retrieval). The paper's
 * classifier is a small model trained on labels from which strategy answered; by default this asks the
 * agent's own model, and `adaptiveRag({ classifier })` takes a served classifier (an OpenAI-compatible
 * model replying with the letter). An unreadable label routes to C, the strategy that can still retrieve.
 */
import type { LLM } from '../llm/types.js';
import { ircot } from './ircot.js';
import { direct, rag } from './rag-gym.js';
import { type RoutedProtocol, routedProtocol } from './router.js';

const DECIDE = `Judge how much looking up this question needs, and reply with one letter only:
A: it can be answered from general knowledge, without looking anything up;
B: one lookup is enough;
C: it needs several lookups, each building on the last.`;

/** Adaptive-RAG with a classifier of your own (default: the agent's model). */
export function adaptiveRag(opts: { classifier?: LLM } = {}): RoutedProtocol {
  const routed = routedProtocol({
    name: 'adaptive-rag',
    description: 'Adaptive-RAG: a complexity label (A/B/C) routes each question to direct, rag (one search) or ircot (multi-step); the classifier is --aux-llm (default: the agent\'s model)',
    routes: { A: direct, B: rag, C: ircot },
    fallback: 'C',
    decide: (q) => [{ role: 'user', content: `${DECIDE}\n\nQuestion: ${q.question}\nLabel:` }],
    read: (text) => /\b([ABC])\b/.exec(text.toUpperCase())?.[1],
    ...(opts.classifier && { classifier: opts.classifier }),
  });
  return { ...routed, withAux: (aux) => adaptiveRag({ classifier: aux }) };
}

export const adaptiveRagProtocol = adaptiveRag();
