/**
 * Features of a (state, action) pair for the trained PRM: hand-made process features — what an
 * annotator looks at — plus similarities from an Embedder (any backend; the offline default is the
 * lexical hashed n-gram one).
 *
 * Process features (all in [0, 1]): action type (search / answer / extract / invalid), searches so far,
 * the budget being spent; for queries: novelty against earlier queries (1 − max token Jaccard), an exact
 * repeat, overlap with the question, words found in retrieved documents but not in the question (a
 * bridge entity carried forward); for answers and evidence: whether the text appears in the retrieved
 * documents (evidence coverage) and the share of its words that do, answering before any search, the
 * answer naming the question's own words; the action's length.
 */
import { normalizeAnswer } from '../core/text.js';
import type { State } from '../env/env.js';
import { retrievedDocs } from '../env/env.js';
import { ENGLISH_STOP_WORDS } from '../retrieval/analyzer.js';
import type { Embedder } from '../retrieval/embedders/embedder.js';
import type { Candidate } from './types.js';

export const PROCESS_FEATURES = [
  'is_search', 'is_answer', 'is_extract', 'is_invalid', 'searches_so_far', 'must_answer',
  'search:novelty', 'search:repeat', 'search:question_overlap', 'search:new_words_from_docs', 'search:length',
  'answer:text_in_docs', 'answer:words_in_docs', 'answer:before_any_search', 'answer:question_overlap', 'answer:in_question', 'answer:searches_so_far', 'answer:length',
  'extract:text_in_docs', 'extract:words_in_docs', 'extract:length',
] as const;

function words(text: string): Set<string> {
  return new Set(normalizeAnswer(text).split(' ').filter((w) => w && !ENGLISH_STOP_WORDS.has(w)));
}

function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}

function share(a: Set<string>, pool: Set<string>): number {
  if (a.size === 0) return 0;
  let n = 0;
  for (const x of a) if (pool.has(x)) n++;
  return n / a.size;
}

/** The text an action stands for: its query, answer or evidence (the raw text for invalid steps). */
export function actionText(c: Candidate): string {
  const a = c.action;
  return a.type === 'search' ? a.query : a.type === 'answer' ? a.answer : a.type === 'extract' ? a.evidence : c.raw;
}

/**
 * Process features, in blocks per action type (a block is zero unless the action has that type), so
 * that even a linear head can weigh, say, overlap with the question differently for a query (good: it
 * is on topic) and for an answer (bad, in a bridge question: it names the question's own entity).
 */
export function processFeatures(state: State, c: Candidate): number[] {
  const a = c.action;
  const text = actionText(c);
  const w = words(text);
  const q = words(state.question.question);
  const docs = retrievedDocs(state);
  const docText = normalizeAnswer(docs.map((d) => `${d.title} ${d.text}`).join(' '));
  const docWords = new Set(docText.split(' '));
  const queries = state.steps.flatMap((s) => (s.action.type === 'search' ? [s.action.query] : []));
  const searched = Math.min(queries.length, 10) / 10;
  const length = Math.min(w.size, 30) / 30;
  const norm = normalizeAnswer(text);
  const inDocs = norm !== '' && docText.includes(norm) ? 1 : 0;
  const [S, A, E] = [a.type === 'search', a.type === 'answer', a.type === 'extract'];
  const novelty = queries.length === 0 ? 1 : 1 - Math.max(...queries.map((x) => jaccard(words(x), w)));
  const repeat = queries.some((x) => normalizeAnswer(x) === norm) ? 1 : 0;
  const fromDocs = [...w].filter((x) => docWords.has(x) && !q.has(x)).length / Math.max(1, w.size);
  return [
    S ? 1 : 0,
    A ? 1 : 0,
    E ? 1 : 0,
    a.type === 'invalid' ? 1 : 0,
    searched,
    state.mustAnswer ? 1 : 0,
    S ? novelty : 0,
    S ? repeat : 0,
    S ? jaccard(w, q) : 0,
    S ? fromDocs : 0,
    S ? length : 0,
    A ? inDocs : 0,
    A ? share(w, docWords) : 0,
    A && queries.length === 0 ? 1 : 0,
    A ? jaccard(w, q) : 0,
    A && norm !== '' && normalizeAnswer(state.question.question).includes(norm) ? 1 : 0,
    A ? searched : 0,
    A ? length : 0,
    E ? inDocs : 0,
    E ? share(w, docWords) : 0,
    E ? length : 0,
  ];
}

export const EMBEDDING_FEATURES = [
  'search:sim_question', 'search:max_sim_earlier_queries', 'search:max_sim_docs',
  'answer:sim_question', 'answer:max_sim_docs', 'extract:max_sim_docs',
] as const;

export const FEATURES = [...PROCESS_FEATURES, ...EMBEDDING_FEATURES];

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/**
 * The full feature vector: the process features, then similarities computed with the embedder (all
 * vectors are unit length, so a dot product is a cosine) — the action against the question, against
 * earlier queries, and against the retrieved documents — in the same per-type blocks. Similarities
 * rather than raw embedding dimensions: a few hundred mined pairs cannot fit hundreds of weights.
 */
export async function featurize(embedder: Embedder, state: State, candidates: readonly Candidate[]): Promise<Float64Array[]> {
  const queries = state.steps.flatMap((s) => (s.action.type === 'search' ? [s.action.query] : []));
  const docs = retrievedDocs(state).map((d) => `${d.title}. ${d.text}`);
  const texts = [state.question.question, ...candidates.map(actionText), ...queries, ...docs];
  const vs = await embedder.embed(texts, 'query');
  const qv = vs[0]!;
  const av = vs.slice(1, 1 + candidates.length);
  const pv = vs.slice(1 + candidates.length, 1 + candidates.length + queries.length);
  const dv = vs.slice(1 + candidates.length + queries.length);
  const maxSim = (v: Float32Array, pool: Float32Array[]) => (pool.length ? Math.max(...pool.map((x) => dot(v, x))) : 0);
  return candidates.map((c, i) => {
    const p = processFeatures(state, c);
    const v = av[i]!;
    const t = c.action.type;
    const e = [
      t === 'search' ? dot(v, qv) : 0,
      t === 'search' ? maxSim(v, pv) : 0,
      t === 'search' ? maxSim(v, dv) : 0,
      t === 'answer' ? dot(v, qv) : 0,
      t === 'answer' ? maxSim(v, dv) : 0,
      t === 'extract' ? maxSim(v, dv) : 0,
    ];
    return Float64Array.from([...p, ...e]);
  });
}
