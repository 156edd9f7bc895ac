/**
 * Annotation throughput (`npm run bench:annotate`): MCTS-SPRE annotation of 200 synthetic questions
 * driving a fake OpenAI-compatible server in another process, which answers after a fixed 50 ms and
 * serves at most 64 requests at once (like a GPU server's batch). Reports LLM calls/s and the server's
 * busy fraction (slot-time used / (64 × the time from the job's first request to its last answer))
 * next to a one-call-at-a-time loop against the same server in the same run; the wall time of the whole
 * command (loading, writing the output files) is printed too. Target: ≥ 95% busy, ≥ 50× sequential.
 *
 * Then the cost model of a real server (annotate-cost.ts): the same search run with the simulated agent
 * (competence 0.7, so that pairs are mined; the fake server's answers are never right), each request
 * rendered as the Search-R1 LLM policy would send it, and counted in word-piece tokens: prompt tokens
 * prefilled without and with a prefix cache, tokens decoded, and prompt tokens per mined pair, for
 * ragtrail's request order (200 and 8 questions at once, 64 requests in flight at the server) against one
 * request at a time question after question (the authors' loop), with n = 1 or the identical prompts of
 * an MCTS node's SPRE rollouts sent as one request with n = 4.
 * Options: --questions 200 --slots 64 --delay 50 --concurrency 200 --batch 7 --cache-tokens 131072.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
import { SimPolicy } from '../src/agents/sim.js';
import { type CostRequest, decodedTokens, mergeSiblings, prefillBlocks, prefillLcp, prefillNoCache, questionByQuestion, RequestRecorder, Vocabulary } from './annotate-cost.js';

const { values: args } = parseArgs({ options: { questions: { type: 'string', default: '200' }, slots: { type: 'string', default: '64' }, delay: { type: 'string', default: '50' }, concurrency: { type: 'string', default: '200' }, batch: { type: 'string', default: '7' }, 'cache-tokens': { type: 'string', default: '131072' } } });
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
  console.log(`\n${result.stats.pairs} pairs from ${result.stats.questions} trees; targets: ≥ 95% busy, ≥ 50× sequential`);

  // The cost model: the same search with the simulated agent, its requests recorded as an LLM policy would send them.
  const mcts = { simulations: 7, rollouts: 4, batch: Number(args.batch) };
  const index = new Map(questions.map((q, i) => [q.id, i]));
  const vocab = new Vocabulary();
  const runs: { label: string; reqs: CostRequest[]; pairs: number; pairsFile: string }[] = [];
  for (const concurrency of [Number(args.concurrency), 8]) {
    const recorder = new RequestRecorder(new SimPolicy(protocol, 0.7), index);
    const outDir = join(dir, `cost-${concurrency}`);
    const r = await annotate({ method: 'mcts-spre', outDir, env: env(), policy: recorder, questions, mcts, concurrency, config: { seed: 0 }, quiet: true });
    runs.push({ label: `${concurrency} questions at once, as sent`, reqs: recorder.requests(vocab), pairs: r.stats.pairs, pairsFile: readFileSync(join(outDir, 'pairs.jsonl'), 'utf8') });
  }
  // The order changes what the server sees, never what is mined.
  if (runs[0]!.pairsFile !== runs[1]!.pairsFile) throw new Error('the cost runs mined different pairs');
  const pairs = runs[0]!.pairs;
  const capacity = Number(args['cache-tokens']);
  const rows: (string | number)[][] = [];
  const fmt = (x: number) => Math.round(x).toLocaleString('en-US');
  const perPair = (x: number) => (pairs > 0 ? fmt(x / pairs) : '–');
  const orders = [
    ...runs.map((r) => ({ label: r.label, reqs: r.reqs, inFlight: slots })),
    { label: 'one request at a time, question after question', reqs: questionByQuestion(runs[0]!.reqs), inFlight: 1 },
  ];
  for (const o of orders) {
    for (const merged of [false, true]) {
      const reqs = merged ? mergeSiblings(o.reqs) : o.reqs;
      const none = prefillNoCache(reqs);
      const cached = prefillBlocks(reqs, { inFlight: o.inFlight });
      const lru = prefillBlocks(reqs, { inFlight: o.inFlight, capacity });
      rows.push([o.label, merged ? 'siblings as one' : '1', o.inFlight, reqs.length, fmt(none), fmt(cached), fmt(lru), perPair(none), perPair(cached), perPair(lru)]);
    }
  }
  const all = runs[0]!.reqs;
  console.log(`\nCost model of a real server (tokens are word pieces; see bench/annotate-cost.ts): the same MCTS-SPRE search with the simulated agent (competence 0.7), ${all.length} requests as the Search-R1 policy would send them, ${pairs} pairs mined:\n`);
  console.log(
    formatTable(['request order', 'n', 'in flight', 'requests', 'prefilled, no cache', 'prefix cache', `cache ≤ ${fmt(capacity)}`, 'per pair, no cache', 'per pair, cache', `per pair, ≤ ${fmt(capacity)}`], rows),
  );
  const lcp = prefillLcp(all);
  console.log(`\nprefix cache: whole 16-token blocks, a request seeing those of requests ≥ "in flight" places before it; "cache ≤ N": LRU-bounded to N tokens. "siblings as one": the identical prompts one question asks for in a row (an MCTS node's SPRE rollouts) sent as one request with n = their count, prefilled once.`);
  console.log(`Lower bound (every prompt past its longest common prefix with any earlier prompt, any order): ${fmt(lcp)} tokens, ${perPair(lcp)} per pair. Tokens decoded: ${fmt(decodedTokens(all))} (${perPair(decodedTokens(all))} per pair), whatever the order or n.`);
  console.log(`The authors' loop (one request at a time, no prefix sharing) prefills every prompt token: ${perPair(prefillNoCache(all))} per pair.`);
} finally {
  server.kill();
  rmSync(dir, { recursive: true, force: true });
}
