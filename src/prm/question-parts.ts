/**
 * The parts of a question and of a text that the process features and the gym's candidates read:
 * capitalised entity spans, the question's relation words ("director", "born", "capital"), how much a
 * sentence speaks of those relations, and how long a chain the question's wording asks for.
 */
import { memoByText, normalizeAnswer } from '../core/text.js';
import { ENGLISH_STOP_WORDS } from '../retrieval/analyzer.js';

/** A page title without its disambiguator: "Tiva Liford (novelist)" → "Tiva Liford". */
export const stripDisambiguator = (title: string) => title.replace(/\s*\([^()]*\)\s*$/, '').trim();

/** A text as a literal inside a regular expression. */
export const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const WH = new Set(['who', 'what', 'when', 'where', 'which', 'why', 'how', 'whom', 'whose', 'in', 'is', 'are', 'was', 'were', 'do', 'does', 'did']);
const ENTITY = /\b[A-Z][\p{L}\d'’-]*(?:\s+(?:of|the|de|von|van|in|and|a)?\s*[A-Z\d][\p{L}\d'’-]*)*/gu;

/** A capitalised span without its opening question word ("When The Second Voyage" → "The Second Voyage"). */
function withoutQuestionWord(span: string): string {
  const words = span.split(/\s+/);
  return WH.has(words[0]!.toLowerCase()) ? words.slice(1).join(' ') : span;
}

/** Capitalised spans, without a sentence-initial question word. */
export function entities(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(ENTITY)) {
    const e = withoutQuestionWord(m[0].trim());
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

/**
 * Words a text may use for a relation the question names another way ("birthplace" → "born", "native";
 * "spouse" → "married"): the word knowledge a language model brings and a bag of words lacks. Stems,
 * matched like the relation word's own prefix. Common English, not the synthetic world's templates: a
 * question about a "birthplace" is answered by a sentence saying "was born in" in any corpus.
 */
export const RELATION_CUES: Readonly<Record<string, readonly string[]>> = {
  birthplace: ['born', 'native', 'birth'],
  born: ['born', 'native', 'birth'],
  author: ['wrote', 'written', 'writer', 'novel by', 'novels include', 'author'],
  wrote: ['wrote', 'written', 'writer', 'novel by', 'novels include', 'author'],
  spouse: ['married', 'wife', 'husband', 'spouse'],
  marry: ['married', 'wife', 'husband', 'spouse'],
  lead: ['lead', 'star', 'main character', 'played by'],
  star: ['lead', 'star', 'main character', 'played by'],
  stars: ['lead', 'star', 'main character', 'played by'],
  actor: ['lead', 'star', 'main character', 'played by', 'actor', 'actress'],
  played: ['lead', 'star', 'main character', 'plays', 'played'],
  university: ['universit', 'studied', 'graduat', 'campus'],
  graduated: ['universit', 'studied', 'graduat'],
  attend: ['universit', 'studied', 'graduat'],
  study: ['universit', 'studied', 'graduat'],
  father: ['father', 'son of', 'daughter of'],
  headquartered: ['headquarter', 'based in'],
  based: ['headquarter', 'based in'],
  made: ['made in', 'production from', 'produced'],
  produced: ['made in', 'production from', 'produced'],
  founded: ['founded', 'founding', 'established', 'founder'],
  founder: ['founded', 'founder', 'established'],
  established: ['founded', 'founding', 'established'],
  published: ['published', 'publisher', 'issued', 'brought out', 'edition'],
  publisher: ['published', 'publisher', 'issued', 'brought out'],
  directed: ['direct'],
  director: ['direct'],
  nationality: ['nationality', 'citizen', ' was a ', ' is a ', ' was an ', ' is an '],
  country: ['country', 'a city in', 'a town in', 'part of', 'cities of', 'made in', 'production from', 'a state in'],
  city: ['city', 'a university in', 'campus in', 'located in', 'based in', 'headquarter', 'born in', 'native of'],
  located: ['located', 'a city in', 'a town in', 'a university in', 'cities of', 'campus in', 'part of'],
  capital: ['capital'],
  region: ['region', 'a country in', 'a state in'],
  released: ['released', 'premiered'],
  die: ['died', 'death'],
};

/** The capitalised names of a sentence with where they stand, those `skip` rejects left out. */
function* names(sentence: string, skip: (mention: string) => boolean): Generator<{ text: string; start: number; end: number }> {
  for (const m of sentence.matchAll(ENTITY)) {
    const text = withoutQuestionWord(m[0].trim());
    if (text.length > 1 && !ENGLISH_STOP_WORDS.has(text.toLowerCase()) && !skip(text)) yield { text, start: m.index!, end: m.index! + m[0].length };
  }
}

/** Words a sentence uses to give another name of the same thing ("the title under which", "billed as"). */
export const ALIAS_CUES = ['title under which', 'billed as', 'working title', 'appeared as', 'known as', 'also called', 'renamed', 'released as'];

/**
 * The thing a sentence gives another name for: its first mention that `skip` does not reject, when the
 * sentence uses an alias cue ("T is the title under which W was first shown" → W, with T skipped).
 */
export function aliasObject(sentence: string, skip: (mention: string) => boolean): string | undefined {
  const s = sentence.toLowerCase();
  if (!ALIAS_CUES.some((c) => s.includes(c))) return undefined;
  for (const m of names(sentence, skip)) return m.text;
  return undefined;
}

/** A relation word's stem-like prefix: "direct" for director (so that "directed" matches). */
const relationStem = (r: string) => r.slice(0, Math.max(4, r.length - 2));

/** A text speaks of a relation word: by its stem-like prefix ("direct" for director, directed) or one of its {@link RELATION_CUES}. */
export function speaksOf(text: string, r: string): boolean {
  const { norm, low } = forms(text);
  if (norm.includes(relationStem(r))) return true;
  return (RELATION_CUES[r] ?? []).some((c) => low.includes(c.includes(' ') ? ` ${c.trim()} ` : c));
}

// The two forms speaksOf matches in, memoised: the same sentences are asked about every relation, for
// every candidate of every step. Cues of several words keep their articles ("was a"), which
// normalizeAnswer would drop.
const forms = memoByText((text) => ({ norm: normalizeAnswer(text), low: ` ${text.toLowerCase().replace(/[^\p{L}\d]+/gu, ' ')} ` }), 100_000);

/** Where a sentence speaks of a relation word: the [start, end) of each cue it uses, in its lower-cased text. */
function cueSpans(sentence: string, r: string): [number, number][] {
  const s = sentence.toLowerCase();
  const out: [number, number][] = [];
  for (const c of [relationStem(r), ...(RELATION_CUES[r] ?? [])]) {
    for (let i = s.indexOf(c); i >= 0; i = s.indexOf(c, i + 1)) out.push([i, i + c.length]);
  }
  return out;
}

const MENTION = /\b\d{1,4}\b/g;
/** Characters between a relation's cue and its object at most ("founded in 1850 by "). */
const OBJECT_GAP = 16;

/**
 * The names (and numbers) a sentence gives as the object of a relation: for each cue of `r`, the
 * mentions starting within a few words after it and the nearest one ending just before it ("X was
 * born in Oriwick" → Oriwick; "a firm that F established in 1850" → F and 1850; "Born in 1932, X was a
 * Hyrnoran novelist" → 1932, so "Hyrnoran" is not where X was born). Mentions `skip` rejects (the
 * entity the sentence is about) are passed over.
 */
export function relationObjects(sentence: string, r: string, skip: (mention: string) => boolean = () => false): string[] {
  const mentions: { text: string; start: number; end: number }[] = [];
  mentions.push(...names(sentence, skip));
  for (const m of sentence.matchAll(MENTION)) mentions.push({ text: m[0], start: m.index!, end: m.index! + m[0].length });
  mentions.sort((a, b) => a.start - b.start);
  const out = new Set<string>();
  for (const [start, end] of cueSpans(sentence, r)) {
    // Within a few words of the cue: "founded in 1850 by F" gives both, "Born in 1932, X was a Hyrnoran …" only the year.
    const after = mentions.filter((m) => m.start >= end && m.start - end <= OBJECT_GAP);
    const before = [...mentions].reverse().find((m) => m.end <= start && start - m.end <= OBJECT_GAP);
    for (const o of after.length ? after : before ? [before] : []) out.add(o.text);
  }
  return [...out];
}

/** Share of the relation words a sentence speaks of ({@link speaksOf}). */
export function relationOverlap(sentence: string, rel: readonly string[]): number {
  if (rel.length === 0) return 0;
  return rel.filter((r) => speaksOf(sentence, r)).length / rel.length;
}

/**
 * Each relation word of a question with its distance from the entity the question starts from: the
 * lookup nearest that entity comes first. A chain nests outwards from its named entity — "the spouse
 * of the lead actor of F" asks for the lead actor first — and a relative clause's noun stands to the
 * left of the entity ("the university the author of F graduated from"), so the words on the left count
 * first, nearest first (distance 1, 2, …), then those on the right (after all on the left).
 */
export function relationOrder(question: string): Map<string, number> {
  const names = entities(question);
  const toks: string[] = question.toLowerCase().match(/[\p{L}]+/gu) ?? [];
  // Where the question's last named entity begins (the chain's start; comparisons name two).
  const last = names[names.length - 1];
  const first = last ? (last.toLowerCase().match(/[\p{L}]+/gu) ?? [])[0] : undefined;
  let at = first ? toks.lastIndexOf(first) : -1;
  if (at < 0) at = toks.length;
  const out = new Map<string, number>();
  for (const r of relationWords(question)) {
    const i = toks.indexOf(r);
    if (i < 0) continue;
    out.set(r, i < at ? at - i : toks.length + (i - at));
  }
  return out;
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
