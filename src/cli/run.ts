import { resolve } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../core/errors.js';
import { selectShard, shardLabel } from '../core/shard.js';
import { ensureOutDir } from '../core/io.js';
import { runQuestions } from '../eval/run.js';
import { formatEndpointUsage } from '../llm/middleware.js';
import { PRM_CANDIDATES, PRM_SPEC_HELP, type PrmCandidates, prmKinds } from '../prm/select.js';
import { type PrmInput, PRM_INPUTS } from '../prm/remote.js';
import { applyConfigFile, requireOptions } from './config.js';
import { addRetryOption, choiceArg, intArg, numberArg } from './options.js';
import { addAgentOptions, type AgentOpts, loadQuestions, nonLlmNote, setupAgent, warnAboutData } from './setup.js';
import { fixed, formatTable } from './table.js';

interface RunOpts extends AgentOpts {
  out?: string;
  select: 'greedy' | 'prm' | 'vote' | 'orm';
  prm?: string;
  prmCandidates?: PrmCandidates;
  prmInput?: PrmInput;
  n: number;
  temperature?: number;
  seed: number;
  quiet: boolean;
}

export function registerRun(program: Command): void {
  const cmd = program
    .command('run')
    .description('run an agent over a dataset: RUN/trajectories.jsonl (one line per question, resumable) and RUN/summary.json');
  addAgentOptions(cmd, { agent: 'search-r1', concurrency: 4 })
    .option('--out <dir>', 'run folder (re-running the same command resumes it)')
    .option('--select <how>', 'action selection: greedy (one sample a step), prm (best of --n by --prm, RAG-Gym Alg. 1), vote (self-consistency over --n episodes) or orm (the best of --n episodes by the outcome reward model --prm, RAG-Gym\'s ORM baseline)', choiceArg(['greedy', 'prm', 'vote', 'orm'] as const), 'greedy')
    .option('--prm <spec>', `process reward model for --select prm: ${PRM_SPEC_HELP}`)
    .option('--n <n>', 'candidates per step (prm) or episodes (vote)', intArg(1, 1000), 10)
    .option('--prm-candidates <which>', 'candidates --select prm chooses among: well-formed (those that follow the protocol, when any do) or all', choiceArg(PRM_CANDIDATES), 'well-formed')
    .option('--prm-input <what>', 'what a remote text PRM reads of the state: steps (a summary of each step) or evidence (each step\'s text and the documents found); train the PRM on the same', choiceArg(PRM_INPUTS), 'steps')
    .option('--temperature <t>', 'sampling temperature (default 0 for greedy, 1.0 for prm and vote)', numberArg(0, 10))
    .option('--seed <n>', 'run seed (each step is sampled with a seed derived from it)', intArg(0), 0)
    .option('--config <file>', 'JSON file of option values (command-line flags win)')
    .option('--quiet', 'no progress line', false)
    .hook('preAction', (c) => applyConfigFile(c));
  addRetryOption(cmd)
    .action(async (opts: RunOpts, c: Command) => {
      requireOptions(c, ['index', 'dataset', 'out']);
      ensureOutDir(opts.out!);
      if ((opts.select === 'prm' || opts.select === 'orm') && !opts.prm) throw new InputError(`--select ${opts.select} needs --prm SPEC`, `e.g. --prm runs/prm.json (${PRM_SPEC_HELP})`);
      const { protocol, llm, aux, retriever, env, policy, temperature, vote, outcome } = await setupAgent(opts, { select: opts.select, prm: opts.prm, n: opts.n, temperature: opts.temperature, prmCandidates: opts.prmCandidates, prmInput: opts.prmInput });
      // The selection (limit, tail, sample, val part) applies before the shard, so that the shards partition that run.
      const questions = selectShard(await loadQuestions(opts.dataset!, opts), opts.shard);
      if (questions.length === 0) throw new InputError(`--shard ${shardLabel(opts.shard)}: no question of ${opts.dataset} falls in this shard`, 'use fewer shards');
      const note = nonLlmNote(policy);
      if (note && !opts.quiet) console.error(note);
      warnAboutData(policy, questions);
      const config = {
        agent: protocol.name,
        policy: policy.name,
        index: resolve(opts.index!),
        dataset: resolve(opts.dataset!),
        split: opts.split ?? null,
        // Only when given, so that folders from before these flags resume: a different selection is another run.
        ...(opts.tail !== undefined && { tail: opts.tail }),
        ...(opts.sample !== undefined && { sample: opts.sample, sampleSeed: opts.sampleSeed ?? opts.seed }),
        ...(opts.valFraction !== undefined && { valFraction: opts.valFraction, valPart: opts.valPart, sampleSeed: opts.sampleSeed ?? opts.seed }),
        // Only when sharded: a merged folder's config then equals an unsharded run's.
        ...(opts.shard && { shard: shardLabel(opts.shard) }),
        topK: env.config.topK,
        maxTurns: env.config.maxTurns,
        maxSearches: env.maxSearches,
        retrieval: opts.retrieval ?? null,
        select: opts.select,
        prm: opts.select === 'prm' || opts.select === 'orm' ? (opts.prm!.includes(':') || prmKinds.has(opts.prm!) ? opts.prm! : resolve(opts.prm!)) : null,
        n: opts.select === 'greedy' ? null : opts.n,
        // Only for prm selection (and prmInput only when not the default), so that a folder from before
        // these options resumes unchanged.
        ...(opts.select === 'prm' ? { prmCandidates: opts.prmCandidates, ...(opts.prmInput !== 'steps' && { prmInput: opts.prmInput }) } : {}),
        temperature,
        seed: opts.seed,
        // Only when given: a run without a second model resumes as before.
        ...(opts.auxLlm && { auxLlm: opts.auxLlm }),
      };
      const { summary, ran, skipped } = await runQuestions({
        outDir: opts.out!,
        env,
        policy,
        questions,
        concurrency: opts.concurrency,
        temperature,
        seed: opts.seed,
        vote,
        ...(outcome && { outcome }),
        config,
        usage: llm ? () => llm.usage() : undefined,
        quiet: opts.quiet,
      });
      await llm?.close();
      await aux?.close();
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
      const perEndpoint = formatEndpointUsage(llm?.endpointUsage());
      if (perEndpoint) console.log(perEndpoint);
    });
}
