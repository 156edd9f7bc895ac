/**
 * How a recipe train stage's settings reach TRL (`pipeline --llm`): every setting is either honoured —
 * written into the TRL config (a trainer field or a top-level field of python/ragtrail_trl), or used by
 * the environment server that scores the rollouts — or refused with one line naming it. Nothing is
 * dropped. The stage's `trl.stages.<id>` block is the paper's LLM setting: where it and a gym setting
 * give the same TRL field, the block wins and a note says so.
 */
import { InputError } from '../core/errors.js';
import type { TrlConfig } from './trl.js';

/** What the TRL engine does with one gym setting. */
type Rule =
  | { trainer: string; value?: (v: unknown) => unknown }
  | { top: 'kl_estimator' | 'dual_weight' | 'step_form' | 'lambda_f' | 'control_token_weight' | 'dynamic_sampling' | 'stage_switch'; value?: (v: unknown) => unknown }
  | { env: 'reward' | 'rewardOptions' }
  | { rft: (typeof RFT_SAMPLING)[number] }
  | { refuse: string };

/** RFT's sampling and filtering settings: used where the episodes are sampled (pipelines/rft-llm.ts), not by TRL. */
const RFT_SAMPLING = ['samples', 'temperature', 'threshold', 'correct', 'f1Threshold', 'filter'] as const;

const gymOnly = (what: string, field: string) => ({ refuse: `${what} belongs to the gym policy, not an LLM; set trl.stages.<id>.${field} for --llm` });

const RL_RULES: Record<string, Rule> = {
  epochs: { trainer: 'num_train_epochs' },
  groupSize: { trainer: 'num_generations' },
  temperature: { trainer: 'temperature' },
  beta: { trainer: 'beta' },
  epsLow: { trainer: 'epsilon' },
  epsHigh: { trainer: 'epsilon_high' },
  updatesPerBatch: { trainer: 'num_iterations' },
  // Per-episode (GRPO) or per-token (DAPO §3.3) averaging.
  aggregate: { trainer: 'loss_type', value: (v) => (v === 'token' ? 'dapo' : v === 'sequence' ? 'grpo' : v) },
  kl: { top: 'kl_estimator' },
  w: { top: 'dual_weight' },
  stepForm: { top: 'step_form' },
  lambdaF: { top: 'lambda_f' },
  dynamicSampling: { top: 'dynamic_sampling' },
  stageSwitch: { top: 'stage_switch', value: (v) => ({ share: v }) },
  reward: { env: 'reward' },
  rewardOptions: { env: 'rewardOptions' },
  lr: gymOnly('lr (the gym learning rate)', 'learning_rate'),
  l2: gymOnly('l2 (the gym weight decay)', 'weight_decay'),
  tau: { refuse: 'tau (the gym policy\'s softmax temperature) has no TRL counterpart' },
  questionsPerBatch: gymOnly('questionsPerBatch', 'per_device_train_batch_size (completions, a multiple of num_generations)'),
};
const OFFLINE_RULES: Record<string, Rule> = {
  epochs: { trainer: 'num_train_epochs' },
  beta: { trainer: 'beta' },
  batch: { trainer: 'per_device_train_batch_size' },
  controlWeight: { top: 'control_token_weight' },
  referenceFree: { refuse: 'referenceFree (the gym DPO form without a reference) is not wired to TRL' },
  lr: gymOnly('lr (the gym learning rate)', 'learning_rate'),
  l2: gymOnly('l2 (the gym weight decay)', 'weight_decay'),
};
// ProRAG's RFT: sampling and filtering before the SFT, then TRL's SFT on the kept steps.
const RFT_RULES: Record<string, Rule> = {
  ...Object.fromEntries(RFT_SAMPLING.map((k) => [k, { rft: k }])),
  epochs: { trainer: 'num_train_epochs' },
  batch: { trainer: 'per_device_train_batch_size' },
  controlWeight: { top: 'control_token_weight' },
  lr: gymOnly('lr (the gym learning rate)', 'learning_rate'),
  l2: gymOnly('l2 (the gym weight decay)', 'weight_decay'),
};
/** Top-level fields of the TRL config a trl.stages block may carry beside the trainer's. */
const TOP_FIELDS = ['control_token_weight', 'dual_weight', 'step_form', 'lambda_f', 'kl_estimator', 'dynamic_sampling', 'soft_overlong_cache', 'stage_switch'] as const;

/** A train stage's settings turned into TRL config parts. */
export interface TrlStageSettings {
  /** Trainer fields (the TRL config class's). */
  trainer: Record<string, unknown>;
  /** Top-level fields of the TRL config (kl_estimator, dual_weight, …). */
  top: Partial<Pick<TrlConfig, (typeof TOP_FIELDS)[number]>>;
  /** The outcome scheme and its options: the environment server's reward. */
  reward?: string;
  rewardOptions?: string[];
  /** rft: the sampling and filtering settings (samples, temperature, threshold, correct, f1Threshold, filter). */
  rft: Record<string, unknown>;
  /** One line per gym setting that gave way to the stage's trl block. */
  notes: string[];
}

/**
 * The TRL config parts of a recipe train stage: its gym `settings` mapped by the rules above, then
 * its `trl.stages` block (`paper`) on top. Throws an InputError naming the first refused setting.
 */
export function trlStageSettings(stage: { id: string; algo: string; settings: Record<string, unknown> }, paper: Record<string, unknown> = {}): TrlStageSettings {
  const rules = stage.algo === 'sft' || stage.algo === 'dpo' ? OFFLINE_RULES : stage.algo === 'rft' ? RFT_RULES : RL_RULES;
  const out: TrlStageSettings = { trainer: {}, top: {}, rft: {}, notes: [] };
  const from = new Map<string, string>();
  for (const [key, v] of Object.entries(stage.settings)) {
    const rule = Object.hasOwn(rules, key) ? rules[key]! : undefined;
    if (!rule) throw new InputError(`stage ${stage.id}: setting "${key}" has no TRL counterpart for ${stage.algo}, so --llm cannot honour it`, `remove it, or set the TRL field in trl.stages.${stage.id}`);
    if ('refuse' in rule) throw new InputError(`stage ${stage.id}: setting "${key}" is refused on the TRL engine: ${rule.refuse}`);
    if ('env' in rule) {
      if (rule.env === 'reward') out.reward = String(v);
      else out.rewardOptions = (v as string[]).map(String);
      continue;
    }
    if ('rft' in rule) {
      out.rft[rule.rft] = v;
      continue;
    }
    const value = rule.value ? rule.value(v) : v;
    if ('trainer' in rule) {
      out.trainer[rule.trainer] = value;
      from.set(rule.trainer, key);
    } else {
      (out.top as Record<string, unknown>)[rule.top] = value;
      from.set(rule.top, key);
    }
  }
  for (const [field, v] of Object.entries(paper)) {
    const gym = from.get(field);
    const isTop = (TOP_FIELDS as readonly string[]).includes(field);
    const current = isTop ? (out.top as Record<string, unknown>)[field] : out.trainer[field];
    if (gym !== undefined && JSON.stringify(current) !== JSON.stringify(v)) out.notes.push(`stage ${stage.id}: ${gym} ${JSON.stringify(stage.settings[gym])} (gym) gives way to trl.stages.${stage.id}.${field} ${JSON.stringify(v)}`);
    if (isTop) (out.top as Record<string, unknown>)[field] = v;
    else out.trainer[field] = v;
  }
  return out;
}
