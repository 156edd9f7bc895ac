/** The answer metrics (SPEC §3) live in core/metrics.ts, shared with rewards and search; eval re-exports them. */
export * from '../core/metrics.js';
