/**
 * Soak test of the retry policy (`npm run bench:soak`): an LLM-driven Search-R1 run over synthetic
 * questions against a loopback fake OpenAI-compatible server, once fault-free and once with a seeded
 * share of its replies failing (429, 500, 503, connection resets, 200s that are not JSON, 200s without
 * choices) plus an outage (the port stops listening) partway through. Prints the faults injected, the
 * client's retries and backoff time, the time lost against the fault-free run of the same session,
 * and whether the two runs' trajectories and summaries are equal (they must be).
 * Backoff caps are short (flags) so that a thousand questions finish in about a minute; the policy
 * itself is the product's (core/http.ts), only its base and cap are scaled down.
 * Options: --questions 1000 --fault-rate 0.5 --seed 1 --outage-ms 2000 --outage-at-ms 1000
 *          --base-delay-ms 5 --max-delay-ms 200 --concurrency 32 --delay-ms 2
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { formatTable } from '../src/cli/table.js';
import { retryStats } from '../src/core/http.js';
import { loadDatasetAll } from '../src/corpus/dataset.js';
import { generateWorld, writeWorld } from '../src/corpus/world/index.js';
import { buildSystem } from '../src/eval/systems.js';
import { runQuestions } from '../src/eval/run.js';
import { readTrajectories } from '../src/eval/trajectories.js';
import { buildIndex, openRetriever } from '../src/retrieval/index-dir.js';
import { comparable, searchR1Reply, startFakeOpenAI } from '../test/fixtures/fake-openai.js';

const { values: a } = parseArgs({
  options: {
    questions: { type: 'string', default: '1000' },
    'fault-rate': { type: 'string', default: '0.5' },
    seed: { type: 'string', default: '1' },
    'outage-ms': { type: 'string', default: '2000' },
    'outage-at-ms': { type: 'string', default: '1000' },
    'base-delay-ms': { type: 'string', default: '5' },
    'max-delay-ms': { type: 'string', default: '200' },
    concurrency: { type: 'string', default: '32' },
    'delay-ms': { type: 'string', default: '2' },
  },
});
const n = Number(a.questions);
const dir = mkdtempSync(join(tmpdir(), 'ragtrail-bench-soak-'));


interface Outcome {
  name: string;
  seconds: number;
  served: number;
  injected: Record<string, number>;
  retries: number;
  recovered: number;
  waitedMs: number;
  trajectories: unknown[];
  summary: Record<string, unknown>;
}

try {
  await writeWorld(join(dir, 'world'), generateWorld({ seed: 17, entities: 3000, questions: n }));
  await buildIndex(join(dir, 'world', 'corpus.jsonl'), join(dir, 'index'), { quiet: true });
  const retriever = await openRetriever(join(dir, 'index'));
  const questions = (await loadDatasetAll(join(dir, 'world', 'questions.jsonl'))).questions.slice(0, n);

  const run = async (name: string, faulty: boolean): Promise<Outcome> => {
    const fake = await startFakeOpenAI(searchR1Reply, {
      delayMs: Number(a['delay-ms']),
      recordRequests: false,
      ...(faulty ? { faults: { rate: Number(a['fault-rate']), seed: Number(a.seed) } } : {}),
    });
    const before = { ...retryStats };
    try {
      const built = await buildSystem({ agent: 'search-r1', llm: `openai:${fake.url}#fake`, tracePrompts: false }, retriever, {
        baseDelayMs: Number(a['base-delay-ms']),
        maxDelayMs: Number(a['max-delay-ms']),
        maxRetryAfterMs: Number(a['max-delay-ms']),
        timeoutMs: 10_000,
        concurrency: Number(a.concurrency),
      });
      let outage: NodeJS.Timeout | undefined;
      if (faulty && Number(a['outage-ms']) > 0) outage = setTimeout(() => void fake.outage(Number(a['outage-ms'])), Number(a['outage-at-ms']));
      const out = join(dir, name);
      const t0 = performance.now();
      await runQuestions({ outDir: out, env: built.env, policy: built.policy, questions, concurrency: Number(a.concurrency), temperature: 0, config: { bench: 'soak' }, quiet: true });
      const seconds = (performance.now() - t0) / 1000;
      clearTimeout(outage);
      await built.llm?.close();
      const trajectories = (await readTrajectories(out)).map(comparable).sort((x, y) => x.id.localeCompare(y.id));
      const { policy: _p, latencyMs: _l, session: _s, ...summary } = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as Record<string, unknown>;
      return { name, seconds, served: fake.served, injected: fake.injected, retries: retryStats.retries - before.retries, recovered: retryStats.recovered - before.recovered, waitedMs: retryStats.waitedMs - before.waitedMs, trajectories, summary };
    } finally {
      await fake.close();
    }
  };

  const clean = await run('fault-free', false);
  const faulty = await run('faulty', true);
  const faults = (o: Outcome) => Object.values(o.injected).reduce((s, x) => s + x, 0);
  const kinds = (o: Outcome) => Object.entries(o.injected).map(([k, v]) => `${k} ${v}`).join(', ') || '-';
  console.log(`soak: ${n} questions, Search-R1 against a loopback fake server, fault rate ${a['fault-rate']} (seed ${a.seed}), outage ${a['outage-ms']} ms at ${a['outage-at-ms']} ms, backoff base ${a['base-delay-ms']} ms cap ${a['max-delay-ms']} ms, concurrency ${a.concurrency}`);
  console.log(
    formatTable(
      ['run', 'questions', 'completions served', 'faults injected', 'retries (faults + refused in the outage)', 'requests recovered', 'backoff slept (s, summed over requests)', 'wall s'],
      [clean, faulty].map((o) => [o.name, String(o.trajectories.length), String(o.served), `${faults(o)} (${kinds(o)})`, String(o.retries), String(o.recovered), (o.waitedMs / 1000).toFixed(1), o.seconds.toFixed(1)]),
    ),
  );
  const sameTrajectories = JSON.stringify(clean.trajectories) === JSON.stringify(faulty.trajectories);
  // The summary's means add floats in the order questions finished, which faults change: equal to 12 digits.
  const rounded = (o: unknown) => JSON.stringify(o, (_k, v: unknown) => (typeof v === 'number' ? Number(v.toPrecision(12)) : v));
  const sameSummary = rounded(clean.summary) === rounded(faulty.summary);
  console.log(`time lost to faults: ${(faulty.seconds - clean.seconds).toFixed(1)} s (${(faulty.seconds / clean.seconds).toFixed(2)}x the fault-free run's wall time; one noisy shared machine, compare within a run)`);
  console.log(`final artifacts equal to the fault-free run: trajectories ${sameTrajectories ? 'yes' : 'NO'}, summary ${sameSummary ? 'yes' : 'NO'} (to 12 digits; EM ${Number(faulty.summary['em']).toFixed(3)} vs ${Number(clean.summary['em']).toFixed(3)})`);
  if (!sameTrajectories || !sameSummary || faulty.trajectories.length !== n) process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
