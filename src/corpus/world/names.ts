/**
 * Invented names for the synthetic world. Every name is made up from syllables and word lists of
 * the project's own, so a language model cannot know the answers: questions about this world can
 * only be answered by retrieving its passages.
 */
import type { Rng } from '../../core/rng.js';

const ONSETS = ['b', 'br', 'c', 'd', 'dr', 'f', 'g', 'gr', 'h', 'j', 'k', 'kr', 'l', 'm', 'n', 'p', 'pr', 'r', 's', 'sh', 'st', 't', 'th', 'tr', 'v', 'w', 'z', 'al', 'el', 'or', 'is'];
const VOWELS = ['a', 'e', 'i', 'o', 'u', 'a', 'e', 'i', 'o', 'a', 'ea', 'y'];
const CODAS = ['', '', '', '', 'n', 'r', 'l', 's', 'm', 'th', 'rn', 'nd', 'x', 'v'];

function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function syllables(rng: Rng, n: number): string {
  let w = '';
  for (let i = 0; i < n; i++) w += rng.pick(ONSETS) + rng.pick(VOWELS) + (i === n - 1 ? rng.pick(CODAS) : '');
  return w;
}

const GIVEN_ENDINGS = {
  female: ['a', 'ina', 'ia', 'ette', 'ie', 'elle', 'ara'],
  male: ['o', 'us', 'el', 'ar', 'on', 'en', 'is'],
};
const SURNAME_ENDINGS = ['sen', 'ford', 'ard', 'ova', 'ik', 'ley', 'mann', 'ski', 'wood', 'berg', 'ton', 'ane', 'ez', 'elli', 'by', 'croft'];

export function givenName(rng: Rng, gender: 'female' | 'male'): string {
  return cap(syllables(rng, rng.range(1, 2)) + rng.pick(GIVEN_ENDINGS[gender]));
}

/** "a" or "an" before a word, by its first letter (good enough for the world's invented words). */
export function article(word: string): string {
  return /^[aeiou]/i.test(word) ? 'an' : 'a';
}

export const PRIZES = ['Orrin Medal', 'Halvard Prize', 'Silver Quill Award', 'Meridian Prize', 'Tessaly Award', 'Brannock Medal'];

export function surname(rng: Rng): string {
  return cap(syllables(rng, rng.range(1, 2)) + rng.pick(SURNAME_ENDINGS));
}

const COUNTRY_SUFFIXES = [
  { suffix: 'ia', demonym: 'ian' },
  { suffix: 'land', demonym: 'lander' },
  { suffix: 'ora', demonym: 'oran' },
  { suffix: 'istan', demonym: 'istani' },
  { suffix: 'enia', demonym: 'enian' },
  { suffix: 'mark', demonym: 'marker' },
  { suffix: 'ovia', demonym: 'ovian' },
  { suffix: 'esh', demonym: 'eshi' },
];
const OFFICIAL_FORMS = ['Republic of', 'Kingdom of', 'Federation of', 'Commonwealth of', 'Free State of', 'Union of'];

export function countryName(rng: Rng): { name: string; demonym: string; official: string } {
  const stem = cap(syllables(rng, rng.range(1, 2)));
  const s = rng.pick(COUNTRY_SUFFIXES);
  const name = stem + s.suffix;
  return { name, demonym: stem + s.demonym, official: `${rng.pick(OFFICIAL_FORMS)} ${name}` };
}

export function languageName(rng: Rng): string {
  return cap(syllables(rng, 2)) + rng.pick(['ic', 'ese', 'ish', 'i', 'an']);
}

const CITY_SUFFIXES = ['ford', 'mont', 'vale', 'burg', 'haven', 'wick', 'stead', 'ton', 'holm', 'mere', 'gate', 'field', 'bridge', 'port'];
const CITY_PREFIXES = ['Port', 'New', 'Upper', 'East', 'West', 'Saint', 'Old'];

export function cityName(rng: Rng): string {
  const base = cap(syllables(rng, rng.range(1, 2)) + rng.pick(CITY_SUFFIXES));
  return rng.chance(0.12) ? `${rng.pick(CITY_PREFIXES)} ${base}` : base;
}

const TITLE_ADJECTIVES = [
  'Silent', 'Crimson', 'Hollow', 'Bitter', 'Golden', 'Distant', 'Broken', 'Quiet', 'Burning', 'Forgotten', 'Northern', 'Velvet', 'Restless',
  'Paper', 'Glass', 'Iron', 'Hidden', 'Last', 'Wandering', 'Lonely', 'Scarlet', 'Endless', 'Frozen', 'Shallow', 'Borrowed', 'Secret', 'Pale',
  'Second', 'Narrow', 'Salt', 'Amber', 'Winter', 'Summer', 'Midnight', 'Electric', 'Painted', 'Stolen', 'Open', 'Falling', 'Sleeping',
];
const TITLE_NOUNS = [
  'Harbor', 'Garden', 'River', 'Mirror', 'Orchard', 'Lantern', 'Kingdom', 'Station', 'Letter', 'Season', 'Tide', 'Bridge', 'Country', 'House',
  'Voyage', 'Island', 'Machine', 'Promise', 'Shadow', 'Choir', 'Empire', 'Hunter', 'Archive', 'Meadow', 'Crown', 'Signal', 'Winter', 'Field',
  'Compass', 'Engine', 'Garrison', 'Frontier', 'Witness', 'Theory', 'Carnival', 'Hotel', 'Avenue', 'Bell', 'Canal', 'Fortune', 'Harvest',
  'Lighthouse', 'Mountain', 'Painter', 'Quarry', 'Sparrow', 'Stranger', 'Tower', 'Valley', 'Widow',
];

function plural(noun: string): string {
  if (/(s|x|ch|sh)$/.test(noun)) return `${noun}es`;
  if (/[^aeiou]y$/.test(noun)) return `${noun.slice(0, -1)}ies`;
  return `${noun}s`;
}

/** A film or book title, e.g. "The Silent Harbor", "Letters from Dravmont", "Garden of Salt". */
export function workTitle(rng: Rng, place: () => string): string {
  const a = rng.pick(TITLE_ADJECTIVES);
  const n = rng.pick(TITLE_NOUNS);
  switch (rng.int(6)) {
    case 0:
    case 1:
      return `The ${a} ${n}`;
    case 2:
      return `${a} ${n}`;
    case 3:
      return `The ${n} of ${place()}`;
    case 4:
      return `${plural(n)} of ${rng.pick(TITLE_NOUNS)}`;
    default:
      return `A ${n} in ${place()}`;
  }
}

export const INDUSTRIES: { industry: string; nouns: string[] }[] = [
  { industry: 'publishing', nouns: ['Press', 'Books', 'Publishing'] },
  { industry: 'software', nouns: ['Systems', 'Software', 'Labs'] },
  { industry: 'automotive', nouns: ['Motors', 'Automotive'] },
  { industry: 'food processing', nouns: ['Foods', 'Provisions'] },
  { industry: 'energy', nouns: ['Energy', 'Power'] },
  { industry: 'shipping', nouns: ['Lines', 'Shipping', 'Freight'] },
  { industry: 'banking', nouns: ['Bank', 'Capital', 'Trust'] },
  { industry: 'film production', nouns: ['Pictures', 'Studios'] },
];

export const OCCUPATIONS = {
  director: 'film director',
  actor: 'actor',
  writer: 'novelist',
  founder: 'entrepreneur',
  other: ['chemist', 'painter', 'politician', 'composer', 'architect', 'physicist', 'journalist', 'footballer', 'historian', 'engineer'],
} as const;

export const FILM_GENRES = ['drama', 'comedy', 'thriller', 'science fiction', 'western', 'horror', 'musical', 'documentary', 'war', 'romance', 'crime'];
export const BOOK_GENRES = ['historical', 'mystery', 'fantasy', 'science fiction', 'satirical', 'coming-of-age', 'crime', 'adventure', 'epistolary'];
export const REGIONS = ['the Aster Reach', 'the Meridian Isles', 'the Calder Basin', 'the Northern Shelf', 'the Sable Coast', 'the Vell Plateau'];
