/** What `run` and `annotate` share: loading questions, building the policy, the environment and the retriever. */
import { type Command, InvalidArgumentError } from 'commander';
import { InputError } from '../core/errors.js';
import { parseShard, type Shard } from '../core/shard.js';
import type { Question } from '../core/types.js';
import { DATASET_FORMATS, type DatasetFormat, loadDataset, missingSplitHint } from '../corpus/dataset.js';
import { describeSelection, needsAll, type QuestionSelection, selectionFromFlags, selectQuestions } from '../corpus/select.js';
import type { Policy } from '../agents/policy.js';
import { protocolNames } from '../agents/registry.js';
import { simDataWarning } from '../agents/sim.js';
import { getProtocol } from '../agents/registry.js';
import { PROMPT_TEMPLATE_HELP, usePromptTemplate } from '../agents/prompt-template.js';
import { knownPolicy, POLICY_SPEC_HELP } from '../agents/policies.js';
import { type BuiltSystem, buildSystem, type SystemSpec } from '../eval/systems.js';
import { createLLM, LLM_SPEC_HELP, type LLMOptions } from '../llm/create.js';
import type { MeteredLLM } from '../llm/middleware.js';
import { openRetriever, type SearchMethod } from '../retrieval/index-dir.js';
import type { Retriever } from '../retrieval/types.js';
import { choiceArg, DATASET_FLAGS, intArg, jsonObjectArg, numberArg } from './options.js';

export interface AgentOpts {
  agent: string;
  llm?: string;
  policy?: string;
  index?: string;
  dataset?: string;
  limit?: number;
  tail?: number;
  sample?: number;
  sampleSeed?: number;
  valFraction?: number;
  valPart?: 'train' | 'val';
  /** `--shard i/n`: only the questions of shard i (see core/shard). */
  shard?: Shard;
  split?: string;
  datasetFormat?: DatasetFormat;
  concurrency: number;
  maxTurns?: number;
  maxSearches?: number;
  topK?: number;
  retrieval?: SearchMethod;
  competence: number;
  apiKey?: string;
  llmMode: 'chat' | 'completion';
  /** `--aux-llm SPEC`: the agent's second model (Protocol.withAux). */
  auxLlm?: string;
  /** `--llm-body JSON`: extra request-body fields for an OpenAI-compatible server. */
  llmBody?: Record<string, unknown>;
  maxTokens?: number;
  timeout: number;
  cacheDir: string;
  cache: boolean;
  tracePrompts: boolean;
  priceIn?: number;
  priceOut?: number;
  llmConcurrency?: number;
  /** `--prompt-template FILE`: the protocol's prompts in this template's words. */
  promptTemplate?: string;
}


/** The options of an agent, its model or stand-in, and its environment. */
/** Validates --policy early, so that a typo is a flag error rather than a failure after loading. */
export function policyArg(v: string): string {
  if (knownPolicy(v) && v !== 'gym:') return v;
  throw new InvalidArgumentError(`expected ${POLICY_SPEC_HELP}`);
}

/** --shard i/n as a flag error rather than a failure later. */
function parseShardArg(v: string): Shard {
  try {
    return parseShard(v);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message.replace(/^--shard \S+: /, ''));
  }
}

export function addAgentOptions(cmd: Command, defaults: { agent: string; concurrency: number }): Command {
  return cmd
    .option('--agent <name>', `protocol: ${protocolNames().join(', ')}`, choiceArg(protocolNames), defaults.agent)
    .option('--llm <spec>', `the model: ${LLM_SPEC_HELP}`)
    .option('--policy <spec>', `a non-LLM policy instead of --llm: ${POLICY_SPEC_HELP}`, policyArg)
    .option('--index <dir|url>', 'index folder, or the URL of a /retrieve server')
    .option('--dataset <file>', 'questions (any supported layout)')
    .option('--limit <n>', 'first N questions only', intArg(1))
    .option('--tail <n>', 'last N questions only', intArg(1))
    .option('--sample <n>', 'N questions drawn at random (seed: --sample-seed), in the file\'s order', intArg(1))
    .option('--sample-seed <n>', 'seed of --sample and --val-fraction (default: --seed, else 0)', intArg(0))
    .option('--val-fraction <f>', 'hold out this share of the questions (by a seeded hash of the ids) as a validation part; --val-part picks a side', numberArg(0, 1))
    .option('--val-part <part>', 'with --val-fraction: the validation part (val) or the rest (train)', choiceArg(['train', 'val'] as const))
    .option('--shard <i/n>', 'only shard i of n (0 ≤ i < n) of the questions, split by a hash of their ids; join the shards\' --out folders with `ragtrail merge`', parseShardArg)
    .option('--dataset-format <format>', `dataset layout (default: detected from the first record): ${DATASET_FORMATS.join(', ')}`, choiceArg(DATASET_FORMATS))
    .option('--split <name>', 'only questions whose metadata.split is this (the synthetic world has train/dev/test; default: every question)')
    .option('--concurrency <n>', 'questions in flight at once', intArg(1, 4096), defaults.concurrency)
    .option('--llm-concurrency <n>', 'model requests in flight at once (default: --concurrency)', intArg(1, 4096))
    .option('--max-turns <n>', "agent steps before the answer is forced (default: the protocol's)", intArg(1, 100))
    .option('--max-searches <n>', "searches allowed (default: the protocol's)", intArg(0, 100))
    .option('--top-k <n>', "documents per search (default: the protocol's)", intArg(1, 100))
    .option('--retrieval <m>', 'retrieval: bm25, dense or hybrid (RRF); default bm25 when the index has it', choiceArg(['bm25', 'dense', 'hybrid'] as const))
    .option('--competence <c>', 'sim policy: probability of taking the gold step', numberArg(0, 1), 0.7)
    .option('--api-key <key>', 'API key (default: $OPENAI_API_KEY)')
    .option('--llm-mode <mode>', 'chat (/chat/completions) or completion (/completions, for base models)', choiceArg(['chat', 'completion'] as const), 'chat')
    .option('--aux-llm <spec>', "the agent's second model, for agents that use one: recomp's summariser, longllmlingua's and selective-context's scorer, adaptive-rag's classifier (default: the --llm model)")
    .option('--llm-body <json>', 'extra fields for every request body of an openai: server, as a JSON object, e.g. \'{"skip_special_tokens": false}\' (part of the cache key)', jsonObjectArg)
    .option('--max-tokens <n>', "completion budget per call (default: the protocol's)", intArg(1))
    .option('--timeout <seconds>', 'per-request timeout', numberArg(1, 86_400), 120)
    .option('--cache-dir <dir>', 'on-disk response cache shared by runs', '.ragtrail-cache')
    .option('--no-cache', 'do not read or write the response cache')
    .option('--no-trace-prompts', "do not keep each step's prompt in the trajectories")
    .option('--prompt-template <file>', PROMPT_TEMPLATE_HELP)
    .option('--price-in <usd>', 'dollars per million prompt tokens, for the cost line', numberArg(0, 1e6))
    .option('--price-out <usd>', 'dollars per million completion tokens', numberArg(0, 1e6));
}

/**
 * The questions of `--dataset` the flags select: `--split`, then `--limit` / `--tail` / `--sample`
 * and `--val-fraction` (corpus/select.ts), before any `--shard`.
 */
export async function loadQuestions(dataset: string, opts: Omit<QuestionSelection, 'seed'> & { split?: string; datasetFormat?: DatasetFormat; sampleSeed?: number; seed?: number }): Promise<Question[]> {
  const sel = selectionFromFlags({ ...opts, seed: opts.seed ?? 0 });
  const questions: Question[] = [];
  // The splits seen, so that a split with no questions can name the ones there are.
  const splits = new Set<string>();
  let total = 0;
  for await (const q of loadDataset(dataset, { format: opts.datasetFormat, flags: { format: DATASET_FLAGS.format } })) {
    total++;
    if (typeof q.metadata?.['split'] === 'string') splits.add(q.metadata['split']);
    if (opts.split && q.metadata?.['split'] !== opts.split) continue;
    questions.push(q);
    if (opts.limit && !needsAll(sel) && questions.length >= opts.limit) break;
  }
  if (questions.length === 0) {
    if (!opts.split) throw new InputError(`${dataset}: no questions`, 'the file is empty');
    throw new InputError(`${dataset}: no questions in split "${opts.split}"`, missingSplitHint(splits, total));
  }
  const chosen = selectQuestions(questions, sel);
  if (chosen.length === 0) throw new InputError(`${dataset}: the selection left no questions (${describeSelection(sel, 0, questions.length)})`, 'choose a larger --val-fraction, or the other --val-part');
  return chosen;
}

export function llmOptions(opts: AgentOpts): LLMOptions {
  return {
    apiKey: opts.apiKey,
    mode: opts.llmMode,
    ...(opts.llmBody && { extraBody: opts.llmBody }),
    timeoutMs: opts.timeout * 1000,
    concurrency: opts.llmConcurrency ?? opts.concurrency,
    cacheDir: opts.cache ? opts.cacheDir : undefined,
    prices: opts.priceIn !== undefined || opts.priceOut !== undefined ? { inputPerM: opts.priceIn ?? 0, outputPerM: opts.priceOut ?? 0 } : undefined,
  };
}

export async function createModel(spec: string, opts: AgentOpts): Promise<MeteredLLM> {
  return createLLM(spec, llmOptions(opts));
}

export interface AgentSetup extends BuiltSystem {
  retriever: Retriever;
}

/** The agent of `run` / `annotate` from its flags: policy (with its selection method) and environment. */
export async function setupAgent(opts: AgentOpts, selection: Pick<SystemSpec, 'select' | 'prm' | 'n' | 'temperature' | 'prmCandidates' | 'prmInput' | 'logprobs'> = {}): Promise<AgentSetup> {
  if (opts.promptTemplate) usePromptTemplate(opts.promptTemplate, [opts.agent]);
  getProtocol(opts.agent);
  if (!opts.llm === !opts.policy) throw new InputError('give exactly one of --llm SPEC or --policy sim|oracle|gym:FILE', 'e.g. --llm openai:http://127.0.0.1:8000/v1#model, or --policy sim to run offline');
  const retriever = await openRetriever(opts.index!, { method: opts.retrieval, embedderOptions: { apiKey: opts.apiKey } });
  const built = await buildSystem(
    {
      agent: opts.agent, llm: opts.llm, policy: opts.policy, competence: opts.competence, maxTurns: opts.maxTurns, maxSearches: opts.maxSearches,
      topK: opts.topK, maxTokens: opts.maxTokens, tracePrompts: opts.tracePrompts, ...(opts.auxLlm && { auxLlm: opts.auxLlm }), ...selection,
    },
    retriever,
    llmOptions(opts),
  );
  return { ...built, retriever };
}

/** A warning, once on stderr, when the policy cannot do anything meaningful on these questions. */
export function warnAboutData(policy: Policy, questions: readonly Question[]): void {
  const w = policy.kind === 'sim' ? simDataWarning(questions) : undefined;
  if (w) console.error(`warning: ${w}`);
}

export function nonLlmNote(policy: Policy): string | undefined {
  switch (policy.kind) {
    case 'llm':
    // A user's own policy may well call a model: say nothing rather than guess.
    case 'custom':
      return undefined;
    case 'oracle':
    case 'sim':
    case 'gym':
      return `note: policy ${policy.name} is a non-LLM stand-in; its numbers measure the pipeline, not a language model`;
  }
}
