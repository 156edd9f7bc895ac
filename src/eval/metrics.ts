/**
 * The answer metrics (EM, F1 and Acc as the SQuAD / HotpotQA / FlashRAG scripts compute them) live in
 * core/metrics.ts, shared with rewards and search; eval re-exports them.
 */
export * from '../core/metrics.js';
