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
 * answer naming the question's own words; the action's length. Then the chain features (chainFeatures):
 * whether a query carries a name from beside the entity searched last (the bridge), whether it is the
 * object of the relation the chain asks for next (question-parts relationOrder and relationObjects),
 * whether it is the real name an alternative-title page gives for the question's entity, the share of
 * relations not yet followed; for answers, whether they are the next — or the last — relation's object.
 */
import { memoByText, normalizeAnswer, sentencesOf } from '../core/text.js';
import type { State } from '../env/env.js';
import { retrievedDocs } from '../env/env.js';
import { ENGLISH_STOP_WORDS } from '../retrieval/analyzer.js';
import type { Embedder } from '../retrieval/embedders/embedder.js';
import { chainAnswer, chainFeatures as chainReaderFeatures, chainNeeds } from './chain-reader.js';
import { comparisonFeatures, comparisonNeeds, sameComparisonFeatures } from './comparison.js';
import { aliasObject, chainLength, entities, relationObjects, relationOrder, relationOverlap, relationWords, speaksOf } from './question-parts.js';
import type { Candidate } from './types.js';

export const PROCESS_FEATURES = [
  'is_search', 'is_answer', 'is_extract', 'is_invalid', 'searches_so_far', 'must_answer',
  'search:novelty', 'search:repeat', 'search:question_overlap', 'search:new_words_from_docs', 'search:length',
  'answer:text_in_docs', 'answer:words_in_docs', 'answer:before_any_search', 'answer:question_overlap', 'answer:in_question', 'answer:searches_so_far', 'answer:length',
  'extract:text_in_docs', 'extract:words_in_docs', 'extract:length',
  'search:bridge', 'search:bridge_relation', 'search:chain_covered',
  'answer:beside_last_entity', 'answer:sentence_relation', 'answer:chain_covered',
  'extract:beside_last_entity', 'extract:sentence_relation',
  'answer:names_last_entity',
  'search:bridge_next_relation', 'answer:beside_next_relation', 'extract:beside_next_relation', 'search:relations_open', 'answer:relations_open', 'search:real_name_of_question_entity', 'answer:object_of_last_relation',
] as const;

/** What the chain features read from a state, whatever the candidate: computed once per state (chainView). */
interface ChainView {
  covered: number;
  open: number;
  unfollowed: string[];
  /** Undefined when the last step is not a search: then only `covered` and `open` are set. */
  last?: {
    subject: ReadonlySet<string>;
    rel: string[];
    sentences: { text: string; w: ReadonlySet<string>; beside: boolean; norm: string }[];
    searchedWords: ReadonlySet<string>;
    aliases: string[];
    next: string | undefined;
  };
}

function chainView(state: State): ChainView {
  const searches = state.steps.filter((s) => s.action.type === 'search');
  const covered = Math.min(1, searches.length / chainLength(state.question.question));
  const all = relationWords(state.question.question);
  // The hops not yet followed by a search: grounding a hop's evidence names the next entity, searching it follows the hop.
  const unfollowed = openRelations(state, searches, false);
  // The share of the question's relations not yet followed: the chain's last hop leaves one.
  const open = all.length ? unfollowed.length / all.length : 0;
  const last = searches[searches.length - 1];
  if (!last || last.action.type !== 'search') return { covered, open, unfollowed };
  const stillOpen = openRelations(state, searches);
  const subject = words(entities(last.action.query).join(' '));
  // With none left open, a chain's last hop still reads the question's relations.
  const rel = stillOpen.length ? stillOpen : all;
  // A sentence of a page about that entity (its title names it, or it names the title) is beside it too.
  const titleAbout = (title: string) => {
    const t = words(title);
    return within(subject, t) || within(t, subject);
  };
  const sentences = (last.docs ?? []).flatMap((d) => {
    const page = titleAbout(d.title);
    return sentencesOf(d.text).map((x) => {
      const w = words(x);
      return { text: x, w, beside: page || [...subject].some((e) => w.has(e)), norm: normalizeAnswer(x) };
    });
  });
  // The question names a thing by another name: a sentence giving its real name (an alternative-title page).
  const named = entities(state.question.question).map((e) => words(e)).filter((e) => e.size > 0);
  const isNamed = (m: string) => named.some((e) => within(e, words(m)));
  const searchedWords = new Set(searches.flatMap((s) => (s.action.type === 'search' ? [...words(s.action.query)] : [])));
  const aliases = sentences.flatMap((x) => (named.some((e) => within(e, x.w)) ? [aliasObject(x.text, isNamed)].filter((o): o is string => !!o) : []));
  // Until the real name is searched the chain has not begun: no relation is next.
  const aliasPending = aliases.some((o) => [...words(o)].some((x) => !searchedWords.has(x)));
  const next = aliasPending ? undefined : nextRelation(state.question.question, unfollowed, sentences.filter((x) => x.beside).map((x) => x.text));
  return { covered, open, unfollowed, last: { subject, rel, sentences, searchedWords, aliases, next } };
}

/**
 * What a multi-hop step reads from the latest search (the chain features): a query follows the chain
 * when its new words (not in the question or earlier queries) stand in a sentence of the latest
 * documents beside the entity that search was for — the bridge — and the more that sentence speaks of
 * the question's relations, the likelier it is the right bridge; an answer stands beside that entity
 * likewise. `covered`: searches made against the lookups the question's wording asks for.
 */
function chainFeatures(view: ChainView, c: Candidate, w: ReadonlySet<string>, q: ReadonlySet<string>): { bridge: number; bridgeRelation: number; beside: number; relation: number; covered: number; namesSubject: number; next: number; open: number; alias: number; last: number } {
  const out = { bridge: 0, bridgeRelation: 0, beside: 0, relation: 0, covered: view.covered, namesSubject: 0, next: 0, open: view.open, alias: 0, last: 0 };
  if (!view.last) return out;
  const { subject, rel, sentences, searchedWords, aliases, next } = view.last;
  // The sentence gives the candidate as the next relation's object ("His spouse is T" for the spouse hop).
  const isSubject = (m: string) => within(words(m), subject);
  const nextObject = (text: string, cand: ReadonlySet<string>) => next !== undefined && relationObjects(text, next, isSubject).some((o) => within(cand, words(o)));
  const a = c.action;
  if (a.type === 'search') {
    const fresh = [...w].filter((x) => !q.has(x) && !searchedWords.has(x));
    if (fresh.length === 0) return out;
    for (const x of sentences) {
      if (!fresh.every((f) => x.w.has(f)) || !x.beside) continue;
      out.bridge = 1;
      if (relationOverlap(x.text, rel) > 0) out.bridgeRelation = 1;
      if (nextObject(x.text, new Set(fresh))) out.next = 1;
    }
    if (aliases.some((o) => within(new Set(fresh), words(o)))) out.alias = 1;
  } else if (a.type === 'extract') {
    // Evidence about the entity the latest search was for, on the question's relations.
    const ew = words(a.evidence);
    if (ew.size === 0) return out;
    out.beside = [...subject].some((e) => ew.has(e)) ? 1 : 0;
    out.relation = relationOverlap(a.evidence, rel) > 0 ? 1 : 0;
    out.next = out.beside && next !== undefined && speaksOf(a.evidence, next) ? 1 : 0;
  } else if (a.type === 'answer') {
    const norm = normalizeAnswer(a.answer);
    if (norm === '') return out;
    // The entity the search was for is on its own page, but it is the question's next step, not its answer.
    out.namesSubject = within(w, subject) ? 1 : 0;
    for (const x of sentences) {
      if (!` ${x.norm} `.includes(` ${norm} `)) continue;
      if (relationOverlap(x.text, rel) > 0) out.relation = 1;
      if (x.beside) out.beside = 1;
      if (x.beside && nextObject(x.text, w)) out.next = 1;
    }
    // The object of the last relation the chain has open is the question's answer.
    if (out.next && view.unfollowed.every((r) => r === next)) out.last = 1;
  }
  return out;
}

/**
 * The question's relation words not yet resolved: a relation is resolved once a sentence speaking of it
 * led the chain on — the sentence of an earlier search's documents naming the entity searched next — or
 * was grounded as evidence (unless `evidence` is false: then only a search following a hop resolves it).
 * "The spouse of the lead actor of F": after F's page gave the lead actor and the actor was searched,
 * "lead" and "actor" are resolved and "spouse" is open.
 */
function openRelations(state: State, searches: readonly State['steps'][number][], evidence = true): string[] {
  const rel = relationWords(state.question.question);
  const q = words(state.question.question);
  const used = new Set<string>();
  const seen = new Set<string>();
  for (let i = 0; i < searches.length; i++) {
    const a = searches[i]!.action;
    if (a.type !== 'search') continue;
    const fresh = [...words(a.query)].filter((x) => !q.has(x) && !seen.has(x));
    for (const x of words(a.query)) seen.add(x);
    if (i === 0 || fresh.length === 0) continue;
    for (const d of searches[i - 1]!.docs ?? []) {
      for (const sentence of sentencesOf(d.text)) {
        const sw = words(sentence);
        if (fresh.every((f) => sw.has(f))) for (const r of rel) if (speaksOf(sentence, r)) used.add(r);
      }
    }
  }
  if (evidence) for (const st of state.steps) if (st.action.type === 'extract') for (const r of rel) if (speaksOf(st.action.evidence, r)) used.add(r);
  return rel.filter((r) => !used.has(r));
}

/**
 * The relation the chain asks for next, read from the latest documents: of the open relations that a
 * sentence beside the searched entity speaks of, the one nearest the question's named entity
 * (question-parts relationOrder). Undefined when no such sentence speaks of an open relation.
 */
function nextRelation(question: string, open: readonly string[], besideSentences: readonly string[]): string | undefined {
  const order = relationOrder(question);
  const spoken = open.filter((r) => order.has(r) && besideSentences.some((s) => speaksOf(s, r)));
  return spoken.sort((a, b) => order.get(a)! - order.get(b)!)[0];
}

/** Every word of a non-empty `part` is in `whole`. */
const within = (part: ReadonlySet<string>, whole: ReadonlySet<string>) => part.size > 0 && [...part].every((x) => whole.has(x));

// Words of a text, memoised: features read the same pages, questions and queries over and over (every
// candidate of every step of every rollout), and normalising them was most of MCTS annotation's time.
const words: (text: string) => ReadonlySet<string> = memoByText((text) => new Set(normalizeAnswer(text).split(' ').filter((x) => x && !ENGLISH_STOP_WORDS.has(x))), 200_000);

function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}

function share(a: ReadonlySet<string>, pool: ReadonlySet<string>): number {
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

/** What the process features read from a state, whatever the candidate. */
interface StateView {
  q: ReadonlySet<string>;
  docText: string;
  docWords: ReadonlySet<string>;
  queries: { w: ReadonlySet<string>; norm: string }[];
  searched: number;
  questionNorm: string;
  chain: ChainView;
}

// One view per state: a step scores every candidate (and a PRM every pair) against the same state.
// States are replaced, never changed, by the environment; the check on `steps` guards hand-built ones.
const VIEWS = new WeakMap<State, { steps: State['steps']; n: number; view: StateView }>();
function stateView(state: State): StateView {
  const hit = VIEWS.get(state);
  if (hit && hit.steps === state.steps && hit.n === state.steps.length) return hit.view;
  const docText = normalizeAnswer(retrievedDocs(state).map((d) => `${d.title} ${d.text}`).join(' '));
  const queries = state.steps.flatMap((s) => (s.action.type === 'search' ? [{ w: words(s.action.query), norm: normalizeAnswer(s.action.query) }] : []));
  const view: StateView = {
    q: words(state.question.question), docText, docWords: new Set(docText.split(' ')), queries,
    searched: Math.min(queries.length, 10) / 10, questionNorm: normalizeAnswer(state.question.question), chain: chainView(state),
  };
  VIEWS.set(state, { steps: state.steps, n: state.steps.length, view });
  return view;
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
  const { q, docText, docWords, queries, searched, questionNorm, chain: view } = stateView(state);
  const length = Math.min(w.size, 30) / 30;
  const norm = normalizeAnswer(text);
  const inDocs = norm !== '' && docText.includes(norm) ? 1 : 0;
  const [S, A, E] = [a.type === 'search', a.type === 'answer', a.type === 'extract'];
  const novelty = queries.length === 0 ? 1 : 1 - Math.max(...queries.map((x) => jaccard(x.w, w)));
  const repeat = queries.some((x) => x.norm === norm) ? 1 : 0;
  const fromDocs = [...w].filter((x) => docWords.has(x) && !q.has(x)).length / Math.max(1, w.size);
  const chain = chainFeatures(view, c, w, q);
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
    A && norm !== '' && questionNorm.includes(norm) ? 1 : 0,
    A ? searched : 0,
    A ? length : 0,
    E ? inDocs : 0,
    E ? share(w, docWords) : 0,
    E ? length : 0,
    S ? chain.bridge : 0,
    S ? chain.bridgeRelation : 0,
    S ? chain.covered : 0,
    A ? chain.beside : 0,
    A ? chain.relation : 0,
    A ? chain.covered : 0,
    E ? chain.beside : 0,
    E ? chain.relation : 0,
    A ? chain.namesSubject : 0,
    S ? chain.next : 0,
    A ? chain.next : 0,
    E ? chain.next : 0,
    S ? chain.open : 0,
    A ? chain.open : 0,
    S ? chain.alias : 0,
    A ? chain.last : 0,
  ];
}

export const EMBEDDING_FEATURES = [
  'search:sim_question', 'search:max_sim_earlier_queries', 'search:max_sim_docs',
  'answer:sim_question', 'answer:max_sim_docs', 'extract:max_sim_docs',
] as const;

/**
 * Features the PRM reads and the gym policy does not (appended last, so that a PRM file saved before
 * them scores as it did): whether evidence names the entity searched last in full — "Geabrasie
 * Droxley's spouse is Labiara Salcroft" on Droxley's page, not a decoy "that title" sentence or one
 * about a place in the name; for an "A or B?" comparison (comparison.ts), whether the retrieved pages
 * give both options' years, and whether the answer is the option they decide for — what a judge
 * weighing sufficiency reads, and a linear head cannot compute from the other features; whether the
 * answer stands beside the entity searched last in a sentence of the question's last relation
 * (askedRelation). Since the sixth re-test: for a chain question (chain-reader.ts), whether the pages
 * lead from its named entity to an answer, and whether the answer is that one; for a yes/no "same
 * nationality / country" comparison, whether the pages give both values, and whether the answer is
 * the one they decide for; for a search, whether the pages already decide the question (any of the
 * three readers), so that it can fetch nothing the answer needs, and whether it names the page the
 * question needs next (chainNeeds, comparisonNeeds) — what a judge of a query's utility looks for.
 */
export const PRM_ONLY_FEATURES = [
  'extract:names_last_entity', 'answer:comparison_decided', 'answer:comparison_wins', 'answer:asked_relation',
  'answer:chain_decided', 'answer:chain_wins', 'answer:same_decided', 'answer:same_wins', 'search:question_decided', 'search:names_needed_page',
] as const;

export const FEATURES = [...PROCESS_FEATURES, ...EMBEDDING_FEATURES, ...PRM_ONLY_FEATURES];

/** {@link PRM_ONLY_FEATURES} of a candidate. */
function prmOnlyFeatures(state: State, c: Candidate): number[] {
  const a = c.action;
  const none = PRM_ONLY_FEATURES.map(() => 0);
  if (a.type === 'answer') return [0, ...comparisonFeatures(state, a.answer), askedRelation(state, a.answer), ...chainReaderFeatures(state, a.answer), ...sameComparisonFeatures(state, a.answer), 0, 0];
  if (a.type === 'search') return [...none.slice(0, -2), questionDecided(state), namesNeededPage(state, a.query)];
  if (a.type !== 'extract') return none;
  const last = [...state.steps].reverse().find((s) => s.action.type === 'search')?.action;
  if (last?.type !== 'search') return none;
  const evidence = ` ${normalizeAnswer(a.evidence)} `;
  return [entities(last.query).some((e) => normalizeAnswer(e) !== '' && evidence.includes(` ${normalizeAnswer(e)} `)) ? 1 : 0, ...none.slice(1)];
}

/**
 * 1 when the answer stands, beside the entity searched last, in a sentence speaking of the relation the
 * question asks last — the one farthest from its named entity (relationOrder): "founded" in "When was
 * the capital of the country where F was made founded?". The chain's end, whatever the hops between.
 */
function askedRelation(state: State, answer: string): number {
  const last = stateView(state).chain.last;
  const norm = normalizeAnswer(answer);
  const asked = [...relationOrder(state.question.question)].sort((x, y) => y[1] - x[1])[0]?.[0];
  if (!last || !asked || norm === '') return 0;
  return last.sentences.some((x) => x.beside && ` ${x.norm} `.includes(` ${norm} `) && speaksOf(x.text, asked)) ? 1 : 0;
}

/** 1 when the retrieved pages already decide the question: a chain followed to its end, or both options' values of a comparison. */
function questionDecided(state: State): number {
  return chainAnswer(state) !== undefined || comparisonFeatures(state, '')[0] === 1 || sameComparisonFeatures(state, '')[0] === 1 ? 1 : 0;
}

/** 1 when the query names a page the question needs next and the retrieved pages lack (the readers' needs). */
function namesNeededPage(state: State, query: string): number {
  const q = ` ${normalizeAnswer(query)} `;
  return [...chainNeeds(state), ...comparisonNeeds(state)].some((n) => {
    const need = normalizeAnswer(n);
    return need !== '' && q.includes(` ${need} `);
  }) ? 1 : 0;
}

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
    return Float64Array.from([...p, ...e, ...prmOnlyFeatures(state, c)]);
  });
}
