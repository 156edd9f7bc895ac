import { resolve } from 'node:path';
import type { Command } from 'commander';
import { runQuestions } from '../eval/run.js';
import { applyConfigFile, requireOptions } from './config.js';
import { intArg, numberArg } from './options.js';
import { addAgentOptions, type AgentOpts, loadQuestions, nonLlmNote, setupAgent } from './setup.js';
import { fixed, formatTable } from './table.js';

interface RunOpts extends AgentOpts {
  out?: string;
  temperature: number;
  seed: number;
  quiet: boolean;
}

export function registerRun(program: Command): void {
  const cmd = program
    .command('run')
    .description('run an agent over a dataset: RUN/trajectories.jsonl (one line per question, resumable) and RUN/summary.json');
  addAgentOptions(cmd, { agent: 'search-r1', concurrency: 4 })
    .option('--out <dir>', 'run folder (re-running the same command resumes it)')
    .option('--temperature <t>', 'sampling temperature', numberArg(0, 10), 0)
    .option('--seed <n>', 'run seed (each step is sampled with a seed derived from it)', intArg(0), 0)
    .option('--config <file>', 'JSON file of option values (command-line flags win)')
    .option('--quiet', 'no progress line', false)
    .hook('preAction', (c) => applyConfigFile(c))
    .action(async (opts: RunOpts, c: Command) => {
      requireOptions(c, ['index', 'dataset', 'out']);
      const { protocol, policy, llm, retriever, env } = await setupAgent(opts);
      const questions = await loadQuestions(opts.dataset!, opts);
      const note = nonLlmNote(policy);
      if (note && !opts.quiet) console.error(note);
      const config = {
        agent: protocol.name,
        policy: policy.name,
        index: resolve(opts.index!),
        dataset: resolve(opts.dataset!),
        split: opts.split ?? null,
        topK: env.config.topK,
        maxTurns: env.config.maxTurns,
        maxSearches: env.maxSearches,
        retrieval: opts.retrieval ?? null,
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
