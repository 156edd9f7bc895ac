/**
 * What an agent's retrieved pages say the answer to a chain question is ("When was the capital of the
 * country where the director of F was born founded?", "Who wrote F?"), read only from the question's
 * text and the pages retrieved so far — never from gold answers, metadata or decompositions. For a
 * process feature "the answer is the one the retrieved pages lead to".
 *
 * The question is parsed into its named entity and the relations nesting outwards from it ("the R of
 * X", "the city where X was born", "the university X graduated from", then the question's own ask).
 * The reader starts at the entity's pages — following an alternative title ("T is the title under
 * which W was first shown …") to the real title's pages — and for each relation finds its object on
 * the current pages by English cues: a name just after a cue ("directed by D", "married to S") or just
 * before one ("D directed"), a year after one ("founded in 1850"), a descriptor in the opening ("a 1999
 * western film", "a Hyrnoran novelist"). Each link but the last must be a retrieved page, matched by
 * its exact name; a name with several disambiguated pages ("Tiva Liford (novelist)") is only followed
 * to a page that fits the relation or names where the chain came from. A missing link, or pages that
 * disagree, leave the answer undefined. Comparisons ("…, A or B?", "Are A and B …?") give nothing.
 *
 * Where the chain stops at a page that is not retrieved, the reader names it ({@link chainNeeds}): the
 * question's entity, the real title an alternative-title note gives, or the object read on the last
 * page reached — the page a search should fetch next. The comparison reader reads names off pages with
 * the same cues ({@link relationName}, {@link realTitleOf}).
 */
import { memoByText, normalizeAnswer, sentencesOf } from '../core/text.js';
import type { State } from '../env/env.js';
import { retrievedDocs } from '../env/env.js';
import { ALIAS_CUES, escapeRegExp, stripDisambiguator } from './question-parts.js';

type Relation = 'director' | 'star' | 'author' | 'publisher' | 'founder' | 'headquarters' | 'birthplace' | 'almaMater' | 'spouse' | 'father' | 'capital'
  | 'productionCountry' | 'country' | 'city' | 'language' | 'region' | 'birthYear' | 'deathYear' | 'releaseYear' | 'publicationYear' | 'foundingYear'
  | 'genre' | 'industry' | 'occupation' | 'nationality';

/** A question's named entity and its relations, innermost first: "the spouse of the author of F" → author, spouse. */
interface Chain { entity: string; relations: Relation[] }

// ---------------------------------------------------------------------------------------------------
// The question

/** Words naming a relation, tried in order ("the city where … is headquartered" is the headquarters, not a city). */
const RELATION_WORDS: [string[], Relation][] = [
  [['directed', 'director', 'direct'], 'director'], [['wrote', 'written', 'author', 'writer'], 'author'],
  [['star', 'stars', 'starred', 'lead', 'actor', 'actress', 'played'], 'star'], [['headquartered', 'headquarters', 'based'], 'headquarters'],
  [['graduated', 'study', 'studied', 'attend', 'attended', 'university', 'college', 'alma'], 'almaMater'],
  [['spouse', 'marry', 'married', 'wife', 'husband'], 'spouse'], [['father'], 'father'], [['capital'], 'capital'],
  [['made', 'produced', 'produce'], 'productionCountry'], [['genre'], 'genre'], [['industry', 'business'], 'industry'],
  [['language', 'spoken', 'speak'], 'language'], [['occupation', 'profession', 'job'], 'occupation'], [['region'], 'region'],
  [['country'], 'country'], [['city', 'town', 'located'], 'city'],
];

/** The relation a handful of question words name ("lead actor", "the city where … was born", "When … founded"). */
function relationOf(words: readonly string[], askingWhen = false): Relation | undefined {
  const has = (...ws: string[]) => ws.some((w) => words.includes(w));
  const when = askingWhen || has('year');
  if (has('born', 'birth', 'birthplace')) return when ? 'birthYear' : 'birthplace';
  if (has('die', 'died', 'death')) return when ? 'deathYear' : undefined;
  if (has('released', 'release', 'premiered')) return when ? 'releaseYear' : undefined;
  if (has('published', 'publish', 'publisher', 'publication')) return when ? 'publicationYear' : 'publisher';
  if (has('founded', 'founder', 'established', 'founding')) return when ? 'foundingYear' : 'founder';
  if (when) return undefined;
  if (has('nationality', 'citizenship') || (has('country') && has('from'))) return 'nationality';
  return RELATION_WORDS.find(([ws]) => has(...ws))?.[1];
}

/** Words joining the capitalised words of a name ("Stations of Lighthouse", "A Canal in Elovale"). */
const CONNECTORS = new Set(['of', 'in', 'the', 'a', 'an', 'and', 'on', 'from', 'for', 'to', 'at', 'upon', 'de', 'la', 'le', 'von', 'van', 'da', 'del', 'du']);
const isName = (s: string) => {
  const words = s.split(' ');
  return /^\p{Lu}/u.test(s) && !CONNECTORS.has(words[words.length - 1]!) && words.every((w) => /^[\p{Lu}\d]/u.test(w) || CONNECTORS.has(w));
};

/** A noun phrase: a name, "the R of NP", "the N where NP is V", or "the N NP V [from]". */
function parseNounPhrase(np: string, depth = 0): Chain | undefined {
  if (/^\p{Lu}/u.test(np)) return isName(np) ? { entity: np, relations: [] } : undefined;
  if (depth > 8) return undefined;
  const nest = (inner: string, words: string[]): Chain | undefined => {
    const r = relationOf(words);
    const c = r && parseNounPhrase(inner, depth + 1);
    return r && c ? { entity: c.entity, relations: [...c.relations, r] } : undefined;
  };
  const of = /^the ((?:[a-z]+ ){0,2}?[a-z]+) of (.+)$/.exec(np);
  const where = /^the ([a-z]+) (?:where|in which) (.+) (?:is|was|are|were) ([a-z]+)$/.exec(np);
  const relative = /^the ([a-z]+) (?:that |which |who |whom )?(.+?) ([a-z]+)(?: (from|at|in|to))?$/.exec(np);
  return (of ? nest(of[2]!, of[1]!.split(' ')) : undefined)
    ?? (where ? nest(where[2]!, [where[1]!, where[3]!]) : undefined)
    ?? (relative ? nest(relative[2]!, [relative[1]!, relative[3]!]) : undefined);
}

const ASK_WORDS = new Set(['who', 'whom', 'what', 'which', 'is', 'was', 'are', 'were']);

/**
 * The chain a question asks for: the widest noun phrase that parses, with the question's other words
 * naming the last relation ("When was NP founded?") or none ("Who is NP?"). Undefined for comparisons.
 */
const parseQuestion = memoByText((question: string): Chain | undefined => {
  const q = question.trim().replace(/\s*\?+$/, '');
  if (/,[^,]* or [^,]+$/.test(q) || !/^(?:(?:in|from|at|on) )?(?:who|whom|what|which|where|when)\b/i.test(q)) return undefined;
  const tokens = q.split(/\s+/);
  const lower = (t: string) => /^[a-z]+$/.test(t);
  tokens[0] = tokens[0]!.toLowerCase();
  if (/^(in|from|at|on)$/.test(tokens[0]) && tokens[1]) tokens[1] = tokens[1].toLowerCase();
  for (let i = 1; i < tokens.length && lower(tokens[i - 1]!); i++) {
    for (let j = tokens.length; j > i && (j === tokens.length || lower(tokens[j]!)); j--) {
      const np = parseNounPhrase(tokens.slice(i, j).join(' '));
      if (!np) continue;
      const outer = [...tokens.slice(0, i), ...tokens.slice(j)];
      const asked = relationOf(outer, outer.includes('when'));
      if (asked) return { entity: np.entity, relations: [...np.relations, asked] };
      if (np.relations.length > 0 && outer.every((w) => ASK_WORDS.has(w))) return np;
      return undefined;
    }
  }
  return undefined;
}, 20_000);

// ---------------------------------------------------------------------------------------------------
// Cues on a page

/** Cue regexes, tried in the order given (the strongest first). */
const cues = (...phrases: string[]) => phrases.map((p) => new RegExp(`\\b${p}\\b`, 'gi'));
/** Cues after which a relation's object is named ("directed by D", "the capital of X is C"). */
const AFTER: Partial<Record<Relation, RegExp[]>> = {
  director: cues('directed by', 'director'),
  star: cues('played by', 'starring', 'stars'),
  author: cues('written by', '(?:novel|book|story|poem) by', 'author'),
  publisher: cues('published by', 'issued by', 'publisher'),
  founder: cues('(?:founded|established|started)(?: in \\d{3,4})? by', 'founder'),
  headquarters: cues('headquartered in', 'headquarters (?:are|is|were|was) in', 'based in'),
  birthplace: cues('born (?:and raised )?in', 'birthplace', 'native of'),
  almaMater: cues('graduated from', 'graduate of', 'studied at', 'alumn(?:us|a) of', 'attended', 'educated at'),
  spouse: cues('married to', 'married', 'spouse', 'wife', 'husband'),
  father: cues('(?:son|daughter|child) of', 'father'),
  capital: cues('capital(?: city)?'),
  productionCountry: cues('made in', 'production from', 'produced in'),
  // "a town in the Sable Coast, part of Isemark": the wider place ("part of") before the nearer one.
  country: cues('part of', 'capital(?: city)? of', 'cities of', '(?:city|town|village) in', 'located in'),
  city: cues('located in', 'campus in', '(?:university|college|polytechnic|school) in', 'based in'),
  language: cues('language', 'speak', 'spoken'),
  region: cues('(?:country|state|nation) in', 'region'),
};
/** Cues right before which a relation's object is named ("D directed", "P brought out F"). */
const BEFORE: Partial<Record<Relation, RegExp[]>> = {
  director: cues('directed'),
  star: cues('plays the (?:lead|main)', 'played the lead', 'star(?:s|red) in'),
  author: cues('wrote'),
  publisher: cues('brought out', 'published'),
  founder: cues('founded', 'established'),
};
/** Cues after which a relation's year stands ("born in 1915", "founded in 1850 by", "Founded by F in 1978"). */
const YEAR_AFTER: Partial<Record<Relation, RegExp[]>> = {
  birthYear: cues('born', 'birth'),
  deathYear: cues('died', 'death'),
  releaseYear: cues('(?<!re-?)released', 'came out', '(?:film|picture|movie) from'),
  publicationYear: cues('published', 'appeared', '(?:novel|book) from'),
  foundingYear: cues('founded', 'founding', 'established'),
};
/** Descriptors in an opening: "is a 1999 Hyrnoran science fiction film", "was a Coeshi film director who". */
const WORDS = '((?:[a-z][a-z-]* ){0,2}?[a-z][a-z-]*)';
const DESCRIPTOR: Partial<Record<Relation, RegExp[]>> = {
  genre: [new RegExp(`\\b(?:is|was) an? (?:\\d{3,4} )?(?:\\p{Lu}[\\p{L}-]* )?${WORDS} (?:film|picture|movie|novel|book)\\b`, 'u')],
  industry: [new RegExp(`\\b(?:is|was) an? ${WORDS} (?:company|firm|corporation)\\b`), new RegExp(`\\bin the ${WORDS} (?:business|industry|sector|trade)\\b`)],
  occupation: [new RegExp(`\\b(?:is|was) an? (?:\\p{Lu}[\\p{L}-]* )?${WORDS}(?= who\\b|[.,;]|$)`, 'u')],
  nationality: [/\b(?:is|was) an? (\p{Lu}[\p{L}-]*) [a-z]/u],
};
/** A film's country as its opening's nationality adjective: "is a 1999 Drobyistani western film". */
const FILM_DEMONYM = /\b(?:is|was) an? (?:\d{3,4} )?(\p{Lu}[\p{L}-]*) [a-z][a-z -]* (?:film|picture|movie)\b/u;
/** "(1906–1969)" after a person's name: birth and death. */
const LIFESPAN = /\((\d{3,4})\s*[–-]\s*(\d{3,4})\)/;
/** "is a 1999 … film": the year a work defines itself by. */
const COPULA_YEAR = /\b(?:is|was) an? (\d{3,4})\b/;
/** Sentences about something later in a thing's life, whose years are not the one asked for. */
const LATER = /\b(?:re-?released|re-?issued|restored|revised|reprinted|adapted|later|opened|moved|sold|awarded|received|won|shortlisted|premiered)\b/i;
const YEAR = /(?<![\d,.])\d{3,4}(?!\d|[,.]\d)/g;
/** What a disambiguator calls the kind of thing a relation starts from ("(film)"), and the role its object plays ("(novelist)"). */
const SUBJECT: Partial<Record<Relation, RegExp>> = {
  director: /film|picture|movie/, star: /film|picture|movie/, productionCountry: /film|picture|movie/, releaseYear: /film|picture|movie/,
  genre: /film|picture|movie|novel|book/, author: /novel|book/, publisher: /novel|book/, publicationYear: /novel|book/,
};
const ROLE: Partial<Record<Relation, RegExp>> = { director: /direct/, star: /act|star|perform/, author: /novel|writ|author|poet/, founder: /entrepreneur|business|founder|industrial/ };

// ---------------------------------------------------------------------------------------------------
// Pages and the names they mention

/** A retrieved page: key is its lower-cased title without a disambiguator ("Tiva Liford (novelist)" → "tiva liford"). */
interface Page { title: string; key: string; disambiguator: string; sentences: string[] }
interface Mention { text: string; start: number; end: number }
/** One thing the chain stands at: the pages of one title, and the names it goes by. */
interface Thing { pages: Page[]; names: string[] }

const isAliasNote = (p: Page) => ALIAS_CUES.some((c) => (p.sentences[0] ?? '').toLowerCase().includes(c));
const NAME_SPAN = /\p{Lu}[\p{L}\d'’-]*(?:\s+(?:(?:of|the|de|von|van|da|del|du|la|le)\s+)*\p{Lu}[\p{L}\d'’-]*)*/gu;
/** Words that open a sentence without being part of the name after them ("When W opened …"). */
const OPENERS = new Set(['when', 'while', 'after', 'before', 'although', 'though', 'since', 'during', 'because', 'once', 'as', 'in', 'on', 'at', 'by', 'for', 'with', 'if', 'but', 'and', 'her', 'his', 'its', 'their']);

/** The capitalised spans of a sentence, less a capital that only opens the sentence ("Early editions of …"). */
const capitalisedSpans = memoByText((s: string): Mention[] => {
  const out: Mention[] = [];
  for (const m of s.matchAll(NAME_SPAN)) {
    let [text, start] = [m[0].replace(/['’]s$/, ''), m.index!];
    const first = /^\S+\s+/.exec(text);
    if (start === 0 && first && OPENERS.has(first[0].trim().toLowerCase())) [start, text] = [start + first[0].length, text.slice(first[0].length)];
    else if (start === 0 && !/\s/.test(text)) continue;
    out.push({ text, start, end: start + text.length });
  }
  return out;
}, 100_000);

class Library {
  readonly byKey = new Map<string, Page[]>();
  private readonly found = new Map<string, Mention[]>();
  constructor(pages: Page[]) {
    for (const p of pages) this.byKey.set(p.key, [...(this.byKey.get(p.key) ?? []), p]);
  }
  /**
   * The names a sentence mentions, in order: capitalised spans and retrieved page names, each inside a
   * longer one dropped ("Elovale" in "A Canal in Elovale", "Gralethstead" in "Gralethstead University").
   */
  mentionsIn(s: string): Mention[] {
    const hit = this.found.get(s);
    if (hit) return hit;
    const low = s.toLowerCase();
    const all = [...capitalisedSpans(s)];
    for (const [key, pages] of this.byKey) {
      for (let i = low.indexOf(key); i >= 0; i = low.indexOf(key, i + 1)) {
        if (!/[\p{L}\d]/u.test(low[i - 1] ?? '') && !/[\p{L}\d]/u.test(low[i + key.length] ?? '')) all.push({ text: stripDisambiguator(pages[0]!.title), start: i, end: i + key.length });
      }
    }
    const isPage = (m: Mention) => this.byKey.has(m.text.toLowerCase());
    const out = all.filter((m) => !all.some((o) => o !== m && o.start <= m.start && o.end >= m.end && (o.end - o.start > m.end - m.start || (isPage(o) && !isPage(m)))))
      // A span straddling a page name's edge ("A Canal" against "A Canal in Elovale") gives way to it.
      .filter((m, _, kept) => isPage(m) || !kept.some((o) => o !== m && isPage(o) && o.start < m.end && m.start < o.end))
      .sort((a, b) => a.start - b.start);
    this.found.set(s, out);
    return out;
  }
  /** The things named `name`: one per title (namesakes apart), alternative-title notes left out. */
  things(name: string): Thing[] {
    const byTitle = new Map<string, Page[]>();
    for (const p of this.byKey.get(name.toLowerCase()) ?? []) if (!isAliasNote(p)) byTitle.set(p.title, [...(byTitle.get(p.title) ?? []), p]);
    return [...byTitle.values()].map((pages) => ({ pages, names: [name] }));
  }
}

/** The first name after a cue, with at most a few small words (and the subject's own names) between. */
function nameAfter(s: string, found: Mention[], from: number, own: (n: string) => boolean): string | undefined {
  let [gapStart, words] = [from, 0];
  for (const m of found) {
    if (m.start < from) continue;
    const gap = s.slice(gapStart, m.start).replace(/['’]s\b/g, ' ');
    if (!/^\s*(?:[a-z]+\s+)*$/.test(gap) || (words += gap.split(/\s+/).filter(Boolean).length) > 4) return undefined;
    if (!own(m.text)) return m.text;
    gapStart = m.end;
  }
  return undefined;
}

/** The first year after a cue within its clause. */
function yearAfter(s: string, from: number): string | undefined {
  for (const m of s.matchAll(YEAR)) {
    if (m.index! >= from) return m.index! - from <= 40 && !/[,.;:]/.test(s.slice(from, m.index!)) ? m[0] : undefined;
  }
  return undefined;
}

/** The first value `read` finds at a cue: cue by cue, sentence by sentence. */
function atCues(cueList: RegExp[] | undefined, sentences: string[], read: (s: string, cue: RegExpMatchArray) => string | undefined): string | undefined {
  for (const cue of cueList ?? []) for (const s of sentences) for (const c of s.matchAll(cue)) {
    const v = read(s, c);
    if (v) return v;
  }
  return undefined;
}

/**
 * The retrieved country a nationality adjective names: a page saying "… are called Ds", else a country's
 * page named as the adjective's stem ("Zoshimistan" for "Zoshimistani").
 */
function countryOfDemonym(demonym: string, lib: Library): string | undefined {
  const called = new RegExp(`\\bcalled ${escapeRegExp(demonym)}s?\\b`);
  const low = demonym.toLowerCase();
  const stem = ([key, ps]: [string, Page[]]) => key.length >= 4 && low.startsWith(key) && /^[a-z]{0,3}$/.test(low.slice(key.length)) && /\b(?:country|state|nation|kingdom|republic)\b/i.test(ps[0]!.sentences[0] ?? '');
  const pages = [...lib.byKey.values()].find((ps) => ps.some((p) => p.sentences.some((s) => called.test(s)))) ?? [...lib.byKey].find(stem)?.[1];
  return pages && stripDisambiguator(pages[0]!.title);
}

/** A relation's object named on a thing's pages ("directed by D", "D directed"), its own names passed over, or undefined. */
function namedObject(thing: Thing, relation: Relation, lib: Library): string | undefined {
  const own = (n: string) => thing.names.some((x) => x.toLowerCase() === n.toLowerCase()) || thing.pages.some((p) => p.key === n.toLowerCase());
  const sentences = thing.pages.flatMap((p) => p.sentences);
  return atCues(AFTER[relation], sentences, (s, c) => nameAfter(s, lib.mentionsIn(s), c.index! + c[0].length, own))
    ?? atCues(BEFORE[relation], sentences, (s, c) => {
      const m = lib.mentionsIn(s).filter((x) => x.end <= c.index!).pop();
      return m && /^\s*$/.test(s.slice(m.end, c.index!)) && !own(m.text) ? m.text : undefined;
    });
}

/** A relation's object on a thing's pages, or undefined. */
function objectOf(thing: Thing, relation: Relation, lib: Library): string | undefined {
  const named = namedObject(thing, relation, lib);
  if (named) return named;
  const sentences = thing.pages.flatMap((p) => p.sentences);
  if (YEAR_AFTER[relation]) {
    const usable = sentences.filter((s) => !LATER.test(s));
    const span = usable.map((s) => LIFESPAN.exec(s)).find(Boolean);
    if (span && (relation === 'birthYear' || relation === 'deathYear')) return span[relation === 'birthYear' ? 1 : 2];
    const year = atCues(YEAR_AFTER[relation], usable, (s, c) => yearAfter(s, c.index! + c[0].length));
    if (year || (relation !== 'releaseYear' && relation !== 'publicationYear')) return year;
    return usable.map((s) => COPULA_YEAR.exec(s)?.[1]).find(Boolean);
  }
  for (const re of DESCRIPTOR[relation] ?? []) for (const s of sentences) {
    const m = re.exec(s);
    if (m) return m[1];
  }
  const demonym = relation === 'productionCountry' ? sentences.map((s) => FILM_DEMONYM.exec(s)?.[1]).find(Boolean) : undefined;
  return demonym ? countryOfDemonym(demonym, lib) : undefined;
}

// ---------------------------------------------------------------------------------------------------
// Following the chain

/**
 * The retrieved things a name given on a page stands for that may be the one meant: a title without a
 * disambiguator, or one whose disambiguator fits the relation ("(novelist)" for an author, "(film)" for
 * a director's subject), or whose pages name where the chain came from ("… wrote The Paper Letter").
 */
function follow(name: string, lib: Library, via: Relation | undefined, next: Relation | undefined, cameFrom: readonly string[]): Thing[] {
  const named = cameFrom.map((n) => new RegExp(`(?<![\\p{L}\\d])${escapeRegExp(n)}(?![\\p{L}\\d])`, 'iu'));
  return lib.things(name).filter(({ pages }) => {
    const d = pages[0]!.disambiguator;
    return !d || (via && ROLE[via]?.test(d)) || (next && SUBJECT[next]?.test(d)) || pages.some((p) => p.sentences.some((s) => named.some((re) => re.test(s))));
  });
}

/** " in" and a capitalised span: the rest of a title a capitalised span stops short of ("A Orchard" + " in Prexwick"). */
const IN_NAME = new RegExp(`^ in (?:${NAME_SPAN.source})`, 'u');

/**
 * The real title an alternative-title note gives: the first name of its opening sentence other than its
 * own (a second work the note names comes later), as mentioned, and written out in full — a title that
 * is no retrieved page's is only a capitalised span, which stops at "in" ("A Orchard" of "A Orchard in
 * Prexwick"), so the span is carried on over " in" and the capitalised words after it.
 */
function realTitle(note: Page, lib: Library): { mention: string; full: string } | undefined {
  const s = note.sentences[0]!;
  const real = lib.mentionsIn(s).find((m) => m.text.toLowerCase() !== note.key);
  if (!real) return undefined;
  let [full, end] = [real.text, real.end];
  if (!lib.byKey.has(real.text.toLowerCase())) {
    for (let m = IN_NAME.exec(s.slice(end)); m; m = IN_NAME.exec(s.slice(end))) [full, end] = [full + m[0], end + m[0].length];
  }
  return { mention: real.text, full };
}

/**
 * The thing the question names: its pages, or those of the real title an alternative-title note gives;
 * none, with the name whose page is missing (the entity's, or the real title's), when neither is retrieved.
 */
function start(entity: string, lib: Library, first: Relation): { things: Thing[]; needs: string[] } {
  const direct = follow(entity, lib, undefined, first, []);
  if (direct.length > 0) return { things: direct, needs: [] };
  for (const note of lib.byKey.get(entity.toLowerCase()) ?? []) {
    if (!isAliasNote(note)) continue;
    const real = realTitle(note, lib);
    if (!real) continue;
    const things = follow(real.mention, lib, undefined, first, [entity]).map((t) => ({ pages: t.pages, names: [real.mention, entity] }));
    return { things, needs: things.length > 0 ? [] : [real.full] };
  }
  return { things: [], needs: [entity] };
}

/**
 * The country a nationality adjective is made from, when no retrieved page says: the adjective less
 * its ending ("Zoshimistani" → Zoshimistan, "Hyrnoran" → Hyrnora, "Kasmarker" → Kasmark) — the stem
 * {@link countryOfDemonym} matches a country's page by, guessed the other way round. Undefined when no
 * such ending ("Chinese").
 */
function demonymStem(demonym: string): string | undefined {
  const m = /^(\p{Lu}\p{L}{3,}?)(?:er|i|n)$/u.exec(demonym);
  return m?.[1];
}

/** Where following the chain gets: the answer and the normalised names that name it, or the names whose pages it needs next. */
interface Reading { answer?: string; names?: Set<string>; needs: string[] }

function compute(state: State): Reading | undefined {
  const chain = parseQuestion(state.question.question);
  if (!chain) return undefined;
  const lib = libraryOf(state);
  let { things, needs } = start(chain.entity, lib, chain.relations[0]!);
  if (things.length === 0) return { needs };
  for (const [i, relation] of chain.relations.entries()) {
    const objects = new Map<string, { text: string; from: Thing }>();
    for (const t of things) {
      const o = objectOf(t, relation, lib);
      if (o) objects.set(normalizeAnswer(o), { text: o, from: t });
    }
    if (i === chain.relations.length - 1) {
      // Pages that disagree about the answer decide nothing.
      if (objects.size !== 1) return { needs: [] };
      const [key, { text }] = [...objects][0]!;
      return { answer: text, names: otherNames(key, text, relation, lib), needs: [] };
    }
    // Only a name leads on to another page.
    if (!AFTER[relation]) return { needs: [] };
    const next = [...objects.values()].flatMap(({ text, from }) => follow(text, lib, relation, chain.relations[i + 1], from.names));
    if (next.length > 8) return { needs: [] };
    if (next.length === 0) {
      // The objects read lead to no retrieved page: those pages come next. A film's country given only
      // as an adjective ("a 2010 Zoshimistani western film") no retrieved page explains: its stem.
      needs = [...objects.values()].map(({ text }) => text);
      if (objects.size === 0 && relation === 'productionCountry') {
        const stems = things.map((t) => t.pages.flatMap((p) => p.sentences).map((s) => FILM_DEMONYM.exec(s)?.[1]).find(Boolean)).map((d) => d && demonymStem(d));
        needs = [...new Set(stems.filter((d): d is string => d !== undefined))];
      }
      return { needs };
    }
    things = next;
  }
  return { needs: [] };
}

/** The answer's other names that retrieved pages give: "officially the Republic of X", a demonym's country. */
function otherNames(key: string, answer: string, relation: Relation, lib: Library): Set<string> {
  const names = new Set([key]);
  const country = relation === 'nationality' ? countryOfDemonym(answer, lib) : undefined;
  for (const name of [answer, ...(country ? [country] : [])]) {
    names.add(normalizeAnswer(name));
    for (const t of lib.things(name)) for (const s of t.pages.flatMap((p) => p.sentences.slice(0, 1))) {
      for (const m of s.matchAll(/\b(?:officially|also known as|otherwise known as|also called)\s+(?:the\s+)?(\p{Lu}[^,.;()]*)|\(the (\p{Lu}[^()]*)\)/gu)) names.add(normalizeAnswer(m[1] ?? m[2]!));
    }
  }
  return names;
}

const memo = new WeakMap<State, Reading | null>();

function resolve(state: State): Reading | undefined {
  if (!memo.has(state)) memo.set(state, compute(state) ?? null);
  return memo.get(state) ?? undefined;
}

const libraries = new WeakMap<State, Library>();

/** The retrieved pages of a state, split into sentences; once per state, as the chain and the comparison reader both read them. */
function libraryOf(state: State): Library {
  let lib = libraries.get(state);
  if (!lib) {
    const pages = retrievedDocs(state).map((d) => ({ title: d.title, key: stripDisambiguator(d.title).toLowerCase(), disambiguator: /\(([^()]*)\)\s*$/.exec(d.title)?.[1]?.toLowerCase() ?? '', sentences: sentencesOf(d.text) }));
    lib = new Library(pages.filter((p) => p.key !== ''));
    libraries.set(state, lib);
  }
  return lib;
}

/** The answer the retrieved pages give by following the question's chain, or undefined (not a chain question, or a link missing). */
export function chainAnswer(state: State): string | undefined {
  return resolve(state)?.answer;
}

/**
 * Names whose pages the chain needs next: where following it stops because the page of the entity
 * reached is not retrieved (the named entity itself, the real title an alternative-title note gives,
 * or the object read from the last page reached). Empty when the chain is decided, when the question is
 * no chain question, or when the stop is not a missing page (e.g. a page lacks the relation). A name is
 * as the pages (or the question) write it, without a disambiguator; several when namesakes' pages
 * disagree. A film's country given only as a nationality adjective is guessed from the adjective's stem.
 */
export function chainNeeds(state: State): string[] {
  return resolve(state)?.needs ?? [];
}

/**
 * The name a relation's object goes by on some sentences ("director": "directed by D", "D directed";
 * "founder", "author", "headquarters", "city", "birthplace"), read by the chain's cues whether or not its
 * page is retrieved; `own` are the names of the thing the sentences are about, passed over. The relation
 * is given in a question's words; undefined for one whose object is no name (a year, a genre).
 */
export function relationName(state: State, sentences: readonly string[], relation: string, own: readonly string[]): string | undefined {
  const r = relationOf(relation.toLowerCase().split(/\s+/));
  if (!r || !AFTER[r]) return undefined;
  return namedObject({ pages: [{ title: '', key: '', disambiguator: '', sentences: [...sentences] }], names: [...own] }, r, libraryOf(state));
}

/**
 * The real title an alternative-title note gives ("T is the title under which W was first shown in …"
 * → W), written in full whether or not its page is retrieved; undefined for a page that is no such note.
 */
export function realTitleOf(state: State, note: { title: string; sentences: readonly string[] }): string | undefined {
  const page: Page = { title: note.title, key: stripDisambiguator(note.title).toLowerCase(), disambiguator: '', sentences: [...note.sentences] };
  return page.sentences.length > 0 && isAliasNote(page) ? realTitle(page, libraryOf(state))?.full : undefined;
}

/**
 * [decided, wins]: decided 1 when {@link chainAnswer} is defined; wins 1 when decided and the answer,
 * normalised, is the chain's answer or another name the retrieved pages give it ("the Republic of X"
 * for X, a country for its nationality adjective). Both 0 otherwise.
 */
export function chainFeatures(state: State, answer: string): [number, number] {
  const r = resolve(state);
  if (!r?.names) return [0, 0];
  return [1, r.names.has(normalizeAnswer(answer)) ? 1 : 0];
}
