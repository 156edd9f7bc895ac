/**
 * The parts of a question and of a text that the process features and the gym's candidates read:
 * capitalised entity spans, the question's relation words ("director", "born", "capital"), how much a
 * sentence speaks of those relations, and how long a chain the question's wording asks for.
 */
import { normalizeAnswer } from '../core/text.js';
import { ENGLISH_STOP_WORDS } from '../retrieval/analyzer.js';

const WH = new Set(['who', 'what', 'when', 'where', 'which', 'why', 'how', 'whom', 'whose', 'in', 'is', 'are', 'was', 'were', 'do', 'does', 'did']);
const ENTITY = /\b[A-Z][\p{L}\d'’-]*(?:\s+(?:of|the|de|von|van|in|and|a)?\s*[A-Z\d][\p{L}\d'’-]*)*/gu;

/** Capitalised spans, without a sentence-initial question word. */
export function entities(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(ENTITY)) {
    let e = m[0].trim();
    const first = e.split(/\s+/)[0]!.toLowerCase();
    if (WH.has(first)) e = e.split(/\s+/).slice(1).join(' ');
    // A sentence-initial "The" or "In" alone is not a name.
    if (e.length > 1 && !ENGLISH_STOP_WORDS.has(e.toLowerCase()) && !out.includes(e)) out.push(e);
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

/** Share of the relation words a sentence speaks of (a word matches by its stem-like prefix: "direct" for director, directed). */
export function relationOverlap(sentence: string, rel: readonly string[]): number {
  if (rel.length === 0) return 0;
  const s = normalizeAnswer(sentence);
  return rel.filter((r) => s.includes(r.slice(0, Math.max(4, r.length - 2)))).length / rel.length;
}

/**
 * Lookups the question's wording asks for: one, plus one per nested relation ("the X of …", "the city
 * where …"). "When was the capital of the country where the star of F was born founded?" → 4. A
 * comparison ("A or B", yes/no over two) asks for at least two. Only a rough count: a feature whose
 * weight training decides, not a plan.
 */
export function chainLength(question: string): number {
  const q = ` ${question.toLowerCase()} `;
  const nested = (q.match(/ the [\p{L} -]+? (of|where|from) /gu) ?? []).length;
  const two = /,\s*.+\s+or\s+.+\?$/.test(question) || /^(are|is|was|were|do|does|did)\b.* and /i.test(question.trim()) ? 2 : 1;
  return Math.max(two, 1 + nested);
}
