/**
 * What an agent's retrieved documents say about an "A or B?" comparison of years (and of a city's
 * inhabitants): which option's year is the wanted extreme, read only from the question's text and the
 * pages retrieved so far — never from gold metadata. For a process feature "the answer is the option the
 * documents decide for".
 *
 * Plain comparisons ("Which film came out first, A or B?") read each option's own page: the year in its
 * opening sentence, or in a sentence speaking of the asked relation (born, released, published,
 * founded). Bridge comparisons ("Which novel has the author who was born first, A or B?") find the
 * role-holder named on the option's page (a retrieved page's title in a sentence speaking of the role),
 * then the birth year on that person's page. An option that is an alternative title ("T is the title
 * under which W was first shown in …") is followed to the real title's page when that is retrieved.
 * Anything missing leaves the option's value undefined.
 *
 * Yes/no "same" comparisons ("Are A and B of the same nationality?", "Are the founders of A and B from
 * the same country?") read each option's, or its role-holder's, nationality ("a Drobyistani painter")
 * or country ("a town in …, part of Cepyrmark"; a company's city, then that city's page), and compare.
 *
 * Where an option's value is missing for want of a page, {@link comparisonNeeds} names that page: the
 * option's own, the real title its alternative-title note gives, its role-holder's, or (same country)
 * the city its page places it in — names read off the pages with the chain reader's cues.
 */
import { normalizeAnswer, sentencesOf } from '../core/text.js';
import type { State } from '../env/env.js';
import { retrievedDocs } from '../env/env.js';
import { realTitleOf, relationName } from './chain-reader.js';
import { ALIAS_CUES, escapeRegExp, RELATION_CUES, stripDisambiguator } from './question-parts.js';

export interface ComparisonView {
  options: [string, string];
  /** The wanted option has the smaller value (first, earlier, older; fewer inhabitants). */
  wantSmaller: boolean;
  /** Each option's year (or number of inhabitants) as the retrieved documents give it. */
  values: [number | undefined, number | undefined];
}

/** The measure a comparison asks about: a year of a relation, or a city's inhabitants. */
type Measure = 'born' | 'released' | 'published' | 'founded' | 'population';

interface Parsed {
  options: [string, string];
  wantSmaller: boolean;
  measure: Measure;
  /** Bridge comparisons: the role whose holder's birth is compared ("author", "director", "founder"). */
  role?: string;
}

interface Page {
  title: string;
  /** Title without a disambiguator ("Tiva Liford (novelist)" → "Tiva Liford"). */
  name: string;
  key: string;
  sentences: string[];
}

interface Resolved {
  view: ComparisonView;
  /** Normalised names that name each option: the option as asked, and its real title when it is an alternative one. */
  names: [Set<string>, Set<string>];
}

const keyOf = (s: string) => normalizeAnswer(stripDisambiguator(s));

// ---------------------------------------------------------------------------------------------------
// The question

/** Words that ask for the larger value, tried before those asking for the smaller ("more recently" before "more"). */
const LARGER = /\b(later|latest|more recently|most recently|younger|youngest|newer|newest|more|most|larger|largest|bigger|biggest)\b/;
const SMALLER = /\b(first|earlier|earliest|older|oldest|sooner|fewer|fewest|less|least|smaller|smallest)\b/;

const MEASURE_WORDS: [RegExp, Measure][] = [
  [/\b(born|birth)\b/, 'born'],
  [/\b(released|release|came out|come out|premiered)\b/, 'released'],
  [/\b(published|publication|written|appeared)\b/, 'published'],
  [/\b(founded|established|founding)\b/, 'founded'],
  [/\b(inhabitants|population|populous|people live)\b/, 'population'],
];
/** The measure an "older / younger" question means, by what it compares. */
const NOUN_MEASURE: [RegExp, Measure][] = [
  [/^who\b|\b(person|people|man|woman)\b/, 'born'],
  [/\b(film|movie|picture)\b/, 'released'],
  [/\b(novel|book)\b/, 'published'],
  [/\b(company|firm|city|town|university|college)\b/, 'founded'],
];

function parseQuestion(question: string): Parsed | undefined {
  const m = /^([^,]+),\s*(.+?)\s+or\s+(.+?)\s*\?\s*$/.exec(question.trim());
  if (!m) return undefined;
  const head = m[1]!.toLowerCase();
  if (!/^(who|which|what)\b/.test(head)) return undefined;
  const options: [string, string] = [m[2]!.trim(), m[3]!.trim()];
  if (!options[0] || !options[1]) return undefined;
  const bridge = /\b(?:has|had) the ([\p{L} -]+?) who (?:was|were|is) born\b/u.exec(head) ?? /\bwhose ([\p{L} -]+?) (?:was|were|is) born\b/u.exec(head);
  const larger = LARGER.exec(head);
  const smaller = SMALLER.exec(head);
  if (!larger && !smaller) return undefined;
  // Both ("the one born first … later")? The earlier word in the head decides.
  const wantSmaller = !larger || (smaller !== null && smaller.index < larger.index);
  if (bridge) return { options, wantSmaller, measure: 'born', role: bridge[1]!.trim() };
  const measure = MEASURE_WORDS.find(([re]) => re.test(head))?.[1] ?? NOUN_MEASURE.find(([re]) => re.test(head))?.[1];
  if (!measure) return undefined;
  return { options, wantSmaller, measure };
}

// ---------------------------------------------------------------------------------------------------
// Values on a page

/** Where a sentence speaks of a measure: regexes whose match's end is where its object starts. */
const MEASURE_CUES: Record<Measure, RegExp> = {
  born: /\bborn\b|\bbirth\b/gi,
  released: /\breleased\b|\bcame out\b|\bpremiered\b/gi,
  published: /\bpublished\b|\bappeared\b|\bissued\b|\bbrought out\b/gi,
  founded: /\bfounded\b|\bfounding\b|\bestablished\b/gi,
  population: /\binhabitants\b|\bpopulation\b/gi,
};
/** Sentences about something later in a thing's life, whose years are not the one asked for. */
const SECONDARY = /\b(re-?released|re-?issued|restored|revised|adapted|reprinted|opened an office|moved|sold|awarded|received|won|shortlisted|died)\b/i;
/** A four-digit year, not part of a longer number ("6,050", "12,700", "3.1415"). */
const YEAR = /(?<![\d.]|\d,)\d{4}(?!\d|[.,]\d)/g;
const NUMBER = /\d{1,3}(?:,\d{3})+|\d+/g;

/** The first year in `s` at or after `from`. */
function yearFrom(s: string, from: number): number | undefined {
  for (const m of s.matchAll(YEAR)) if (m.index! >= from) return Number(m[0]);
  return undefined;
}

/** A sentence's value for a measure: the year (number) after the measure's cue, else its first year (an opening sentence). */
function sentenceValue(s: string, measure: Measure, lead: boolean): number | undefined {
  const cues = [...s.matchAll(new RegExp(MEASURE_CUES[measure]))];
  if (measure === 'population') {
    if (cues.length === 0) return undefined;
    const nums = [...s.matchAll(NUMBER)].map((m) => Number(m[0].replaceAll(',', '')));
    return nums.length === 1 ? nums[0] : undefined;
  }
  // "born in 1906 and died in 1969": the year after "born", not the death.
  for (const c of cues) {
    const y = yearFrom(s, c.index! + c[0].length);
    if (y !== undefined) return y;
  }
  if (cues.length > 0 && !lead) return undefined;
  // An opening sentence gives the thing's defining year: "X is a 1999 western film", "X (1918–1978) was …".
  return lead ? yearFrom(s, 0) : undefined;
}

/** The value of a measure on an entity's pages: the first opening sentence naming it, or sentence speaking of the measure, that gives one. */
function valueOn(pages: readonly Page[], measure: Measure): number | undefined {
  for (const p of pages) {
    const named = new RegExp(`\\b${escapeRegExp(p.name)}\\b`, 'i');
    for (const [i, s] of p.sentences.entries()) {
      if (SECONDARY.test(s) && !(measure === 'born' && /\bborn\b/i.test(s))) continue;
      const lead = i === 0 && measure !== 'population' && named.test(s);
      if (!lead && !new RegExp(MEASURE_CUES[measure]).test(s)) continue;
      const v = sentenceValue(s, measure, lead);
      if (v !== undefined) return v;
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------
// Alternative titles and role-holders

/** Where `name` is mentioned in `s` (as whole words), or -1. */
function mentionAt(s: string, name: string): number {
  if (!name) return -1;
  const m = new RegExp(`(?<![\\p{L}\\d])${escapeRegExp(name)}(?![\\p{L}\\d])`, 'u').exec(s);
  return m ? m.index : -1;
}

/** A page opening with a note that its title is another name of something ("… is the title under which …", "… appeared as …"). */
function isAliasNote(page: Page): boolean {
  const low = (page.sentences[0] ?? '').toLowerCase();
  return ALIAS_CUES.some((c) => low.includes(c));
}

/** The retrieved pages, by name: exactly (case aside), and by normalised name ("The Second Canal" and "Second Canal" alike). */
class Library {
  readonly byName = new Map<string, Page[]>();
  private readonly byKey = new Map<string, Page[]>();
  constructor(pages: readonly Page[]) {
    for (const p of pages) {
      for (const [map, k] of [[this.byName, p.name.toLowerCase()], [this.byKey, p.key]] as const) {
        const arr = map.get(k) ?? [];
        arr.push(p);
        map.set(k, arr);
      }
    }
  }
  /** The pages of a name: those titled exactly so (disambiguator aside), else those whose normalised title matches. */
  named(name: string): Page[] {
    return this.byName.get(name.toLowerCase()) ?? this.byKey.get(keyOf(name)) ?? [];
  }
  /** The retrieved page names `s` mentions, other than `except`: the earliest, the longest of those starting there. */
  mentions(s: string, except: (name: string) => boolean): { name: string; at: number }[] {
    const out: { name: string; at: number; excepted: boolean }[] = [];
    for (const pages of this.byName.values()) {
      const name = pages[0]!.name;
      const at = mentionAt(s, name);
      if (at >= 0) out.push({ name, at, excepted: except(name) });
    }
    // A name inside a longer one mentioned at the same place ("Second Canal" in "The Second Canal") is not
    // a mention of its own, nor is one inside an excepted name ("Rormere" in the title "A Machine in Rormere").
    return out
      .filter((m) => !m.excepted && !out.some((o) => o !== m && o.at <= m.at && o.at + o.name.length >= m.at + m.name.length && o.name.length > m.name.length))
      .map(({ name, at }) => ({ name, at }));
  }
}

/**
 * The real title an alternative-title page gives for its own title: the page's opening sentence uses an
 * alias cue, and the earliest retrieved page's name it mentions (other than the page's own) is the real
 * one. Undefined for a page that is not an alias note, or whose real title is not retrieved.
 */
function aliasTarget(page: Page, lib: Library): string | undefined {
  if (!isAliasNote(page)) return undefined;
  const own = page.name.toLowerCase();
  const found = lib.mentions(page.sentences[0]!, (n) => n.toLowerCase() === own);
  found.sort((a, b) => a.at - b.at);
  return found[0]?.name;
}

/** Where a sentence speaks of a role: the [start, end) of each cue (its stem, "direct" for director, and its RELATION_CUES). */
function roleCues(sentence: string, role: string): [number, number][] {
  const s = sentence.toLowerCase();
  const words = role.toLowerCase().split(/\s+/);
  const head = words[words.length - 1]!;
  const stem = head.slice(0, Math.max(4, head.length - 2));
  const out: [number, number][] = [];
  for (const c of [stem, ...(RELATION_CUES[head] ?? [])]) {
    for (let i = s.indexOf(c); i >= 0; i = s.indexOf(c, i + 1)) out.push([i, i + c.length]);
  }
  return out;
}

/**
 * The pages of the person holding `role` for an entity: named, on the entity's own pages, in a sentence
 * speaking of the role (the retrieved page's name nearest a cue); failing that, a retrieved page whose
 * sentence speaking of the role names the entity ("X wrote A and B"). Namesakes: the pages that name the
 * entity are preferred.
 */
function holderPages(entity: readonly Page[], entityNames: readonly string[], role: string, lib: Library): Page[] | undefined {
  const own = new Set([...entity.map((p) => p.name.toLowerCase()), ...entityNames.map((n) => n.toLowerCase())]);
  const isOwn = (n: string) => own.has(n.toLowerCase());
  const namesEntity = (s: string) => entityNames.some((n) => mentionAt(s, n) >= 0);
  const choose = (name: string): Page[] => {
    const pages = lib.named(name).filter((p) => !isAliasNote(p));
    // Namesakes ("X (novelist)", "X (painter)"): the titles with a page naming the entity; all the
    // pages of such a title (the page naming the entity first), as a long page's parts share it.
    const naming = pages.filter((p) => p.sentences.some(namesEntity));
    const titles = new Set(naming.map((p) => p.title));
    return naming.length > 0 ? [...naming, ...pages.filter((p) => titles.has(p.title) && !naming.includes(p))] : pages;
  };
  for (const p of entity) {
    for (const s of p.sentences) {
      const cues = roleCues(s, role);
      if (cues.length === 0) continue;
      let best: { name: string; dist: number } | undefined;
      for (const { name, at } of lib.mentions(s, isOwn)) {
        const end = at + name.length;
        // After the cue ("directed by D") counts a little nearer than before it ("D directed").
        const dist = Math.min(...cues.map(([cs, ce]) => (at >= ce ? at - ce : cs >= end ? cs - end + 1 : 0)));
        if (!best || dist < best.dist) best = { name, dist };
      }
      if (best) return choose(best.name);
    }
  }
  // The other way round: a person's page saying it holds the role for the entity.
  for (const pages of lib.byName.values()) {
    if (isOwn(pages[0]!.name)) continue;
    const naming = pages.filter((p) => !isAliasNote(p) && p.sentences.some((s) => roleCues(s, role).length > 0 && namesEntity(s)));
    if (naming.length === 0) continue;
    const titles = new Set(naming.map((p) => p.title));
    const all = [...naming, ...pages.filter((p) => titles.has(p.title) && !naming.includes(p) && !isAliasNote(p))];
    if (valueOn(all, 'born') !== undefined) return all;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------

const memo = new WeakMap<State, Resolved | null>();

function resolve(state: State): Resolved | undefined {
  const hit = memo.get(state);
  if (hit !== undefined) return hit ?? undefined;
  const out = compute(state);
  memo.set(state, out ?? null);
  return out;
}

const libraries = new WeakMap<State, Library>();

/** The retrieved pages of a state, split into sentences; once per state, as both kinds of comparison read them. */
function libraryOf(state: State): Library {
  let lib = libraries.get(state);
  if (!lib) {
    lib = new Library(retrievedDocs(state).map((d) => {
      const name = stripDisambiguator(d.title);
      return { title: d.title, name, key: keyOf(d.title), sentences: sentencesOf(d.text) };
    }).filter((p) => p.key !== ''));
    libraries.set(state, lib);
  }
  return lib;
}

/**
 * An option's own pages and the names it goes by (the option as asked, then the real title when it is
 * an alternative one): no pages when none is retrieved; undefined when its only pages are notes that
 * it is another title of a work whose page is not retrieved.
 */
function optionPages(option: string, lib: Library): { entity: Page[]; names: string[] } | undefined {
  const pages = lib.named(option);
  const entity = pages.filter((p) => !isAliasNote(p));
  if (pages.length === 0 || entity.length > 0) return { entity, names: [option] };
  const real = pages.map((p) => aliasTarget(p, lib)).find((k) => k !== undefined);
  if (real === undefined) return undefined;
  const realPages = lib.named(real).filter((p) => !isAliasNote(p));
  return realPages.length > 0 ? { entity: realPages, names: [option, real] } : undefined;
}

function compute(state: State): Resolved | undefined {
  const q = parseQuestion(state.question.question);
  if (!q) return undefined;
  const lib = libraryOf(state);
  const one = (option: string): { value: number | undefined; names: Set<string> } => {
    const found = optionPages(option, lib);
    const names = new Set((found?.names ?? [option]).map((n) => normalizeAnswer(n)));
    if (!found) return { value: undefined, names };
    if (!q.role) return { value: valueOn(found.entity, q.measure), names };
    // With no page of the option, its role-holder's page may still say so ("X wrote A").
    const holder = holderPages(found.entity, found.names, q.role, lib);
    return { value: holder ? valueOn(holder, 'born') : undefined, names };
  };
  const [a, b] = [one(q.options[0]), one(q.options[1])];
  return { view: { options: q.options, wantSmaller: q.wantSmaller, values: [a.value, b.value] }, names: [a.names, b.names] };
}

/** Undefined when the question is not an "A or B?" comparison of years (or of inhabitants). */
export function comparisonView(state: State): ComparisonView | undefined {
  return resolve(state)?.view;
}

/**
 * Features for an answer text: [decided, wins]. decided is 1 when both options' values were found in the
 * retrieved documents; wins is 1 when decided and the answer names the option whose value is the wanted
 * extreme (the smaller for first / earlier / older, the larger for later / more recently / younger),
 * else 0. An answer names an option when, normalised, it equals the option as asked or the real title
 * an alternative one stands for. Both 0 for questions that are no such comparison.
 */
export function comparisonFeatures(state: State, answer: string): [number, number] {
  const r = resolve(state);
  if (!r) return [0, 0];
  const [va, vb] = r.view.values;
  if (va === undefined || vb === undefined) return [0, 0];
  if (va === vb) return [1, 0];
  const aWins = r.view.wantSmaller ? va < vb : va > vb;
  const said = normalizeAnswer(answer);
  return [1, r.names[aWins ? 0 : 1].has(said) ? 1 : 0];
}

// ---------------------------------------------------------------------------------------------------
// Yes/no "same …?" comparisons

/** A "same nationality / same country" question's two options, and for a bridge the role whose holders are compared. */
interface SameParsed {
  options: [string, string];
  role?: string;
}

export interface SameComparisonView {
  options: [string, string];
  /** Each option's (or its role-holder's) nationality ("Drobyistani") or country ("Cepyrmark"), as the retrieved pages give it. */
  values: [string | undefined, string | undefined];
  /**
   * Whether the values are one country; undefined when one is missing, or when one is a nationality and
   * the other a country and no retrieved page says what that country's people are called.
   */
  same: boolean | undefined;
}

/**
 * "Are A and B of the same nationality?", "Are A and B in the same country?", "Do the directors of A
 * and B have the same nationality?", "Are the founders of A and B from the same country?". The role is
 * lower case, so a title opening with "The" is not read as one ("Are The Harbor of X and …").
 */
const SAME_QUESTION = /^(?:[Aa]re|[Ww]ere|[Ii]s|[Dd]o|[Dd]oes|[Dd]id)\s+(?:[Tt]he\s+(\p{Ll}[\p{Ll} -]*?)s?\s+of\s+)?(.+?)\s+(?:of|in|from|born in|based in|located in|have|share)\s+the\s+same\s+(?:nationality|country)\s*\??\s*$/u;

/** The options of a "same" question: "A and B" split at the " and " whose both sides name retrieved pages, else at the first. */
function parseSame(question: string, lib: Library): SameParsed | undefined {
  const m = SAME_QUESTION.exec(question.trim());
  if (!m) return undefined;
  const pair = m[2]!;
  const splits: [string, string][] = [];
  for (let i = pair.indexOf(' and '); i >= 0; i = pair.indexOf(' and ', i + 1)) {
    const [a, b] = [pair.slice(0, i).trim(), pair.slice(i + 5).trim()];
    if (a && b) splits.push([a, b]);
  }
  if (splits.length === 0) return undefined;
  const options = splits.find((o) => o.every((x) => lib.named(x).length > 0)) ?? splits[0]!;
  return m[1] ? { options, role: m[1].trim() } : { options };
}

/** A proper name: capitalised words, with "of" / "the" between them ("Republic of Grienia"). */
const NAME = String.raw`\p{Lu}[\p{L}'’-]*(?:\s+(?:of\s+|the\s+)?\p{Lu}[\p{L}'’-]*)*`;
/** A person's nationality: the capitalised adjective before their occupation ("was a Drobyistani painter", "is an Ulgoran film director"). */
const NATIONALITY = new RegExp(String.raw`\b(?:is|was) an? (${NAME}) (?=\p{Ll})`, 'u');
/**
 * Where a sentence names the country a place is in. The last cue of a sentence wins ("a town in the
 * Aster Reach, part of Cepyrmark"), and a lower-case "the …" after "in" is a region, not a country.
 */
const COUNTRY_IN = new RegExp(String.raw`\b(?:part of|(?:cities|towns) of|capital(?: city)? of|(?:city|town|village) in|citizen of)\s+(${NAME})`, 'gu');
/** Where a sentence places a thing in a city, whose page may give the country ("based in Navbridge", "campus in …", a birthplace). */
const PLACED_IN = /\b(?:based in|headquartered in|headquarters are in|located in|campus in|university in|college in|born in|born and raised in|native of|birthplace is)\s+/gi;
/** The country page's sentence mapping a nationality to its country: "People from Grienia (the country) are called Grienians." */
const DEMONYM = new RegExp(String.raw`\b[Pp]eople from (the country|${NAME}) are called (${NAME})`, 'u');

/** A thing's country as a page gives it: a nationality adjective (a person) or a country's name (a place). */
interface Country {
  name: string;
  demonym: boolean;
}
const alike = (a: Country, b: Country) => a.demonym === b.demonym && normalizeAnswer(a.name) === normalizeAnswer(b.name);

/** The nationality or country a page's sentences give, the first sentence that gives one. */
function countryStated(pages: readonly Page[]): Country | undefined {
  for (const p of pages) {
    for (const s of p.sentences) {
      const nat = NATIONALITY.exec(s);
      if (nat) return { name: nat[1]!, demonym: true };
      const inCountry = [...s.matchAll(new RegExp(COUNTRY_IN))].at(-1);
      if (inCountry) return { name: inCountry[1]!, demonym: false };
    }
  }
  return undefined;
}

/**
 * The nationality or country of a thing from its pages: stated there, or else the country on the
 * retrieved page of the city it is placed in ("X is based in Navbridge", then Navbridge's page).
 */
function countryOf(pages: readonly Page[], lib: Library): Country | undefined {
  const stated = countryStated(pages);
  if (stated || pages.length === 0) return stated;
  for (const p of pages) {
    for (const s of p.sentences) {
      for (const cue of s.matchAll(new RegExp(PLACED_IN))) {
        // The retrieved page named right after the cue, the longest if several ("Saint Poport" over "Saint Po").
        const rest = s.slice(cue.index! + cue[0].length);
        let place: string | undefined;
        for (const named of lib.byName.values()) {
          const name = named[0]!.name;
          if (mentionAt(rest, name) === 0 && name.length > (place?.length ?? 0)) place = name;
        }
        const there = place ? countryStated(lib.named(place).filter((q) => !isAliasNote(q))) : undefined;
        if (there) return there;
      }
    }
  }
  return undefined;
}

/** Nationality adjectives to countries, from the retrieved pages that say what a country's people are called. */
function demonymsOf(lib: Library): Map<string, string> {
  const out = new Map<string, string>();
  for (const pages of lib.byName.values()) {
    for (const p of pages) {
      for (const s of p.sentences) {
        const m = DEMONYM.exec(s);
        // The plural names the people: "Grienians" → "Grienian".
        if (m) out.set(normalizeAnswer(m[2]!.replace(/s$/, '')), normalizeAnswer(/^the country$/i.test(m[1]!) ? p.name : m[1]!));
      }
    }
  }
  return out;
}

/** Whether two countries are one: alike stated, compared as they are; a nationality against a country through the demonym pages. */
function sameCountry(a: Country, b: Country, lib: Library): boolean | undefined {
  if (a.demonym === b.demonym) return alike(a, b);
  const demonyms = demonymsOf(lib);
  const [nat, land] = a.demonym ? [a, b] : [b, a];
  const country = demonyms.get(normalizeAnswer(nat.name));
  return country === undefined ? undefined : country === normalizeAnswer(land.name);
}

const sameMemo = new WeakMap<State, SameComparisonView | null>();

function computeSame(state: State): SameComparisonView | undefined {
  const lib = libraryOf(state);
  const q = parseSame(state.question.question, lib);
  if (!q) return undefined;
  const one = (option: string): Country | undefined => {
    const found = optionPages(option, lib);
    if (!found) return undefined;
    if (!q.role) return countryOf(found.entity, lib);
    const holder = holderPages(found.entity, found.names, q.role, lib);
    if (!holder) return undefined;
    // Pages of several titles are namesakes none of which names the option ("X (novelist)", "X (actor)"):
    // which one holds the role is unknown, so they must agree.
    const each = [...new Set(holder.map((p) => p.title))].map((t) => countryOf(holder.filter((p) => p.title === t), lib));
    const first = each[0];
    return first && each.every((c) => c && alike(c, first)) ? first : undefined;
  };
  const [a, b] = [one(q.options[0]), one(q.options[1])];
  return { options: q.options, values: [a?.name, b?.name], same: a && b ? sameCountry(a, b, lib) : undefined };
}

/** Undefined when the question is no yes/no "same nationality / same country" comparison. */
export function sameComparisonView(state: State): SameComparisonView | undefined {
  const hit = sameMemo.get(state);
  if (hit !== undefined) return hit ?? undefined;
  const out = computeSame(state);
  sameMemo.set(state, out ?? null);
  return out;
}

/**
 * Yes/no "same …?" comparisons: [decided, wins]. decided 1 when both options' values were found (and
 * can be compared); wins 1 when decided and the answer (normalised) is "yes" and the values are one
 * country, or "no" and they differ. [0, 0] for other questions.
 */
export function sameComparisonFeatures(state: State, answer: string): [number, number] {
  const same = sameComparisonView(state)?.same;
  if (same === undefined) return [0, 0];
  const said = normalizeAnswer(answer);
  return [1, (said === 'yes' && same) || (said === 'no' && !same) ? 1 : 0];
}

// ---------------------------------------------------------------------------------------------------
// The pages a comparison needs next

/** Relations (in a question's words) whose object is the place a thing's country may be read from, tried in order. */
const PLACE_RELATIONS = ['headquarters', 'city', 'birthplace'];

/**
 * The names whose pages one option needs, its value being missing: the option's own page; the real
 * title its alternative-title note gives; for a bridge, the role-holder its page names ("directed by
 * X", "X wrote …"); for a place's country (`place`), the city its page places it in. Only names whose
 * pages are not retrieved; none when the option's pages are all there (a page lacking the fact needs
 * no search).
 */
function optionNeeds(state: State, option: string, role: string | undefined, place: boolean, lib: Library): string[] {
  const missing = (name: string) => lib.named(name).every(isAliasNote);
  const pages = lib.named(option);
  // A bridge option's holder may say so on their own page ("X wrote A"): then the option's page is not wanted.
  if (pages.length === 0) return role && holderPages([], [option], role, lib) ? [] : [option];
  let entity = pages.filter((p) => !isAliasNote(p));
  let names = [option];
  if (entity.length === 0) {
    const real = pages.map((p) => realTitleOf(state, p)).find((t) => t !== undefined);
    if (real === undefined) return [];
    if (missing(real)) return [real];
    [entity, names] = [lib.named(real).filter((p) => !isAliasNote(p)), [option, real]];
  }
  const sentences = entity.flatMap((p) => p.sentences);
  const own = [...names, ...entity.map((p) => p.name)];
  const relations = role ? [role] : place ? PLACE_RELATIONS : [];
  for (const r of relations) {
    const name = relationName(state, sentences, r, own);
    if (name !== undefined) return missing(name) ? [name] : [];
  }
  return [];
}

const needsMemo = new WeakMap<State, string[]>();

/**
 * Names whose pages an "A or B?" or "same" comparison needs next: an option with no page retrieved; the
 * real title an option's alternative-title note names, when that page is missing; the role-holder an
 * option's page names (bridge comparisons: "directed by X", "X wrote …"), when X's page is missing; for
 * "same country" of places, the city a page places it in when that page is missing. Only for options
 * whose value is missing; empty when decided or no such question. Option A's needs come first.
 */
export function comparisonNeeds(state: State): string[] {
  const hit = needsMemo.get(state);
  if (hit) return hit;
  const lib = libraryOf(state);
  const out: string[] = [];
  const q = parseQuestion(state.question.question);
  const view = q && comparisonView(state);
  if (q && view) {
    view.values.forEach((v, i) => { if (v === undefined) out.push(...optionNeeds(state, q.options[i]!, q.role, false, lib)); });
  } else {
    const same = parseSame(state.question.question, lib);
    const sview = same && sameComparisonView(state);
    if (same && sview && sview.same === undefined) {
      const places = !same.role && /\bsame country\b/i.test(state.question.question);
      sview.values.forEach((v, i) => { if (v === undefined) out.push(...optionNeeds(state, same.options[i]!, same.role, places, lib)); });
    }
  }
  const needs = [...new Set(out)];
  needsMemo.set(state, needs);
  return needs;
}
