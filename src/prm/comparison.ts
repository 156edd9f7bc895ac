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
 * Anything missing leaves the option's value undefined. Yes/no comparisons give nothing.
 */
import { normalizeAnswer, sentencesOf } from '../core/text.js';
import type { State } from '../env/env.js';
import { retrievedDocs } from '../env/env.js';
import { ALIAS_CUES, RELATION_CUES } from './question-parts.js';

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

const stripDisambiguator = (title: string) => title.replace(/\s*\([^()]*\)\s*$/, '').trim();
const keyOf = (s: string) => normalizeAnswer(stripDisambiguator(s));
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

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
    const named = new RegExp(`\\b${escape(p.name)}\\b`, 'i');
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
  const m = new RegExp(`(?<![\\p{L}\\d])${escape(name)}(?![\\p{L}\\d])`, 'u').exec(s);
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
    const out: { name: string; at: number }[] = [];
    for (const pages of this.byName.values()) {
      const name = pages[0]!.name;
      if (except(name)) continue;
      const at = mentionAt(s, name);
      if (at >= 0) out.push({ name, at });
    }
    // A name inside a longer one mentioned at the same place ("Second Canal" in "The Second Canal") is not a mention of its own.
    return out.filter((m) => !out.some((o) => o !== m && o.at <= m.at && o.at + o.name.length >= m.at + m.name.length && o.name.length > m.name.length));
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

function compute(state: State): Resolved | undefined {
  const q = parseQuestion(state.question.question);
  if (!q) return undefined;
  const lib = new Library(retrievedDocs(state).map((d) => {
    const name = stripDisambiguator(d.title);
    return { title: d.title, name, key: keyOf(d.title), sentences: sentencesOf(d.text) };
  }).filter((p) => p.key !== ''));
  const one = (option: string): { value: number | undefined; names: Set<string> } => {
    const names = new Set([normalizeAnswer(option)]);
    const pages = lib.named(option);
    // No page of the option: a bridge may still find its role-holder's page saying so ("X wrote A").
    if (pages.length === 0) {
      const holder = q.role ? holderPages([], [option], q.role, lib) : undefined;
      return { value: holder ? valueOn(holder, 'born') : undefined, names };
    }
    // The option's own pages, unless they are only a note that it is another title of a real one.
    let entity = pages.filter((p) => !isAliasNote(p));
    const entityNames = [option];
    if (entity.length === 0) {
      const real = pages.map((p) => aliasTarget(p, lib)).find((k) => k !== undefined);
      if (real === undefined) return { value: undefined, names };
      entity = lib.named(real).filter((p) => !isAliasNote(p));
      names.add(normalizeAnswer(real));
      entityNames.push(real);
    }
    if (entity.length === 0) return { value: undefined, names };
    if (!q.role) return { value: valueOn(entity, q.measure), names };
    const holder = holderPages(entity, entityNames, q.role, lib);
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
