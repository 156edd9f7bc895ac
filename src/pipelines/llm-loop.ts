/**
 * `ragtrail llm-loop`: the papers' whole pipeline with a real (tiny) language model, on this machine.
 *
 *   world → BM25 index → oracle and sim demonstrations in the search-r1 protocol → SFT data
 *   → a tiny transformer (tokenizer learned on the world, random init), warmed up on copy and then
 *   quote examples (pipelines/warmup.ts: the stand-in for pretraining, built once per world and model and
 *   reused from a cache: llm-loop-base.ts), then trained with TRL's SFTTrainer
 *   (plus the same warmed-up model trained on question → answer pairs only: the no-retrieval baseline)
 *   → served by `transformers serve` → evaluated by `ragtrail`'s own agent loop over HTTP
 *   → MCTS + SPRE annotation with the served SFT model (sampling) → step preference pairs
 *   → (a) step-DPO with TRL from the SFT checkpoint; (b) GRPO with TRL from the SFT checkpoint on the
 *     same questions, rollouts and rewards from the environment server; (c) a PRM trained with TRL's
 *     RewardTrainer on the pairs, served for PRM-guided best-of-N
 *   → every variant served and evaluated on the held-out questions → results.json and report.html.
 *
 * Every stage leaves its output in OUT and is skipped when that output is complete, so a run that
 * was interrupted (even by kill -9) resumes where it stopped; evaluation runs resume per question.
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { getProtocol } from '../agents/registry.js';
import { LlmPolicy } from '../agents/policy.js';
import { RagtrailError } from '../core/errors.js';
import { exactMatch } from '../core/metrics.js';
import type { Passage, Question } from '../core/types.js';
import { readCorpus } from '../corpus/corpus.js';
import { loadDatasetAll } from '../corpus/dataset.js';
import { generateWorld, type QuestionMix, writeWorld } from '../corpus/world/index.js';
import { RagEnv, type State } from '../env/env.js';
import { type Curve, type EvalResults, runDir, runEval } from '../eval/harness.js';
import { trendWindow } from '../eval/svg.js';
import { writeReport } from '../eval/report.js';
import { runQuestions } from '../eval/run.js';
import type { SystemSpec } from '../eval/systems.js';
import { createPolicy } from '../agents/policies.js';
import { readTrajectories } from '../eval/trajectories.js';
import { createLLM } from '../llm/create.js';
import { TemperatureRoutedLLM } from '../llm/middleware.js';
import { type PrmInput, prmInputText } from '../prm/remote.js';
import { annotate } from '../process/annotate.js';
import { directAnswerExample, trajectorySftExample } from '../process/export.js';
import { UCT_DEFAULTS } from '../process/mcts.js';
import { episodeScorer } from '../rewards/apply.js';
import { composeScheme } from '../rewards/schemes.js';
import { buildIndex, openRetriever } from '../retrieval/index-dir.js';
import { readJsonlValues, writeJsonl } from '../core/io.js';
import { inDatasetOrder } from '../core/order.js';
import { EnvService } from '../learn/serve/env-service.js';
import { type PythonService, serveModel, servePrm } from '../learn/python-service.js';
import { exportGguf } from '../learn/gguf.js';
import { withLoopbackEnvServer } from '../learn/serve/serve-env.js';
import { copyExample, quoteExamples } from './warmup.js';
import { baseKey, type BaseInfo, copyBaseInto, defaultBaseCacheDir, findBase, storeBase } from './llm-loop-base.js';
import { ensureVenv, runTrl, type TrlConfig, writeTrlConfig } from '../learn/trl.js';

export interface LlmLoopOptions {
  out: string;
  /** Entities of the synthetic world (default 3000). */
  entities: number;
  /** Questions generated about the world (default 2000: 1600 train / 200 dev / 200 test; more demonstrations than the world's default of one per five entities). */
  questions: number;
  /** Weights of the world's question types (default: single-hop and compositional, half each; see docs/reference/llm-loop.md). */
  mix: QuestionMix;
  /** Documents per search (default 3: keeps the transcripts short enough for CPU training). */
  topK: number;
  maxTurns: number;
  /** Questions annotated with MCTS, and the same questions for GRPO (default 200). */
  budget: number;
  /** Held-out questions evaluated (default: the whole split). */
  testQuestions?: number;
  /** The held-out split evaluated: `test` (default, the reported table) or `dev` (for choosing settings without looking at the test questions). */
  evalSplit: 'test' | 'dev';
  /** The tiny transformer. */
  model: { hidden: number; layers: number; heads: number; vocab: number };
  /** Epochs over the copy warm-up (each passage, then the same passage again; see pipelines/warmup.ts) before SFT. */
  warmupEpochs: number;
  /** Epochs over the quote warm-up (search results, then each sentence quoted in random order; see pipelines/warmup.ts) after the copy warm-up; 0 skips it. */
  quoteEpochs: number;
  sftEpochs: number;
  /** Epochs of the no-retrieval baseline over the training questions' question → answer pairs (short: 800 steps reach loss 0.1). */
  directEpochs: number;
  /** MCTS simulations per question and SPRE rollouts per node. */
  simulations: number;
  rollouts: number;
  /** Steps sampled per expanded MCTS node (ReasonRAG's code: 2). */
  children: number;
  /** Temperature of the steps MCTS samples to expand a node (the tree's candidate steps). */
  mctsTemperature: number;
  /** Temperature of SPRE's rollouts, whose outcomes value a node: low, so a value says what the policy would make of the step. */
  rolloutTemperature: number;
  dpoEpochs: number;
  /** Learning rate of step-DPO. */
  dpoLr: number;
  /** β of step-DPO (ReasonRAG Eq. 3; its code uses 0.3). */
  dpoBeta: number;
  grpoSteps: number;
  prmEpochs: number;
  /** Candidates per step for PRM best-of-N (default 4: every candidate is a full generation plus a PRM
   * pass on CPU; RAG-Gym uses 10). */
  n: number;
  /** Sampling temperature of PRM best-of-N's candidates (RAG-Gym samples at 1.0). */
  prmTemperature: number;
  /** What the PRM reads of the state, in training and at inference: step summaries or the steps with the documents found (prm/remote.ts). */
  prmInput: PrmInput;
  seed: number;
  venv?: string;
  /** How policy checkpoints are served for evaluation and annotation: `transformers serve` (default), or
   * exported to GGUF and run in-process by node-llama-cpp (`llama:`); a PRM is served by Python either way. */
  serve?: 'transformers' | 'llama';
  /** `transformers serve` processes per served checkpoint (default: one per CPU core, at most 8). Each
   * generates on one thread, and a server spends most of its time in Python between small forward
   * passes, so one server keeps one core busy; requests go to the least-loaded one (llm/endpoints.ts).
   * 200 held-out questions of the SFT model: 32.5 s with one server, 15.5 s with two on 2 cores. */
  servers?: number;
  /** Where warmed-up bases are cached and reused across runs of the same world and model (default
   * `defaultBaseCacheDir()`); false builds the warm-ups in the run folder only. See llm-loop-base.ts. */
  baseCache?: string | false;
  log?: (line: string) => void;
}

export const LLM_LOOP_DEFAULTS: Omit<LlmLoopOptions, 'out'> = {
  entities: 3000, questions: 2000, mix: { 'single-hop': 1, compositional: 1, comparison: 0, 'bridge-comparison': 0 }, topK: 3, maxTurns: 4, budget: 200, model: { hidden: 128, layers: 4, heads: 4, vocab: 4000 }, warmupEpochs: 6, quoteEpochs: 2, sftEpochs: 3, directEpochs: 4,
  simulations: 7, rollouts: 2, children: 2, mctsTemperature: 1, rolloutTemperature: 0.3, dpoEpochs: 1, dpoBeta: 0.3, dpoLr: 1e-4, grpoSteps: 24, prmEpochs: 2, n: 4, prmTemperature: 0.7, prmInput: 'evidence', seed: 1, evalSplit: 'test',
};

const AGENT = 'search-r1';

/** One `transformers serve` per core, at most 8. */
export function defaultServers(): number {
  return Math.min(8, availableParallelism());
}

/** A variant of the table: its checkpoint and how it is evaluated. */
interface Variant {
  name: string;
  checkpoint: string;
  prm?: string;
}

/** Where this run's warmed-up base came from, and what building it cost. */
export interface BaseUse {
  key: string;
  /** `cache`: copied from the base cache; `built`: trained by this run (and stored when a cache is on). */
  from: 'cache' | 'built';
  /** Seconds of the warm-up stages when the base was built. */
  seconds: Record<string, number>;
}

export interface LlmLoopResult {
  results: EvalResults;
  seconds: number;
  base: BaseUse;
  timings: Record<string, number>;
  report: string;
}

export async function runLlmLoop(options: Partial<LlmLoopOptions> & { out: string }): Promise<LlmLoopResult> {
  const o: LlmLoopOptions = { ...LLM_LOOP_DEFAULTS, ...options, model: { ...LLM_LOOP_DEFAULTS.model, ...options.model } };
  const log = o.log ?? ((l: string) => console.error(l));
  const out = resolve(o.out);
  mkdirSync(out, { recursive: true });
  const t0 = performance.now();
  const timings: Record<string, number> = {};
  const stage = async <T>(name: string, done: boolean, f: () => Promise<T>): Promise<T | undefined> => {
    if (done) {
      log(`  ${name}: done earlier (kept)`);
      return undefined;
    }
    const s = performance.now();
    const r = await f();
    timings[name] = (performance.now() - s) / 1000;
    log(`  ${name}: ${timings[name].toFixed(1)} s`);
    return r;
  };
  const p = (...parts: string[]) => join(out, ...parts);
  const protocol = getProtocol(AGENT);

  // The Python side first: a missing Python, mirror or package should stop the run before any work.
  log('[0/8] Python environment for TRL and transformers serve');
  const python = ensureVenv({ venv: o.venv, log });

  log(`[1/8] synthetic world (${o.entities} entities, seed ${o.seed}) and its BM25 index`);
  await stage('world + index', existsSync(p('index', 'index.json')), async () => {
    await writeWorld(p('world'), generateWorld({ seed: o.seed, entities: o.entities, questions: o.questions, mix: o.mix }));
    await buildIndex(p('world', 'corpus.jsonl'), p('index'), { quiet: true, force: true });
  });
  const questionsPath = p('world', 'questions.jsonl');
  const all = (await loadDatasetAll(questionsPath)).questions;
  const train = all.filter((q) => q.metadata?.['split'] === 'train');
  const test = all.filter((q) => q.metadata?.['split'] === o.evalSplit).slice(0, o.testQuestions ?? Infinity);
  const budgetQs = train.slice(0, o.budget);
  const retriever = await openRetriever(p('index'));
  const env = new RagEnv({ retriever, topK: o.topK, maxTurns: o.maxTurns });

  log(`[2/8] demonstrations in the ${AGENT} protocol: the oracle and the sim policy on ${train.length} training questions`);
  const demosPath = p('data', 'demonstrations.jsonl');
  const sftPath = p('data', 'sft.jsonl');
  const directPath = p('data', 'direct.jsonl');
  const warmupPath = p('data', 'warmup.jsonl');
  const quotesPath = p('data', 'quotes.jsonl');
  // Complete when both warm-up files exist (a folder from before the quote stage redoes this stage).
  await stage('demonstrations', existsSync(demosPath) && existsSync(warmupPath) && existsSync(quotesPath), async () => {
    mkdirSync(p('data'), { recursive: true });
    const rows: { messages: unknown[] }[] = [];
    for (const spec of ['oracle', 'sim']) {
      const dir = p('data', `demos-${spec}`);
      await runQuestions({ outDir: dir, env, policy: createPolicy(spec, protocol, 0.8), questions: train, seed: o.seed, config: { policy: spec, topK: o.topK, maxTurns: o.maxTurns }, quiet: true });
      const byId = new Map(train.map((q) => [q.id, q]));
      // In dataset order, not the file's completion order: the SFT data must not depend on a resume.
      for (const t of inDatasetOrder(await readTrajectories(dir), train)) {
        const q = byId.get(t.id);
        // Only episodes that end in the right answer teach the protocol (rejection sampling).
        if (q && t.steps.length > 0 && exactMatch(t.prediction, q.answers)) rows.push(trajectorySftExample(q, t.steps, AGENT));
      }
    }
    await writeJsonl(demosPath, rows);
    // The oracle and the sim policy often take the same path: in the default world 30% of the
    // successful episodes repeat another word for word. SFT trains on each distinct episode once (27%
    // fewer tokens), so a question both policies solve alike is not weighted twice. The tokenizer and
    // the base's key still read every episode (demonstrations.jsonl), so cached bases stay valid.
    const distinct = [...new Map(rows.map((r) => [JSON.stringify(r), r])).values()];
    await writeJsonl(sftPath, distinct);
    await writeJsonl(directPath, train.map((q) => directAnswerExample(q, AGENT)));
    const passages: Passage[] = [];
    for await (const passage of readCorpus(p('world', 'corpus.jsonl'))) passages.push(passage);
    const warmup = passages.map(copyExample);
    await writeJsonl(warmupPath, warmup);
    const quotes = quoteExamples(passages, { docs: o.topK, seed: o.seed });
    await writeJsonl(quotesPath, quotes); // last: with warmup.jsonl, marks the stage complete
    log(`  ${rows.length} demonstration episodes, ${distinct.length} distinct; ${train.length} question → answer examples for the baseline; ${warmup.length} warm-up copy and ${quotes.length} quote examples`);
  });

  // One random initialisation (and tokenizer) for every model of the run.
  const tiny = {
    corpus: p('world', 'corpus.jsonl'), questions: questionsPath, hidden_size: o.model.hidden, layers: o.model.layers, heads: o.model.heads,
    vocab_size: o.model.vocab, seed: o.seed, dir: p('models', 'init'), template: AGENT, extra_texts: [demosPath, directPath],
  };
  const train_ = async (name: string, config: Omit<TrlConfig, 'output_dir' | 'lora'> & { lora?: TrlConfig['lora'] }) => {
    const dir = p('models', name);
    mkdirSync(dir, { recursive: true });
    const path = join(dir, 'trl-config.json');
    writeTrlConfig({ lora: null, ...config, output_dir: dir }, path);
    const code = await runTrl(python, path);
    if (code !== 0) throw new RagtrailError(`TRL ${config.algo} training of ${name} failed (exit ${code}); its config is ${path}`);
  };
  const trained = (name: string) => existsSync(p('models', name, 'summary.json'));
  const cpu = { per_device_train_batch_size: 8, learning_rate: 3e-3, lr_scheduler_type: 'cosine', warmup_steps: 0.05, logging_steps: 5, max_length: 2048 };
  // SFT batches of similar lengths (transcripts run from one to five turns): 1.5× faster on this machine
  // (40 steps: 34 s vs 51 s). Not for the copy warm-up: its examples are alike in length, and with
  // length-grouped batches its loss ended at 0.48 instead of 0.24 after the same 2,442 steps.
  const grouped = { train_sampling_strategy: 'group_by_length' };
  // DPO and the PRM train for a few steps on few pairs: no LR warm-up (with one step, a warm-up step
  // means a learning rate of 0 and a checkpoint identical to SFT — seen at CI size).
  const fewSteps = { ...cpu, logging_steps: 1, learning_rate: 5e-4, warmup_steps: 0 };

  log(`[3/8] a tiny transformer (${o.model.layers} layers × ${o.model.hidden}, vocabulary ${o.model.vocab}) with TRL: copy and quote warm-ups, then SFT, and the no-retrieval baseline`);
  // The warm-ups are the loop's pretraining: built once per world and model, then reused from the cache.
  const baseModels = o.quoteEpochs > 0 ? ['warmup', 'quote'] : ['warmup'];
  const baseRecord = p('models', 'base.json');
  const key = baseKey([p('world', 'corpus.jsonl'), questionsPath, demosPath, directPath, warmupPath, quotesPath], { model: o.model, seed: o.seed, warmupEpochs: o.warmupEpochs, quoteEpochs: o.quoteEpochs, cpu, grouped });
  const baseRoot = o.baseCache === false ? undefined : resolve(o.baseCache ?? defaultBaseCacheDir());
  const cached = baseRoot && !baseModels.every(trained) ? findBase(baseRoot, key) : undefined;
  if (cached) {
    copyBaseInto(cached, p('models'));
    writeFileSync(baseRecord, JSON.stringify({ key, from: 'cache', seconds: cached.info.seconds } satisfies BaseUse, null, 2) + '\n');
    log(`  warm-up base ${key}: reused from ${cached.dir} (built ${cached.info.builtAt} in ${Object.values(cached.info.seconds).reduce((a, b) => a + b, 0).toFixed(0)} s)`);
  }
  await stage('copy warm-up', trained('warmup'), () =>
    train_('warmup', { algo: 'sft', model: 'tiny', tiny, data: warmupPath, trainer: { ...cpu, logging_steps: 20, num_train_epochs: o.warmupEpochs } }),
  );
  if (o.quoteEpochs > 0) {
    await stage('quote warm-up', trained('quote'), () =>
      train_('quote', { algo: 'sft', model: p('models', 'warmup'), data: quotesPath, trainer: { ...cpu, ...grouped, logging_steps: 20, num_train_epochs: o.quoteEpochs } }),
    );
  }
  if (!existsSync(baseRecord)) {
    const seconds = Object.fromEntries(['copy warm-up', 'quote warm-up'].filter((k) => timings[k] !== undefined).map((k) => [k, timings[k]!]));
    writeFileSync(baseRecord, JSON.stringify({ key, from: 'built', seconds } satisfies BaseUse, null, 2) + '\n');
    if (baseRoot) {
      storeBase(baseRoot, p('models'), { key, seconds, builtAt: new Date().toISOString(), models: baseModels } satisfies BaseInfo);
      log(`  warm-up base ${key} stored in ${baseRoot} for later runs of this world and model`);
    }
  }
  const base = JSON.parse(readFileSync(baseRecord, 'utf8')) as BaseUse;
  const warm = p('models', o.quoteEpochs > 0 ? 'quote' : 'warmup');
  await stage('SFT', trained('sft'), () => train_('sft', { algo: 'sft', model: warm, data: sftPath, trainer: { ...cpu, ...grouped, num_train_epochs: o.sftEpochs } }));
  await stage('SFT (question → answer only)', trained('direct'), () =>
    train_('direct', { algo: 'sft', model: warm, data: directPath, trainer: { ...cpu, ...grouped, num_train_epochs: o.directEpochs } }),
  );

  // Evaluation of one variant: serve its checkpoint (and PRM), run the agent over the test questions.
  const evalDir = p('eval');
  const llama = o.serve === 'llama';
  const servers = llama ? 1 : Math.max(1, o.servers ?? defaultServers());
  // Four requests in flight per server: its continuous-batching cache holds four transcripts.
  const concurrency = 4 * servers;
  const systemOf = (v: Variant, llm: string, prm?: string): SystemSpec & { name: string; resumeKey: string } => ({
    name: v.name, agent: AGENT, llm, topK: o.topK, maxTurns: o.maxTurns, maxTokens: 96, resumeKey: `${v.checkpoint}${llama ? ' (GGUF, llama.cpp)' : ''}${v.prm ? ` + ${v.prm}` : ''}`,
    ...(prm ? { select: 'prm' as const, prm, n: o.n, temperature: o.prmTemperature, prmInput: o.prmInput } : {}),
  });
  const dataset = { name: `world-${o.evalSplit}`, path: questionsPath, split: o.evalSplit, limit: o.testQuestions };
  /** `count` `transformers serve` processes of one checkpoint, started together, as one endpoint-pool spec. */
  const serveGroup = async (checkpoint: string, count: number, tag: string, services: PythonService[]): Promise<string> => {
    const name = `${checkpoint.split('/').pop()}${tag}`;
    const started = await Promise.allSettled(
      Array.from({ length: count }, (_, i) => serveModel(python, checkpoint, p('logs', `serve-${name}${count > 1 ? `-${i + 1}` : ''}.log`), { batching: true })),
    );
    const urls: string[] = [];
    for (const s of started) {
      if (s.status === 'rejected') continue;
      services.push(s.value); // stopped by the caller even when another server failed to start
      urls.push(`${s.value.url}/v1`);
    }
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    return `openai:${urls.join(',')}#${checkpoint}`;
  };
  /** Serves a checkpoint (one policy spec per group of servers; one in-process GGUF model for every group with llama) and a PRM for `f`, then stops them. */
  const withServed = async <T>(checkpoint: string, prm: string | undefined, f: (llms: string[], prm?: string) => Promise<T>, groups: { tag: string; count: number }[] = [{ tag: '', count: servers }]): Promise<T> => {
    const services: PythonService[] = [];
    try {
      let policySpecs: string[];
      if (llama) {
        // The checkpoint as GGUF beside the other models, run by node-llama-cpp in this process. The
        // name carries the weights' size and time: the spec keys the response cache, and a retrained
        // checkpoint must not be answered from its predecessor's entries.
        const weights = statSync(join(checkpoint, 'model.safetensors'));
        const gguf = p('models', 'gguf', `${checkpoint.split('/').pop()}-${weights.size.toString(36)}${Math.floor(weights.mtimeMs).toString(36)}.gguf`);
        exportGguf(python, checkpoint, gguf);
        policySpecs = groups.map(() => `llama:${gguf}`);
      } else {
        policySpecs = [];
        for (const g of groups) policySpecs.push(await serveGroup(checkpoint, g.count, g.tag, services));
      }
      let prmSpec: string | undefined;
      if (prm) {
        const s = await servePrm(python, prm, p('logs', `serve-prm.log`));
        services.push(s);
        prmSpec = s.spec;
      }
      return await f(policySpecs, prmSpec);
    } finally {
      for (const s of services) await s.stop();
    }
  };
  const evaluated = (v: Variant) => {
    const path = join(runDir(evalDir, v.name, dataset.name), 'trajectories.jsonl');
    return existsSync(path) && readFileSync(path, 'utf8').split('\n').filter(Boolean).length >= test.length;
  };
  const evaluate = (v: Variant) =>
    stage(`evaluate ${v.name}`, evaluated(v), () =>
      withServed(v.checkpoint, v.prm, ([llm], prm) => runEval({ index: p('index'), out: evalDir, datasets: [dataset], systems: [systemOf(v, llm!, prm)], seed: o.seed, concurrency })),
    );
  mkdirSync(p('logs'), { recursive: true });
  const variants: Variant[] = [
    { name: 'no retrieval (question → answer SFT)', checkpoint: p('models', 'direct') },
    { name: 'SFT', checkpoint: p('models', 'sft') },
  ];
  log(`[4/8] serving the SFT models with ${llama ? 'llama.cpp (GGUF exports)' : 'transformers serve'}; ${test.length} held-out questions each`);
  for (const v of variants) await evaluate(v);

  log(`[5/8] MCTS + SPRE annotation of ${budgetQs.length} training questions with the served SFT model (candidates at temperature ${o.mctsTemperature}, rollouts at ${o.rolloutTemperature})`);
  const annDir = p('annotate');
  // transformers serve with continuous batching samples every request at the temperature of its
  // first one, so MCTS's candidates and SPRE's rollouts, sampled at different temperatures, get
  // servers of their own (rollouts, most of the tokens, the larger group); llama.cpp honours each
  // request's temperature in one process.
  const split = !llama && o.mctsTemperature !== o.rolloutTemperature;
  const annGroups = split ? [{ tag: '-candidates', count: Math.max(1, Math.floor(servers / 2)) }, { tag: '-rollouts', count: servers }] : [{ tag: '', count: servers }];
  await stage('annotate', existsSync(join(annDir, 'stats.json')), () =>
    withServed(
      p('models', 'sft'),
      undefined,
      async (specs) => {
        const llms = await Promise.all(specs.map((spec, i) => createLLM(spec, { concurrency: 4 * annGroups[i]!.count, cacheDir: p('.cache') })));
        const model = split ? new TemperatureRoutedLLM(new Map([[o.mctsTemperature, llms[0]!], [o.rolloutTemperature, llms[1]!]])) : llms[0]!;
        const policy = new LlmPolicy(protocol, model, { maxTokens: 96 });
        try {
          await annotate({
            method: 'mcts-spre', outDir: annDir, env, policy, questions: budgetQs, concurrency,
            mcts: { ...UCT_DEFAULTS, simulations: o.simulations, rollouts: o.rollouts, maxChildren: o.children, temperature: o.mctsTemperature, rolloutTemperature: o.rolloutTemperature, seed: o.seed },
            config: { method: 'mcts-spre', agent: AGENT, policy: 'sft', simulations: o.simulations, rollouts: o.rollouts, children: o.children, temperature: o.mctsTemperature, rolloutTemperature: o.rolloutTemperature, seed: o.seed }, quiet: true,
          });
        } finally {
          await model.close?.();
        }
      },
      annGroups,
    ),
  );
  const pairs = await readJsonlValues<Record<string, unknown>>(join(annDir, 'trl_preference.jsonl'));
  log(`  ${pairs.length} step preference pairs`);
  // No pairs (every sampled step scored alike, e.g. a model that never answers right): step-DPO and the
  // PRM have nothing to learn from; they are left out of the table, and the run goes on with GRPO.
  const withPairs = pairs.length > 0;
  if (!withPairs) log(`  no pairs: step-DPO and the PRM are skipped (raise --budget, --simulations or --sft-epochs)`);

  log(`[6/8] step-DPO from the SFT checkpoint on the pairs; GRPO from the SFT checkpoint on the same ${budgetQs.length} questions (outcome reward EM from serve-env)`);
  await stage('step-DPO', trained('dpo') || !withPairs, () =>
    train_('dpo', { algo: 'dpo', model: p('models', 'sft'), data: join(annDir, 'trl_preference.jsonl'), trainer: { ...fewSteps, beta: o.dpoBeta, learning_rate: o.dpoLr, num_train_epochs: o.dpoEpochs, per_device_train_batch_size: 4 } }),
  );
  await stage('GRPO', trained('grpo'), async () => {
    const grpoData = p('data', 'grpo.jsonl');
    const initial = (q: Question): State => ({ question: q, steps: [], done: false, mustAnswer: false, turnsLeft: o.maxTurns, searchesLeft: o.maxTurns });
    await writeJsonl(grpoData, budgetQs.map((q) => ({ prompt: protocol.render(initial(q)), question_id: q.id })));
    const service = new EnvService({ env, protocol, questions: budgetQs, outcome: episodeScorer(composeScheme('em', [])), trajectoriesPath: p('models', 'grpo-episodes.jsonl') });
    await withLoopbackEnvServer(service, ({ url, token }) =>
      train_('grpo', {
        algo: 'grpo', model: p('models', 'sft'), data: grpoData, env: { url, token, protocol: AGENT },
        trainer: { learning_rate: 2e-4, max_steps: o.grpoSteps, num_generations: 4, per_device_train_batch_size: 8, max_completion_length: 1024, max_tool_calling_iterations: o.maxTurns, temperature: 1.0, beta: 0.0, logging_steps: 1 },
      }),
    );
  });

  log('[7/8] a PRM with TRL (RewardTrainer on the pairs, as state + step texts) from the SFT checkpoint');
  await stage('PRM', trained('prm') || !withPairs, async () => {
    const rows = await readJsonlValues<{ state: { question: string; steps: State['steps'] }; chosen: { raw: string }; rejected: { raw: string } }>(join(annDir, 'prm_pairs.jsonl'));
    const byQuestion = new Map(train.map((q) => [q.question, q]));
    const text = (r: (typeof rows)[number], raw: string) => {
      const q = byQuestion.get(r.state.question) ?? ({ id: '', question: r.state.question, answers: [] } as Question);
      return prmInputText({ question: q, steps: r.state.steps, done: false, mustAnswer: false, turnsLeft: 0, searchesLeft: 0 }, raw, undefined, o.prmInput);
    };
    const prmData = p('data', 'prm_text.jsonl');
    await writeJsonl(prmData, rows.map((r) => ({ chosen: text(r, r.chosen.raw), rejected: text(r, r.rejected.raw) })));
    await train_('prm', { algo: 'prm', model: p('models', 'sft'), data: prmData, trainer: { ...fewSteps, num_train_epochs: o.prmEpochs, per_device_train_batch_size: 8 } });
  });

  log('[8/8] serving and evaluating the trained variants');
  const trainedVariants: Variant[] = [
    ...(withPairs ? [{ name: 'SFT + step-DPO (process)', checkpoint: p('models', 'dpo') }] : []),
    { name: 'SFT + GRPO (outcome)', checkpoint: p('models', 'grpo') },
    ...(withPairs ? [{ name: `SFT + PRM best-of-${o.n}`, checkpoint: p('models', 'sft'), prm: p('models', 'prm') }] : []),
  ];
  for (const v of trainedVariants) await evaluate(v);

  // The combined table: every run is complete, so this only reads them (no model is called).
  const everything = [...variants, ...trainedVariants];
  const results = await runEval({
    index: p('index'), out: evalDir, datasets: [dataset], systems: everything.map((v) => systemOf(v, `openai:http://127.0.0.1:9/v1#${v.checkpoint}`, v.prm ? 'remote:vllm-pooling:http://127.0.0.1:9/pooling' : undefined)),
    baseline: 'SFT', annotation: annDir, seed: o.seed,
  });
  results.curves = trlTrainingCurves(p('models'));
  const seconds = (performance.now() - t0) / 1000;
  results.notes = [
    `The LLM loop on the synthetic world (${o.entities} entities, seed ${o.seed}; ${Object.entries(o.mix).filter(([, w]) => w > 0).map(([t]) => t).join(' and ')} questions): a ${o.model.layers}-layer, ${o.model.hidden}-wide decoder-only transformer with a ${o.model.vocab}-token BPE learned on the world, randomly initialised, trained with TRL on CPU and served with ${llama ? 'llama.cpp (node-llama-cpp, each checkpoint exported to GGUF)' : `transformers serve (${servers} process${servers === 1 ? '' : 'es'} per checkpoint)`}. ` +
      `SFT: ${o.sftEpochs} epochs on the distinct successful oracle and sim episodes of the ${train.length} training questions in the ${AGENT} protocol (top-${o.topK} documents, at most ${o.maxTurns} turns). No retrieval: the same warmed-up model trained on question → answer pairs only (${o.directEpochs} epochs). Both start from a warm-up, the stand-in for pretraining that teaches a model from random weights to copy what it has read: ${o.warmupEpochs} epochs on copy examples (each passage, then the same passage again)${o.quoteEpochs > 0 ? `, then ${o.quoteEpochs} on quote examples (${o.topK} passages as a search result, then each of their sentences quoted in random order, the format in which the demonstrations' thoughts quote their evidence)` : ''}. ` +
      `Step-DPO (β ${o.dpoBeta}, learning rate ${o.dpoLr}, ${o.dpoEpochs} epoch${o.dpoEpochs === 1 ? '' : 's'}): ${pairs.length} pairs from MCTS + SPRE trees (${o.simulations} simulations, ${o.children} steps sampled per expansion at temperature ${o.mctsTemperature}, ${o.rollouts} rollouts per node at temperature ${o.rolloutTemperature}) built by the served SFT model on ${budgetQs.length} training questions. GRPO: ${o.grpoSteps} steps (4 rollouts per question) on the same ${budgetQs.length} questions, rewards (EM) from the environment server. PRM: TRL RewardTrainer on the same pairs, reading ${o.prmInput === 'evidence' ? 'each step\'s text and the documents found' : 'a summary of each step'}; best-of-${o.n} samples ${o.n} steps at temperature ${o.prmTemperature} and executes the well-formed one the PRM scores highest. Significance is against SFT (paired t-test and bootstrap).`,
    `Wall time of this invocation ${seconds.toFixed(0)} s${Object.keys(timings).length ? `: ${Object.entries(timings).map(([k, v]) => `${k} ${v.toFixed(0)} s`).join(', ')}` : ''}. ${baseNote(base)}`,
  ];
  writeFileSync(join(evalDir, 'results.json'), JSON.stringify(results, null, 2) + '\n');
  writeFileSync(p('results.json'), JSON.stringify({ seconds, timings, base, ...results }, null, 2) + '\n');
  writeReport(out, results);
  await retriever.close?.();
  return { results, seconds, timings, base, report: p('report.html') };
}

/** One sentence on the warm-up base: reused (and what building it once cost) or built by this run. */
function baseNote(base: BaseUse): string {
  const built = Object.values(base.seconds).reduce((a, b) => a + b, 0);
  return base.from === 'cache'
    ? `The warm-up base (${base.key}) came from the base cache; building it once took ${built.toFixed(0)} s, not counted in this invocation.`
    : `The warm-up base (${base.key}) was built by this run${built > 0 ? ` (${built.toFixed(0)} s of the time above)` : ''}.`;
}

/** Loss (and GRPO reward) curves from each TRL run's log_history.jsonl (exported for the report's render test). */
export function trlTrainingCurves(models: string): Curve[] {
  const read = (name: string) => {
    const path = join(models, name, 'log_history.jsonl');
    if (!existsSync(path)) return [];
    return readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, number>);
  };
  const chance = { y: 0.5, label: 'chance' };
  const series = (name: string, key: string) => ({ name, points: read(name).filter((r) => typeof r[key] === 'number' && r['step'] !== undefined && !('train_runtime' in r)).map((r) => ({ x: r['step']!, y: r[key]! })) });
  return [
    { title: 'Warm-up and SFT (TRL SFTTrainer): loss on the assistant tokens', xLabel: 'step', yLabel: 'loss', series: [series('warmup', 'loss'), series('sft', 'loss'), series('direct', 'loss')], yMin: 0 },
    // A loss and an accuracy do not share a unit: each gets its own chart and axis.
    { title: 'Step-DPO (TRL DPOTrainer): loss', xLabel: 'step', yLabel: 'DPO loss', series: [{ ...series('dpo', 'loss'), name: 'dpo loss' }], yMin: 0 },
    { title: 'Step-DPO (TRL DPOTrainer): reward accuracy (chosen step rewarded higher)', xLabel: 'step', yLabel: 'reward accuracy', series: [{ ...series('dpo', 'rewards/accuracies'), name: 'dpo reward accuracy' }], yMin: 0, yMax: 1, refLine: chance },
    { title: 'GRPO (TRL GRPOTrainer): mean episode reward (EM)', xLabel: 'step', yLabel: 'reward', series: [series('grpo', 'reward')], yMin: 0, trend: trendWindow(series('grpo', 'reward').points.length) },
    { title: 'PRM (TRL RewardTrainer): loss', xLabel: 'step', yLabel: 'PRM loss', series: [{ ...series('prm', 'loss'), name: 'prm loss' }], yMin: 0 },
    { title: 'PRM (TRL RewardTrainer): pair accuracy', xLabel: 'step', yLabel: 'pair accuracy', series: [{ ...series('prm', 'accuracy'), name: 'prm pair accuracy' }], yMin: 0, yMax: 1, refLine: chance },
  ].map((c): Curve => ({ ...c, series: c.series.filter((s) => s.points.length > 0) })).filter((c) => c.series.length > 0);
}
