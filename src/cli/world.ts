import { type Command, Option } from 'commander';
import { defaultQuestionCount, generateWorld, QUESTION_TYPES, WORLD_PROFILES, type WorldProfileName, writeWorld } from '../corpus/world/index.js';
import { MIN_ENTITIES } from '../corpus/world/graph.js';
import { intArg, seedArg } from './options.js';
import { formatTable } from './table.js';

export function registerWorld(program: Command): void {
  program
    .command('world')
    .description("generate the synthetic multi-hop world (ragtrail's offline benchmark): corpus.jsonl, questions.jsonl, entities.jsonl, world.json")
    .requiredOption('--out <dir>', 'output folder')
    .option('--seed <seed>', 'random seed; the same seed gives byte-identical files', seedArg, 1)
    .option('--entities <n>', `number of entities (at least ${MIN_ENTITIES})`, intArg(MIN_ENTITIES, 5_000_000), 10_000)
    .option('--questions <n>', 'number of questions (default: entities / 5, at most 2000)', intArg(1))
    .addOption(new Option('--profile <name>', 'basic: 1–4 hop questions; deep: 3–6 hop chains, works named by alternative titles (first searches miss), tempting wrong answers, a search budget (docs/reference/world.md)').choices([...WORLD_PROFILES]).default('basic'))
    .action(async (opts: { out: string; seed: number | string; entities: number; questions?: number; profile: WorldProfileName }) => {
      const t0 = performance.now();
      const world = generateWorld({ seed: opts.seed, entities: opts.entities, questions: opts.questions ?? defaultQuestionCount(opts.entities), profile: opts.profile });
      const files = await writeWorld(opts.out, world);
      const secs = (performance.now() - t0) / 1000;
      const s = world.stats;
      console.log(`synthetic world (seed ${s.seed}, profile ${s.profile}): ${opts.entities} entities, ${s.passages} passages, ${s.questions} questions in ${secs.toFixed(2)} s`);
      console.log(`entities: ${Object.entries(s.entities).map(([k, v]) => `${k} ${v}`).join(', ')}; namesakes ${s.namesakes}, shared film/novel titles ${s.sharedTitles}${s.alternativeTitles ? `, alternative titles ${s.alternativeTitles}` : ''}`);
      console.log('');
      console.log(formatTable(['question type', 'count'], QUESTION_TYPES.map((t) => [t, s.questionTypes[t] ?? 0])));
      console.log('');
      console.log(`hops: ${Object.entries(s.hops).map(([k, v]) => `${k}: ${v}`).join(', ')}; splits: ${Object.entries(s.splits).map(([k, v]) => `${k} ${v}`).join(', ')}`);
      console.log(`wrote ${Object.values(files).join(', ')}`);
    });
}
