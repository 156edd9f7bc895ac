/**
 * ARENA's transparency claim on the gym (`npm run bench:arena-citations`): does the relevance reward
 * raise the precision of the cited references? The gym policy answers on the arena protocol (one
 * retrieval of the question, top 5 as numbered references; answer candidates each with a citation
 * set). For each seed, two policies start from the untrained one and train on the same seeded sample
 * of training questions with ARENA's GRPO (`arenaGrpoConfig`: scheme `arena`, k2 KL at 0.04, 7
 * episodes per question): the treatment with all four rewards, the control with `relevance_weight=0`
 * (format + accuracy + bonus on format and accuracy). All are evaluated by the eval harness (`runEval`)
 * on the held-out test questions, greedily; the untrained policy also at temperature 1 (its sampling
 * distribution, uniform over the candidates). Mean over seeds with a t-interval.
 * Options: --seeds 3 --train-questions 200 --test-questions 200 --epochs 3 --entities 10000 --out bench-results
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import jstatModule from 'jstat';
import { Rng } from '../src/core/rng.js';
import { loadDatasetAll } from '../src/corpus/dataset.js';
import { generateWorld, writeWorld } from '../src/corpus/world/index.js';
import { getProtocol } from '../src/agents/registry.js';
import { RagEnv } from '../src/env/env.js';
import { formatTable } from '../src/cli/table.js';
import { type Cell, runEval } from '../src/eval/harness.js';
import { GymPolicy } from '../src/learn/gym/policy.js';
import { arenaGrpoConfig, trainRl } from '../src/learn/gym/train.js';
import { buildIndex, openRetriever } from '../src/retrieval/index-dir.js';

const { jStat } = jstatModule;
const { values: args } = parseArgs({
  options: {
    seeds: { type: 'string', default: '3' },
    'train-questions': { type: 'string', default: '200' },
    'test-questions': { type: 'string', default: '200' },
    epochs: { type: 'string', default: '3' },
    entities: { type: 'string', default: '10000' },
    out: { type: 'string', default: 'bench-results' },
  },
});
const seeds = Array.from({ length: Number(args.seeds) }, (_, i) => i);
const nTrain = Number(args['train-questions']);
const nTest = Number(args['test-questions']);
const epochs = Number(args.epochs);
const outDir = resolve(args.out);
const dir = mkdtempSync(join(tmpdir(), 'ragtrail-bench-arena-'));

function tInterval(xs: readonly number[]): { mean: number; half: number } {
  const n = xs.length;
  const mean = xs.reduce((s, x) => s + x, 0) / n;
  if (n < 2) return { mean, half: 0 };
  const sd = Math.sqrt(xs.reduce((s, x) => s + (x - mean) ** 2, 0) / (n - 1));
  return { mean, half: jStat.studentt.inv(0.975, n - 1) * (sd / Math.sqrt(n)) };
}

const SYSTEMS = ['untrained (greedy)', 'untrained (T = 1)', 'GRPO arena', 'GRPO arena, relevance_weight=0'] as const;
type System = (typeof SYSTEMS)[number];
type Metrics = { em: number; citationPrecision: number; relevance: number };

try {
  const t0 = performance.now();
  await writeWorld(join(dir, 'world'), generateWorld({ seed: 0, entities: Number(args.entities) }));
  await buildIndex(join(dir, 'world', 'corpus.jsonl'), join(dir, 'index'), { quiet: true });
  const protocol = getProtocol('arena');
  const d = protocol.defaults;
  const env = new RagEnv({ retriever: await openRetriever(join(dir, 'index')), topK: d.topK, maxTurns: d.maxTurns, maxSearches: d.maxSearches });
  const questionsPath = join(dir, 'world', 'questions.jsonl');
  const trainPool = (await loadDatasetAll(questionsPath)).questions.filter((q) => q.metadata?.['split'] === 'train');
  console.log(`world: ${trainPool.length} train questions; ${nTrain} per seed; test: the first ${nTest} of the test split`);

  const rows: ({ seed: number; system: System; seconds?: number } & Metrics)[] = [];
  for (const seed of seeds) {
    const order = trainPool.map((_, i) => i);
    new Rng(`arena-citations/${seed}`).shuffle(order);
    const train = order.slice(0, nTrain).map((i) => trainPool[i]!);
    const policies = join(dir, `policies-${seed}`);
    mkdirSync(policies, { recursive: true });
    const seconds: Partial<Record<System, number>> = {};
    for (const [system, relevance] of [['GRPO arena', true], ['GRPO arena, relevance_weight=0', false]] as const) {
      const policy = GymPolicy.fresh(protocol);
      const t1 = performance.now();
      const log = await trainRl(policy, { env, questions: train }, { ...arenaGrpoConfig({ relevance }), epochs, seed });
      seconds[system] = (performance.now() - t1) / 1000;
      policy.save(join(policies, relevance ? 'arena.json' : 'no-relevance.json'), [{ algo: 'grpo', reward: 'arena', relevance, log }]);
      console.log(`seed ${seed}: ${system} trained in ${seconds[system]!.toFixed(0)} s, sampled reward ${log[0]!['reward']!.toFixed(2)} → ${log.at(-1)!['reward']!.toFixed(2)}`);
    }
    const results = await runEval({
      index: join(dir, 'index'),
      out: join(dir, `eval-${seed}`),
      datasets: [{ name: 'world-test', path: questionsPath, split: 'test', limit: nTest }],
      systems: [
        { name: 'untrained (greedy)', agent: 'arena', policy: 'gym' },
        { name: 'untrained (T = 1)', agent: 'arena', policy: 'gym', temperature: 1 },
        { name: 'GRPO arena', agent: 'arena', policy: `gym:${join(policies, 'arena.json')}` },
        { name: 'GRPO arena, relevance_weight=0', agent: 'arena', policy: `gym:${join(policies, 'no-relevance.json')}` },
      ],
      seed,
    });
    for (const system of SYSTEMS) {
      const c = results.cells.find((x) => x.system === system) as Cell;
      const row = { seed, system, em: c.em.mean, citationPrecision: c.citationPrecision!, relevance: c.relevance!, ...(seconds[system] !== undefined ? { seconds: seconds[system] } : {}) };
      rows.push(row);
      console.log(`seed ${seed}: ${system.padEnd(32)} EM ${row.em.toFixed(3)}  citation precision ${row.citationPrecision.toFixed(3)}  relevance ${row.relevance.toFixed(3)}  (n ${c.n})`);
    }
  }

  const f = (x: { mean: number; half: number }) => `${x.mean.toFixed(3)} ± ${x.half.toFixed(3)}`;
  const of = (s: System, m: keyof Metrics) => rows.filter((r) => r.system === s).map((r) => r[m]);
  const summary = SYSTEMS.map((s) => ({ system: s, em: tInterval(of(s, 'em')), citationPrecision: tInterval(of(s, 'citationPrecision')), relevance: tInterval(of(s, 'relevance')) }));
  const diff = (m: keyof Metrics) => tInterval(of('GRPO arena', m).map((x, i) => x - of('GRPO arena, relevance_weight=0', m)[i]!));
  console.log(`\nARENA protocol, gym policy, ${nTest} held-out test questions (mean ± 95% t-interval over ${seeds.length} seeds; GRPO ${epochs} epochs on ${nTrain} questions)`);
  console.log(formatTable(['system', 'EM', 'citation precision', 'relevance'], summary.map((s) => [s.system, f(s.em), f(s.citationPrecision), f(s.relevance)])));
  console.log(`\nGRPO arena − relevance_weight=0: EM ${f(diff('em'))}, citation precision ${f(diff('citationPrecision'))}, relevance ${f(diff('relevance'))}`);
  mkdirSync(outDir, { recursive: true });
  const json = { createdAt: new Date().toISOString(), seeds: seeds.length, trainQuestions: nTrain, testQuestions: nTest, epochs, config: { ...arenaGrpoConfig(), control: arenaGrpoConfig({ relevance: false }).rewardOptions }, rows, summary, treatmentMinusControl: { em: diff('em'), citationPrecision: diff('citationPrecision'), relevance: diff('relevance') } };
  writeFileSync(join(outDir, 'arena-citations.json'), JSON.stringify(json, null, 2) + '\n');
  console.log(`\nwrote ${join(outDir, 'arena-citations.json')} in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
