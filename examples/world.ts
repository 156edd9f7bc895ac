/**
 * Shared by the examples: a small synthetic multi-hop world (offline, seeded) written to a temporary
 * folder and indexed with BM25. Real corpora go through the same two calls: `readCorpus` / `buildIndex`.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateWorld, type Question, writeWorld } from 'ragtrail';
import { buildIndex, openRetriever, type Retriever } from 'ragtrail/retrieval';

export interface SmallWorld {
  dir: string;
  corpus: string;
  questionsFile: string;
  index: string;
  questions: Question[];
  retriever: Retriever;
}

export async function smallWorld(seed = 7, entities = 300, questions = 30): Promise<SmallWorld> {
  const dir = mkdtempSync(join(tmpdir(), 'ragtrail-example-'));
  const world = generateWorld({ seed, entities, questions });
  const files = await writeWorld(dir, world);
  const index = join(dir, 'index');
  await buildIndex(files['corpus']!, index, { quiet: true });
  return { dir, corpus: files['corpus']!, questionsFile: files['questions']!, index, questions: world.questions, retriever: await openRetriever(index) };
}
