/**
 * A recipe: one paper's pipeline as data — the stages in the paper's order with the paper's settings,
 * the systems evaluated at the end, and the claim those systems test. Recipes are YAML files
 * (`recipes/*.yaml`, so they carry comments: the real run's models and GPU batch sizes) validated here;
 * `ragtrail pipeline --recipe NAME|FILE` runs one (pipelines/pipeline.ts).
 *
 * Stage ids name each stage's output; later stages refer to earlier ones by id (`from`, `data`,
 * `prm`, `policy`). `base` is the untrained gym policy (offline) or the served model (`--llm`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { InputError } from '../core/errors.js';
import { protocolNames, protocols } from '../agents/registry.js';
import { WORLD_PROFILES } from '../corpus/world/profiles.js';

/** recipes/ of the installed package (src/pipelines → ../../recipes, and the same from dist/pipelines). */
export const RECIPES_DIR = resolve(fileURLToPath(new URL('../../recipes', import.meta.url)));
export const RECIPE_NAMES = ['reasonrag', 'rag-gym', 'lws', 'prorag', 'arena', 'comparison'] as const;

const id = z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'must be lower-case letters, digits and dashes');
const setting = z.union([z.number(), z.string(), z.boolean(), z.array(z.string())]);
const settings = z.record(z.string(), setting).default({});

/** Demonstrations from a teacher policy's correct episodes (ProRAG's and RAG-Gym's warm-up data). */
const demonstrateStage = z
  .object({ kind: z.literal('demonstrate'), id, teacher: z.string().default('sim'), competence: z.number().min(0).max(1).default(0.7), questions: z.number().int().positive().optional() })
  .strict();
const annotateStage = z
  .object({
    kind: z.literal('annotate'),
    id,
    method: z.enum(['mcts-spre', 'mcts-judge', 'mcts-puct', 'rank']),
    /** Whose steps are annotated: base or a train stage (RAG-Gym: the policy being improved). */
    policy: z.string().default('base'),
    questions: z.number().int().positive().optional(),
    /** MCTS options (simulations, maxChildren, c, rollouts, alpha, temperature, prior, …). */
    mcts: settings,
    /** Ranking options (candidates, source, rollouts, rolloutValue, temperature). */
    rank: settings,
    values: z.enum(['bottom-up', 'running-mean']).optional(),
    /** How PRM pairs are labelled: the Q gap of siblings or a judge comparing them (ProRAG). */
    pairs: z.enum(['q-gap', 'judge']).optional(),
    /**
     * The offline judge of `pairs: judge`: q-rule (default; the unique highest Q against the lowest) or
     * plan (reads the question's gold plan, grounded answers: process/sibling-judge.ts PlanJudge).
     */
    judge: z.enum(['q-rule', 'plan']).optional(),
    /** Q-gap pairs: the smallest value gap between siblings kept as a pair (default 0.01). */
    minGap: z.number().min(0).max(1).optional(),
    /**
     * An earlier annotate stage whose trees this stage mines with its own pair settings (minGap, values,
     * pairs) instead of searching again; its method, policy, questions and search settings are that stage's.
     */
    trees: z.string().optional(),
  })
  .strict();
const trainStage = z
  .object({
    kind: z.literal('train'),
    id,
    algo: z.enum(['sft', 'dpo', 'grpo', 'dapo', 'lws', 'prorag', 'rft']),
    /** The policy training starts from: base or an earlier train stage. */
    from: z.string().default('base'),
    /** sft / dpo: the annotate or demonstrate stage whose data is trained on. */
    data: z.string().optional(),
    /** prorag / rft: the prm stage. */
    prm: z.string().optional(),
    /** RL and RFT: training questions (default: the recipe's trainQuestions). */
    questions: z.number().int().positive().optional(),
    /** Fields of the trainer's config (learn/gym/train.ts OfflineConfig / RlConfig), e.g. beta, epochs, kl. */
    settings,
  })
  .strict();
/** A PRM: trained on an annotation's pairs, or the gold PRM (prm/gold.ts), a diagnostic upper bound. */
const prmStage = z.object({ kind: z.literal('prm'), id, data: z.string().optional(), source: z.enum(['trained', 'gold']).default('trained'), settings }).strict();

export const stageSchema = z.discriminatedUnion('kind', [demonstrateStage, annotateStage, trainStage, prmStage]);
export type Stage = z.infer<typeof stageSchema>;

const systemSchema = z
  .object({
    name: z.string().min(1),
    /** base or a train stage id. */
    policy: z.string().default('base'),
    select: z.enum(['greedy', 'prm']).default('greedy'),
    /** select prm: the prm stage id. */
    prm: z.string().optional(),
    n: z.number().int().positive().optional(),
    temperature: z.number().min(0).max(10).optional(),
    /** One sentence on what the row is, shown above the report's tables. */
    about: z.string().optional(),
  })
  .strict();

export const METRICS = ['em', 'f1', 'rc', 'citation_precision'] as const;
export type ClaimMetric = (typeof METRICS)[number];

const claimSchema = z
  .object({
    claim: z.string().min(1),
    metric: z.enum(METRICS),
    treatment: z.string(),
    control: z.string(),
    /** higher / lower: a significant difference that way (p < alpha); not-lower: the CI's low end above −margin. */
    expect: z.enum(['higher', 'lower', 'not-lower']).default('higher'),
    margin: z.number().min(0).default(0.02),
  })
  .strict();

export const recipeSchema = z
  .object({
    name: id,
    paper: z.string().min(1),
    /** One paragraph: what the pipeline does and how the offline run stands in for the paper's. */
    description: z.string().min(1),
    agent: z.string().refine((a) => protocols.has(a), { error: () => `unknown agent; choose one of ${protocolNames().join(', ')}` }),
    world: z
      .object({ entities: z.number().int().min(100).default(10_000), questions: z.number().int().positive().optional(), profile: z.enum(WORLD_PROFILES).default('basic') })
      .strict()
      .default({ entities: 10_000, profile: 'basic' }),
    /**
     * The gym's base policy, warm-started as the papers' policies are (an instruction-tuned or warmed-up
     * LLM): SFT on a teacher's correct episodes on `questions` training-split questions after the
     * recipe's own. Left out: the untrained policy (all weights zero, uniform over the candidates).
     * With --llm the base is the served model and this is not used.
     */
    base: z
      .object({
        /** gym-teacher (the gold-plan teacher over the gym's candidates), sim, oracle, or an LLM spec. */
        teacher: z.string().default('gym-teacher'),
        competence: z.number().min(0).max(1).default(0.8),
        questions: z.number().int().positive().default(400),
        /** The score model of the gym policy: linear, or an MLP with `hidden` units (prm/model.ts). */
        model: z.enum(['linear', 'mlp']).default('linear'),
        hidden: z.number().int().positive().default(16),
        settings,
      })
      .strict()
      .optional(),
    seeds: z.array(z.number().int().min(0)).min(1).default([0, 1, 2]),
    trainQuestions: z.number().int().positive().default(200),
    testQuestions: z.number().int().positive().optional(),
    /** The top-k and step budget of the environment (default: the protocol's). */
    env: z.object({ topK: z.number().int().positive().optional(), maxTurns: z.number().int().positive().optional(), maxSearches: z.number().int().min(0).optional() }).strict().default({}),
    stages: z.array(stageSchema).min(1),
    evaluate: z.object({ systems: z.array(systemSchema).min(1) }).strict(),
    claims: z.array(claimSchema).default([]),
    /** The paper's real run, for `--llm`: the TRL configs written per train stage (model, LoRA, trainer fields). */
    trl: z
      .object({
        model: z.string(),
        lora: z.object({ r: z.number().int().positive(), alpha: z.number().positive(), dropout: z.number().min(0).max(1), target_modules: z.union([z.string(), z.array(z.string())]) }).strict().nullable().default(null),
        stages: z.record(z.string(), z.record(z.string(), setting)).default({}),
      })
      .strict()
      .optional(),
  })
  .strict();
export type Recipe = z.infer<typeof recipeSchema>;
export type RecipeSystem = Recipe['evaluate']['systems'][number];
export type RecipeClaim = Recipe['claims'][number];

function issueLine(file: string, e: z.ZodError): string {
  const i = e.issues[0]!;
  return `${file}: ${i.path.length ? i.path.join('.') : '(top level)'}: ${i.message}`;
}

/** Cross-references: every id a stage or system names exists earlier and is of the right kind. */
function checkReferences(file: string, r: Recipe): void {
  const kinds = new Map<string, Stage['kind']>();
  const need = (where: string, ref: string | undefined, allowed: Stage['kind'][], base = false) => {
    if (ref === undefined) return;
    if (base && ref === 'base') return;
    const k = kinds.get(ref);
    if (!k || !allowed.includes(k)) throw new InputError(`${file}: ${where} names "${ref}", which is not an earlier ${allowed.join(' or ')} stage${base ? ' (or base)' : ''}`, `stage ids so far: ${[...kinds.keys()].join(', ') || 'none'}`);
  };
  for (const [i, s] of r.stages.entries()) {
    const where = `stages.${i} (${s.id})`;
    if (kinds.has(s.id)) throw new InputError(`${file}: ${where}: the id "${s.id}" is used twice`, 'give each stage its own id');
    if (s.kind === 'annotate') {
      need(`${where}.policy`, s.policy, ['train'], true);
      need(`${where}.trees`, s.trees, ['annotate']);
      if (s.judge && s.pairs !== 'judge') throw new InputError(`${file}: ${where}.judge is set but pairs is ${s.pairs ?? 'the method\'s default'}`, 'add pairs: judge, or remove judge');
      const from = r.stages.find((x) => x.id === s.trees);
      if (from?.kind === 'annotate' && (from.method !== s.method || from.trees)) {
        throw new InputError(`${file}: ${where}.trees names "${s.trees}", ${from.trees ? 'which takes its own trees from another stage' : `a ${from.method} annotation, not ${s.method}`}`, 'name the annotate stage that searched, with the same method');
      }
    }
    if (s.kind === 'prm') {
      need(`${where}.data`, s.data, ['annotate']);
      if (s.source === 'trained' && !s.data) throw new InputError(`${file}: ${where}: a trained PRM needs data (an annotate stage)`, 'or set source: gold');
    }
    if (s.kind === 'train') {
      need(`${where}.from`, s.from, ['train'], true);
      need(`${where}.data`, s.data, s.algo === 'sft' ? ['annotate', 'demonstrate'] : ['annotate']);
      need(`${where}.prm`, s.prm, ['prm']);
      if ((s.algo === 'sft' || s.algo === 'dpo') && !s.data) throw new InputError(`${file}: ${where}: algo ${s.algo} needs data (an annotate${s.algo === 'sft' ? ' or demonstrate' : ''} stage)`);
      if ((s.algo === 'prorag' || s.algo === 'rft') && !s.prm) throw new InputError(`${file}: ${where}: algo ${s.algo} needs prm (a prm stage)`);
    }
    kinds.set(s.id, s.kind);
  }
  const names = new Set<string>();
  for (const [i, s] of r.evaluate.systems.entries()) {
    need(`evaluate.systems.${i}.policy`, s.policy, ['train'], true);
    need(`evaluate.systems.${i}.prm`, s.prm, ['prm']);
    if (s.select === 'prm' && !s.prm) throw new InputError(`${file}: evaluate.systems.${i}: select prm needs prm (a prm stage)`);
    names.add(s.name);
  }
  for (const [i, c] of r.claims.entries()) {
    for (const side of [c.treatment, c.control]) if (!names.has(side)) throw new InputError(`${file}: claims.${i} names the system "${side}", which evaluate.systems does not list`, `systems: ${[...names].join(', ')}`);
  }
}

export function parseRecipe(text: string, file: string): Recipe {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (e) {
    throw new InputError(`${file} is not valid YAML (${(e as Error).message.split('\n')[0]})`, 'fix the line it names; recipes/*.yaml show the layout');
  }
  const parsed = recipeSchema.safeParse(raw);
  if (!parsed.success) throw new InputError(issueLine(file, parsed.error), 'see recipes/*.yaml and docs/papers/index.md for the fields');
  checkReferences(file, parsed.data);
  return parsed.data;
}

/** A recipe by name (recipes/NAME.yaml of the package) or by path. */
export function loadRecipe(nameOrFile: string): { recipe: Recipe; path: string } {
  const path = existsSync(nameOrFile) ? resolve(nameOrFile) : join(RECIPES_DIR, `${nameOrFile}.yaml`);
  if (!existsSync(path)) throw new InputError(`no recipe "${nameOrFile}"`, `use one of ${RECIPE_NAMES.join(', ')}, or the path of a YAML file`);
  return { recipe: parseRecipe(readFileSync(path, 'utf8'), path), path };
}

