/**
 * The synthetic multi-hop world: ragtrail's own offline benchmark, in the spirit of
 * 2WikiMultihopQA (questions generated from a knowledge graph, answered from passages about it).
 * Deterministic per seed: the same seed and sizes give byte-identical files.
 */
import { join } from 'node:path';
import { writeJsonl, writeFileAtomic } from '../../core/io.js';
import { Rng } from '../../core/rng.js';
import type { Passage, Question } from '../../core/types.js';
import { writeCorpus } from '../corpus.js';
import { toFlashrag } from '../formats/flashrag.js';
import { type Entity, generateGraph, type Graph } from './graph.js';
import { renderWorld } from './passages.js';
import { alternativeTitles } from './alternative-titles.js';
import { generateQuestions, type QuestionMix, QUESTION_TYPES } from './questions.js';
import { type WorldProfileName, worldProfile } from './profiles.js';

export { QUESTION_TYPES, DEFAULT_MIX, type QuestionMix } from './questions.js';
export { PROFILES, WORLD_PROFILES, type WorldProfile, type WorldProfileName, worldProfile } from './profiles.js';
export type { Entity, EntityType, Graph } from './graph.js';

/** Bumped whenever the generator's output for a given seed changes. */
export const WORLD_VERSION = 2;

/** What {@link generateWorld} builds: the same seed and sizes always give the same world. */
export interface WorldOptions {
  seed: number | string;
  entities: number;
  /** Number of questions (default: one per five entities, at most 2,000). */
  questions?: number;
  /** The question mix (default: the profile's). */
  mix?: QuestionMix;
  /** `basic` (default) or `deep` (world/profiles.ts). */
  profile?: WorldProfileName;
}

/**
 * What a generated world holds: entities by kind, passages, questions by type, hop count and split, and
 * its deliberate ambiguities (namesakes, shared titles).
 */
export interface WorldStats {
  version: number;
  seed: number | string;
  profile: WorldProfileName;
  /** Films and novels with an alternative title page (deep profile). */
  alternativeTitles: number;
  entities: Record<string, number>;
  passages: number;
  questions: number;
  questionTypes: Record<string, number>;
  hops: Record<string, number>;
  splits: Record<string, number>;
  /** People sharing a full name with another person. */
  namesakes: number;
  /** Film/novel pairs sharing a title. */
  sharedTitles: number;
}

/** A generated world: its knowledge graph, the passages describing it, questions over it, and counts of each. */
export interface World {
  graph: Graph;
  passages: Passage[];
  questions: Question[];
  stats: WorldStats;
}

export function defaultQuestionCount(entities: number): number {
  return Math.min(2000, Math.max(10, Math.round(entities / 5)));
}

function countBy<T>(items: readonly T[], key: (t: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const it of items) {
    const k = key(it);
    out[k] = (out[k] ?? 0) + 1;
  }
  return out;
}

/**
 * Generates the knowledge graph, its passages and its questions, each from its own stream derived from
 * `opts.seed`; pure (nothing is written, see {@link writeWorld}).
 */
export function generateWorld(opts: WorldOptions): World {
  const profile = worldProfile(opts.profile ?? 'basic');
  const graph = generateGraph(opts.seed, opts.entities);
  const rendered = renderWorld(graph, Rng.derive(opts.seed, 'passages'));
  const alt = alternativeTitles(graph, opts.seed, profile.alternativeTitles);
  const passages = [...rendered.passages, ...alt.passages];
  const questions = generateQuestions(
    graph,
    rendered.factPassage,
    Rng.derive(opts.seed, 'questions'),
    opts.questions ?? defaultQuestionCount(opts.entities),
    opts.mix ?? profile.mix,
    { compositionalHops: profile.compositionalHops, startAtWork: profile.startAtWork, useAlternativeTitle: profile.useAlternativeTitle, alternativeTitles: alt.titles },
  );
  const questionTypes = Object.fromEntries(QUESTION_TYPES.map((t) => [t, 0]));
  for (const q of questions) questionTypes[q.type as string] = (questionTypes[q.type as string] ?? 0) + 1;
  const stats: WorldStats = {
    version: WORLD_VERSION,
    seed: opts.seed,
    profile: profile.name,
    alternativeTitles: alt.titles.size,
    entities: countBy(graph.entities, (e) => e.type),
    passages: passages.length,
    questions: questions.length,
    questionTypes,
    hops: countBy(questions, (q) => String(q.metadata?.['hops'])),
    splits: countBy(questions, (q) => String(q.metadata?.['split'])),
    namesakes: graph.entities.filter((e) => e.type === 'person' && e.title !== e.name).length,
    sharedTitles: graph.entities.filter((e) => e.type === 'book' && e.title !== e.name).length,
  };
  return { graph, passages, questions, stats };
}

function entityRecord(e: Entity): Record<string, unknown> {
  return { id: e.id, type: e.type, name: e.name, title: e.title, aliases: e.aliases, attrs: e.attrs, rels: e.rels };
}

/** Writes `corpus.jsonl`, `questions.jsonl` (FlashRAG layout), `entities.jsonl` and `world.json` into `dir`. */
export async function writeWorld(dir: string, world: World): Promise<Record<string, string>> {
  const files = {
    corpus: join(dir, 'corpus.jsonl'),
    questions: join(dir, 'questions.jsonl'),
    entities: join(dir, 'entities.jsonl'),
    summary: join(dir, 'world.json'),
  };
  await writeCorpus(files.corpus, world.passages);
  await writeJsonl(files.questions, world.questions.map(toFlashrag));
  await writeJsonl(files.entities, world.graph.entities.map(entityRecord));
  await writeFileAtomic(files.summary, async (out) => {
    out.write(JSON.stringify(world.stats, null, 2) + '\n');
  });
  return files;
}
