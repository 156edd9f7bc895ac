import { resolve } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../core/errors.js';
import type { Question } from '../core/types.js';
import { loadDataset } from '../corpus/dataset.js';
import { OraclePolicy } from '../agents/oracle.js';
import { LlmPolicy, type Policy } from '../agents/policy.js';
import { AGENT_NAMES } from '../agents/protocol.js';
import { getProtocol } from '../agents/registry.js';
import { SimPolicy } from '../agents/sim.js';
import { RagEnv } from '../env/env.js';
import { runQuestions } from '../eval/run.js';
import { createLLM, LLM_SPEC_HELP } from '../llm/create.js';
import type { MeteredLLM } from '../llm/middleware.js';
import { openRetriever, type SearchMethod } from '../retrieval/index-dir.js';
import { applyConfigFile, requireOptions } from './config.js';
import { choiceArg, intArg, numberArg } from './options.js';
import { fixed, formatTable } from './table.js';

interface RunOpts {
  agent: string;
  llm?: string;
  policy?: 'sim' | 'oracle';
  index?: string;
  dataset?: string;
  out?: string;
  limit?: number;
  split?: string;
  concurrency: number;
  maxTurns?: number;
  maxSearches?: number;
  topK?: number;
  method?: SearchMethod;
  temperature: number;
  seed: number;
  competence: number;
  apiKey?: string;
  llmMode: 'chat' | 'completion';
  maxTokens?: number;
  timeout: number;
  cacheDir: string;
  cache: boolean;
  tracePrompts: boolean;
  priceIn?: number;
  priceOut?: number;
  quiet: boolean;
}

export function registerRun(program: Command): void {
  program
    .command('run')
    .description('run an agent over a dataset: RUN/trajectories.jsonl (one line per question, resumable) and RUN/summary.json')
    .option('--agent <name>', `protocol: ${AGENT_NAMES.join(', ')}`, choiceArg(AGENT_NAMES), 'search-r1')
    .option('--llm <spec>', `the model: ${LLM_SPEC_HELP}`)
    .option('--policy <kind>', 'a non-LLM policy instead of --llm: sim (simulated imperfect agent) or oracle (follows the gold decomposition)', choiceArg(['sim', 'oracle'] as const))
    .option('--index <dir|url>', 'index folder, or the URL of a /retrieve server')
    .option('--dataset <file>', 'questions (any supported layout)')
    .option('--out <dir>', 'run folder (re-running the same command resumes it)')
    .option('--limit <n>', 'first N questions only', intArg(1))
    .option('--split <name>', 'only questions whose metadata.split is this (the synthetic world has train/dev/test)')
    .option('--concurrency <n>', 'questions (and model requests) in flight at once', intArg(1, 1024), 4)
    .option('--max-turns <n>', 'agent steps before the answer is forced (default: the protocol\'s)', intArg(1, 100))
    .option('--max-searches <n>', 'searches allowed (default: the protocol\'s)', intArg(0, 100))
    .option('--top-k <n>', 'documents per search (default: the protocol\'s)', intArg(1, 100))
    .option('--method <m>', 'retrieval: bm25, dense or hybrid', choiceArg(['bm25', 'dense', 'hybrid'] as const))
    .option('--temperature <t>', 'sampling temperature', numberArg(0, 10), 0)
    .option('--seed <n>', 'run seed (each step is sampled with a seed derived from it)', intArg(0), 0)
    .option('--competence <c>', 'sim policy: probability of taking the gold step', numberArg(0, 1), 0.7)
    .option('--api-key <key>', 'API key (default: $OPENAI_API_KEY)')
    .option('--llm-mode <mode>', 'chat (/chat/completions) or completion (/completions, for base models)', choiceArg(['chat', 'completion'] as const), 'chat')
    .option('--max-tokens <n>', 'completion budget per call (default: the protocol\'s)', intArg(1))
    .option('--timeout <seconds>', 'per-request timeout', numberArg(1, 86_400), 120)
    .option('--cache-dir <dir>', 'on-disk response cache shared by runs', '.ragtrail-cache')
    .option('--no-cache', 'do not read or write the response cache')
    .option('--no-trace-prompts', 'do not keep each step\'s prompt in the trajectories')
    .option('--price-in <usd>', 'dollars per million prompt tokens, for the cost line', numberArg(0, 1e6))
    .option('--price-out <usd>', 'dollars per million completion tokens', numberArg(0, 1e6))
    .option('--config <file>', 'JSON file of option values (command-line flags win)')
    .option('--quiet', 'no progress line', false)
    .hook('preAction', (cmd) => applyConfigFile(cmd))
    .action(async (opts: RunOpts, cmd: Command) => {
      requireOptions(cmd, ['index', 'dataset', 'out']);
      if (!opts.llm === !opts.policy) throw new InputError('give exactly one of --llm SPEC or --policy sim|oracle', `e.g. --llm ${LLM_SPEC_HELP.split(' ')[0]}`);
      const protocol = getProtocol(opts.agent);
      let questions: Question[] = [];
      for await (const q of loadDataset(opts.dataset!)) {
        if (opts.split && q.metadata?.['split'] !== opts.split) continue;
        questions.push(q);
        if (opts.limit && questions.length >= opts.limit) break;
      }
      if (questions.length === 0) throw new InputError(`${opts.dataset}: no questions${opts.split ? ` in split "${opts.split}"` : ''}`);
      let llm: MeteredLLM | undefined;
      let policy: Policy;
      if (opts.llm) {
        llm = await createLLM(opts.llm, {
          apiKey: opts.apiKey,
          mode: opts.llmMode,
          timeoutMs: opts.timeout * 1000,
          concurrency: opts.concurrency,
          cacheDir: opts.cache ? opts.cacheDir : undefined,
          prices: opts.priceIn !== undefined || opts.priceOut !== undefined ? { inputPerM: opts.priceIn ?? 0, outputPerM: opts.priceOut ?? 0 } : undefined,
        });
        policy = new LlmPolicy(protocol, llm, { maxTokens: opts.maxTokens, tracePrompts: opts.tracePrompts });
      } else if (opts.policy === 'sim') {
        policy = new SimPolicy(protocol, opts.competence);
      } else {
        policy = new OraclePolicy(protocol);
      }
      const retriever = await openRetriever(opts.index!, { method: opts.method, embedderOptions: { apiKey: opts.apiKey } });
      const d = protocol.defaults;
      const env = new RagEnv({ retriever, topK: opts.topK ?? d.topK, maxTurns: opts.maxTurns ?? d.maxTurns, maxSearches: opts.maxSearches ?? d.maxSearches });
      if (policy.kind !== 'llm' && !opts.quiet) {
        console.error(`note: policy ${policy.name} is a non-LLM stand-in; its numbers measure the pipeline, not a language model`);
      }
      const config = {
        agent: protocol.name,
        policy: policy.name,
        index: resolve(opts.index!),
        dataset: resolve(opts.dataset!),
        split: opts.split ?? null,
        topK: env.config.topK,
        maxTurns: env.config.maxTurns,
        maxSearches: env.maxSearches,
        method: opts.method ?? null,
        temperature: opts.temperature,
        seed: opts.seed,
      };
      const { summary, ran, skipped } = await runQuestions({
        outDir: opts.out!,
        env,
        policy,
        questions,
        concurrency: opts.concurrency,
        temperature: opts.temperature,
        seed: opts.seed,
        config,
        usage: llm ? () => llm.totals : undefined,
        quiet: opts.quiet,
      });
      await llm?.close();
      await retriever.close?.();
      console.log(`${protocol.name} with ${policy.name} on ${opts.dataset}: ${ran} questions run, ${skipped} already done → ${opts.out}`);
      console.log(
        formatTable(
          ['questions', 'EM', 'F1', 'Acc', 'RC', 'format fail', 'tokens/q', 'latency ms (p50)'],
          [[summary.questions, fixed(summary.em), fixed(summary.f1), fixed(summary.acc), fixed(summary.retrievalCount, 2), fixed(summary.formatFailureRate, 3), fixed(summary.tokens.perQuestion, 0), fixed(summary.latencyMs.p50, 0)]],
        ),
      );
      const u = llm?.totals;
      if (u) console.log(`llm: ${u.requests} requests (${u.cachedRequests} from cache), ${u.promptTokens} prompt + ${u.completionTokens} completion tokens${u.cost !== undefined ? `, $${u.cost.toFixed(4)}` : ''}`);
    });
}
