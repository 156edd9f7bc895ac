/**
 * The action space of the gym policy: candidate actions generated from the state, as RAG-Gym's outer
 * MDP has them — queries built from the question's entities and relation words and from entities of
 * the retrieved documents, answers from spans of the retrieved text (or the options a comparison
 * question names, or yes/no), evidence sentences for protocols that ground. The policy only chooses;
 * what the candidates look like is fixed here.
 *
 * Protocols whose answers cite numbered references (ARENA, `Protocol.references`) get each answer
 * once per citation set (CITATION_RULES: the references holding the answer, those naming a question
 * entity, both, the top one or two by overlap with the question, all, none), deduplicated on
 * (answer, cited numbers), so that a policy can learn which references to cite. Their answer spans
 * come from the references, and their retrieval is the protocol's fixed action, not a choice: ARENA's
 * generator answers from the references it is given.
 */
import { normalizeAnswer, sentencesOf } from '../../core/text.js';
import type { Action, RetrievedDoc } from '../../core/trajectory.js';
import type { State } from '../../env/env.js';
import { retrievedDocs } from '../../env/env.js';
import type { Protocol } from '../../agents/protocol.js';
import { sameAction } from '../../process/tree.js';
import { entities, relationOverlap as overlap, relationWords } from '../../prm/question-parts.js';

export { entities, relationWords } from '../../prm/question-parts.js';

export const SOURCES = ['question', 'question-entity', 'entity-relation', 'doc-entity', 'answer-span', 'option', 'yes-no', 'evidence', 'given'] as const;
export type Source = (typeof SOURCES)[number];

/**
 * How a citing protocol's answer candidate chose its references, in the order the variants of one
 * answer are listed: the references holding the answer text, those naming an entity of the question,
 * the union of the two, the top one and top two by overlap with the question's entities and relation
 * words, all references, none.
 */
export const CITATION_RULES = ['answer', 'entity', 'answer+entity', 'top1', 'top2', 'all', 'none'] as const;
export type CitationRule = (typeof CITATION_RULES)[number];

/** One action the gym policy may choose, with where it came from and the facts its features read. */
export interface GymCandidate {
  action: Action;
  source: Source;
  /** Share of the question's relation words found in the sentence a span or evidence came from. */
  sentenceOverlap: number;
  /** For answers: a number, a name, yes/no, or another phrase. */
  kind?: 'number' | 'name' | 'yesno' | 'phrase';
  /** The span came from the latest search's documents. */
  recent?: boolean;
  /** Citing protocols: the rule that chose the answer's `citations` (the features read the citations themselves). */
  citationRule?: CitationRule;
}

export interface CandidateLimits {
  /** Entities of the latest documents turned into queries. */
  docEntities: number;
  /** Answer spans. */
  spans: number;
  /** Citing protocols: citation sets per answer (the first N rules of CITATION_RULES that give a new set). */
  citationSets: number;
}

export const CANDIDATE_LIMITS: CandidateLimits = { docEntities: 8, spans: 16, citationSets: CITATION_RULES.length };

const NUMBER = /\b\d{1,4}(?:,\d{3})*\b/g;
const YES_NO = /^(are|is|was|were|do|does|did|can|has|have)\b/i;
/** "is a(n) [Name] word": the lower-case word saying what something is. */
const KIND_OF = /\b(?:is|was) an? (?:[A-Z][\p{L}'’-]* )?([a-z]{3,})\b/gu;

/** "Which …, A or B?" → [A, B]. */
export function options(question: string): string[] {
  const m = /,\s*(.+?)\s+or\s+(.+?)\?$/.exec(question);
  return m ? [m[1]!.trim(), m[2]!.trim()] : [];
}

// ------------------------------------------------------------------------------------ citations

/** What the citation rules and features know of a citing protocol's references in a state. */
export interface ReferenceView {
  /** Number of references (citations run 1..n). */
  n: number;
  /** " normalised title and text " of each reference, padded with spaces for whole-word search. */
  texts: string[];
  /** Numbers (1-based) of the references naming an entity of the question. */
  entityRefs: number[];
  /** Reference numbers ordered by overlap with the question: entities named, then relation words. */
  ranked: number[];
}

/** Per state, per protocol (by its `references` function): candidates and features read a state's references once. */
const views = new WeakMap<State, Map<NonNullable<Protocol['references']>, ReferenceView>>();

/** The references of a citing protocol in a state, read once per state. Undefined for protocols that do not cite. */
export function referenceView(state: State, protocol: Pick<Protocol, 'references'>): ReferenceView | undefined {
  if (!protocol.references) return undefined;
  let byProtocol = views.get(state);
  if (!byProtocol) views.set(state, (byProtocol = new Map()));
  const cached = byProtocol.get(protocol.references);
  if (cached) return cached;
  const refs = protocol.references(state);
  const q = state.question.question;
  const qEntities = entities(q).map((e) => normalizeAnswer(e)).filter(Boolean);
  const rel = relationWords(q);
  const texts = refs.map((r) => ` ${normalizeAnswer(`${r.title} ${r.text}`)} `);
  const hits = texts.map((t) => qEntities.filter((e) => t.includes(` ${e} `)).length);
  const score = texts.map((t, i) => hits[i]! + overlap(t, rel));
  const numbers = texts.map((_, i) => i + 1);
  const view: ReferenceView = {
    n: refs.length,
    texts,
    entityRefs: numbers.filter((k) => hits[k - 1]! > 0),
    ranked: [...numbers].sort((a, b) => score[b - 1]! - score[a - 1]! || a - b),
  };
  byProtocol.set(protocol.references, view);
  return view;
}

/** Numbers (1-based) of the references whose text holds the answer as whole words. */
export function referencesHolding(view: ReferenceView, answer: string): number[] {
  const a = normalizeAnswer(answer);
  if (a === '') return [];
  return view.texts.flatMap((t, i) => (t.includes(` ${a} `) ? [i + 1] : []));
}

/** The citation set each rule gives for an answer, sorted ascending. */
export function citationSet(view: ReferenceView, answer: string, rule: CitationRule): number[] {
  const all = view.texts.map((_, i) => i + 1);
  const pick = (xs: readonly number[]) => [...new Set(xs)].sort((a, b) => a - b);
  switch (rule) {
    case 'answer':
      return referencesHolding(view, answer);
    case 'entity':
      return [...view.entityRefs];
    case 'answer+entity':
      return pick([...referencesHolding(view, answer), ...view.entityRefs]);
    case 'top1':
      return pick(view.ranked.slice(0, 1));
    case 'top2':
      return pick(view.ranked.slice(0, 2));
    case 'all':
      return all;
    case 'none':
      return [];
  }
}

/** The same reference numbers, as sets; `undefined` (no relevance block) is only equal to itself. */
export function sameCitations(a: readonly number[] | undefined, b: readonly number[] | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  const x = new Set(a);
  const y = new Set(b);
  return x.size === y.size && [...x].every((k) => y.has(k));
}

/** process/tree's sameAction, also telling apart answers that cite different references. */
export function sameGymAction(a: Action, b: Action): boolean {
  if (!sameAction(a, b)) return false;
  return a.type !== 'answer' || b.type !== 'answer' || sameCitations(a.citations, b.citations);
}

/** Each answer candidate once per citation rule that gives a new (answer, citations) pair; other candidates as they are. */
function withCitations(cands: readonly GymCandidate[], view: ReferenceView, limit: number): GymCandidate[] {
  const out: GymCandidate[] = [];
  for (const c of cands) {
    const a = c.action;
    if (a.type !== 'answer') {
      out.push(c);
      continue;
    }
    const sets: number[][] = [];
    for (const rule of CITATION_RULES) {
      if (sets.length >= limit) break;
      const citations = citationSet(view, a.answer, rule);
      if (sets.some((x) => sameCitations(x, citations))) continue;
      sets.push(citations);
      out.push({ ...c, action: { type: 'answer', answer: a.answer, citations }, citationRule: rule });
    }
  }
  return out;
}

// ----------------------------------------------------------------------------------- candidates

/**
 * The entities of a sentence, without a lone capitalised word opening it ("His", "Directed", "People")
 * unless some page is titled so: a sentence's first word is capitalised whether or not it is a name.
 */
function sentenceEntities(sentence: string, titles: ReadonlySet<string>): string[] {
  const first = sentence.trimStart().split(/\s+/)[0] ?? '';
  return entities(sentence).filter((e) => e.includes(' ') || !first.startsWith(e) || titles.has(normalizeAnswer(e)));
}

/** Candidate actions of a state for a protocol (only the action types it allows there). */
export function generateCandidates(state: State, protocol: Protocol, limits: Partial<CandidateLimits> = {}): GymCandidate[] {
  const lim: CandidateLimits = { ...CANDIDATE_LIMITS, ...limits };
  const view = referenceView(state, protocol);
  if (view) {
    // A citing protocol's retrieval is the environment's step, not the generator's choice.
    const fixed = state.mustAnswer ? undefined : protocol.fixedAction?.(state);
    if (fixed?.type === 'search') return [{ action: fixed, source: 'question', sentenceOverlap: 0 }];
  }
  const allowed = new Set(protocol.allowed(state));
  const q = state.question.question;
  const rel = relationWords(q);
  const qEntities = entities(q);
  const out: GymCandidate[] = [];
  const seen = new Set<string>();
  const add = (c: GymCandidate) => {
    const a = c.action;
    const key = `${a.type}:${normalizeAnswer(a.type === 'search' ? a.query : a.type === 'answer' ? a.answer : a.type === 'extract' ? a.evidence : '')}`;
    if (seen.has(key)) return;
    seen.add(key);
    out.push(c);
  };
  const searches = state.steps.filter((s) => s.action.type === 'search');
  const last = searches[searches.length - 1];
  // The entity the latest search was for, and whether a text is about it.
  const subject = last?.action.type === 'search' ? entities(last.action.query).map((e) => normalizeAnswer(e)) : [];
  const isAbout = (text: string) => subject.some((x) => x && normalizeAnswer(text).includes(x));
  // A page is about it when its title names it or it names the title ("Toalislander" → the page "Toalisland").
  const pageAbout = (title: string) => isAbout(title) || subject.some((x) => x && normalizeAnswer(title) !== '' && x.includes(normalizeAnswer(title)));
  // A citing protocol answers from its numbered references (the question's context, or what it retrieved).
  const allDocs: RetrievedDoc[] = view ? protocol.references!(state).map((p) => ({ passageId: p.id, title: p.title, text: p.text, score: 0 })) : retrievedDocs(state);

  if (allowed.has('extract')) {
    const lastDocs = last?.docs ?? [];
    // Sentences about the entity the latest search was for first, then by the question's relations.
    const ranked = lastDocs
      .flatMap((d) => sentencesOf(d.text).map((s) => ({ s, o: overlap(s, rel), about: pageAbout(d.title) || isAbout(s) ? 1 : 0 })))
      .sort((a, b) => b.about - a.about || b.o - a.o)
      .slice(0, 4);
    for (const { s, o } of ranked) add({ action: { type: 'extract', evidence: s }, source: 'evidence', sentenceOverlap: o });
    add({ action: { type: 'extract', evidence: 'None' }, source: 'evidence', sentenceOverlap: 0 });
  }
  if (allowed.has('search')) {
    add({ action: { type: 'search', query: q }, source: 'question', sentenceOverlap: 0 });
    for (const e of qEntities) {
      add({ action: { type: 'search', query: e }, source: 'question-entity', sentenceOverlap: 0 });
      if (rel.length) add({ action: { type: 'search', query: `${e} ${rel.join(' ')}` }, source: 'entity-relation', sentenceOverlap: 0 });
    }
    const qText = normalizeAnswer(q);
    // Entities of the latest documents, those in a sentence beside the entity that search was for
    // first (the likely bridge), then by how much their sentence speaks of the question's relations.
    // A page about that entity (its title names it) counts as beside it in every sentence, pronouns and all;
    // the page titles themselves are candidates too (a namesake's disambiguated title finds its page).
    const ranked: { e: string; score: number }[] = [];
    const titles = new Set((last?.docs ?? []).map((d) => normalizeAnswer(d.title)));
    for (const d of last?.docs ?? []) {
      const page = pageAbout(d.title);
      if (!qText.includes(normalizeAnswer(d.title))) ranked.push({ e: d.title, score: page ? 0 : 1 });
      for (const s of sentencesOf(d.text)) {
        const score = (page || isAbout(s) ? 2 : 0) + overlap(s, rel);
        for (const e of sentenceEntities(s, titles)) if (!qText.includes(normalizeAnswer(e))) ranked.push({ e, score });
      }
    }
    const best = new Map<string, number>();
    for (const { e, score } of ranked) best.set(e, Math.max(best.get(e) ?? -1, score));
    const docEntities = [...best.keys()].sort((a, b) => best.get(b)! - best.get(a)!);
    // The entity alone, and with the question's relation words ("Pricandport city born …" finds the city
    // where "Pricandport" alone finds films named after it; the words can also pull in pages that merely share them).
    for (const e of docEntities.slice(0, lim.docEntities)) {
      add({ action: { type: 'search', query: e }, source: 'doc-entity', sentenceOverlap: 0 });
      if (rel.length) add({ action: { type: 'search', query: `${e} ${rel.join(' ')}` }, source: 'doc-entity', sentenceOverlap: 0 });
    }
  }
  if (allowed.has('answer')) {
    const opts = options(q);
    for (const o of opts) add({ action: { type: 'answer', answer: o }, source: 'option', sentenceOverlap: 0, kind: 'name' });
    if (YES_NO.test(q.trim())) {
      add({ action: { type: 'answer', answer: 'yes' }, source: 'yes-no', sentenceOverlap: 0, kind: 'yesno' });
      add({ action: { type: 'answer', answer: 'no' }, source: 'yes-no', sentenceOverlap: 0, kind: 'yesno' });
    }
    const lastIds = new Set((last?.docs ?? []).map((d) => d.passageId));
    const spans: (GymCandidate & { about: boolean })[] = [];
    for (const d of allDocs) {
      const recent = lastIds.has(d.passageId);
      for (const s of sentencesOf(d.text)) {
        const o = overlap(s, rel);
        // Beside the entity the latest search was for: the answer of the chain's current hop is there.
        const about = recent && (pageAbout(d.title) || isAbout(s));
        for (const e of entities(s)) spans.push({ action: { type: 'answer', answer: e }, source: 'answer-span', sentenceOverlap: o, kind: 'name', recent, about });
        for (const m of s.matchAll(NUMBER)) spans.push({ action: { type: 'answer', answer: m[0] }, source: 'answer-span', sentenceOverlap: o, kind: 'number', recent, about });
        // What a thing is, in lower case ("was a Coeshi novelist", "is a mining company"): occupations, genres, industries.
        for (const m of s.matchAll(KIND_OF)) spans.push({ action: { type: 'answer', answer: m[1]! }, source: 'answer-span', sentenceOverlap: o, kind: 'phrase', recent, about });
      }
    }
    // The spans beside the latest search's entity first, then those whose sentences speak of the question's relation.
    spans.sort((a, b) => Number(b.about) - Number(a.about) || b.sentenceOverlap - a.sentenceOverlap || Number(b.recent ?? false) - Number(a.recent ?? false));
    let added = 0;
    for (const c of spans) {
      if (added >= lim.spans) break;
      const before = out.length;
      const { about: _about, ...candidate } = c;
      add(candidate);
      if (out.length > before) added++;
    }
    if (!out.some((c) => c.action.type === 'answer')) add({ action: { type: 'answer', answer: 'unknown' }, source: 'answer-span', sentenceOverlap: 0, kind: 'phrase' });
  }
  return view ? withCitations(out, view, lim.citationSets) : out;
}
