/**
 * The wire format of Search-R1's retrieval server (search_r1/search/retrieval_server.py), which
 * verl-based trainers call as their search tool:
 *
 *   POST /retrieve  {"queries": ["…", …], "topk": 3, "return_scores": true}
 *   →  {"result": [[{"document": {"id", "contents"}, "score"}, …], …]}     one list per query
 *      (with return_scores false the inner lists hold the documents themselves)
 *
 * `contents` is `"Title"\ntext`. ragtrail's documents also carry `title` and `text` separately,
 * as Search-R1's BM25 variant does, so either kind of consumer finds what it reads.
 */
import { joinContents } from '../corpus/corpus.js';
import type { Hit } from './types.js';

export interface WireDocument {
  id: string;
  contents: string;
  title: string;
  text: string;
}

export function toWireDocument(h: Hit): WireDocument {
  return { id: h.passageId, contents: joinContents({ id: h.passageId, title: h.title, text: h.text }), title: h.title, text: h.text };
}
