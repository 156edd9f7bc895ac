import { listen } from '../core/http-server.js';
import type { Command } from 'commander';
import { InputError } from '../core/errors.js';
import { AGENT_NAMES } from '../agents/protocol.js';
import { getProtocol } from '../agents/registry.js';
import { RagEnv } from '../env/env.js';
import { EnvService } from '../learn/env-service.js';
import { createEnvServer } from '../learn/serve-env.js';
import { createPrm, PRM_SPEC_HELP } from '../prm/select.js';
import { createEmbedder } from '../retrieval/embedders/embedder.js';
import { openRetriever, type SearchMethod } from '../retrieval/index-dir.js';
import { composeScheme } from '../rewards/schemes.js';
import { choiceArg, collect, intArg } from './options.js';
import { loadQuestions } from './setup.js';

export interface EnvOpts {
  index: string;
  dataset: string;
  split?: string;
  limit?: number;
  agent: string;
  reward?: string;
  option: string[];
  prm?: string;
  maxTurns?: number;
  maxSearches?: number;
  topK?: number;
  retrieval?: SearchMethod;
  apiKey?: string;
  trajectories?: string;
}

/** The environment options `serve-env` and `train --engine trl --algo grpo` share. */
export function addEnvOptions(cmd: Command, defaults: { agent?: string; reward?: string } = { agent: 'search-r1', reward: 'em' }): Command {
  return cmd
    .option('--index <dir|url>', 'index folder, or the URL of a /retrieve server')
    .option('--dataset <file>', 'questions the episodes are drawn from')
    .option('--split <name>', 'only questions whose metadata.split is this', 'train')
    .option('--limit <n>', 'first N questions only', intArg(1))
    .option('--agent <name>', `protocol for raw-text actions and prompts: ${AGENT_NAMES.join(', ')}`, choiceArg(AGENT_NAMES), defaults.agent)
    .option('--reward <expr>', `outcome reward scheme on the final step (see \`ragtrail reward --help\`)${defaults.reward ? '' : '; default: the algorithm\'s (em; lws: lws-stage1 then lws-stage2; prorag: prorag-outcome)'}`, defaults.reward)
    .option('--option <k=v>', 'reward scheme option (repeatable)', collect, [])
    .option('--prm <spec>', `process reward of every step: ${PRM_SPEC_HELP}`)
    .option('--max-turns <n>', "agent steps before the answer is forced (default: the protocol's)", intArg(1, 100))
    .option('--max-searches <n>', "searches allowed (default: the protocol's)", intArg(0, 100))
    .option('--top-k <n>', "documents per search (default: the protocol's)", intArg(1, 100))
    .option('--retrieval <m>', 'bm25, dense or hybrid', choiceArg(['bm25', 'dense', 'hybrid'] as const))
    .option('--api-key <key>', 'API key for an openai: embedder or a judge PRM (default: $OPENAI_API_KEY)')
    .option('--trajectories <file>', 'append every finished episode to this JSONL file (trajectories with their step and outcome rewards)');
}

export async function envServiceFrom(opts: EnvOpts): Promise<EnvService> {
  if (!opts.index || !opts.dataset) throw new InputError('serve-env needs --index DIR and --dataset FILE', 'e.g. --index world-index --dataset world/questions.jsonl');
  const protocol = getProtocol(opts.agent);
  const retriever = await openRetriever(opts.index, { method: opts.retrieval, embedderOptions: { apiKey: opts.apiKey } });
  const d = protocol.defaults;
  const env = new RagEnv({ retriever, topK: opts.topK ?? d.topK, maxTurns: opts.maxTurns ?? d.maxTurns, maxSearches: opts.maxSearches ?? d.maxSearches });
  const questions = await loadQuestions(opts.dataset, { split: opts.split, limit: opts.limit });
  const prm = opts.prm ? await createPrm(opts.prm, { apiKey: opts.apiKey }) : undefined;
  return new EnvService({ env, protocol, questions, outcome: composeScheme(opts.reward ?? 'em', opts.option), prm, embedder: await createEmbedder('hash:512'), trajectoriesPath: opts.trajectories });
}

interface ServeEnvOpts extends EnvOpts {
  port: number;
  host: string;
  token?: string;
  maxSessions: number;
  quiet: boolean;
}

export function registerServeEnv(program: Command): void {
  const cmd = program
    .command('serve-env')
    .description("serve the environment (retrieval + protocol + rewards, PRM step rewards with --prm) to Python RL trainers: OpenEnv's HTTP + WebSocket contract (TRL, SkyRL, ART) and verl-tool's /get_observation");
  addEnvOptions(cmd)
    .option('--port <n>', 'port (0 picks a free one)', intArg(0, 65535), 8010)
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--token <token>', 'require Authorization: Bearer <token> (default: $RAGTRAIL_ENV_TOKEN if set)', process.env['RAGTRAIL_ENV_TOKEN'])
    .option('--max-sessions <n>', 'WebSocket sessions at once', intArg(1, 100_000), 256)
    .option('--quiet', 'do not log requests', false)
    .action(async (opts: ServeEnvOpts) => {
      const service = await envServiceFrom(opts);
      const server = createEnvServer(service, {
        token: opts.token,
        maxWsSessions: opts.maxSessions,
        onRequest: opts.quiet ? undefined : ({ method, path, status, ms }) => console.error(`${new Date().toISOString()} ${method} ${path} ${status} ${ms.toFixed(1)} ms`),
      });
      const port = await listen(server, opts.port, opts.host);
      const base = `http://${opts.host}:${port}`;
      console.log(`serving the ${opts.agent} environment over ${service.opts.questions.length} questions at ${base} (OpenEnv: /reset /step /state /schema /health, ws://${opts.host}:${port}/ws; verl-tool: ${base}/get_observation)${opts.token ? ', bearer token required' : ''}`);
      console.log(`rewards: outcome ${opts.reward} on the final step; step rewards ${opts.prm ? `from PRM ${opts.prm}` : '0 (no --prm)'}`);
      const stop = () => server.close(() => process.exit(0));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
