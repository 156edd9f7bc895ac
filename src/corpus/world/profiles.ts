/**
 * World profiles: what kind of questions a generated world asks and what its retrieval is like.
 *
 * `basic` is the world as it always was: 1–4 hop questions whose first search, the question as asked,
 * usually finds the first passage needed. `deep` is declared from what the papers say their methods
 * are for — long chains where credit assignment is hard (ReasonRAG's SPRE, ProRAG's step advantages),
 * first searches that miss so that reformulating pays (RAG-Gym's query quality, ReasonRAG's
 * "reasoning and retrieval" steps), tempting answers within reach before the evidence is in (premature
 * answers, the error ProRAG's PRM and RAG-Gym's critic target) and a search budget that a wasteful
 * searcher runs out of (LWS's over-search):
 *
 *   - compositional questions are chains of 3–6 hops;
 *   - about 70% of the films and novels also go by an alternative title, named on one page only (a
 *     redirect-like page: "X is the title under which Y was first shown …"); a question that names a
 *     work does so by that title where it has one, so its first search finds the alternative-title page,
 *     not the work's own, and the work's real name must be searched next (one more hop);
 *   - each alternative-title page also names a different work with its maker, year and star, an answer
 *     of the right kind for a premature answer to take;
 *   - the environment gives 8 searches (and 16 turns, room for a grounding step after each), against
 *     questions that need up to 7 lookups: a wasted search can leave a chain unfinished.
 *
 * Everything is generated from the seed: the same seed, size and profile give the same files.
 */
import type { QuestionMix } from './questions.js';

/** The world profiles `ragtrail world --profile` and a recipe's `world.profile` accept. */
export const WORLD_PROFILES = ['basic', 'deep'] as const;
/** One of {@link WORLD_PROFILES}. */
export type WorldProfileName = (typeof WORLD_PROFILES)[number];

/** The settings a profile fixes. */
export interface WorldProfile {
  name: WorldProfileName;
  mix: QuestionMix;
  /** Hop counts a compositional chain draws from (uniformly; repeats weight a count). */
  compositionalHops: readonly number[];
  /** Share of films and novels that get an alternative title page (0: none). */
  alternativeTitles: number;
  /** Share of questions starting at a work that has an alternative title that name it by that title. */
  useAlternativeTitle: number;
  /** Share of chains that start at a film or novel (the rest start anywhere). */
  startAtWork: number;
  /** Environment budgets the profile's recipes run with unless a recipe sets its own. */
  env: { maxTurns?: number; maxSearches?: number };
}

export const PROFILES: Record<WorldProfileName, WorldProfile> = {
  basic: {
    name: 'basic',
    mix: { 'single-hop': 0.2, compositional: 0.4, comparison: 0.2, 'bridge-comparison': 0.2 },
    compositionalHops: [2, 2, 2, 3, 3, 4],
    alternativeTitles: 0,
    useAlternativeTitle: 0,
    startAtWork: 0,
    env: {},
  },
  deep: {
    name: 'deep',
    mix: { 'single-hop': 0.1, compositional: 0.5, comparison: 0.15, 'bridge-comparison': 0.25 },
    compositionalHops: [3, 4, 5, 6],
    alternativeTitles: 0.7,
    useAlternativeTitle: 1,
    startAtWork: 0.7,
    env: { maxTurns: 16, maxSearches: 8 },
  },
};

export function worldProfile(name: string = 'basic'): WorldProfile {
  const p = PROFILES[name as WorldProfileName];
  if (!p) throw new Error(`unknown world profile "${name}"; choose one of ${WORLD_PROFILES.join(', ')}`);
  return p;
}
