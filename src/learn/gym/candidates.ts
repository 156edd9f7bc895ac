/**
 * The action space of the gym policy: candidate actions generated from the state, as RAG-Gym's outer
 * MDP has them — queries built from the question's entities and relation words and from entities of
 * the retrieved documents, answers from spans of the retrieved text (or the options a comparison
 * question names, or yes/no), evidence sentences for protocols that ground. The policy only chooses;
 * what the candidates look like is fixed here.
 */
import { normalizeAnswer, sentencesOf } from '../../core/text.js';
import type { Action } from '../../core/trajectory.js';
import type { State } from '../../env/env.js';
import { retrievedDocs } from '../../env/env.js';
import type { Protocol } from '../../agents/protocol.js';
import { ENGLISH_STOP_WORDS } from '../../retrieval/analyzer.js';

export const SOURCES = ['question', 'question-entity', 'entity-relation', 'doc-entity', 'answer-span', 'option', 'yes-no', 'evidence', 'given'] as const;
export type Source = (typeof SOURCES)[number];

export interface GymCandidate {
  action: Action;
  source: Source;
  /** Share of the question's relation words found in the sentence a span or evidence came from. */
  sentenceOverlap: number;
  /** For answers: a number, a name, yes/no, or another phrase. */
  kind?: 'number' | 'name' | 'yesno' | 'phrase';
  /** The span came from the latest search's documents. */
  recent?: boolean;
}

const WH = new Set(['who', 'what', 'when', 'where', 'which', 'why', 'how', 'whom', 'whose', 'in', 'is', 'are', 'was', 'were', 'do', 'does', 'did']);
const ENTITY = /\b[A-Z][\p{L}\d'’-]*(?:\s+(?:of|the|de|von|van|in|and|a)?\s*[A-Z\d][\p{L}\d'’-]*)*/gu;
const NUMBER = /\b\d{1,4}(?:,\d{3})*\b/g;
const YES_NO = /^(are|is|was|were|do|does|did|can|has|have)\b/i;

/** Capitalised spans, without a sentence-initial question word. */
export function entities(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(ENTITY)) {
    let e = m[0].trim();
    const first = e.split(/\s+/)[0]!.toLowerCase();
    if (WH.has(first)) e = e.split(/\s+/).slice(1).join(' ');
    if (e.length > 1 && !out.includes(e)) out.push(e);
  }
  return out;
}

/** Content words of the question outside its entities: "director", "born", "capital". */
export function relationWords(question: string): string[] {
  let rest = question;
  for (const e of entities(question)) rest = rest.replace(e, ' ');
  const words = rest.toLowerCase().match(/[\p{L}]+/gu) ?? [];
  return [...new Set(words.filter((w) => !ENGLISH_STOP_WORDS.has(w) && !WH.has(w) && w.length > 2))];
}

/** "Which …, A or B?" → [A, B]. */
export function options(question: string): string[] {
  const m = /,\s*(.+?)\s+or\s+(.+?)\?$/.exec(question);
  return m ? [m[1]!.trim(), m[2]!.trim()] : [];
}

function overlap(sentence: string, rel: readonly string[]): number {
  if (rel.length === 0) return 0;
  const s = normalizeAnswer(sentence);
  return rel.filter((r) => s.includes(r.slice(0, Math.max(4, r.length - 2)))).length / rel.length;
}

/** Candidate actions of a state for a protocol (only the action types it allows there). */
export function generateCandidates(state: State, protocol: Protocol, limits = { docEntities: 6, spans: 12 }): GymCandidate[] {
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
  const allDocs = retrievedDocs(state);

  if (allowed.has('extract')) {
    const lastDocs = last?.docs ?? [];
    const ranked = lastDocs.flatMap((d) => sentencesOf(d.text)).map((s) => ({ s, o: overlap(s, rel) })).sort((a, b) => b.o - a.o).slice(0, 3);
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
    const docEntities = (last?.docs ?? []).flatMap((d) => entities(d.text)).filter((e) => !qText.includes(normalizeAnswer(e)));
    for (const e of [...new Set(docEntities)].slice(0, limits.docEntities)) add({ action: { type: 'search', query: rel.length ? `${e} ${rel.join(' ')}` : e }, source: 'doc-entity', sentenceOverlap: 0 });
  }
  if (allowed.has('answer')) {
    const opts = options(q);
    for (const o of opts) add({ action: { type: 'answer', answer: o }, source: 'option', sentenceOverlap: 0, kind: 'name' });
    if (YES_NO.test(q.trim())) {
      add({ action: { type: 'answer', answer: 'yes' }, source: 'yes-no', sentenceOverlap: 0, kind: 'yesno' });
      add({ action: { type: 'answer', answer: 'no' }, source: 'yes-no', sentenceOverlap: 0, kind: 'yesno' });
    }
    const lastIds = new Set((last?.docs ?? []).map((d) => d.passageId));
    const spans: GymCandidate[] = [];
    for (const d of allDocs) {
      for (const s of sentencesOf(d.text)) {
        const o = overlap(s, rel);
        for (const e of entities(s)) spans.push({ action: { type: 'answer', answer: e }, source: 'answer-span', sentenceOverlap: o, kind: 'name', recent: lastIds.has(d.passageId) });
        for (const m of s.matchAll(NUMBER)) spans.push({ action: { type: 'answer', answer: m[0] }, source: 'answer-span', sentenceOverlap: o, kind: 'number', recent: lastIds.has(d.passageId) });
      }
    }
    // The spans whose sentences speak of the question's relation first.
    spans.sort((a, b) => b.sentenceOverlap - a.sentenceOverlap || Number(b.recent ?? false) - Number(a.recent ?? false));
    let added = 0;
    for (const c of spans) {
      if (added >= limits.spans) break;
      const before = out.length;
      add(c);
      if (out.length > before) added++;
    }
    if (!out.some((c) => c.action.type === 'answer')) add({ action: { type: 'answer', answer: 'unknown' }, source: 'answer-span', sentenceOverlap: 0, kind: 'phrase' });
  }
  return out;
}
