/**
 * Questions over the synthetic world, in the four families of 2WikiMultihopQA: single-hop,
 * compositional (2–4 hops along relations), comparison, and bridge-comparison. Each comes with its
 * gold answers and aliases, the passages that support it, and a gold decomposition into single-hop
 * sub-questions, each answered by one passage.
 */
import type { DecompositionStep, Question } from '../../core/types.js';
import type { Rng } from '../../core/rng.js';
import type { AlternativeTitle } from './alternative-titles.js';
import { type Entity, type EntityType, type Graph, isUniqueName, nationalityOf } from './graph.js';

/** The four question families of 2WikiMultihopQA that the synthetic world generates. */
export const QUESTION_TYPES = ['single-hop', 'compositional', 'comparison', 'bridge-comparison'] as const;
export type WorldQuestionType = (typeof QUESTION_TYPES)[number];

/** One lookup: a relation to another entity, or an attribute value. `{x}` stands for the subject. */
interface Hop {
  key: string;
  from: EntityType;
  /** Set for relations: the type of entity the hop leads to. */
  to?: EntityType;
  /** Noun phrases naming the target, for nesting inside a longer question. */
  np?: string[];
  /** Questions asking for the target. */
  ask: string[];
  /** Answers of an attribute hop. */
  value?: (e: Entity, g: Graph) => string[];
}

const attr = (name: string) => (e: Entity) => [String(e.attrs[name])];

const HOPS: Hop[] = [
  { key: 'director', from: 'film', to: 'person', np: ['the director of {x}'], ask: ['Who directed {x}?', 'Who is the director of {x}?'] },
  { key: 'star', from: 'film', to: 'person', np: ['the lead actor of {x}', 'the star of {x}'], ask: ['Who played the lead role in {x}?', 'Who stars in {x}?'] },
  { key: 'country', from: 'film', to: 'country', np: ['the country where {x} was made'], ask: ['In which country was {x} made?', 'Which country produced {x}?'] },
  { key: 'author', from: 'book', to: 'person', np: ['the author of {x}'], ask: ['Who wrote {x}?', 'Who is the author of {x}?'] },
  { key: 'publisher', from: 'book', to: 'company', np: ['the publisher of {x}'], ask: ['Which company published {x}?', 'Who published {x}?'] },
  { key: 'founder', from: 'company', to: 'person', np: ['the founder of {x}'], ask: ['Who founded {x}?', 'Who is the founder of {x}?'] },
  { key: 'headquarters', from: 'company', to: 'city', np: ['the city where {x} is headquartered'], ask: ['Where is {x} headquartered?', 'In which city is {x} based?'] },
  { key: 'birthplace', from: 'person', to: 'city', np: ['the birthplace of {x}', 'the city where {x} was born'], ask: ['Where was {x} born?', 'In which city was {x} born?'] },
  { key: 'almaMater', from: 'person', to: 'university', np: ['the university {x} graduated from'], ask: ['Which university did {x} attend?', 'Where did {x} study?'] },
  { key: 'spouse', from: 'person', to: 'person', np: ['the spouse of {x}'], ask: ['Who is the spouse of {x}?', 'Whom did {x} marry?'] },
  { key: 'father', from: 'person', to: 'person', np: ['the father of {x}'], ask: ['Who is the father of {x}?'] },
  { key: 'country', from: 'city', to: 'country', np: ['the country where {x} is located'], ask: ['In which country is {x}?', 'Which country is {x} located in?'] },
  { key: 'city', from: 'university', to: 'city', np: ['the city where {x} is located'], ask: ['In which city is {x}?', 'Where is {x} located?'] },
  { key: 'capital', from: 'country', to: 'city', np: ['the capital of {x}'], ask: ['What is the capital of {x}?'] },
  { key: 'birthYear', from: 'person', ask: ['When was {x} born?', 'In what year was {x} born?'], value: attr('birthYear') },
  { key: 'deathYear', from: 'person', ask: ['When did {x} die?', 'In what year did {x} die?'], value: attr('deathYear') },
  {
    key: 'nationality',
    from: 'person',
    ask: ['What is the nationality of {x}?', 'Which country is {x} from?'],
    value: (e, g) => {
      const c = nationalityOf(g, e);
      return [c.attrs['demonym'] as string, c.name, ...c.aliases];
    },
  },
  { key: 'occupation', from: 'person', ask: ['What is the occupation of {x}?'], value: attr('occupation') },
  { key: 'year', from: 'film', ask: ['When was {x} released?', 'In which year was {x} released?'], value: attr('year') },
  { key: 'genre', from: 'film', ask: ['What genre of film is {x}?'], value: attr('genre') },
  { key: 'year', from: 'book', ask: ['When was {x} first published?', 'In what year was {x} published?'], value: attr('year') },
  { key: 'foundedYear', from: 'company', ask: ['When was {x} founded?', 'In which year was {x} founded?'], value: attr('foundedYear') },
  { key: 'industry', from: 'company', ask: ['What industry is {x} in?'], value: attr('industry') },
  { key: 'foundedYear', from: 'city', ask: ['When was {x} founded?'], value: attr('foundedYear') },
  { key: 'foundedYear', from: 'university', ask: ['When was {x} founded?', 'In what year was {x} established?'], value: attr('foundedYear') },
  { key: 'language', from: 'country', ask: ['What is the official language of {x}?', 'What language is spoken in {x}?'], value: attr('language') },
  { key: 'region', from: 'country', ask: ['In which region is {x}?'], value: attr('region') },
];

const HOPS_FROM = new Map<EntityType, Hop[]>();
for (const h of HOPS) HOPS_FROM.set(h.from, [...(HOPS_FROM.get(h.from) ?? []), h]);

/** Relations whose subject type is implied by the relation, so a shared film/novel title is still unambiguous. */
const TYPE_SPECIFIC = new Set(['director', 'star', 'author', 'publisher']);

/**
 * The share of each question type in a generated world (shares sum to 1; default 0.2 single-hop,
 * 0.4 compositional, 0.2 comparison, 0.2 bridge-comparison).
 */
export interface QuestionMix {
  'single-hop': number;
  compositional: number;
  comparison: number;
  'bridge-comparison': number;
}

export const DEFAULT_MIX: QuestionMix = { 'single-hop': 0.2, compositional: 0.4, comparison: 0.2, 'bridge-comparison': 0.2 };

/** A question before it gets its id. */
type Draft = Omit<Question, 'id'> & { type: WorldQuestionType; hops: number };

/** What shapes the questions beyond their mix: world/profiles.ts (the `deep` profile's longer chains and alternative titles). */
export interface QuestionShape {
  compositionalHops: readonly number[];
  startAtWork: number;
  useAlternativeTitle: number;
  alternativeTitles: ReadonlyMap<string, AlternativeTitle>;
}

const BASIC_SHAPE: QuestionShape = { compositionalHops: [2, 2, 2, 3, 3, 4], startAtWork: 0, useAlternativeTitle: 0, alternativeTitles: new Map() };

export function generateQuestions(g: Graph, factPassage: Map<string, string>, rng: Rng, count: number, mix: QuestionMix = DEFAULT_MIX, shape: QuestionShape = BASIC_SHAPE): Question[] {
  const pools = new Map<EntityType, Entity[]>();
  for (const e of g.entities) {
    const list = pools.get(e.type);
    if (list) list.push(e);
    else pools.set(e.type, [e]);
  }
  const pool = (t: EntityType) => pools.get(t) ?? [];
  const uniquePool = (t: EntityType) => pool(t).filter((e) => isUniqueName(g, e));
  const unique = new Map<EntityType, Entity[]>();
  for (const t of pools.keys()) unique.set(t, uniquePool(t));
  const named = g.entities.filter((e) => isUniqueName(g, e) || e.type === 'film' || e.type === 'book');

  const passageOf = (e: Entity, key: string): string => {
    const id = factPassage.get(`${e.id}.${key}`);
    if (!id) throw new Error(`world generator bug: no passage states ${e.id}.${key}`);
    return id;
  };
  /** How a sub-question names an entity: its page title when a namesake exists, so that each hop is answerable alone. */
  const ref = (e: Entity) => (isUniqueName(g, e) ? e.name : e.title);
  const target = (e: Entity, h: Hop) => (h.to ? g.byId.get(e.rels[h.key] as string) : undefined);
  const answersOf = (e: Entity, h: Hop): string[] => {
    if (h.value) return h.value(e, g);
    const t = target(e, h) as Entity;
    return [t.name, ...t.aliases];
  };
  const fill = (template: string, x: string) => template.replace('{x}', x);
  const works = named.filter((e) => e.type === 'film' || e.type === 'book');
  /**
   * How a question names an entity: by its alternative title where it has one (deep profile), with the
   * lookup of its real title as the first step of the plan; otherwise by name, no extra step. Draws
   * nothing from `rng` for an entity without one, so the basic profile's questions are unchanged.
   */
  const mention = (e: Entity): { text: string; steps: DecompositionStep[]; alsoRight: string[] } => {
    const alt = shape.alternativeTitles.get(e.id);
    if (!alt || !rng.chance(shape.useAlternativeTitle)) return { text: e.name, steps: [], alsoRight: [] };
    const noun = e.type === 'film' ? 'film' : 'novel';
    return { text: alt.title, steps: [{ question: `Which ${noun} is also known as ${alt.title}?`, answer: e.name, passageId: alt.passageId }], alsoRight: [alt.title] };
  };
  const usable = (e: Entity, h: Hop) => (h.to ? e.rels[h.key] !== undefined : e.attrs[h.key] !== undefined || h.key === 'nationality');

  function chain(hops: number): Draft | undefined {
    const start = shape.startAtWork > 0 && rng.chance(shape.startAtWork) ? rng.pick(works) : rng.pick(named);
    const visited = new Set([start.id]);
    const path: { entity: Entity; hop: Hop }[] = [];
    let cur = start;
    for (let i = 0; i < hops; i++) {
      const last = i === hops - 1;
      const options = (HOPS_FROM.get(cur.type) ?? []).filter((h) => {
        if (!usable(cur, h)) return false;
        if (!last && !h.to) return false;
        const t = target(cur, h);
        return !t || !visited.has(t.id);
      });
      if (options.length === 0) return undefined;
      const hop = rng.pick(options);
      if (i === 0 && !isUniqueName(g, start) && !TYPE_SPECIFIC.has(hop.key)) return undefined;
      path.push({ entity: cur, hop });
      const t = target(cur, hop);
      if (t) {
        visited.add(t.id);
        cur = t;
      }
    }
    // The question nests noun phrases: "When was the director of The Silent Harbor born?"
    const named0 = mention(start);
    let phrase = named0.text;
    for (const step of path.slice(0, -1)) phrase = fill(rng.pick(step.hop.np as string[]), phrase);
    const lastStep = path[path.length - 1] as (typeof path)[number];
    const decomposition: DecompositionStep[] = [...named0.steps, ...path.map(({ entity, hop }) => ({
      question: fill(rng.pick(hop.ask), ref(entity)),
      answer: answersOf(entity, hop)[0] as string,
      passageId: passageOf(entity, hop.key),
    }))];
    return {
      question: fill(rng.pick(lastStep.hop.ask), phrase),
      answers: answersOf(lastStep.entity, lastStep.hop),
      type: hops === 1 ? 'single-hop' : 'compositional',
      hops: decomposition.length,
      supporting: [...new Set(decomposition.map((d) => d.passageId as string))],
      decomposition,
    };
  }

  /** Two distinct entities in random order. */
  const two = (items: Entity[], ok: (a: Entity, b: Entity) => boolean): [Entity, Entity] | undefined => {
    if (items.length < 2) return undefined;
    for (let t = 0; t < 30; t++) {
      const a = rng.pick(items);
      const b = rng.pick(items);
      if (a !== b && ok(a, b)) return [a, b];
    }
    return undefined;
  };
  /**
   * Two distinct entities in random order that share `group` (a country): drawn from the group of the
   * first, as random pairs rarely share one and "yes" answers would be dropped for it (skewing yes/no to no).
   */
  const groupCache = new Map<(e: Entity) => string, Map<string, Entity[]>>();
  const twoSame = (items: Entity[], group: (e: Entity) => string, ok: (a: Entity, b: Entity) => boolean): [Entity, Entity] | undefined => {
    let groups = groupCache.get(group);
    if (!groups) {
      groups = new Map();
      for (const e of items) {
        const k = group(e);
        const list = groups.get(k);
        if (list) list.push(e);
        else groups.set(k, [e]);
      }
      groupCache.set(group, groups);
    }
    for (let t = 0; t < 30; t++) {
      const a = rng.pick(items);
      const b = rng.pick(groups.get(group(a)) as Entity[]);
      if (a !== b && ok(a, b)) return rng.chance(0.5) ? [a, b] : [b, a];
    }
    return undefined;
  };
  const step = (e: Entity, key: string, ask: string, answer: string): DecompositionStep => ({
    question: fill(ask, ref(e)),
    answer,
    passageId: passageOf(e, key),
  });
  const num = (e: Entity, k: string) => e.attrs[k] as number;
  const nat = (p: Entity) => nationalityOf(g, p);
  // Stable function identities: twoSame caches its grouping per grouping function.
  const personCountry = (p: Entity) => nat(p);
  const cityCountry = (c: Entity) => g.byId.get(c.rels['country'] as string) as Entity;
  const viaOf = new Map<string, (e: Entity) => string>();

  interface Compare {
    type: EntityType;
    key: string;
    ask: string;
    questions: { text: string; wantSmaller: boolean }[];
  }
  const COMPARE: Compare[] = [
    { type: 'person', key: 'birthYear', ask: 'When was {x} born?', questions: [
      { text: 'Who was born first, {a} or {b}?', wantSmaller: true },
      { text: 'Who was born later, {a} or {b}?', wantSmaller: false },
      { text: 'Who is older, {a} or {b}?', wantSmaller: true },
    ] },
    { type: 'film', key: 'year', ask: 'When was {x} released?', questions: [
      { text: 'Which film came out first, {a} or {b}?', wantSmaller: true },
      { text: 'Which film was released more recently, {a} or {b}?', wantSmaller: false },
    ] },
    { type: 'book', key: 'year', ask: 'When was {x} first published?', questions: [{ text: 'Which novel was published first, {a} or {b}?', wantSmaller: true }] },
    { type: 'company', key: 'foundedYear', ask: 'When was {x} founded?', questions: [
      { text: 'Which company was founded earlier, {a} or {b}?', wantSmaller: true },
      { text: 'Which company is younger, {a} or {b}?', wantSmaller: false },
    ] },
    { type: 'city', key: 'population', ask: 'How many people live in {x}?', questions: [{ text: 'Which city has more inhabitants, {a} or {b}?', wantSmaller: false }] },
  ];
  const fmtAttr = (e: Entity, key: string) => (key === 'population' ? num(e, key).toLocaleString('en-US') : String(e.attrs[key]));

  function comparison(): Draft | undefined {
    if (rng.chance(0.3)) {
      // Yes/no: same nationality (people) or same country (cities), balanced.
      const people = rng.chance(0.6);
      const items = unique.get(people ? 'person' : 'city') ?? [];
      const countryOf = people ? personCountry : cityCountry;
      const wantSame = rng.chance(0.5);
      const pair = wantSame ? twoSame(items, (e) => countryOf(e).id, () => true) : two(items, (a, b) => countryOf(a) !== countryOf(b));
      if (!pair) return undefined;
      const [a, b] = pair;
      const decomposition = people
        ? [a, b].map((p) => step(p, 'nationality', 'What is the nationality of {x}?', nat(p).attrs['demonym'] as string))
        : [a, b].map((c) => step(c, 'country', 'In which country is {x}?', countryOf(c).name));
      return {
        question: people ? `Are ${a.name} and ${b.name} of the same nationality?` : `Are ${a.name} and ${b.name} in the same country?`,
        answers: [wantSame ? 'yes' : 'no'],
        type: 'comparison',
        hops: 2,
        supporting: decomposition.map((d) => d.passageId as string),
        decomposition,
      };
    }
    const c = rng.pick(COMPARE);
    const pair = two(unique.get(c.type) ?? [], (a, b) => num(a, c.key) !== num(b, c.key));
    if (!pair) return undefined;
    const [a, b] = pair;
    const q = rng.pick(c.questions);
    const smaller = num(a, c.key) < num(b, c.key) ? a : b;
    const winner = q.wantSmaller ? smaller : smaller === a ? b : a;
    const [ma, mb] = [mention(a), mention(b)];
    const decomposition = [...ma.steps, ...mb.steps, ...[a, b].map((e) => step(e, c.key, c.ask, fmtAttr(e, c.key)))];
    return {
      question: q.text.replace('{a}', ma.text).replace('{b}', mb.text),
      answers: [winner.name, ...(winner === a ? ma : mb).alsoRight, ...winner.aliases],
      type: 'comparison',
      hops: decomposition.length,
      supporting: decomposition.map((d) => d.passageId as string),
      decomposition,
    };
  }

  interface Bridge {
    type: EntityType;
    rel: string;
    relAsk: string;
    role: string;
  }
  const BRIDGES: Bridge[] = [
    { type: 'film', rel: 'director', relAsk: 'Who directed {x}?', role: 'director' },
    { type: 'book', rel: 'author', relAsk: 'Who wrote {x}?', role: 'author' },
    { type: 'company', rel: 'founder', relAsk: 'Who founded {x}?', role: 'founder' },
  ];

  function bridgeComparison(): Draft | undefined {
    const b = rng.pick(BRIDGES);
    const via = (e: Entity) => g.byId.get(e.rels[b.rel] as string) as Entity;
    const noun = b.type === 'book' ? 'novel' : b.type;
    const yesNo = rng.chance(0.3);
    const wantSame = rng.chance(0.5);
    const items = unique.get(b.type) ?? [];
    if (!viaOf.has(b.rel)) viaOf.set(b.rel, (e) => nat(via(e)).id);
    const pair = yesNo && wantSame
      ? twoSame(items, viaOf.get(b.rel)!, (x, y) => via(x) !== via(y))
      : two(items, (x, y) => via(x) !== via(y) && (yesNo ? nat(via(x)) !== nat(via(y)) : num(via(x), 'birthYear') !== num(via(y), 'birthYear')));
    if (!pair) return undefined;
    const [x, y] = pair;
    const [px, py] = [via(x), via(y)];
    const [mx, my] = [mention(x), mention(y)];
    const first = [...mx.steps, ...my.steps, step(x, b.rel, b.relAsk, px.name), step(y, b.rel, b.relAsk, py.name)];
    if (yesNo) {
      const decomposition = [...first, ...[px, py].map((p) => step(p, 'nationality', 'What is the nationality of {x}?', nat(p).attrs['demonym'] as string))];
      return {
        question: rng.pick([`Do the ${b.role}s of ${mx.text} and ${my.text} have the same nationality?`, `Are the ${b.role}s of ${mx.text} and ${my.text} from the same country?`]),
        answers: [wantSame ? 'yes' : 'no'],
        type: 'bridge-comparison',
        hops: decomposition.length,
        supporting: [...new Set(decomposition.map((d) => d.passageId as string))],
        decomposition,
      };
    }
    const wantEarlier = rng.chance(0.5);
    const earlier = num(px, 'birthYear') < num(py, 'birthYear') ? x : y;
    const winner = wantEarlier ? earlier : earlier === x ? y : x;
    const decomposition = [...first, ...[px, py].map((p) => step(p, 'birthYear', 'When was {x} born?', String(p.attrs['birthYear'])))];
    return {
      question: `Which ${noun} has the ${b.role} who was born ${wantEarlier ? 'first' : 'later'}, ${mx.text} or ${my.text}?`,
      answers: [winner.name, ...(winner === x ? mx : my).alsoRight, ...winner.aliases],
      type: 'bridge-comparison',
      hops: decomposition.length,
      supporting: [...new Set(decomposition.map((d) => d.passageId as string))],
      decomposition,
    };
  }

  const makers: Record<WorldQuestionType, () => Draft | undefined> = {
    'single-hop': () => chain(1),
    compositional: () => chain(rng.pick(shape.compositionalHops as number[])),
    comparison,
    'bridge-comparison': bridgeComparison,
  };
  const weights = QUESTION_TYPES.map((t) => mix[t]);
  const questions: Question[] = [];
  const seenText = new Set<string>();
  let attempts = 0;
  while (questions.length < count && attempts < count * 50) {
    attempts++;
    const type = QUESTION_TYPES[rng.weighted(weights)] as WorldQuestionType;
    const draft = makers[type]();
    if (!draft || seenText.has(draft.question)) continue;
    seenText.add(draft.question);
    const { hops, ...rest } = draft;
    const index = questions.length;
    // A fixed 80/10/10 split by position keeps train/dev/test stable for a seed.
    const split = index % 10 === 8 ? 'dev' : index % 10 === 9 ? 'test' : 'train';
    questions.push({ id: `q${String(index).padStart(6, '0')}`, ...rest, metadata: { hops, split } });
  }
  return questions;
}
