/**
 * Annotation throughput (`npm run bench:annotate`): MCTS-SPRE annotation of 200 synthetic questions
 * driving a fake OpenAI-compatible server in another process, which answers after a fixed 50 ms and
 * serves at most 64 requests at once (like a GPU server's batch). Reports LLM calls/s and the server's
 * busy fraction (slot-time used / (64 × the time from the job's first request to its last answer))
 * next to a one-call-at-a-time loop against the same server in the same run; the wall time of the whole
 * command (loading, writing the output files) is printed too. Target: ≥ 90% busy, ≥ 50× sequential.
 * Options: --questions 200 --slots 64 --delay 50 --concurrency 200.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { LlmPolicy } from '../src/agents/policy.js';
import { PROTOCOLS } from '../src/agents/registry.js';
import { loadDatasetAll } from '../src/corpus/dataset.js';
import { generateWorld, writeWorld } from '../src/corpus/world/index.js';
import { RagEnv } from '../src/env/env.js';
import { createLLM } from '../src/llm/create.js';
import { annotate } from '../src/process/annotate.js';
import { buildIndex, openRetriever } from '../src/retrieval/index-dir.js';
import { formatTable } from '../src/cli/table.js';

const { values: args } = parseArgs({ options: { questions: { type: 'string', default: '200' }, slots: { type: 'string', default: '64' }, delay: { type: 'string', default: '50' }, concurrency: { type: 'string', default: '200' }, batch: { type: 'string', default: '7' } } });
const slots = Number(args.slots);
const delay = Number(args.delay);
const ROOT = resolve(import.meta.dirname, '..');
const dir = mkdtempSync(join(tmpdir(), 'ragtrail-bench-annotate-'));

const startServer = () => spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test', 'fixtures', 'serve-fake-openai.ts'), '--delay', String(delay), '--slots', String(slots)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
const serverUrl = (p: ReturnType<typeof startServer>) => new Promise<string>((res) => p.stdout!.once('data', (d) => res(String(d).trim())));
let server = startServer();
let url = await serverUrl(server);
const stats = async () => (await (await fetch(url.replace(/\/v1$/, '/stats'))).json()) as { served: number; busyMs: number; firstStart: number; lastEnd: number };

try {
  await writeWorld(join(dir, 'world'), generateWorld({ seed: 11, entities: 3000, questions: Number(args.questions) }));
  await buildIndex(join(dir, 'world', 'corpus.jsonl'), join(dir, 'index'), { quiet: true });
  const retriever = await openRetriever(join(dir, 'index'));
  const questions = (await loadDatasetAll(join(dir, 'world', 'questions.jsonl'))).questions;
  const protocol = PROTOCOLS['search-r1'];
  const env = () => new RagEnv({ retriever, topK: 5, maxTurns: 5 });

  // Baseline: one call at a time, in the same run, against the same server.
  const seqLlm = await createLLM(`openai:${url}#fake`, { concurrency: 1 });
  const seqPolicy = new LlmPolicy(protocol, seqLlm);
  const seqCalls = 40;
  const t0 = performance.now();
  for (let i = 0; i < seqCalls; i++) await seqPolicy.propose(env().reset(questions[i % questions.length]!), { temperature: 1, seed: i });
  const seqRate = seqCalls / ((performance.now() - t0) / 1000);
  await seqLlm.close();
  // A fresh server window for the annotation.
  server.kill();
  await new Promise((r) => server.once('exit', r));
  server = startServer();
  url = await serverUrl(server);

  // The annotation: many questions, many tree nodes and rollouts in flight at once, bounded by the LLM limiter.
  const llm = await createLLM(`openai:${url}#fake`, { concurrency: slots * 2 });
  const t1 = performance.now();
  const cpu0 = process.cpuUsage();
  const elu0 = performance.eventLoopUtilization();
  const result = await annotate({
    method: 'mcts-spre',
    outDir: join(dir, 'annotation'),
    env: env(),
    policy: new LlmPolicy(protocol, llm),
    questions,
    mcts: { simulations: 7, rollouts: 4, batch: Number(args.batch) },
    concurrency: Number(args.concurrency),
    config: { seed: 0 },
    quiet: true,
  });
  const wall = (performance.now() - t1) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const elu = performance.eventLoopUtilization(elu0);
  const s = await stats();
  const window = (s.lastEnd - s.firstStart) / 1000;
  const calls = s.served;
  const rate = calls / window;
  const busy = s.busyMs / (slots * window * 1000);
  console.log(`MCTS-SPRE annotation of ${questions.length} synthetic questions against a fake server (${delay} ms per request, ${slots} slots):\n`);
  console.log(
    formatTable(['', 'LLM calls', 'seconds', 'calls/s', 'server busy', 'vs sequential'], [
      ['one call at a time', seqCalls, (seqCalls / seqRate).toFixed(1), seqRate.toFixed(1), `${((100 * seqRate * delay) / 1000 / slots).toFixed(1)}%`, '1.0×'],
      ['ragtrail annotate', calls, window.toFixed(1), rate.toFixed(1), `${(100 * busy).toFixed(1)}%`, `${(rate / seqRate).toFixed(1)}×`],
    ]),
  );
  console.log(`(the whole annotate call, with loading and the derived files, took ${wall.toFixed(1)} s: ${(calls / wall).toFixed(1)} calls/s; client CPU ${(((cpu.user + cpu.system) / 1e6 / wall) * 100).toFixed(0)}% of one core, event loop ${(elu.utilization * 100).toFixed(0)}% busy)`);
  console.log(`\n${result.stats.pairs} pairs from ${result.stats.questions} trees; targets: ≥ 90% busy, ≥ 50× sequential`);
} finally {
  server.kill();
  rmSync(dir, { recursive: true, force: true });
}
