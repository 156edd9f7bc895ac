/**
 * `ragtrail pipeline --llm SPEC`: a recipe with a served language model as the policy. Annotation and
 * the PRM run here with the model; every training stage goes to TRL through a config file
 * (learn/trl.ts) whose command is printed. The configs start from `--trl-model` (default: the recipe's
 * paper model). When that is a local checkpoint folder (e.g. the LLM loop's tiny model) the commands
 * run here for real, each checkpoint is served with `transformers serve` when a later stage or the
 * evaluation needs its policy, and GRPO-style stages get ragtrail's environment server in-process.
 * Otherwise (a hub id such as Qwen/Qwen2.5-7B-Instruct: a GPU job) the configs are written and
 * printed, and stages that need the trained policy are skipped with a note.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { LlmPolicy } from '../agents/policy.js';
import { RagtrailError } from '../core/errors.js';
import { readJsonlValues, writeJsonl } from '../core/io.js';
import type { State } from '../env/env.js';
import { EnvService } from '../learn/serve/env-service.js';
import { withLoopbackEnvServer } from '../learn/serve/serve-env.js';
import { rlDefaults, type RlAlgo } from '../learn/gym/train.js';
import { type PythonService, serveModel, servePrm } from '../learn/python-service.js';
import { defaultVenv, ensureVenv, runTrl, type TrlConfig, trlCommand, writeTrlConfig } from '../learn/trl.js';
import { trlStageSettings } from '../learn/trl-settings.js';
import { createLLM, type LLMOptions } from '../llm/create.js';
import type { MeteredLLM } from '../llm/middleware.js';
import { createPrm } from '../prm/select.js';
import { evaluatePrm } from '../prm/trained.js';
import { writeTrlPrmData } from '../learn/trl-prm.js';
import { episodeScorer } from '../rewards/apply.js';
import { composeScheme } from '../rewards/schemes.js';
import type { Stage } from './recipe.js';
import { rftRows } from './rft-llm.js';
import { annotateStage, demonstrate, noPreferencePairs, prmSpec, prmStage, type Seed, stageQuestions, tooFewForPrm } from './stages.js';

export interface LlmEngineOptions {
  /** The served policy (an LLM spec: openai:URL#MODEL, llama:PATH). */
  llm: string;
  llmOptions?: LLMOptions;
  /** The weights TRL trains from (default: the recipe's `trl.model`). A local folder runs TRL here. */
  trlModel?: string;
  /** The TRL virtual environment (default $RAGTRAIL_VENV or ~/.cache/ragtrail/trl-venv). */
  venv?: string;
  /** Optimiser steps of each TRL run made here (default 8: a smoke-sized run of the tiny model). */
  maxSteps?: number;
  /** Completion budget of each call of the served model (default: the protocol's). */
  maxTokens?: number;
  out: string;
  log: (line: string) => void;
}

/** A trained stage's checkpoint: its folder, and whether TRL ran (false: config written only). */
interface Checkpoint {
  dir: string;
  ran: boolean;
}

export class LlmEngine {
  private base?: MeteredLLM;
  private python?: string;
  private readonly served = new Map<string, PythonService & { spec: string }>();

  constructor(private readonly o: LlmEngineOptions) {}

  /** What the stage keys depend on. */
  key(): Record<string, unknown> {
    return { engine: 'trl', llm: this.o.llm, trlModel: this.o.trlModel ?? null, maxSteps: this.o.maxSteps ?? 8, ...(this.o.maxTokens !== undefined ? { maxTokens: this.o.maxTokens } : {}) };
  }

  private trlModel(ctx: Seed): string {
    const m = this.o.trlModel ?? ctx.recipe.trl?.model;
    if (!m) throw new RagtrailError(`recipe ${ctx.recipe.name} names no model for TRL (trl.model)`, 'pass --trl-model PATH|HUB_ID');
    return m;
  }

  /** TRL runs here only from a local checkpoint folder; a hub model id means a GPU job elsewhere. */
  private runsHere(ctx: Seed): boolean {
    const m = this.trlModel(ctx);
    return existsSync(m) && statSync(m).isDirectory();
  }

  private pythonPath(): string {
    this.python ??= ensureVenv({ venv: this.o.venv, log: this.o.log });
    return this.python;
  }

  private checkpoint(ctx: Seed, id: string): Checkpoint | undefined {
    if (id === 'base') return { dir: this.trlModel(ctx), ran: this.runsHere(ctx) };
    const dir = join(ctx.dir, id, 'model');
    if (existsSync(join(dir, 'summary.json'))) return { dir, ran: true };
    return existsSync(join(ctx.dir, id, 'trl-config.json')) ? { dir, ran: false } : undefined;
  }

  private async baseLlm(): Promise<MeteredLLM> {
    this.base ??= await createLLM(this.o.llm, { cacheDir: join(this.o.out, '.cache'), ...this.o.llmOptions });
    return this.base;
  }

  /** A policy's LLM spec: the served model for base, a served checkpoint for a trained stage. */
  private async policySpec(ctx: Seed, id: string): Promise<string | undefined> {
    if (id === 'base') return this.o.llm;
    const ck = this.checkpoint(ctx, id);
    if (!ck?.ran) return undefined;
    let svc = this.served.get(ck.dir);
    if (!svc) {
      this.o.log(`  serving ${ck.dir} with transformers serve`);
      svc = await serveModel(this.pythonPath(), ck.dir, join(ctx.dir, id, 'serve.log'));
      this.served.set(ck.dir, svc);
    }
    return svc.spec;
  }

  /** The evaluation's policy of a system, or undefined when its checkpoint was not trained here. */
  async systemPolicy(ctx: Seed, id: string): Promise<{ llm: string; resumeKey?: string; maxTokens?: number } | undefined> {
    const spec = await this.policySpec(ctx, id);
    if (spec === undefined) return undefined;
    const budget = this.o.maxTokens !== undefined ? { maxTokens: this.o.maxTokens } : {};
    // A served checkpoint's URL changes between invocations: the checkpoint folder identifies the run.
    return id === 'base' ? { llm: spec, ...budget } : { llm: spec, resumeKey: this.checkpoint(ctx, id)!.dir, ...budget };
  }

  /** A served model: the base one (shared, metered) or another checkpoint's, cached under OUT/.cache. */
  private async servedLlm(spec: string): Promise<MeteredLLM> {
    return spec === this.o.llm ? this.baseLlm() : createLLM(spec, { cacheDir: join(this.o.out, '.cache') });
  }

  /** The recipe's `trl.stages.<id>` block (the paper's settings), looked up as an own key only (an id such as "constructor" names no stage). */
  private paperBlock(ctx: Seed, id: string): Record<string, unknown> | undefined {
    const blocks = ctx.recipe.trl?.stages;
    return blocks && Object.hasOwn(blocks, id) ? blocks[id] : undefined;
  }

  /** Runs made here are smoke-sized (the tiny model on a CPU); the paper's settings stay as written for GPU runs. */
  private smokeSettings(here: boolean): Record<string, unknown> {
    return here ? { max_steps: this.o.maxSteps ?? 8, per_device_train_batch_size: 4, logging_steps: 1, bf16: false, warmup_steps: 0 } : {};
  }

  /** The protocol's policy on a served model, with --max-tokens when given. */
  private llmPolicy(ctx: Seed, llm: MeteredLLM): LlmPolicy {
    return new LlmPolicy(ctx.protocol, llm, this.o.maxTokens !== undefined ? { maxTokens: this.o.maxTokens } : {});
  }

  async runStage(ctx: Seed, stage: Stage, dir: string): Promise<Record<string, unknown>> {
    switch (stage.kind) {
      case 'demonstrate':
        return demonstrate(ctx, stage, dir);
      case 'annotate': {
        if (!this.checkpoint(ctx, stage.policy)) return { skipped: `${stage.policy} was skipped` };
        const spec = await this.policySpec(ctx, stage.policy);
        if (!spec) return { skipped: `the policy ${stage.policy} is a TRL config not trained here: run its command, serve the weights, and pass them with --llm` };
        const policy = this.llmPolicy(ctx, await this.servedLlm(spec));
        return annotateStage(ctx, stage, dir, policy);
      }
      case 'prm': {
        if (stage.source === 'gold') return prmStage(ctx, stage, dir);
        const pairs = join(ctx.dir, stage.data!, 'prm_pairs.jsonl');
        if (!existsSync(pairs)) return { skipped: `${stage.data} was skipped` };
        const tooFew = tooFewForPrm(stage.data!, await readJsonlValues<{ id: string }>(pairs));
        if (tooFew) return { skipped: tooFew };
        // With the recipe's trl.stages.<id> block the PRM is an LLM trained through TRL (the papers'); else the lexical head.
        const paper = this.paperBlock(ctx, stage.id);
        return paper ? this.llmPrm(ctx, stage, dir, pairs, paper) : prmStage(ctx, stage, dir);
      }
      case 'train':
        return this.train(ctx, stage, dir);
    }
  }

  /**
   * RAG-Gym's and ProRAG's PRM on an LLM: TRL's RewardTrainer (a one-output head, Bradley-Terry on the
   * pairs) from the base checkpoint, on each pair's state and step as the remote PRM writes them
   * (prm/remote.ts prmInputText), with the same question-level hold-out as the lexical head. Trained
   * here, it is served (python/ragtrail_trl/serve_prm.py) for RFT's filter, the dual advantage and
   * best-of-N, and its held-out pair accuracy is measured through that server.
   */
  private async llmPrm(ctx: Seed, stage: Extract<Stage, { kind: 'prm' }>, dir: string, pairsPath: string, paper: Record<string, unknown>): Promise<Record<string, unknown>> {
    const { data, pairs, heldOut } = await writeTrlPrmData(pairsPath, dir, ctx.seed);
    const base = this.checkpoint(ctx, 'base')!;
    const small = this.smokeSettings(base.ran);
    await this.writeTrl(stage.id, dir, 'model', { algo: 'prm', model: base.dir, data, lora: ctx.recipe.trl?.lora ?? null, trainer: { ...paper, ...small } }, base.ran);
    if (!base.ran) return { configs: dir, pairs, heldOut: heldOut.length, note: 'TRL PRM config written; run the printed command on a GPU machine' };
    const held = await evaluatePrm(await createPrm((await this.prmSpecOf(ctx, stage.id))!), heldOut);
    return { trained: join(dir, 'model'), pairs, heldOut: heldOut.length, heldOutAccuracy: heldOut.length ? held.accuracy : null };
  }

  /**
   * Writes a TRL config (DIR/trl-config.json for NAME "model", else DIR/trl-config-NAME.json; weights to
   * DIR/NAME) and logs its command; runs it when the checkpoint is here. Resolves with the exit code: 0,
   * or 3 when DAPO's dynamic sampling found no group whose rewards differ (python/ragtrail_trl/train.py);
   * undefined when only written. Any other code is an error.
   */
  private async writeTrl(stageId: string, dir: string, name: string, config: Omit<TrlConfig, 'output_dir'>, here: boolean): Promise<number | undefined> {
    const out = join(dir, name);
    mkdirSync(out, { recursive: true });
    const path = join(dir, name === 'model' ? 'trl-config.json' : `trl-config-${name}.json`);
    writeTrlConfig({ ...config, output_dir: out }, path);
    this.o.log(`  ${trlCommand(here ? this.pythonPath() : join(defaultVenv(), 'bin', 'python'), path).line}`);
    if (!here) return undefined;
    const code = await runTrl(this.pythonPath(), path);
    if (code !== 0 && code !== 3) throw new RagtrailError(`TRL ${config.algo} for stage ${stageId} failed (exit ${code}); its config is ${path}`);
    return code;
  }

  /** Whether a PRM stage left a PRM to use: the gold diagnostic, a trained file, or a TRL model trained here. */
  private prmReady(ctx: Seed, id: string): boolean {
    return prmSpec(ctx, id) === 'gold' || existsSync(join(ctx.dir, id, 'prm.json')) || existsSync(join(ctx.dir, id, 'model', 'summary.json'));
  }

  /** A PRM stage's spec: its served TRL model when one was trained here, else the stages' own (file or gold). */
  async prmSpecOf(ctx: Seed, id: string): Promise<string | undefined> {
    const model = join(ctx.dir, id, 'model');
    if (!existsSync(join(model, 'summary.json'))) return prmSpec(ctx, id);
    let svc = this.served.get(model);
    if (!svc) {
      this.o.log(`  serving the PRM ${model}`);
      svc = await servePrm(this.pythonPath(), model, join(ctx.dir, id, 'serve.log'));
      this.served.set(model, svc);
    }
    return svc.spec;
  }

  private async train(ctx: Seed, stage: Extract<Stage, { kind: 'train' }>, dir: string): Promise<Record<string, unknown>> {
    const from = this.checkpoint(ctx, stage.from);
    if (!from) return { skipped: `${stage.from} was skipped` };
    if (stage.prm && !this.prmReady(ctx, stage.prm)) return { skipped: `the PRM ${stage.prm} was skipped or not trained here` };
    const paper = this.paperBlock(ctx, stage.id) ?? {};
    // Every gym setting of the stage reaches TRL or is refused here (learn/trl-settings.ts); the trl block wins ties.
    const mapped = trlStageSettings(stage, paper);
    for (const note of mapped.notes) this.o.log(`  ${note}`);
    const here = from.ran;
    const small = this.smokeSettings(here);
    let noSignal = false;
    const write = async (name: string, config: Omit<TrlConfig, 'output_dir' | 'lora'>) => {
      // Top-level fields (kl_estimator, dual_weight, control_token_weight, …) sit beside the trainer's.
      if ((await this.writeTrl(stage.id, dir, name, { lora: ctx.recipe.trl?.lora ?? null, ...mapped.top, ...config }, here)) === 3) noSignal = true;
    };
    const trainer = { ...mapped.trainer, ...small };
    const dataOf = (file: string) => join(ctx.dir, stage.data!, file);
    if (stage.data && !existsSync(join(ctx.dir, stage.data, stage.algo === 'dpo' ? 'trl_preference.jsonl' : 'trl_sft.jsonl'))) return { skipped: `${stage.data} was skipped` };
    switch (stage.algo) {
      case 'sft':
        await write('model', { algo: 'sft', model: from.dir, data: dataOf('trl_sft.jsonl'), trainer });
        break;
      case 'dpo':
        if ((await readJsonlValues(dataOf('trl_preference.jsonl'))).length === 0) return { skipped: noPreferencePairs(stage.data!) };
        await write('model', { algo: 'dpo', model: from.dir, data: dataOf('trl_preference.jsonl'), trainer });
        break;
      case 'rft': {
        // ProRAG §3.3 on the LLM: K episodes per question from the served `from` checkpoint, the
        // correct ones' steps that the PRM passes, then TRL's SFT on them from the same checkpoint.
        if (!stage.prm) throw new RagtrailError(`stage ${stage.id}: rft needs prm: (the PRM stage whose scores filter the steps)`);
        const spec = await this.policySpec(ctx, stage.from);
        if (!spec) return { skipped: `rft samples from ${stage.from}'s served weights: that stage wrote a TRL config but did not train here` };
        const llm = await this.servedLlm(spec);
        const prm = await createPrm((await this.prmSpecOf(ctx, stage.prm))!);
        const selected = await rftRows(ctx.env, this.llmPolicy(ctx, llm), stageQuestions(ctx, stage.questions), prm, { ...mapped.rft, seed: ctx.seed });
        await writeJsonl(join(dir, 'rft-verdicts.jsonl'), selected.verdicts);
        if (selected.rows.length === 0) return { skipped: `no step passed: ${selected.counts.correct} of ${selected.counts.sampled} sampled episodes were correct`, ...selected.counts };
        await writeJsonl(join(dir, 'trl_sft.jsonl'), selected.rows);
        await write('model', { algo: 'sft', model: from.dir, data: join(dir, 'trl_sft.jsonl'), trainer });
        return { ...(here ? { trained: join(dir, 'model') } : { configs: dir }), ...selected.counts };
      }
      default: {
        const algo = stage.algo as RlAlgo;
        const defaults = rlDefaults(algo);
        const reward = mapped.reward ?? defaults.reward;
        const options = mapped.rewardOptions ?? [];
        const questions = stageQuestions(ctx, stage.questions);
        const data = join(dir, 'questions.jsonl');
        const initial = (q: (typeof questions)[number]): State => ({ question: q, steps: [], done: false, mustAnswer: false, turnsLeft: ctx.env.config.maxTurns, searchesLeft: ctx.env.maxSearches });
        await writeJsonl(data, questions.map((q) => ({ prompt: ctx.protocol.render(initial(q)), question_id: q.id })));
        const prm = stage.prm ? await createPrm((await this.prmSpecOf(ctx, stage.prm))!) : undefined;
        // LWS is one run whose rollouts move from a stage-1 server to a stage-2 server when the switch
        // rule fires (python/ragtrail_trl/dapo.py StageSwitch): a share of the steps, a step, or a plateau.
        const steps = here ? { max_steps: Math.max(1, this.o.maxSteps ?? 8) } : {};
        const lws = algo === 'lws' ? { stage_switch: mapped.top.stage_switch ?? { share: defaults.stageSwitch } } : {};
        const config = (env: { url: string; token: string | null }, stage2?: { url: string; token: string | null }) => ({
          algo, model: from.dir, data, ...lws, ...(stage2 ? { env_stage2: stage2 } : {}),
          // The model writes the recipe's protocol; the environment server parses it (rollout.py).
          env: { ...env, protocol: ctx.protocol.name },
          trainer: { ...trainer, ...steps, ...(here ? { num_generations: 4, max_completion_length: 512, max_tool_calling_iterations: ctx.env.config.maxTurns } : {}) },
        });
        if (!here) {
          // Written for a GPU machine: its environment servers are `ragtrail serve-env` started there.
          await write('model', config({ url: 'http://127.0.0.1:PORT', token: null }, algo === 'lws' ? { url: 'http://127.0.0.1:PORT2', token: null } : undefined));
        } else {
          const serve = (name: string, scheme: string) => new EnvService({ env: ctx.env, protocol: ctx.protocol, questions, outcome: episodeScorer(composeScheme(scheme, options)), prm, trajectoriesPath: join(dir, `${name}-episodes.jsonl`) });
          const service = serve(algo === 'lws' ? 'stage1' : 'model', reward);
          const service2 = algo === 'lws' ? serve('stage2', defaults.stage2Reward!) : undefined;
          try {
            await withLoopbackEnvServer(service, (env) => (service2 ? withLoopbackEnvServer(service2, (env2) => write('model', config(env, env2))) : write('model', config(env))));
          } finally {
            service.dispose();
            service2?.dispose();
          }
        }
      }
    }
    if (noSignal) return { skipped: `no learning signal: every group's rewards were equal in each of DAPO's dynamic-sampling rounds (the policy never or always succeeds on these questions)` };
    return here ? { trained: join(dir, 'model') } : { configs: dir, note: 'TRL configs written; run the printed commands on a GPU machine' };
  }

  async close(): Promise<void> {
    for (const svc of this.served.values()) await svc.stop();
    this.served.clear();
    await this.base?.close();
  }
}
