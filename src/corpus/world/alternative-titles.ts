/**
 * Alternative titles (the `deep` profile): a share of the films and novels also go by a second title,
 * stated on one page of its own — the way a redirect or a "released as" note works on Wikipedia — and
 * nowhere else. A question naming a work by that title finds that page on its first search, not the
 * work's own page: the agent has to read the real title there and search again. Each page also names a
 * different work with its maker, year and lead, answers of the right kind within reach of an agent that
 * answers before it has the evidence.
 */
import type { Passage } from '../../core/types.js';
import { Rng } from '../../core/rng.js';
import { type Entity, type Graph, nationalityOf } from './graph.js';
import { workTitle } from './names.js';

export interface AlternativeTitle {
  title: string;
  /** The page that states it. */
  passageId: string;
}

/** Alternative titles by entity id, and the pages stating them; empty when `share` is 0. */
export function alternativeTitles(g: Graph, seed: number | string, share: number): { titles: Map<string, AlternativeTitle>; passages: Passage[] } {
  const titles = new Map<string, AlternativeTitle>();
  const passages: Passage[] = [];
  if (share <= 0) return { titles, passages };
  const rng = Rng.derive(seed, 'alternative titles');
  const works = g.entities.filter((e) => e.type === 'film' || e.type === 'book');
  const films = works.filter((e) => e.type === 'film');
  const books = works.filter((e) => e.type === 'book');
  const cities = g.entities.filter((e) => e.type === 'city');
  const used = new Set(g.nameCount.keys());
  const name = (id: string | undefined) => (id ? (g.byId.get(id) as Entity).name : '');
  for (const w of works) {
    if (!rng.chance(share)) continue;
    let title = '';
    for (let t = 0; t < 50 && (!title || used.has(title.toLowerCase())); t++) title = workTitle(rng, () => rng.pick(cities).name);
    if (used.has(title.toLowerCase())) continue;
    used.add(title.toLowerCase());
    const id = `${w.id}-alt`;
    let text: string;
    if (w.type === 'film') {
      const other = pickOther(rng, films, w);
      const country = g.byId.get(w.rels['country'] as string) as Entity;
      text = rng.pick([
        `${title} is the title under which ${w.name} was first shown in ${country.name}. A different picture, ${other.name} (${other.attrs['year']}), directed by ${name(other.rels['director'])} with ${name(other.rels['star'])} in the lead, has also been listed under that title.`,
        `When ${w.name} opened in ${country.name}, it was billed as ${title}. Some listings give the same title to ${other.name}, the ${other.attrs['year']} film by ${name(other.rels['director'])} starring ${name(other.rels['star'])}.`,
      ]);
    } else {
      const other = pickOther(rng, books, w);
      const author = g.byId.get(w.rels['author'] as string) as Entity;
      text = rng.pick([
        `${title} was the working title of ${w.name}, which ${nationalityOf(g, author).attrs['demonym']} readers first knew under that name. A different novel, ${other.name} (${other.attrs['year']}) by ${name(other.rels['author'])}, published by ${name(other.rels['publisher'])}, is sometimes catalogued under that title.`,
        `Early editions of ${w.name} appeared as ${title}. Catalogues also give that title to ${other.name}, written by ${name(other.rels['author'])} and published by ${name(other.rels['publisher'])} in ${other.attrs['year']}.`,
      ]);
    }
    passages.push({ id, title, text });
    titles.set(w.id, { title, passageId: id });
  }
  return { titles, passages };
}

function pickOther(rng: Rng, pool: readonly Entity[], not: Entity): Entity {
  for (;;) {
    const e = rng.pick(pool);
    if (e !== not || pool.length < 2) return e;
  }
}
