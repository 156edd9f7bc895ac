/**
 * The papers' central claim on the gym (`npm run bench:process-vs-outcome`): with the same training
 * questions, does process supervision (MCTS + SPRE step pairs → step-level DPO, ReasonRAG) beat
 * outcome-reward RL (GRPO on EM)? For each budget N of training questions and each seed, both learners
 * start from the same untrained gym policy and see the same N questions (a seeded sample of the train
 * split); both are scored by greedy EM on the world's 200 held-out test questions. Mean over seeds with
 * a t-interval, printed as a table and plotted in an HTML report. The cost each method spent (policy
 * steps sampled) is printed too: the question budget is equal, the compute is not.
 * Options: --budgets 25,50,100,200,400 --seeds 3 --simulations 16 --grpo-epochs 3 --out bench-results
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import jstatModule from 'jstat';
import { Rng } from '../src/core/rng.js';
import type { Question } from '../src/core/types.js';
import { loadDatasetAll } from '../src/corpus/dataset.js';
import { generateWorld, writeWorld } from '../src/corpus/world/index.js';
import { getProtocol } from '../src/agents/registry.js';
import type { Move, State } from '../src/env/env.js';
import { RagEnv } from '../src/env/env.js';
import { formatTable } from '../src/cli/table.js';
import { lineChart } from '../src/eval/svg.js';
import { preferencePairs } from '../src/learn/gym/data.js';
import { GymPolicy } from '../src/learn/gym/policy.js';
import { sampleEpisode } from '../src/learn/gym/rollout.js';
import { trainDpo, trainRl } from '../src/learn/gym/train.js';
import type { ProposeOptions } from '../src/agents/policy.js';
import { annotateQuestion } from '../src/process/annotate.js';
import { UCT_DEFAULTS } from '../src/process/mcts.js';
import type { SavedTree } from '../src/process/tree.js';
import { buildIndex, openRetriever } from '../src/retrieval/index-dir.js';

const { jStat } = jstatModule;
const { values: args } = parseArgs({
  options: {
    budgets: { type: 'string', default: '25,50,100,200,400' },
    seeds: { type: 'string', default: '3' },
    simulations: { type: 'string', default: '16' },
    'grpo-epochs': { type: 'string', default: '3' },
    entities: { type: 'string', default: '10000' },
    out: { type: 'string', default: 'bench-results' },
  },
});
const budgets = args.budgets.split(',').map(Number).sort((a, b) => a - b);
const seeds = Array.from({ length: Number(args.seeds) }, (_, i) => i);
const simulations = Number(args.simulations);
const grpoEpochs = Number(args['grpo-epochs']);
const outDir = resolve(args.out);
const dir = mkdtempSync(join(tmpdir(), 'ragtrail-bench-pvo-'));

/** Counts policy steps proposed (the compute a method spends in the environment). */
class Counting extends GymPolicy {
  steps = 0;
  override async propose(state: State, opts: ProposeOptions = {}): Promise<Move[]> {
    this.steps += opts.n ?? 1;
    return super.propose(state, opts);
  }
}

function tInterval(xs: readonly number[]): { mean: number; half: number } {
  const n = xs.length;
  const mean = xs.reduce((s, x) => s + x, 0) / n;
  if (n < 2) return { mean, half: 0 };
  const sd = Math.sqrt(xs.reduce((s, x) => s + (x - mean) ** 2, 0) / (n - 1));
  return { mean, half: jStat.studentt.inv(0.975, n - 1) * (sd / Math.sqrt(n)) };
}

try {
  const t0 = performance.now();
  await writeWorld(join(dir, 'world'), generateWorld({ seed: 0, entities: Number(args.entities) }));
  await buildIndex(join(dir, 'world', 'corpus.jsonl'), join(dir, 'index'), { quiet: true });
  const retriever = await openRetriever(join(dir, 'index'));
  const protocol = getProtocol('reasonrag');
  const d = protocol.defaults;
  const env = new RagEnv({ retriever, topK: d.topK, maxTurns: d.maxTurns, maxSearches: d.maxSearches });
  const all = (await loadDatasetAll(join(dir, 'world', 'questions.jsonl'))).questions;
  const trainPool = all.filter((q) => q.metadata?.['split'] === 'train');
  const test = all.filter((q) => q.metadata?.['split'] === 'test');
  const evalEm = async (p: GymPolicy) => {
    let s = 0;
    for (const q of test) s += (await sampleEpisode(env, p, q, 0, 0)).trajectory.metrics!.em;
    return s / test.length;
  };
  const baseEm = await evalEm(GymPolicy.fresh(protocol));
  console.log(`world: ${trainPool.length} train / ${test.length} test questions; untrained gym policy greedy EM ${baseEm.toFixed(3)}`);

  type Row = { budget: number; seed: number; dpo: number; grpo: number; pairs: number; annotateSteps: number; grpoEpisodes: number; grpoSteps: number; seconds: { annotate: number; dpo: number; grpo: number } };
  const rows: Row[] = [];
  for (const seed of seeds) {
    // The training questions of this seed: a seeded sample; budget N takes the first N.
    const order = trainPool.map((_, i) => i);
    new Rng(`pvo/${seed}`).shuffle(order);
    const sample: Question[] = order.slice(0, budgets[budgets.length - 1]).map((i) => trainPool[i]!);
    const annotator = new Counting(GymPolicy.fresh(protocol).model, protocol);
    const trees: SavedTree[] = [];
    const stepsAfter: number[] = [];
    const ta = performance.now();
    for (const [i, q] of sample.entries()) {
      trees.push(await annotateQuestion({ method: 'mcts-spre', env, policy: annotator, mcts: { ...UCT_DEFAULTS, simulations, seed } }, q, seed * 100_003 + i));
      stepsAfter.push(annotator.steps);
    }
    const annotateSeconds = (performance.now() - ta) / 1000;
    for (const budget of budgets) {
      const pairs = preferencePairs(trees.slice(0, budget));
      const t1 = performance.now();
      const dpo = GymPolicy.fresh(protocol);
      trainDpo(dpo, pairs, { seed });
      const t2 = performance.now();
      const grpo = new Counting(GymPolicy.fresh(protocol).model, protocol);
      let episodes = 0;
      let decisions = 0;
      const log = await trainRl(grpo, { env, questions: sample.slice(0, budget) }, { algo: 'grpo', epochs: grpoEpochs, seed });
      const t3 = performance.now();
      for (const e of log) {
        episodes += e['questions']! * 8;
        decisions += e['decisions']!;
      }
      const row: Row = {
        budget, seed, dpo: await evalEm(dpo), grpo: await evalEm(grpo), pairs: pairs.length,
        annotateSteps: stepsAfter[budget - 1]!, grpoEpisodes: episodes, grpoSteps: decisions,
        seconds: { annotate: (annotateSeconds * budget) / sample.length, dpo: (t2 - t1) / 1000, grpo: (t3 - t2) / 1000 },
      };
      rows.push(row);
      console.log(`seed ${seed} N=${budget}: step-DPO EM ${row.dpo.toFixed(3)} (${row.pairs} pairs) · GRPO EM ${row.grpo.toFixed(3)} (${episodes} episodes) · ${row.seconds.dpo.toFixed(1)} s / ${row.seconds.grpo.toFixed(1)} s`);
    }
  }

  const summary = budgets.map((budget) => {
    const r = rows.filter((x) => x.budget === budget);
    return { budget, dpo: tInterval(r.map((x) => x.dpo)), grpo: tInterval(r.map((x) => x.grpo)), diff: tInterval(r.map((x) => x.dpo - x.grpo)), pairs: tInterval(r.map((x) => x.pairs)).mean, annotateSteps: tInterval(r.map((x) => x.annotateSteps)).mean, grpoEpisodes: tInterval(r.map((x) => x.grpoEpisodes)).mean, grpoSteps: tInterval(r.map((x) => x.grpoSteps)).mean };
  });
  const f = (x: { mean: number; half: number }) => `${x.mean.toFixed(3)} ± ${x.half.toFixed(3)}`;
  console.log(`\nEM on ${test.length} held-out test questions vs training questions (mean ± 95% t-interval over ${seeds.length} seeds; untrained base ${baseEm.toFixed(3)})`);
  console.log(formatTable(
    ['train questions', 'step-DPO (process)', 'GRPO (outcome)', 'DPO − GRPO', 'pairs', 'MCTS policy steps', 'GRPO episodes', 'GRPO policy steps'],
    summary.map((s) => [s.budget, f(s.dpo), f(s.grpo), f(s.diff), s.pairs.toFixed(0), s.annotateSteps.toFixed(0), s.grpoEpisodes.toFixed(0), s.grpoSteps.toFixed(0)]),
  ));
  const winner = summary.map((s) => (s.diff.mean - s.diff.half > 0 ? 'process' : s.diff.mean + s.diff.half < 0 ? 'outcome' : 'tie'));
  console.log(`\nreading: at each budget the difference is ${winner.map((w, i) => `${budgets[i]}: ${w}`).join(', ')} (a "tie" when the 95% interval of DPO − GRPO covers 0)`);

  mkdirSync(outDir, { recursive: true });
  const json = { createdAt: new Date().toISOString(), baseEm, test: test.length, simulations, grpoEpochs, seeds: seeds.length, rows, summary };
  writeFileSync(join(outDir, 'process-vs-outcome.json'), JSON.stringify(json, null, 2) + '\n');
  const chart = lineChart(
    'Greedy EM on held-out questions vs number of training questions',
    [
      { name: 'step-DPO (process)', points: summary.map((s) => ({ x: s.budget, y: s.dpo.mean, low: s.dpo.mean - s.dpo.half, high: s.dpo.mean + s.dpo.half })) },
      { name: 'GRPO (outcome)', points: summary.map((s) => ({ x: s.budget, y: s.grpo.mean, low: s.grpo.mean - s.grpo.half, high: s.grpo.mean + s.grpo.half })) },
      { name: 'untrained base', points: summary.map((s) => ({ x: s.budget, y: baseEm })) },
    ],
    { xLabel: 'training questions (log scale)', yLabel: 'EM', logX: true, yMin: 0 },
  );
  const rowsHtml = summary.map((s) => `<tr><th>${s.budget}</th><td>${f(s.dpo)}</td><td>${f(s.grpo)}</td><td>${f(s.diff)}</td><td>${s.pairs.toFixed(0)}</td><td>${s.annotateSteps.toFixed(0)}</td><td>${s.grpoEpisodes.toFixed(0)}</td><td>${s.grpoSteps.toFixed(0)}</td></tr>`).join('');
  writeFileSync(
    join(outDir, 'process-vs-outcome.html'),
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>ragtrail: process vs outcome supervision</title><style>body{font-family:system-ui,sans-serif;max-width:980px;margin:2rem auto;color:#222}table{border-collapse:collapse;font-size:.85rem}th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:right}th{background:#f3f5f8}</style></head><body>` +
      `<h1>Process vs outcome supervision on the gym</h1><p>Gym policy (a small non-LLM model over generated candidate actions) on the synthetic world; step-DPO on MCTS + SPRE pairs (${simulations} simulations per question) against GRPO on EM (${grpoEpochs} epochs, 8 episodes per question), both from the untrained policy with the same training questions; greedy EM on ${test.length} held-out test questions; mean ± 95% t-interval over ${seeds.length} seeds.</p>` +
      chart +
      `<table><tr><th>train questions</th><th>step-DPO</th><th>GRPO</th><th>DPO − GRPO</th><th>pairs</th><th>MCTS policy steps</th><th>GRPO episodes</th><th>GRPO policy steps</th></tr>${rowsHtml}</table></body></html>\n`,
  );
  console.log(`\nwrote ${join(outDir, 'process-vs-outcome.html')} and .json in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
