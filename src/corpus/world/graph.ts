/**
 * The knowledge graph behind the synthetic world: typed entities with attributes and relations,
 * generated deterministically from a seed. Distractors are built in: namesake people with different
 * occupations, novels that share a film's title, and many entities sharing years, cities and
 * countries, so that a retriever must read, not just match a name.
 */
import { InputError } from '../../core/errors.js';
import { Rng } from '../../core/rng.js';
import {
  BOOK_GENRES, cityName, countryName, FILM_GENRES, givenName, INDUSTRIES, languageName, OCCUPATIONS, REGIONS, surname, workTitle,
} from './names.js';

/** The kinds of entity in the synthetic world. */
export type EntityType = 'country' | 'city' | 'university' | 'person' | 'film' | 'book' | 'company';

/** One entity of the synthetic world: its kind, its names, its attributes and its relations to other entities. */
export interface Entity {
  id: string;
  type: EntityType;
  /** The surface name used in text. */
  name: string;
  /** Page title: the name, plus a disambiguator like "(novelist)" or "(film)" where another entity shares the name. */
  title: string;
  /** Other accepted answers naming this entity (e.g. a country's official name). */
  aliases: string[];
  attrs: Record<string, string | number>;
  /** Relation name → target entity id. */
  rels: Record<string, string>;
}

/** The synthetic world's knowledge graph: its entities (also by id), and how many entities share each surface name. */
export interface Graph {
  seed: number | string;
  entities: Entity[];
  byId: Map<string, Entity>;
  /** Lower-cased surface name → number of entities using it (namesakes and shared titles count > 1). */
  nameCount: Map<string, number>;
}

export const MIN_ENTITIES = 60;

/** Share of the entity budget per type; people take the rest. */
const SHARES = { city: 0.08, university: 0.03, company: 0.08, film: 0.16, book: 0.15 } as const;

const LAST_YEAR = 2024;

export function generateGraph(seed: number | string, total: number): Graph {
  if (!Number.isInteger(total) || total < MIN_ENTITIES) {
    throw new InputError(`--entities must be an integer of at least ${MIN_ENTITIES}, got ${total}`, 'the world needs room for every entity type');
  }
  const rng = Rng.derive(seed, 'graph');
  const entities: Entity[] = [];
  const byId = new Map<string, Entity>();
  const nameCount = new Map<string, number>();
  const counters = new Map<EntityType, number>();

  const add = (type: EntityType, name: string, attrs: Entity['attrs'] = {}, aliases: string[] = []): Entity => {
    const k = counters.get(type) ?? 0;
    counters.set(type, k + 1);
    const e: Entity = { id: `${type}-${String(k).padStart(5, '0')}`, type, name, title: name, aliases, attrs, rels: {} };
    entities.push(e);
    byId.set(e.id, e);
    nameCount.set(name.toLowerCase(), (nameCount.get(name.toLowerCase()) ?? 0) + 1);
    return e;
  };
  /** Draws names until one is unused anywhere in the world. */
  const unique = (make: () => string): string => {
    for (let i = 0; i < 50; i++) {
      const n = make();
      if (!nameCount.has(n.toLowerCase())) return n;
    }
    let n = make();
    while (nameCount.has(n.toLowerCase())) n = `${n} ${rng.pick(['II', 'III', 'Nova', 'Minor'])}`;
    return n;
  };

  // Countries, languages, cities. Each country gets at least one city; its first city is the capital.
  const nCountries = Math.min(300, Math.max(6, Math.round(total * 0.006)));
  const languages = Array.from({ length: Math.ceil(nCountries * 0.6) }, () => languageName(rng));
  const countries: Entity[] = [];
  for (let i = 0; i < nCountries; i++) {
    let c = countryName(rng);
    for (let t = 0; t < 50 && nameCount.has(c.name.toLowerCase()); t++) c = countryName(rng);
    countries.push(
      add('country', unique(() => c.name), {
        demonym: c.demonym,
        region: rng.pick(REGIONS),
        language: rng.pick(languages),
        populationMillions: rng.range(1, 90),
      }, [c.official]),
    );
  }
  const nCities = Math.max(nCountries * 2, Math.round(total * SHARES.city));
  const cities: Entity[] = [];
  for (let i = 0; i < nCities; i++) {
    const country = i < nCountries ? (countries[i] as Entity) : rng.pick(countries);
    const population = Math.round(Math.exp(rng.range(90, 150) / 10) / 1000) * 1000; // ~8k .. ~3.3M, log-uniform
    const city = add('city', unique(() => cityName(rng)), { foundedYear: rng.range(700, 1890), population });
    city.rels['country'] = country.id;
    cities.push(city);
    if (i < nCountries) country.rels['capital'] = city.id;
  }

  const nUniversities = Math.max(3, Math.round(total * SHARES.university));
  const universities: Entity[] = [];
  for (let i = 0; i < nUniversities; i++) {
    const city = rng.pick(cities);
    const name = unique(() =>
      rng.pick([`${city.name} University`, `${surname(rng)} University`, `${surname(rng)} College`, `${city.name} Polytechnic`]),
    );
    const u = add('university', name, { foundedYear: rng.range(1150, 1990) });
    u.rels['city'] = city.id;
    universities.push(u);
  }

  // People. Occupations are sized to the works they will make.
  const nCompanies = Math.max(8, Math.round(total * SHARES.company));
  const nFilms = Math.max(6, Math.round(total * SHARES.film));
  const nBooks = Math.max(6, Math.round(total * SHARES.book));
  const nPeople = Math.max(20, total - entities.length - nCompanies - nFilms - nBooks);
  const roles: string[] = [];
  const quota = (occupation: string, n: number) => {
    for (let i = 0; i < n; i++) roles.push(occupation);
  };
  quota(OCCUPATIONS.director, Math.max(2, Math.round(nFilms / 3)));
  quota(OCCUPATIONS.actor, Math.max(2, Math.round(nFilms / 2)));
  quota(OCCUPATIONS.writer, Math.max(2, Math.round(nBooks / 2.5)));
  quota(OCCUPATIONS.founder, Math.max(2, Math.round(nCompanies * 0.8)));
  while (roles.length < nPeople) roles.push(rng.pick(OCCUPATIONS.other));
  rng.shuffle(roles);

  const people: Entity[] = [];
  const byOccupation = new Map<string, Entity[]>();
  for (let i = 0; i < roles.length; i++) {
    const occupation = roles[i] as string;
    const birthYear = rng.range(1850, 1996);
    const gender = rng.chance(0.5) ? 'female' : 'male';
    const attrs: Entity['attrs'] = { occupation, birthYear, gender };
    if (birthYear < 1925 || (birthYear < 1950 && rng.chance(0.6))) attrs['deathYear'] = Math.min(LAST_YEAR, birthYear + rng.range(45, 95));
    // About one person in 25 shares the full name of an earlier person with another occupation: a namesake.
    const twin = people.length > 10 && rng.chance(0.04) ? rng.pick(people) : undefined;
    let name: string;
    if (twin && twin.attrs['occupation'] !== occupation && twin.attrs['gender'] === gender) name = twin.name;
    else name = unique(() => `${givenName(rng, gender)} ${surname(rng)}`);
    const p = add('person', name, attrs);
    p.rels['birthplace'] = rng.pick(cities).id;
    if (rng.chance(0.6)) p.rels['almaMater'] = rng.pick(universities).id;
    people.push(p);
    const list = byOccupation.get(occupation) ?? [];
    list.push(p);
    byOccupation.set(occupation, list);
  }
  // Fathers (born 20–45 years earlier) and spouses (born within 10 years), found by sampling candidates.
  for (const p of people) {
    const born = p.attrs['birthYear'] as number;
    if (rng.chance(0.3)) {
      for (let t = 0; t < 12; t++) {
        const f = rng.pick(people);
        const gap = born - (f.attrs['birthYear'] as number);
        if (f !== p && f.attrs['gender'] === 'male' && gap >= 20 && gap <= 45) {
          p.rels['father'] = f.id;
          break;
        }
      }
    }
    if (!p.rels['spouse'] && rng.chance(0.35)) {
      for (let t = 0; t < 12; t++) {
        const s = rng.pick(people);
        if (s !== p && !s.rels['spouse'] && s.rels['father'] !== p.id && p.rels['father'] !== s.id && Math.abs((s.attrs['birthYear'] as number) - born) <= 10) {
          p.rels['spouse'] = s.id;
          s.rels['spouse'] = p.id;
          break;
        }
      }
    }
  }
  // Namesakes get disambiguated page titles, as Wikipedia does.
  for (const p of people) {
    if ((nameCount.get(p.name.toLowerCase()) ?? 0) > 1) p.title = `${p.name} (${p.attrs['occupation']})`;
  }

  const nationality = (p: Entity): Entity => byId.get((byId.get(p.rels['birthplace'] as string) as Entity).rels['country'] as string) as Entity;
  const pickPerson = (occupation: string, bornBefore: number): Entity => {
    const pool = byOccupation.get(occupation) ?? people;
    for (let t = 0; t < 20; t++) {
      const p = rng.pick(pool);
      if ((p.attrs['birthYear'] as number) <= bornBefore) return p;
    }
    return pool.reduce((a, b) => ((a.attrs['birthYear'] as number) <= (b.attrs['birthYear'] as number) ? a : b));
  };

  // Companies: the first fifth publish books.
  const companies: Entity[] = [];
  for (let i = 0; i < nCompanies; i++) {
    const ind = i < Math.max(2, Math.round(nCompanies / 5)) ? (INDUSTRIES[0] as (typeof INDUSTRIES)[number]) : rng.pick(INDUSTRIES.slice(1));
    const founder = rng.chance(0.85) ? pickPerson(OCCUPATIONS.founder, 1990) : pickPerson(rng.pick(OCCUPATIONS.other), 1990);
    const foundedYear = Math.min(LAST_YEAR - 1, (founder.attrs['birthYear'] as number) + rng.range(20, 50));
    const name = unique(() => `${rng.chance(0.6) ? surname(rng) : cityName(rng)} ${rng.pick(ind.nouns)}`);
    const shortName = name.slice(0, name.lastIndexOf(' '));
    const c = add('company', name, { industry: ind.industry, foundedYear }, [shortName]);
    c.rels['founder'] = founder.id;
    c.rels['headquarters'] = rng.pick(cities).id;
    companies.push(c);
  }
  // Publishers by founding year, so that each book picks among those that existed when it came out.
  const publishers = companies.filter((c) => c.attrs['industry'] === 'publishing').sort((a, b) => (a.attrs['foundedYear'] as number) - (b.attrs['foundedYear'] as number));
  const publishersUntil = (year: number) => {
    let n = 0;
    while (n < publishers.length && ((publishers[n] as Entity).attrs['foundedYear'] as number) <= year) n++;
    return n;
  };

  const films: Entity[] = [];
  for (let i = 0; i < nFilms; i++) {
    const director = pickPerson(OCCUPATIONS.director, LAST_YEAR - 25);
    const year = Math.min(LAST_YEAR, (director.attrs['birthYear'] as number) + rng.range(22, 60));
    const star = pickPerson(OCCUPATIONS.actor, year - 12);
    const title = unique(() => workTitle(rng, () => rng.pick(cities).name));
    const f = add('film', title, { year, genre: rng.pick(FILM_GENRES) });
    f.rels['director'] = director.id;
    f.rels['star'] = star.id;
    f.rels['country'] = rng.chance(0.75) ? nationality(director).id : rng.pick(countries).id;
    films.push(f);
  }

  for (let i = 0; i < nBooks; i++) {
    const author = pickPerson(OCCUPATIONS.writer, LAST_YEAR - 20);
    const year = Math.min(LAST_YEAR, (author.attrs['birthYear'] as number) + rng.range(20, 70));
    // About one novel in 20 shares its title with a film: a near-duplicate page for the retriever.
    const shared = rng.chance(0.05) ? rng.pick(films) : undefined;
    const title = shared ? shared.name : unique(() => workTitle(rng, () => rng.pick(cities).name));
    const b = add('book', title, { year, genre: rng.pick(BOOK_GENRES) });
    if (shared) {
      shared.title = `${shared.name} (film)`;
      b.title = `${b.name} (novel)`;
    }
    b.rels['author'] = author.id;
    const eligible = publishersUntil(year);
    b.rels['publisher'] = (eligible > 0 ? (publishers[rng.int(eligible)] as Entity) : rng.pick(publishers)).id;
  }

  return { seed, entities, byId, nameCount };
}

/** The country of a person's birthplace, which the world treats as the person's nationality. */
export function nationalityOf(g: Graph, person: Entity): Entity {
  const city = g.byId.get(person.rels['birthplace'] as string) as Entity;
  return g.byId.get(city.rels['country'] as string) as Entity;
}

export function isUniqueName(g: Graph, e: Entity): boolean {
  return g.nameCount.get(e.name.toLowerCase()) === 1;
}
