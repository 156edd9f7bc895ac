/**
 * Encyclopedia-style passages for the synthetic world, written from the project's own templates with
 * several phrasings per fact. Each sentence records which facts it states, so every question can
 * point at the passage that supports each hop. Deliberate distractor sentences mention other cities,
 * years and people (where someone worked, where a film premiered, a later edition), so that finding
 * a name in a passage is not the same as finding the answer.
 */
import type { Passage } from '../../core/types.js';
import type { Rng } from '../../core/rng.js';
import { type Entity, type Graph, nationalityOf } from './graph.js';
import { article, PRIZES } from './names.js';

interface Sentence {
  text: string;
  /** Fact keys of the entity this sentence states, e.g. "birthYear", "director". */
  facts: string[];
}

/** How a sentence refers to its subject: by name (passage openings) or by pronoun. */
interface Subject {
  /** At the start of a sentence: "Maren Tolvik", "She", "The film". */
  S: string;
  /** Possessive at the start of a sentence. */
  Poss: string;
  /** Inside a sentence: "Maren Tolvik", "she", "the film". */
  m: string;
}

type Template = (s: Subject) => string;

export interface RenderedWorld {
  passages: Passage[];
  /** `${entityId}.${fact}` → id of the passage that states it (the entity's own page). */
  factPassage: Map<string, string>;
}

function list(names: string[]): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

function fmt(n: number): string {
  return n.toLocaleString('en-US');
}

/** Pages longer than this many words are split into two passages, as 100-word Wikipedia chunks are. */
const MAX_WORDS = 55;

export function renderWorld(g: Graph, rng: Rng): RenderedWorld {
  const passages: Passage[] = [];
  const factPassage = new Map<string, string>();
  const get = (id: string | undefined): Entity | undefined => (id ? g.byId.get(id) : undefined);
  const must = (id: string | undefined): Entity => get(id) as Entity;
  const ofType = (t: Entity['type']) => g.entities.filter((e) => e.type === t);
  const cities = ofType('city');
  const people = ofType('person');
  const universities = ofType('university');
  const composers = people.filter((p) => p.attrs['occupation'] === 'composer');

  // Reverse relations for "notable people", "works include" and alumni sentences.
  const reverse = new Map<string, Entity[]>();
  for (const e of g.entities) {
    for (const [rel, target] of Object.entries(e.rels)) {
      const key = `${target}<${rel}`;
      const arr = reverse.get(key) ?? [];
      arr.push(e);
      reverse.set(key, arr);
    }
  }
  const inbound = (e: Entity, rel: string) => reverse.get(`${e.id}<${rel}`) ?? [];

  const one = (facts: string[], templates: Template[]) => ({ facts, template: rng.pick(templates) });

  for (const e of g.entities) {
    const planned: { facts: string[]; template: Template }[] = [];
    const name = e.name;
    switch (e.type) {
      case 'person': {
        const female = e.attrs['gender'] === 'female';
        const he = female ? 'She' : 'He';
        const occ = e.attrs['occupation'] as string;
        const by = e.attrs['birthYear'] as number;
        const dy = e.attrs['deathYear'] as number | undefined;
        const country = nationalityOf(g, e);
        const dem = country.attrs['demonym'] as string;
        const birthplace = must(e.rels['birthplace']).name;
        const leadFacts = dy ? ['birthYear', 'deathYear', 'occupation', 'nationality'] : ['birthYear', 'occupation', 'nationality'];
        planned.push(one(leadFacts, dy
          ? [
              (s) => `${s.S} (${by}–${dy}) was ${article(dem)} ${dem} ${occ}.`,
              (s) => `${s.S} was ${article(dem)} ${dem} ${occ} who was born in ${by} and died in ${dy}.`,
              (s) => `Born in ${by}, ${s.m} was ${article(dem)} ${dem} ${occ} who died in ${dy}.`,
            ]
          : [
              (s) => `${s.S} (born ${by}) is ${article(dem)} ${dem} ${occ}.`,
              (s) => `${s.S} is ${article(dem)} ${dem} ${occ} who was born in ${by}.`,
              (s) => `Born in ${by}, ${s.m} is ${article(dem)} ${dem} ${occ}.`,
            ]));
        planned.push(one(['birthplace'], [
          (s) => `${s.S} was born in ${birthplace}.`,
          (s) => `${s.Poss} birthplace is ${birthplace}.`,
          (s) => `${s.S} was born and raised in ${birthplace}.`,
          (s) => `${s.S} is a native of ${birthplace}.`,
        ]));
        const uni = get(e.rels['almaMater']);
        if (uni) planned.push(one(['almaMater'], [
          (s) => `${s.S} studied at ${uni.name}.`,
          (s) => `${s.S} graduated from ${uni.name}.`,
          (s) => `${s.S} is a graduate of ${uni.name}.`,
        ]));
        const father = get(e.rels['father']);
        if (father) planned.push(one(['father'], [
          (s) => `${s.S} is the ${female ? 'daughter' : 'son'} of ${father.name}.`,
          (s) => `${s.Poss} father is ${father.name}.`,
          (s) => `${s.Poss} father was ${father.name}.`,
        ]));
        const spouse = get(e.rels['spouse']);
        if (spouse) planned.push(one(['spouse'], [
          (s) => `${s.S} married ${spouse.name}.`,
          (s) => `${s.S} is married to ${spouse.name}.`,
          (s) => `${s.Poss} spouse is ${spouse.name}.`,
        ]));
        const works = (rel: string, phrases: Template[] | ((names: string) => Template[])) => {
          const items = inbound(e, rel).slice(0, 3).map((w) => w.name);
          if (items.length > 0) planned.push({ facts: [], template: rng.pick(typeof phrases === 'function' ? phrases(list(items)) : phrases) });
        };
        works('director', (w) => [(s) => `${s.S} directed ${w}.`, (s) => `${s.Poss} films as a director include ${w}.`]);
        works('star', (w) => [(s) => `${s.S} played the lead in ${w}.`, (s) => `${s.S} is known for starring in ${w}.`]);
        works('author', (w) => [(s) => `${s.S} wrote ${w}.`, (s) => `${s.Poss} novels include ${w}.`]);
        works('founder', (w) => [(s) => `${s.S} founded ${w}.`, (s) => `${s.S} is the founder of ${w}.`]);
        // Distractors: other places in the same life.
        if (rng.chance(0.6)) {
          const elsewhere = rng.pick(cities).name;
          planned.push(one([], [
            (s) => `${s.S} spent most of ${female ? 'her' : 'his'} career in ${elsewhere}.`,
            (s) => `${s.S} later moved to ${elsewhere}.`,
            (s) => `${s.S} lived and worked in ${elsewhere} for many years.`,
          ]));
        }
        if (rng.chance(0.3)) {
          const archive = rng.pick(universities).name;
          planned.push(one([], [(s) => `${s.Poss} papers are kept at ${archive}.`, (s) => `${s.S} gave a celebrated lecture series at ${archive}.`]));
        }
        if (rng.chance(0.35)) {
          const prize = rng.pick(PRIZES);
          const when = Math.min(2024, by + rng.range(25, 60));
          planned.push(one([], [(s) => `${s.S} received the ${prize} in ${when}.`, (s) => `In ${when}, ${s.m} was awarded the ${prize}.`]));
        }
        if (rng.chance(0.3)) {
          const peer = rng.pick(people).name;
          planned.push(one([], [(s) => `${s.S} often worked with ${peer}.`, (s) => `${s.S} was a close friend of ${peer}.`]));
        }
        emit(e, planned, { S: he, Poss: female ? 'Her' : 'His', m: he.toLowerCase() });
        break;
      }
      case 'film': {
        const year = e.attrs['year'] as number;
        const genre = e.attrs['genre'] as string;
        const director = must(e.rels['director']).name;
        const star = must(e.rels['star']).name;
        const country = must(e.rels['country']);
        const cdem = country.attrs['demonym'] as string;
        if (rng.chance(0.5)) {
          planned.push(one(['year', 'genre', 'country', 'director'], [
            (s) => `${s.S} is a ${year} ${cdem} ${genre} film directed by ${director}.`,
            (s) => `${s.S} is ${article(cdem)} ${cdem} ${genre} film from ${year}, made by the director ${director}.`,
          ]));
        } else {
          planned.push(one(['year', 'genre', 'director'], [
            (s) => `${s.S} is ${article(genre)} ${genre} film from ${year}, directed by ${director}.`,
            (s) => `Directed by ${director}, ${s.m} is ${article(genre)} ${genre} film released in ${year}.`,
            (s) => `${s.S} is ${article(genre)} ${genre} picture that ${director} directed; it was released in ${year}.`,
          ]));
          planned.push(one(['country'], [(s) => `${s.S} was made in ${country.name}.`, (s) => `${s.S} is a production from ${country.name}.`]));
        }
        planned.push(one(['star'], [
          (s) => `${s.S} stars ${star} in the leading role.`,
          (s) => `The lead role in ${s.m} is played by ${star}.`,
          (s) => `${star} plays the main character in ${s.m}.`,
        ]));
        const place = rng.pick(cities).name;
        planned.push(one([], [
          (s) => `${s.S} premiered in ${place} in ${year + rng.range(0, 1)}.`,
          (s) => `Much of ${s.m} was filmed on location in ${place}.`,
        ]));
        if (composers.length > 0 && rng.chance(0.4)) {
          const composer = rng.pick(composers).name;
          planned.push(one([], [(s) => `The score of ${s.m} was written by ${composer}.`]));
        }
        if (rng.chance(0.5)) {
          planned.push(one([], [
            (s) => `${s.S} was a success at the box office.`,
            (s) => `Critics praised the photography of ${s.m}.`,
            (s) => `${s.S} was restored and re-released in ${Math.min(2024, year + rng.range(10, 40))}.`,
          ]));
        }
        emit(e, planned, { S: 'The film', Poss: "The film's", m: 'the film' });
        break;
      }
      case 'book': {
        const year = e.attrs['year'] as number;
        const genre = e.attrs['genre'] as string;
        const author = must(e.rels['author']).name;
        const publisher = must(e.rels['publisher']).name;
        planned.push(one(['author', 'genre', 'year'], [
          (s) => `${s.S} is ${article(genre)} ${genre} novel by ${author}, first published in ${year}.`,
          (s) => `${s.S} is a ${year} ${genre} novel written by ${author}.`,
          (s) => `Written by ${author}, ${s.m} is ${article(genre)} ${genre} novel that appeared in ${year}.`,
        ]));
        planned.push(one(['publisher'], [
          (s) => `${s.S} was published by ${publisher}.`,
          (s) => `The first edition of ${s.m} was issued by ${publisher}.`,
          (s) => `${publisher} brought out ${s.m}.`,
        ]));
        const later = year + rng.range(3, 40);
        planned.push(one([], [
          (s) => `A revised edition of ${s.m} appeared in ${later}.`,
          (s) => `${s.S} is set in ${rng.pick(cities).name}.`,
          (s) => `${s.S} was adapted for radio in ${later}.`,
        ]));
        if (rng.chance(0.35)) {
          const prize = rng.pick(PRIZES);
          planned.push(one([], [(s) => `${s.S} won the ${prize} in ${year + 1}.`, (s) => `${s.S} was shortlisted for the ${prize}.`]));
        }
        emit(e, planned, { S: 'The novel', Poss: "The novel's", m: 'the novel' });
        break;
      }
      case 'company': {
        const year = e.attrs['foundedYear'] as number;
        const industry = e.attrs['industry'] as string;
        const founder = must(e.rels['founder']).name;
        const hq = must(e.rels['headquarters']).name;
        planned.push(one(['industry', 'foundedYear', 'founder'], [
          (s) => `${s.S} is ${article(industry)} ${industry} company founded in ${year} by ${founder}.`,
          (s) => `Founded by ${founder} in ${year}, ${s.m} is a company in the ${industry} business.`,
          (s) => `${s.S} is ${article(industry)} ${industry} firm that ${founder} established in ${year}.`,
        ]));
        planned.push(one(['headquarters'], [
          (s) => `${s.Poss} headquarters are in ${hq}.`,
          (s) => `${s.S} is headquartered in ${hq}.`,
          (s) => `${s.S} is based in ${hq}.`,
        ]));
        planned.push(one([], [
          (s) => `${s.S} opened an office in ${rng.pick(cities).name} in ${Math.min(2024, year + rng.range(5, 60))}.`,
          (s) => `${s.S} employs about ${fmt(rng.range(2, 400) * 50)} people.`,
        ]));
        if (rng.chance(0.4)) {
          const other = rng.pick(cities).name;
          planned.push(one([], [(s) => `${s.S} moved its factories to ${other} in ${Math.min(2024, year + rng.range(10, 50))}.`, (s) => `${s.S} sold its ${other} branch in ${Math.min(2024, year + rng.range(10, 50))}.`]));
        }
        emit(e, planned, { S: 'The company', Poss: "The company's", m: 'the company' });
        break;
      }
      case 'city': {
        const country = must(e.rels['country']);
        const isCapital = country.rels['capital'] === e.id;
        const year = e.attrs['foundedYear'] as number;
        const pop = fmt(e.attrs['population'] as number);
        planned.push(isCapital
          ? one(['country', 'capitalOf'], [(s) => `${s.S} is the capital city of ${country.name}.`, (s) => `${s.S} is the capital of ${country.name}.`])
          : one(['country'], [
              (s) => `${s.S} is a city in ${country.name}.`,
              (s) => `${s.S} is a town in ${country.attrs['region']}, part of ${country.name}.`,
              (s) => `${s.S} is one of the cities of ${country.name}.`,
            ]));
        planned.push(one(['foundedYear'], [
          (s) => `${s.S} was founded in ${year}.`,
          (s) => `The settlement of ${s.m} dates back to its founding in ${year}.`,
        ]));
        planned.push(one(['population'], [(s) => `${s.S} has about ${pop} inhabitants.`, (s) => `The population of ${s.m} is roughly ${pop}.`]));
        const natives = inbound(e, 'birthplace').slice(0, 3).map((p) => p.name);
        if (natives.length > 0) planned.push(one([], [(s) => `Notable people born in ${s.m} include ${list(natives)}.`]));
        const unis = inbound(e, 'city').filter((u) => u.type === 'university').slice(0, 2).map((u) => u.name);
        if (unis.length > 0) planned.push(one([], [(s) => `${s.S} is home to ${list(unis)}.`]));
        if (rng.chance(0.5)) {
          const other = rng.pick(cities).name;
          planned.push(one([], [(s) => `A railway line links ${s.m} with ${other}.`, (s) => `${s.S} is twinned with ${other}.`]));
        }
        emit(e, planned, { S: 'The city', Poss: "The city's", m: 'the city' });
        break;
      }
      case 'university': {
        const year = e.attrs['foundedYear'] as number;
        const city = must(e.rels['city']).name;
        planned.push(one(['city', 'foundedYear'], [
          (s) => `${s.S} is a university in ${city}, founded in ${year}.`,
          (s) => `Established in ${year}, ${s.m} is located in ${city}.`,
          (s) => `${s.S} was founded in ${year} and has its main campus in ${city}.`,
        ]));
        const alumni = inbound(e, 'almaMater').slice(0, 3).map((p) => p.name);
        if (alumni.length > 0) planned.push(one([], [(s) => `Alumni of ${s.m} include ${list(alumni)}.`]));
        planned.push(one([], [(s) => `${s.S} has about ${fmt(rng.range(8, 400) * 100)} students.`]));
        emit(e, planned, { S: 'The university', Poss: "The university's", m: 'the university' });
        break;
      }
      case 'country': {
        const capital = must(e.rels['capital']).name;
        const official = e.aliases[0] as string;
        planned.push(one(['region'], [
          (s) => `${s.S}, officially the ${official}, is a country in ${e.attrs['region']}.`,
          (s) => `${s.S} (the ${official}) is a state in ${e.attrs['region']}.`,
        ]));
        planned.push(one(['capital'], [(s) => `The capital of ${s.m} is ${capital}.`, (s) => `${s.Poss} capital city is ${capital}.`]));
        planned.push(one(['language'], [
          (s) => `The official language of ${s.m} is ${e.attrs['language']}.`,
          (s) => `Most people in ${s.m} speak ${e.attrs['language']}.`,
        ]));
        planned.push(one(['populationMillions'], [(s) => `${s.S} has a population of about ${e.attrs['populationMillions']} million.`]));
        planned.push(one(['demonym'], [(s) => `People from ${s.m} are called ${e.attrs['demonym']}s.`]));
        emit(e, planned, { S: 'The country', Poss: "The country's", m: 'the country' });
        break;
      }
    }
  }
  return { passages, factPassage };

  /**
   * Lays the planned sentences out as one page, or two when it runs long. The first sentence of each
   * passage names the subject; later ones use a pronoun or a short reference about half the time.
   */
  function emit(e: Entity, planned: { facts: string[]; template: Template }[], short: Subject): void {
    const byName: Subject = { S: e.name, Poss: `${e.name}'s`, m: e.name };
    const render = (first: boolean) => (p: { facts: string[]; template: Template }): Sentence => ({
      text: p.template(first || rng.chance(0.5) ? byName : short),
      facts: p.facts,
    });
    // Lead sentence first, the rest in a shuffled order.
    const [lead, ...rest] = planned;
    rng.shuffle(rest);
    const sentences: Sentence[] = [render(true)(lead as (typeof planned)[number]), ...rest.map(render(false))];
    const words = sentences.reduce((n, s) => n + s.text.split(' ').length, 0);
    const pages: Sentence[][] = [];
    if (words > MAX_WORDS && sentences.length >= 4) {
      const cut = Math.ceil(sentences.length / 2);
      const second = rest.slice(cut - 1);
      pages.push(sentences.slice(0, cut));
      pages.push(second.map((p, i) => render(i === 0)(p)));
    } else {
      pages.push(sentences);
    }
    pages.forEach((page, k) => {
      const id = `${e.id}-p${k}`;
      passages.push({ id, title: e.title, text: page.map((s) => s.text).join(' ') });
      for (const s of page) for (const f of s.facts) if (!factPassage.has(`${e.id}.${f}`)) factPassage.set(`${e.id}.${f}`, id);
    });
  }
}
