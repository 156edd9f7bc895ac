import type { Command } from 'commander';
import { InputError } from '../core/errors.js';
import type { Server } from 'node:http';
import { copyIndex, drained, isServerCopy, onPeers, reportReady, shouldSupervise, stopOnSupervisor, superviseCopies } from '../core/cluster.js';
import { gracefulStopper, listen, listenError, stopOnSignals } from '../core/http-server.js';
import { loopbackPeers } from '../learn/serve/env-router.js';
import type { Question } from '../core/types.js';
import { loadDataset, missingSplitHint } from '../corpus/dataset.js';
import { protocolNames } from '../agents/registry.js';
import { getProtocol } from '../agents/registry.js';
import { PROMPT_TEMPLATE_HELP, usePromptTemplate } from '../agents/prompt-template.js';
import { RagEnv } from '../env/env.js';
import { DEFAULT_MAX_ACTION_CHARS, EnvService } from '../learn/serve/env-service.js';
import { createEnvServer } from '../learn/serve/serve-env.js';
import { createPrm, PRM_SPEC_HELP } from '../prm/select.js';
import { createEmbedder, EMBEDDER_SPEC_HELP } from '../retrieval/embedders/embedder.js';
import { episodeScorer } from '../rewards/apply.js';
import { openRetriever, type SearchMethod } from '../retrieval/index-dir.js';
import { defaultWorkers, PooledRetriever } from '../retrieval/pool.js';
import { composeScheme, usesJudge } from '../rewards/schemes.js';
import { Judge } from '../rewards/judge.js';
import { createLLM, LLM_SPEC_HELP } from '../llm/create.js';
import { choiceArg, collect, intArg, numberArg } from './options.js';

export interface EnvOpts {
  index: string;
  dataset: string;
  split?: string;
  limit?: number;
  agent: string;
  /** `--prompt-template FILE`: the protocol's prompts in this template's words. */
  promptTemplate?: string;
  reward?: string;
  option: string[];
  prm?: string;
  /** Embedder of rewards that embed queries (LWS's search reward); a scheme's `embedder=` option wins. */
  embedder?: string;
  /** `--judge-llm SPEC`: the judge of `judge` and `correct=judge` rewards (cached and rate-limited as every LLM call). */
  judgeLlm?: string;
  /** `--cache-dir`: the judge's response cache. */
  cacheDir?: string;
  maxTurns?: number;
  maxSearches?: number;
  topK?: number;
  retrieval?: SearchMethod;
  apiKey?: string;
  trajectories?: string;
  /** Search threads over the index (serve-env); absent or 0: searches run in this thread. */
  workers?: number;
  maxActionChars?: number;
  sessionIdleS?: number;
  /** This process's place among serve-env's processes: its turn of questions starts index/count of the way through (EnvServiceOptions.firstTurn). */
  process?: { index: number; count: number };
}

/** The environment options `serve-env` and `train --engine trl --algo grpo` share. */
export function addEnvOptions(cmd: Command, defaults: { agent?: string; reward?: string } = { agent: 'search-r1', reward: 'em' }): Command {
  return cmd
    .option('--index <dir|url>', 'index folder, or the URL of a /retrieve server')
    .option('--dataset <file>', 'questions the episodes are drawn from')
    .option('--split <name>', 'only questions whose metadata.split is this ("" for all; default: train when the dataset has split metadata, else every question)')
    .option('--limit <n>', 'first N questions only', intArg(1))
    .option('--agent <name>', `protocol for raw-text actions and prompts: ${protocolNames().join(', ')}`, choiceArg(protocolNames), defaults.agent)
    .option('--prompt-template <file>', PROMPT_TEMPLATE_HELP)
    .option('--reward <expr>', `outcome reward scheme on the final step (see \`ragtrail reward --help\`)${defaults.reward ? '' : '; default: the algorithm\'s (em; lws: lws-stage1 then lws-stage2; prorag: prorag-outcome)'}`, defaults.reward)
    .option('--option <k=v>', 'reward scheme option (repeatable)', collect, [])
    .option('--prm <spec>', `process reward of every step: ${PRM_SPEC_HELP}`)
    .option('--judge-llm <spec>', `judge model of the "judge" reward and correct=judge (LWS trains with one; ARENA ablates one), cached and rate-limited: ${LLM_SPEC_HELP}`)
    .option('--cache-dir <dir>', 'response cache of the judge', '.ragtrail-cache')
    .option('--embedder <spec>', `embedder of rewards that embed queries (LWS search reward; default hash:512; a scheme's embedder= option wins): ${EMBEDDER_SPEC_HELP}`)
    .option('--max-turns <n>', "agent steps before the answer is forced (default: the protocol's)", intArg(1, 100))
    .option('--max-searches <n>', "searches allowed (default: the protocol's)", intArg(0, 100))
    .option('--top-k <n>', "documents per search (default: the protocol's)", intArg(1, 100))
    .option('--retrieval <m>', 'bm25, dense or hybrid', choiceArg(['bm25', 'dense', 'hybrid'] as const))
    .option('--api-key <key>', 'API key for an openai: embedder or a judge PRM (default: $OPENAI_API_KEY)')
    .option('--trajectories <file>', 'append every finished episode to this JSONL file (trajectories with their step and outcome rewards)')
    .hook('preAction', (c) => {
      // `train` shares these options: templated prompts are rendered by the rollouts' environment
      // server (envServiceFrom), so only --engine trl --algo grpo|prorag honours the flag; offline TRL
      // data holds its prompts already, and the gym policy reads no prompt text.
      const o = c.opts<{ promptTemplate?: string; engine?: string; algo?: string }>();
      if (o.promptTemplate && o.engine !== undefined && !(o.engine === 'trl' && (o.algo === 'grpo' || o.algo === 'prorag')))
        throw new InputError(`--prompt-template renders the prompts of --engine trl --algo grpo|prorag rollouts, not of --engine ${o.engine} --algo ${o.algo ?? '?'}`, o.engine === 'trl' ? 'sft, dpo and prm train on the prompts already in --data: render them with `annotate --prompt-template`' : 'the gym policy reads no prompt text');
    });
}

/**
 * The episodes' questions and a line saying which were taken. Without --split, a dataset that has
 * split metadata serves its train split and one without (a plain FlashRAG file) serves every question.
 */
export async function selectQuestions(dataset: string, split: string | undefined, limit?: number): Promise<{ questions: Question[]; note: string }> {
  const all: Question[] = [];
  for await (const q of loadDataset(dataset)) all.push(q);
  const splitOf = (q: Question) => q.metadata?.['split'];
  const splitsOf = (qs: Question[]) => new Set(qs.map(splitOf).filter((s): s is string => typeof s === 'string'));
  let chosen: Question[];
  let note: string;
  if (split === '') {
    chosen = all;
    note = `all ${all.length} questions of ${dataset} (--split "")`;
  } else if (split !== undefined) {
    chosen = all.filter((q) => splitOf(q) === split);
    if (chosen.length === 0) throw new InputError(`${dataset}: no questions in split "${split}"`, missingSplitHint(splitsOf(all), all.length));
    note = `split "${split}": ${chosen.length} of the ${all.length} questions of ${dataset}`;
  } else if (all.every((q) => splitOf(q) === undefined)) {
    chosen = all;
    note = `all ${all.length} questions of ${dataset} (it has no split metadata)`;
  } else {
    chosen = all.filter((q) => splitOf(q) === 'train');
    if (chosen.length === 0) throw new InputError(`${dataset}: no questions in split "train" (the default for a dataset with split metadata)`, missingSplitHint(splitsOf(all), all.length));
    note = `split "train": ${chosen.length} of the ${all.length} questions of ${dataset} (--split to choose another)`;
  }
  if (chosen.length === 0) throw new InputError(`${dataset}: no questions`);
  if (limit && chosen.length > limit) {
    chosen = chosen.slice(0, limit);
    note += `, the first ${limit} (--limit)`;
  }
  return { questions: chosen, note };
}

export async function envServiceFrom(opts: EnvOpts): Promise<EnvService & { selection: string }> {
  if (!opts.index || !opts.dataset) throw new InputError('serve-env needs --index DIR and --dataset FILE', 'e.g. --index world-index --dataset world/questions.jsonl');
  if (opts.promptTemplate) usePromptTemplate(opts.promptTemplate, [opts.agent]);
  const protocol = getProtocol(opts.agent);
  const { questions, note } = await selectQuestions(opts.dataset, opts.split, opts.limit);
  const pooled = opts.workers && !/^https?:\/\//.test(opts.index);
  const retriever = pooled
    ? await PooledRetriever.open(opts.index, opts.workers!, { method: opts.retrieval, apiKey: opts.apiKey })
    : await openRetriever(opts.index, { method: opts.retrieval, embedderOptions: { apiKey: opts.apiKey } });
  const d = protocol.defaults;
  const env = new RagEnv({ retriever, topK: opts.topK ?? d.topK, maxTurns: opts.maxTurns ?? d.maxTurns, maxSearches: opts.maxSearches ?? d.maxSearches });
  const prm = opts.prm ? await createPrm(opts.prm, { apiKey: opts.apiKey }) : undefined;
  const judge = opts.judgeLlm ? new Judge(await createLLM(opts.judgeLlm, { apiKey: opts.apiKey, cacheDir: opts.cacheDir })) : undefined;
  const scheme = composeScheme(opts.reward ?? 'em', opts.option);
  if (!judge && usesJudge(scheme)) throw new InputError(`reward "${scheme.expression}" asks an LLM judge`, 'add --judge-llm openai:URL#MODEL (the judge model)');
  const service = new EnvService({
    env, protocol, questions, outcome: episodeScorer(scheme, { embedder: await createEmbedder(opts.embedder ?? 'hash:512', { apiKey: opts.apiKey }), judge }), prm, trajectoriesPath: opts.trajectories,
    maxActionChars: opts.maxActionChars, firstTurn: opts.process ? Math.floor((opts.process.index * questions.length) / opts.process.count) : undefined, idleMs: opts.sessionIdleS !== undefined ? opts.sessionIdleS * 1000 : undefined,
  });
  return Object.assign(service, { selection: note });
}

interface ServeEnvOpts extends EnvOpts {
  port: number;
  host: string;
  token?: string;
  maxSessions: number;
  maxTrajectories: number;
  maxBodyMb: number;
  roundRobin: boolean;
  quiet: boolean;
  processes: number;
}

/** A process's private server for its peers: loopback, a port of its own (not the cluster's shared one). */
async function listenPrivate(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => reject(listenError(e, 0, '127.0.0.1')));
    server.listen({ port: 0, host: '127.0.0.1', exclusive: true }, resolve);
  });
  return (server.address() as { port: number }).port;
}

export function registerServeEnv(program: Command): void {
  const cmd = program
    .command('serve-env')
    .description("serve the environment (retrieval + protocol + rewards, PRM step rewards with --prm) to Python RL trainers: OpenEnv's HTTP + WebSocket contract (TRL, SkyRL, ART) and verl-tool's /get_observation");
  addEnvOptions(cmd)
    .option('--port <n>', 'port (0 picks a free one)', intArg(0, 65535), 8010)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--token <token>', 'require this token on every route but /health, as "Authorization: Bearer <token>", ?token=<token> or a /t/<token>/ path prefix (default: $RAGTRAIL_ENV_TOKEN if set)', process.env['RAGTRAIL_ENV_TOKEN'])
    .option('--max-sessions <n>', 'WebSocket sessions at once', intArg(1, 100_000), 256)
    .option('--processes <n>', "server processes sharing the port (default 1); each HTTP call goes to the process holding its episodes, a WebSocket's episode lives in the process holding the connection; limits such as --max-sessions apply per process (see docs/reference/serve-env.md)", intArg(1, 1024), 1)
    .option('--workers <n>', `search threads per process over the one index (0: search on the process's main thread; default: 0 with several processes, else ${defaultWorkers()}, one per core)`, intArg(0, 1024))
    .option('--round-robin', "give a verl-tool trajectory whose extra_fields name no question the next question in turn (default: refuse it with 422, since its reward would be computed against a question that is not in its prompt)", false)
    .option('--max-trajectories <n>', 'trajectories in one /get_observation call', intArg(1), 4096)
    .option('--max-action-chars <n>', "characters in one action's text", intArg(1), DEFAULT_MAX_ACTION_CHARS)
    .option('--max-body-mb <n>', 'size of one request body or WebSocket message in MiB', numberArg(0.001, 1024), 4)
    .option('--session-idle-s <n>', 'close sessions idle this long (seconds)', intArg(1), 1800)
    .option('--quiet', 'do not log requests', false)
    .action(async (opts: ServeEnvOpts) => {
      const log = (m: string) => console.error(m);
      // Several processes: this one only supervises the copies that serve (core/cluster.ts).
      if (shouldSupervise(opts.processes)) {
        const ready = await superviseCopies(opts.processes, log);
        for (const line of ready.banner) console.log(line);
        return;
      }
      const { index, count, secret } = copyIndex();
      const workers = opts.workers ?? (count > 1 ? 0 : defaultWorkers());
      // Process k starts its turn of questions k/N of the way through them, so that N turns spread.
      const service = await envServiceFrom({ ...opts, workers, process: count > 1 ? { index, count } : undefined });
      const limits = { maxTrajectories: opts.maxTrajectories, maxBodyBytes: Math.round(opts.maxBodyMb * 2 ** 20), roundRobin: opts.roundRobin };
      let peers: ReturnType<typeof loopbackPeers> | undefined;
      let internalPort: number | undefined;
      if (count > 1) {
        // The port the other processes reach this one's episodes on. A forwarded part holds fewer
        // trajectories than its call; re-encoded, its body may differ a little in size (2× margin).
        peers = loopbackPeers(index, count, secret);
        onPeers(peers.setPorts);
        internalPort = await listenPrivate(createEnvServer(service, { ...limits, maxBodyBytes: 2 * limits.maxBodyBytes, token: secret, internal: true, maxWsSessions: 1 }));
      }
      const server = createEnvServer(service, {
        ...limits,
        token: opts.token,
        maxWsSessions: opts.maxSessions,
        peers,
        onRequest: opts.quiet ? undefined : ({ method, path, status, ms }) => console.error(`${new Date().toISOString()} ${method} ${path} ${status} ${ms.toFixed(1)} ms`),
      });
      // The search threads would keep the process alive after a failed listen (a port in use).
      const port = await listen(server, opts.port, opts.host).catch(async (e: unknown) => {
        await service.opts.env.config.retriever.close?.();
        throw e;
      });
      const base = `http://${opts.host}:${port}`;
      const banner = [
        `serving the ${opts.agent} environment over ${service.selection} at ${base} (OpenEnv: /reset /step /state /schema /health, ws://${opts.host}:${port}/ws; verl-tool: ${base}/get_observation)${opts.token ? ', token required' : ''}${count > 1 ? `, on ${count} processes` : ''}`,
        `rewards: outcome ${opts.reward} on the final step; step rewards ${opts.prm ? `from PRM ${opts.prm}` : '0 (no --prm)'}; searches on ${service.opts.env.config.retriever.name}`,
      ];
      if (isServerCopy()) {
        stopOnSupervisor(gracefulStopper(server, { sockets: () => server.websockets(), onClosed: drained }));
        reportReady({ port, internalPort, banner });
      } else {
        for (const line of banner) console.log(line);
        stopOnSignals(server, { sockets: () => server.websockets(), log });
      }
    });
}
