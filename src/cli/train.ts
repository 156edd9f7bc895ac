import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { makeDir } from '../core/io.js';
import { inDatasetOrder } from '../core/order.js';
import { manifestCorpus, readManifest } from '../retrieval/index-dir.js';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../core/errors.js';
import { getProtocol } from '../agents/registry.js';
import { createPolicy } from '../agents/policies.js';
import { annotationPairs, demonstrations } from '../learn/gym/data.js';
import { readTrees } from '../process/tree.js';
import { GymPolicy } from '../learn/gym/policy.js';
import { DPO_BETA, GYM_ALGOS, type GymAlgo, type LogEntry, type RlAlgo, trainDpo, trainRl, trainSft } from '../learn/gym/train.js';
import { RFT_DEFAULTS, trainRft } from '../learn/gym/rft.js';
import { createEnvServer } from '../learn/serve/serve-env.js';
import { ensureVenv, runTrl, type TrlAlgo, type TrlConfig, trlCommand, writeTrlConfig } from '../learn/trl.js';
import { trlPrmAccuracy, writeTrlPrmData } from '../learn/trl-prm.js';
import { fixed } from './table.js';
import { createPrm } from '../prm/select.js';
import { Judge } from '../rewards/judge.js';
import { createLLM } from '../llm/create.js';
import { choiceArg, collect, intArg, numberArg } from './options.js';
import { listen } from '../core/http-server.js';
import { addEnvOptions, type EnvOpts, envServiceFrom } from './serve-env.js';
import { createEmbedder } from '../retrieval/embedders/embedder.js';

const ALGOS = [...GYM_ALGOS, 'prm'] as const;
type Algo = (typeof ALGOS)[number];
const TRL_ALGOS: readonly TrlAlgo[] = ['sft', 'dpo', 'prm', 'grpo', 'prorag', 'dapo', 'lws'];
const TRL_ONLINE: readonly TrlAlgo[] = ['grpo', 'prorag', 'dapo', 'lws'];

interface TrainOpts extends Omit<EnvOpts, 'agent'> {
  algo?: Algo;
  engine: 'gym' | 'trl';
  agent?: string;
  data?: string;
  policyOut?: string;
  init?: string;
  head: 'linear' | 'mlp';
  epochs?: number;
  lr?: number;
  batch?: number;
  beta?: number;
  referenceFree: boolean;
  seed: number;
  groupSize?: number;
  questionsPerBatch?: number;
  updates?: number;
  temperature?: number;
  klBeta?: number;
  kl?: 'k1' | 'k2' | 'k3';
  epsLow?: number;
  epsHigh?: number;
  stageSwitch?: number;
  switchStep?: number;
  switchPlateau?: number;
  plateauTolerance?: number;
  dynamicSampling: boolean;
  toolCalls: boolean;
  maxRounds?: number;
  softOverlong?: number;
  stepForm?: 'code' | 'spec';
  lambdaF?: number;
  controlWeight?: number;
  rftThreshold?: number;
  rftSamples?: number;
  rftFilter?: 'episode' | 'step';
  rftCorrect?: number;
  // TRL
  dualWeight?: number;
  out?: string;
  model: string;
  lora: boolean;
  loraR: number;
  loraAlpha: number;
  maxSteps?: number;
  trainer: string[];
  maxExamples?: number;
  venv?: string;
  python?: string;
  printOnly: boolean;
  setupOnly: boolean;
}

function parseTrainerArg(kv: string): [string, unknown] {
  const i = kv.indexOf('=');
  if (i <= 0) throw new InputError(`--trainer ${kv}: expected key=value`, 'e.g. --trainer gradient_accumulation_steps=8');
  const v = kv.slice(i + 1);
  let value: unknown = v;
  try {
    value = JSON.parse(v);
  } catch {
    // a plain string
  }
  return [kv.slice(0, i), value];
}

/** The annotate output folder, or one of its files, for the TRL data of an algorithm. */
function trlData(data: string | undefined, algo: TrlAlgo): string {
  if (!data) throw new InputError(`--engine trl --algo ${algo} needs --data`, algo === 'grpo' ? 'give --dataset FILE (the questions); --data is for sft/dpo/prm' : 'give the --out folder of `ragtrail annotate` (or one of its trl_*.jsonl files)');
  if (existsSync(data) && statSync(data).isDirectory()) {
    const file = join(data, algo === 'sft' ? 'trl_sft.jsonl' : 'trl_preference.jsonl');
    if (!existsSync(file)) throw new InputError(`${file} not found`, 'run `ragtrail annotate --out DIR` first and give that DIR as --data');
    return resolve(file);
  }
  if (!existsSync(data)) throw new InputError(`${data} not found`, 'give the --out folder of `ragtrail annotate`');
  return resolve(data);
}

async function trainWithTrl(opts: TrainOpts): Promise<void> {
  const algo = opts.algo as TrlAlgo;
  if (!TRL_ALGOS.includes(algo)) throw new InputError(`--engine trl trains ${TRL_ALGOS.join(', ')}; "${opts.algo}" is a gym algorithm`, 'use --engine gym for it');
  const online = TRL_ONLINE.includes(algo);
  // Every option given is honoured or refused: none is dropped on the TRL engine.
  const gymOnly: [keyof TrainOpts, string][] = [['policyOut', '--policy-out'], ['init', '--init'], ['questionsPerBatch', '--questions-per-batch'], ['rftSamples', '--rft-samples'], ['rftThreshold', '--rft-threshold'], ['rftFilter', '--rft-filter'], ['rftCorrect', '--rft-correct']];
  for (const [key, flag] of gymOnly) if (opts[key] !== undefined) throw new InputError(`${flag} is a gym setting; --engine trl does not use it`, 'remove it, or set the TRL field with --trainer key=value');
  if (opts.referenceFree) throw new InputError('--reference-free is the gym DPO form; --engine trl does not use it', 'remove it');
  const onlineOnly: [keyof TrainOpts, string][] = [['kl', '--kl'], ['epsLow', '--eps-low'], ['epsHigh', '--eps-high'], ['temperature', '--temperature'], ['updates', '--updates'], ['klBeta', '--kl-beta'], ['groupSize', '--group-size']];
  if (!online) for (const [key, flag] of onlineOnly) if (opts[key] !== undefined) throw new InputError(`${flag} is a setting of ${TRL_ONLINE.join(', ')}, not ${algo}`, 'remove it');
  const dapoOnly: [keyof TrainOpts, string][] = [['maxRounds', '--max-rounds'], ['softOverlong', '--soft-overlong']];
  for (const [key, flag] of dapoOnly) if (opts[key] !== undefined && algo !== 'dapo' && algo !== 'lws') throw new InputError(`${flag} is a setting of dapo and lws, not ${algo}`, 'remove it');
  if (!opts.dynamicSampling && algo !== 'dapo' && algo !== 'lws') throw new InputError(`--no-dynamic-sampling is a setting of dapo and lws, not ${algo}`, 'remove it');
  const lwsOnly: [keyof TrainOpts, string][] = [['stageSwitch', '--stage-switch'], ['switchStep', '--switch-step'], ['switchPlateau', '--switch-plateau'], ['plateauTolerance', '--plateau-tolerance']];
  for (const [key, flag] of lwsOnly) if (opts[key] !== undefined && algo !== 'lws') throw new InputError(`${flag} is a setting of lws, not ${algo}`, 'remove it');
  if (!opts.out) throw new InputError('--engine trl needs --out DIR (model, logs, summary.json)');
  const out = resolve(opts.out);
  makeDir(out);
  const trainer: Record<string, unknown> = Object.fromEntries(opts.trainer.map(parseTrainerArg));
  if (opts.maxSteps !== undefined) trainer['max_steps'] = opts.maxSteps;
  if (opts.lr !== undefined) trainer['learning_rate'] = opts.lr;
  if (opts.batch !== undefined) trainer['per_device_train_batch_size'] = opts.batch;
  if (opts.epochs !== undefined) trainer['num_train_epochs'] = opts.epochs;
  if (opts.beta !== undefined && algo === 'dpo') trainer['beta'] = opts.beta;
  // ReasonRAG's step-DPO β (its training script), not TRL's own default of 0.1.
  if (algo === 'dpo') trainer['beta'] ??= DPO_BETA;
  if (opts.klBeta !== undefined && online) trainer['beta'] = opts.klBeta;
  if (opts.groupSize !== undefined && online) trainer['num_generations'] = opts.groupSize;
  if (opts.epsLow !== undefined) trainer['epsilon'] = opts.epsLow;
  if (opts.epsHigh !== undefined) trainer['epsilon_high'] = opts.epsHigh;
  if (opts.temperature !== undefined) trainer['temperature'] = opts.temperature;
  if (opts.updates !== undefined) trainer['num_iterations'] = opts.updates;
  trainer['seed'] ??= opts.seed;
  // A PRM trains on the annotation's pairs joined as the remote PRM reads them (learn/trl-prm.ts), so
  // that the served checkpoint scores the text it learned; a fifth of the questions is held out.
  const prmPairs = algo === 'prm' && opts.data && existsSync(join(opts.data, 'prm_pairs.jsonl')) ? await writeTrlPrmData(join(opts.data, 'prm_pairs.jsonl'), out, opts.seed) : undefined;
  const config: TrlConfig = {
    algo,
    model: opts.model,
    data: online ? resolve(opts.dataset ?? '') : (prmPairs?.data ?? trlData(opts.data, algo)),
    output_dir: out,
    lora: opts.lora ? { r: opts.loraR, alpha: opts.loraAlpha, dropout: 0.05, target_modules: 'all-linear' } : null,
    trainer,
  };
  if (opts.maxExamples) config.max_examples = opts.maxExamples;
  if (opts.kl) config.kl_estimator = opts.kl;
  if (algo === 'dapo' || algo === 'lws') {
    config.dynamic_sampling = opts.dynamicSampling ? { max_rounds: opts.maxRounds ?? 10 } : false;
    if (opts.softOverlong !== undefined) config.soft_overlong_cache = opts.softOverlong;
  }
  if (algo === 'lws') {
    const rule = { ...(opts.switchStep !== undefined ? { at_step: opts.switchStep } : {}), ...(opts.switchPlateau !== undefined ? { plateau_window: opts.switchPlateau, plateau_tolerance: opts.plateauTolerance ?? 0 } : {}), ...(opts.stageSwitch !== undefined ? { share: opts.stageSwitch } : {}) };
    if (opts.plateauTolerance !== undefined && opts.switchPlateau === undefined) throw new InputError('--plateau-tolerance needs --switch-plateau W');
    // LWS's halves unless another rule is named (the gym's --stage-switch default).
    config.stage_switch = Object.keys(rule).length ? rule : { share: 0.5 };
  }
  // The prompts must be the questions the environment server serves (serve-env's --split rule).
  if (online && opts.split !== undefined) config.split = opts.split;
  if (opts.controlWeight !== undefined) {
    if (algo !== 'sft') throw new InputError(`--control-weight is ProRAG's warm-up SFT setting, not ${algo}'s`, 'use it with --algo sft');
    config.control_token_weight = opts.controlWeight;
  }
  if (algo === 'prorag') {
    if (!opts.prm) throw new InputError('--engine trl --algo prorag needs --prm SPEC: the environment server scores each step with it', 'e.g. --prm prm.json from `ragtrail prm train`');
    config.dual_weight = opts.dualWeight ?? 0.3;
    config.step_form = opts.stepForm ?? 'code';
    if (opts.lambdaF !== undefined) config.lambda_f = opts.lambdaF;
  } else if (opts.dualWeight !== undefined) throw new InputError('--dual-weight is a setting of --algo prorag');
  if (opts.model === 'tiny') {
    // The tiny model's tokenizer learns its vocabulary from the world's text.
    const corpus = opts.index ? findCorpus(opts.index) : undefined;
    config.tiny = { corpus, questions: opts.dataset ? resolve(opts.dataset) : undefined };
  }
  // Not config.json: save_model writes the model's own config.json into the same folder.
  const configPath = join(out, 'trl-config.json');
  let stop: (() => Promise<void>) | undefined;
  if (online) {
    if (!opts.index || !opts.dataset) throw new InputError(`--engine trl --algo ${algo} needs --index and --dataset: the environment the rollouts run in`, 'e.g. --index world-index --dataset world/questions.jsonl');
    // The environment server runs in this process for the length of the training; lws has a second
    // one scoring with the stage-2 reward, to which the rollouts move when the switch fires.
    const start = async (reward: string | undefined) => {
      const service = await envServiceFrom({ ...opts, reward, agent: opts.agent ?? 'search-r1' });
      const token = randomBytes(12).toString('hex');
      const server = createEnvServer(service, { token });
      const port = await listen(server, 0, '127.0.0.1');
      server.unref();
      const env = { url: `http://127.0.0.1:${port}`, token };
      console.error(`environment server for the rollouts at ${env.url} (${service.opts.questions.length} questions, outcome ${reward ?? 'em'}${opts.prm ? `, step rewards from ${opts.prm}` : ''})`);
      return { env, close: () => new Promise<void>((r) => server.close(() => r())) };
    };
    const first = await start(algo === 'lws' ? (opts.reward ?? 'lws-stage1') : opts.reward);
    const second = algo === 'lws' ? await start('lws-stage2') : undefined;
    // The model writes the protocol the server parses (rollout.py), or calls tools with --tool-calls.
    config.env = { ...first.env, protocol: opts.toolCalls ? 'tools' : (opts.agent ?? 'search-r1') };
    if (second) config.env_stage2 = second.env;
    stop = async () => {
      await first.close();
      await second?.close();
    };
  }
  writeTrlConfig(config, configPath);
  const python = opts.printOnly ? join(opts.venv ?? '$RAGTRAIL_VENV', 'bin', 'python') : ensureVenv({ venv: opts.venv, python: opts.python });
  const { line } = trlCommand(python, configPath);
  console.log(`config: ${configPath}`);
  console.log(`command: ${line}`);
  if (opts.printOnly) return;
  const code = await runTrl(python, configPath);
  await stop?.();
  if (code !== 0) throw new InputError(`TRL training exited with ${code}`, 'read its message above');
  console.log(`summary: ${join(out, 'summary.json')}`);
  if (prmPairs?.heldOut.length) {
    const e = await trlPrmAccuracy(python, out, prmPairs.heldOut, join(out, 'serve-prm.log'));
    console.log(`held-out pair accuracy ${fixed(e.accuracy)} on ${e.n} pairs (the PRM served: python -m ragtrail_trl.serve_prm --model ${out})`);
  }
}

function findCorpus(index: string): string | undefined {
  try {
    return manifestCorpus(index, readManifest(index));
  } catch {
    return undefined;
  }
}

function printLog(algo: string) {
  return (e: LogEntry) => {
    const extra = Object.entries(e)
      .filter(([k]) => k !== 'step' && k !== 'loss')
      .map(([k, v]) => `${k} ${Number.isInteger(v) ? v : v.toFixed(4)}`)
      .join(', ');
    console.log(`${algo} ${e.step}: loss ${e.loss.toFixed(4)}${extra ? `, ${extra}` : ''}`);
  };
}

async function trainGym(opts: TrainOpts): Promise<void> {
  if (opts.algo === 'prm') throw new InputError('--algo prm trains a PRM with TRL (--engine trl); the TypeScript PRM head is `ragtrail prm train`');
  if (!opts.policyOut) throw new InputError('--engine gym needs --policy-out FILE (the trained policy, JSON)', 'then use it anywhere with --policy gym:FILE');
  const algo = opts.algo as GymAlgo;
  const offline = algo === 'sft' || algo === 'dpo';
  // By question id: the file holds the trees in completion order, which a resumed annotation changes.
  const trees = offline ? inDatasetOrder(await readTrees(opts.data ?? (() => { throw new InputError(`--algo ${algo} needs --data DIR`, 'the --out folder of `ragtrail annotate`'); })())) : [];
  const agent = opts.agent ?? trees[0]?.agent ?? 'reasonrag';
  const protocol = getProtocol(agent);
  let policy: GymPolicy;
  if (opts.init) {
    const p = createPolicy(opts.init, protocol);
    if (!(p instanceof GymPolicy)) throw new InputError(`--init ${opts.init}: not a gym policy`, 'use gym or gym:FILE');
    policy = p;
  } else {
    policy = GymPolicy.fresh(protocol, opts.head, 16, opts.seed);
  }
  const t0 = performance.now();
  let log: LogEntry[];
  const common = { seed: opts.seed, ...(opts.lr !== undefined ? { lr: opts.lr } : {}), ...(opts.epochs !== undefined ? { epochs: opts.epochs } : {}) };
  if (opts.controlWeight !== undefined && algo !== 'sft' && algo !== 'rft') throw new InputError(`--control-weight weights the SFT loss; --algo ${algo} has none`, 'use it with --algo sft or rft');
  const sftOptions = { ...(opts.batch ? { batch: opts.batch } : {}), ...(opts.controlWeight !== undefined ? { controlWeight: opts.controlWeight } : {}) };
  if (algo === 'sft') {
    const demos = demonstrations(trees);
    if (demos.length === 0) throw new InputError(`${opts.data}: no demonstrations (no best-path step reached Q ≥ 0.5)`, 'annotate more questions or with more simulations');
    console.log(`sft on ${demos.length} demonstrated steps from ${trees.length} trees${opts.controlWeight !== undefined && opts.controlWeight !== 1 ? ` (action-type decision weighted ${opts.controlWeight})` : ''}`);
    log = trainSft(policy, demos, { ...common, ...sftOptions }, printLog('sft'));
  } else if (algo === 'dpo') {
    // DPO trains on the pairs the annotation wrote (its labels; a judge's pairs from pairs.jsonl).
    const pairs = await annotationPairs(opts.data!, trees);
    if (pairs.length === 0) throw new InputError(`${opts.data}: no preference pairs`, 'annotate more questions or with more simulations');
    console.log(`step-level dpo on ${pairs.length} pairs from ${trees.length} trees${opts.referenceFree ? ' (reference-free)' : ''}`);
    log = trainDpo(policy, pairs, { ...common, ...(opts.batch ? { batch: opts.batch } : {}), ...(opts.beta !== undefined ? { beta: opts.beta } : {}), referenceFree: opts.referenceFree }, printLog('dpo'));
  } else if (algo === 'rft') {
    if (!opts.prm) throw new InputError('--algo rft needs --prm SPEC: the PRM whose step scores filter the sampled episodes', 'e.g. --prm prm.json from `ragtrail prm train`');
    const service = await envServiceFrom({ ...opts, agent, reward: undefined, option: [] });
    const prm = await createPrm(opts.prm, { apiKey: opts.apiKey });
    const cfg = {
      ...common,
      ...sftOptions,
      ...(opts.rftSamples !== undefined ? { samples: opts.rftSamples } : {}),
      ...(opts.rftThreshold !== undefined ? { threshold: opts.rftThreshold } : {}),
      ...(opts.temperature !== undefined ? { temperature: opts.temperature } : {}),
      ...(opts.rftFilter ? { filter: opts.rftFilter } : {}),
      ...(opts.rftCorrect !== undefined ? { correct: 'f1' as const, f1Threshold: opts.rftCorrect } : {}),
    };
    const samples = cfg.samples ?? RFT_DEFAULTS.samples;
    console.log(`rft on ${service.opts.questions.length} questions: ${samples} episodes each at T ${cfg.temperature ?? RFT_DEFAULTS.temperature}, kept when ${opts.rftCorrect !== undefined ? `F1 ≥ ${opts.rftCorrect}` : 'EM'} and sigmoid(PRM) ≥ ${cfg.threshold ?? RFT_DEFAULTS.threshold} at ${(cfg.filter ?? RFT_DEFAULTS.filter) === 'episode' ? 'every step of the episode' : 'each step (kept one by one)'}`);
    const r = await trainRft(policy, { env: service.opts.env, questions: service.opts.questions, prm, onLog: printLog('rft') }, cfg);
    const c = r.counts;
    console.log(`rft: ${c.sampled} episodes sampled, ${c.correct} correct, ${c.kept} kept (${c.keptSteps} steps from ${c.keptQuestions} of ${c.questions} questions)`);
    if (r.log.length === 0) throw new InputError(`rft: no sampled episode passed the filters (${c.correct} of ${c.sampled} correct); the policy was not trained`, 'raise --rft-samples, lower --rft-threshold, or start from a warmer policy (--init)');
    log = r.log;
  } else {
    // The gym trainers compute rewards themselves (with --reward and --option); the service only supplies the environment.
    const service = await envServiceFrom({ ...opts, agent, reward: undefined, option: [] });
    const prm = algo === 'prorag' ? (opts.prm ? await createPrm(opts.prm, { apiKey: opts.apiKey }) : undefined) : undefined;
    if (algo === 'prorag' && !prm) throw new InputError('--algo prorag needs --prm SPEC for the step rewards', 'e.g. --prm prm.json from `ragtrail prm train`');
    const rewardOverride = opts.reward ? { reward: opts.reward } : {};
    const cfg = {
      algo: algo as RlAlgo,
      ...common,
      ...rewardOverride,
      ...(opts.groupSize !== undefined ? { groupSize: opts.groupSize } : {}),
      ...(opts.questionsPerBatch !== undefined ? { questionsPerBatch: opts.questionsPerBatch } : {}),
      ...(opts.updates !== undefined ? { updatesPerBatch: opts.updates } : {}),
      ...(opts.temperature !== undefined ? { temperature: opts.temperature } : {}),
      ...(opts.klBeta !== undefined ? { beta: opts.klBeta } : {}),
      ...(opts.kl ? { kl: opts.kl } : {}),
      ...(opts.epsLow !== undefined ? { epsLow: opts.epsLow } : {}),
      ...(opts.epsHigh !== undefined ? { epsHigh: opts.epsHigh } : {}),
      ...(opts.stageSwitch !== undefined ? { stageSwitch: opts.stageSwitch } : {}),
      ...(opts.stepForm ? { stepForm: opts.stepForm } : {}),
      ...(opts.lambdaF !== undefined ? { lambdaF: opts.lambdaF } : {}),
      rewardOptions: opts.option,
    };
    console.log(`${algo} on ${service.opts.questions.length} questions`);
    const embedder = opts.embedder ? await createEmbedder(opts.embedder, { apiKey: opts.apiKey }) : undefined;
    const judge = opts.judgeLlm ? new Judge(await createLLM(opts.judgeLlm, { apiKey: opts.apiKey, cacheDir: opts.cacheDir })) : undefined;
    log = await trainRl(policy, { env: service.opts.env, questions: service.opts.questions, prm, embedder, judge, onLog: printLog(algo) }, cfg);
  }
  makeDir(dirname(resolve(opts.policyOut)));
  const trained = policy.clone(`${algo}`);
  trained.save(opts.policyOut, [{ algo, data: opts.data ?? opts.dataset ?? null, seconds: (performance.now() - t0) / 1000, log }]);
  const first = log[0]!;
  const last = log[log.length - 1]!;
  const reward = first['reward'] !== undefined ? `, mean sampled reward ${first['reward'].toFixed(4)} → ${last['reward']!.toFixed(4)} (first → last batch)` : '';
  console.log(`trained ${algo} in ${((performance.now() - t0) / 1000).toFixed(1)} s: loss ${first.loss.toFixed(4)} → ${last.loss.toFixed(4)}${reward}; wrote ${opts.policyOut} (use it with --policy gym:${opts.policyOut})`);
  console.log('note: the gym policy is a small non-LLM model over generated candidate actions; it measures the training pipeline, not a language model');
}

export function registerTrain(program: Command): void {
  const cmd = program
    .command('train')
    .description('train a policy: the TypeScript gym policy (--engine gym: sft, dpo, grpo, dapo, lws, prorag, rft) or an LLM through TRL (--engine trl: sft, dpo, prm, grpo, prorag, dapo, lws)')
    .option('--algo <name>', `${ALGOS.join(', ')} (required unless --setup-only)`, choiceArg(ALGOS))
    .option('--engine <e>', 'gym (TypeScript, offline) or trl (Python, TRL trainers)', choiceArg(['gym', 'trl'] as const), 'gym')
    .option('--data <dir>', 'sft/dpo/prm: the --out folder of `ragtrail annotate` (trl: or one of its trl_*.jsonl files)')
    .option('--policy-out <file>', 'gym: where to write the trained policy (use it with --policy gym:FILE)')
    .option('--init <spec>', 'gym: start from this policy (gym:FILE) instead of a fresh one')
    .option('--head <kind>', 'gym: linear or mlp scorer', choiceArg(['linear', 'mlp'] as const), 'linear')
    .option('--epochs <n>', 'passes over the data / training questions', intArg(1, 100_000))
    .option('--lr <x>', 'learning rate', numberArg(0, 10))
    .option('--batch <n>', 'batch size', intArg(1, 1_000_000))
    .option('--beta <x>', `DPO β (default ${DPO_BETA}, ReasonRAG's, for both engines; TRL's own default is 0.1)`, numberArg(0, 1000))
    .option('--reference-free', 'gym dpo: the reference-free form ReasonRAG writes', false)
    .option('--seed <n>', 'seed', intArg(0), 0)
    .option('--group-size <n>', 'GRPO/DAPO: episodes per question (G)', intArg(2, 1024))
    .option('--questions-per-batch <n>', 'gym RL: questions per update', intArg(1, 1_000_000))
    .option('--updates <n>', 'gym RL: gradient steps per batch of episodes (μ)', intArg(1, 1000))
    .option('--temperature <t>', 'gym RL and rft: sampling temperature of the rollouts', numberArg(0.01, 100))
    .option('--kl-beta <x>', 'KL coefficient (gym grpo/prorag default 0.04; dapo 0; lws 1e-4 as its verl runs)', numberArg(0, 100))
    .option('--kl <k>', 'RL (both engines): KL estimator k1, k2 (ARENA) or k3 (GRPO; TRL\'s own)', choiceArg(['k1', 'k2', 'k3'] as const))
    .option('--eps-low <x>', 'RL: lower clip ε (trl: epsilon)', numberArg(0, 1))
    .option('--eps-high <x>', 'RL: upper clip ε (DAPO 0.28; trl: epsilon_high)', numberArg(0, 10))
    .option('--stage-switch <x>', 'lws: share of the batches (trl: of max_steps) after which the stage-2 reward replaces stage 1 (LWS: 0.5)', numberArg(0, 1))
    .option('--switch-step <n>', 'trl lws: switch to the stage-2 reward after this optimiser step', intArg(0))
    .option('--switch-plateau <w>', 'trl lws: switch when the mean logged reward of the last W steps gains at most --plateau-tolerance over the W before', intArg(1))
    .option('--plateau-tolerance <x>', 'trl lws: the plateau rule\'s tolerance (default 0)', numberArg(0, 1000))
    .option('--no-dynamic-sampling', 'trl dapo/lws: keep groups whose rewards are all equal (DAPO drops and refills them)')
    .option('--max-rounds <n>', 'trl dapo/lws: generation rounds per batch before dynamic sampling gives up (default 10, DAPO\'s; 0 = no limit)', intArg(0))
    .option('--soft-overlong <n>', 'trl dapo/lws: L_cache of DAPO\'s soft overlong punishment in tokens (default off)', intArg(0))
    .option('--step-form <f>', "prorag: step reward sigmoid(PRM) + (+1 / −2) for the schema (code, ProRAG's) or PRM + λ_f·1[schema] (spec)", choiceArg(['code', 'spec'] as const))
    .option('--lambda-f <x>', 'prorag, spec form: weight λ_f of the step-format term', numberArg(0, 100))
    .option('--control-weight <x>', "sft (gym and trl) and gym rft: ProRAG's warm-up weight λ — gym: of the action-type decision (search / answer / extract) in the NLL; trl: of the control-tag tokens (<step>, <subquery>, …); 1 = plain SFT", numberArg(0, 1000))
    .option('--dual-weight <w>', "trl prorag: w in the per-token advantage A_out + w·A_step (default 0.3, ProRAG's run script; its code's default 0.5)", numberArg(0, 100))
    .option('--rft-samples <k>', `gym rft: episodes sampled per training question (default ${RFT_DEFAULTS.samples}; --temperature sets their temperature, default ${RFT_DEFAULTS.temperature})`, intArg(1, 10_000))
    .option('--rft-threshold <x>', `gym rft: a step passes when sigmoid(PRM) is at least this (default ${RFT_DEFAULTS.threshold}: ProRAG's code keeps logit ≥ 0)`, numberArg(0, 1))
    .option('--rft-filter <f>', 'gym rft: step (keep the passing steps of correct episodes, as the paper and its code; default) or episode (keep correct episodes whose every step passes)', choiceArg(['episode', 'step'] as const))
    .option('--rft-correct <f1>', 'gym rft: count an episode correct when its F1 is at least this (default: exact match)', numberArg(0, 1))
    .option('--out <dir>', 'trl: output folder (model, trl-config.json, log_history.jsonl, summary.json)')
    .option('--model <m>', 'trl: "tiny" (random model built from a config, for smoke runs), a checkpoint folder or a hub id', 'tiny')
    .option('--lora', 'trl: train LoRA adapters (PEFT) instead of all weights', false)
    .option('--lora-r <n>', 'trl: LoRA rank', intArg(1, 4096), 16)
    .option('--lora-alpha <n>', 'trl: LoRA alpha', intArg(1, 8192), 32)
    .option('--max-steps <n>', 'trl: optimiser steps', intArg(1))
    .option('--trainer <k=v>', 'trl: any field of the TRL config (repeatable), e.g. gradient_accumulation_steps=8', collect, [])
    .option('--max-examples <n>', 'trl: first N examples only', intArg(1))
    .option('--venv <dir>', 'trl: Python environment (default $RAGTRAIL_VENV or ~/.cache/ragtrail/trl-venv; created on first use)')
    .option('--python <exe>', 'trl: interpreter that creates the venv (default $RAGTRAIL_PYTHON, python3)')
    .option('--tool-calls', "trl grpo/prorag/dapo/lws: the model calls search and answer as tools (TRL's tool loop) instead of writing --agent's protocol text", false)
    .option('--print-only', 'trl: write the config and print the command without running it', false)
    .option('--setup-only', 'trl: create the Python environment and stop', false);
  addEnvOptions(cmd, {}).action(async (opts: TrainOpts) => {
    if (opts.setupOnly) {
      console.log(`python: ${ensureVenv({ venv: opts.venv, python: opts.python })}`);
      return;
    }
    if (!opts.algo) throw new InputError('train needs --algo', `one of ${ALGOS.join(', ')}`);
    if (opts.engine === 'trl') await trainWithTrl(opts);
    else await trainGym(opts);
  });
}
