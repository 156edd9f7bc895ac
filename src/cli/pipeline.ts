import { availableParallelism } from 'node:os';
import type { Command } from 'commander';
import { InputError } from '../core/errors.js';
import { runPipeline } from '../pipelines/pipeline.js';
import { loadRecipe, RECIPE_NAMES } from '../pipelines/recipe.js';
import { protocolNames } from '../agents/registry.js';
import { LLM_SPEC_HELP } from '../llm/create.js';
import { choiceArg, intArg } from './options.js';

interface PipelineOpts {
  recipe: string;
  out?: string;
  seeds?: string;
  entities?: number;
  trainQuestions?: number;
  teacher?: string;
  maxTokens?: number;
  testQuestions?: number;
  agent?: string;
  llm?: string;
  apiKey?: string;
  trlModel?: string;
  venv?: string;
  trlMaxSteps?: number;
  engine?: 'gym' | 'trl';
  jobs?: number;
}

export function seedList(v: string): number[] {
  const seeds = v.split(',').map((x) => x.trim());
  if (seeds.some((x) => !/^\d+$/.test(x))) throw new InputError(`--seeds "${v}" is not a list of seeds`, 'e.g. --seeds 0,1,2');
  return seeds.map(Number);
}

export function registerPipeline(program: Command): void {
  program
    .command('pipeline')
    .description(`run a paper's whole pipeline as its recipe: world and index, every stage in the paper's order, the evaluation, and the paper's claim tested over seeds (${RECIPE_NAMES.join(', ')}, or a YAML file)`)
    .requiredOption('--recipe <name|file>', `a recipe: ${RECIPE_NAMES.join(', ')} (recipes/NAME.yaml), or the path of your own YAML file`)
    .option('--out <dir>', 'output folder (default: pipeline-NAME); a rerun keeps every finished stage')
    .option('--seeds <list>', "seeds to run, e.g. 0,1,2 (default: the recipe's)")
    .option('--entities <n>', "entities of the synthetic world (default: the recipe's)", intArg(200, 10_000_000))
    .option('--train-questions <n>', "training questions (default: the recipe's)", intArg(1))
    .option('--test-questions <n>', "held-out test questions evaluated (default: the recipe's, else the whole test split)", intArg(1))
    .option('--jobs <n>', 'seeds run at once, each in its own process (default: the number of cores; 1 with --llm, whose seeds share the served model); --jobs 1 runs them one after another in this process. The results are the same either way', intArg(1, 1024))
    .option('--agent <name>', `the protocol (default: the recipe's); with --llm, the one your model speaks: ${protocolNames().join(', ')}`, choiceArg(protocolNames))
    .option('--engine <e>', 'gym (the TypeScript gym policy, offline; the default without --llm) or trl (the served --llm model, training through TRL; the default with it)', choiceArg(['gym', 'trl'] as const))
    .option('--llm <spec>', `the policy is this served model; training stages go to TRL (configs written and printed, run here when --trl-model is a local folder): ${LLM_SPEC_HELP}`)
    .option('--api-key <key>', 'API key for --llm (default: $OPENAI_API_KEY)')
    .option('--trl-model <path|id>', "--llm: the weights TRL trains from (default: the recipe's paper model; a local checkpoint folder runs TRL here)")
    .option('--venv <dir>', '--llm: the TRL Python environment (default $RAGTRAIL_VENV or ~/.cache/ragtrail/trl-venv)')
    .option('--teacher <spec>', "the teacher of every demonstrate stage (ProRAG's and RAG-Gym's warm-up data): sim, oracle, or a served model's LLM spec (default: the recipe's)")
    .option('--max-tokens <n>', "--llm: completion budget of each call of the served model (default: the protocol's)", intArg(1))
    .option('--trl-max-steps <n>', '--llm with a local --trl-model: optimiser steps of each TRL run made here', intArg(1), 8)
    .action(async (opts: PipelineOpts) => {
      const loaded = loadRecipe(opts.recipe);
      const { path } = loaded;
      let recipe = opts.agent ? { ...loaded.recipe, agent: opts.agent as typeof loaded.recipe.agent } : loaded.recipe;
      if (opts.teacher) {
        const teacher = opts.teacher;
        if (!recipe.stages.some((s) => s.kind === 'demonstrate')) throw new InputError(`--teacher: recipe ${recipe.name} has no demonstrate stage`, 'drop --teacher');
        recipe = { ...recipe, stages: recipe.stages.map((s) => (s.kind === 'demonstrate' ? { ...s, teacher } : s)) };
      }
      if (!opts.llm && (opts.trlModel || opts.venv || opts.maxTokens)) throw new InputError('--trl-model, --venv and --max-tokens belong to --llm runs', 'add --llm SPEC (the served model), or drop them for the offline gym run');
      if (opts.engine === 'trl' && !opts.llm) throw new InputError('--engine trl trains a served model', 'add --llm SPEC (e.g. openai:http://127.0.0.1:8000/v1#MODEL) and --trl-model PATH|HUB_ID');
      if (opts.engine === 'gym' && opts.llm) throw new InputError('--engine gym trains the gym policy, not --llm', 'drop --llm for the offline run, or use --engine trl');
      const r = await runPipeline({
        recipe, recipePath: path, out: opts.out ?? `pipeline-${recipe.name}`,
        ...(opts.seeds !== undefined && { seeds: seedList(opts.seeds) }),
        ...(opts.entities !== undefined && { entities: opts.entities }),
        ...(opts.trainQuestions !== undefined && { trainQuestions: opts.trainQuestions }),
        ...(opts.testQuestions !== undefined && { testQuestions: opts.testQuestions }),
        jobs: opts.jobs ?? (opts.llm ? 1 : availableParallelism()),
        ...(opts.llm && { llm: { llm: opts.llm, llmOptions: { apiKey: opts.apiKey }, trlModel: opts.trlModel, venv: opts.venv, maxSteps: opts.trlMaxSteps, maxTokens: opts.maxTokens } }),
      });
      console.log('');
      for (const c of r.claims) console.log(`${c.holds ? 'holds' : 'does not hold'}: ${c.claim} — ${c.metric} Δ ${c.delta.toFixed(3)} [${c.ci[0].toFixed(3)}, ${c.ci[1].toFixed(3)}], p ${c.p.toFixed(3)}, n ${c.n}`);
      if (!opts.llm) console.log(`note: the policies are the gym policy, a small non-LLM model over generated candidate actions; the claims are tested on the synthetic world, not with a language model`);
      console.log(`done in ${r.seconds.toFixed(0)} s; results: ${opts.out ?? `pipeline-${recipe.name}`}/results.json, results.md, report.html`);
    });
}
