/** Builds a BM25 index in its own process so that the parent can report this build's peak RSS. */
import { buildIndex } from '../src/retrieval/index-dir.js';

const [corpus, out] = process.argv.slice(2);
const t0 = performance.now();
const m = await buildIndex(corpus!, out!, { bm25: true, quiet: true });
const seconds = (performance.now() - t0) / 1000;
process.stdout.write(JSON.stringify({ seconds, peakRssBytes: process.resourceUsage().maxRSS * 1024, passages: m.passages, vocabulary: m.bm25?.vocabulary, postings: m.bm25?.postings, runs: m.bm25?.runs }) + '\n');
