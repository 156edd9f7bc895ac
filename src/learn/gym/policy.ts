/**
 * The gym policy: a softmax over the generated candidates of a state,
 *   π(a | s) = exp(r(φ(s, a)) / τ) / Σ_b exp(r(φ(s, b)) / τ),
 * with r a linear (or small MLP) function of the features. τ = 0 is greedy. It implements `Policy`,
 * writes its actions in the protocol's text, and is labelled "gym:…" — a small trained model, not an
 * LLM. Saved as versioned JSON (`--policy gym:FILE` wherever a policy is accepted).
 */
import { InputError } from '../../core/errors.js';
import { readChecksummedJson, writeChecksummedJson } from '../../core/checksum.js';
import { Rng } from '../../core/rng.js';
import type { Action } from '../../core/trajectory.js';
import type { Policy, ProposeOptions } from '../../agents/policy.js';
import type { Protocol } from '../../agents/protocol.js';
import { getProtocol } from '../../agents/registry.js';
import { policies } from '../../agents/policies.js';
import type { Move, State } from '../../env/env.js';
import { type ModelKind, type ModelState, ScoreModel } from '../../prm/model.js';
import { generateCandidates, type GymCandidate, sameGymAction } from './candidates.js';
import { gymFeatureNames, gymFeatures } from './features.js';

export const GYM_FORMAT_VERSION = 1;

/**
 * A gym policy file (`ragtrail train --policy-out`): the protocol it was trained for, its feature
 * names, the score model's weights and the training log.
 */
export interface SavedGymPolicy {
  format: 'ragtrail-gym-policy';
  version: number;
  agent: string;
  features: string[];
  model: ModelState;
  training: Record<string, unknown>[];
  /** SHA-256 of the rest (core/checksum.ts), checked on load; absent in files from before checksums. */
  checksum?: string;
}

/** The candidates of a state with their features; actions from elsewhere (a demonstration, a pair) can be added. */
export interface Choice {
  candidates: GymCandidate[];
  features: Float64Array[];
}

export function choicesFor(state: State, protocol: Protocol, extra: readonly Action[] = []): Choice {
  const candidates = generateCandidates(state, protocol);
  for (const a of extra) if (!candidates.some((c) => sameGymAction(c.action, a))) candidates.push({ action: a, source: 'given', sentenceOverlap: 0 });
  return { candidates, features: candidates.map((c) => gymFeatures(state, c, protocol)) };
}

export function indexOf(choice: Choice, action: Action): number {
  return choice.candidates.findIndex((c) => sameGymAction(c.action, action));
}

/** log π(· | s) over the candidates at temperature τ (τ ≤ 0 is treated as 1 for probabilities). */
export function logSoftmax(scores: readonly number[], tau = 1): number[] {
  const t = tau > 0 ? tau : 1;
  const z = scores.map((s) => s / t);
  const m = Math.max(...z);
  const lse = m + Math.log(z.reduce((acc, x) => acc + Math.exp(x - m), 0));
  return z.map((x) => x - lse);
}

/**
 * The trained gym policy (non-LLM): a softmax over the generated candidate actions of a state,
 * π(a|s) ∝ exp(r(φ(s, a)) / τ), with r a linear or small MLP score of the features. Writes its actions
 * in the protocol's text; `--policy gym[:FILE]` builds one.
 */
export class GymPolicy implements Policy {
  readonly kind = 'gym';
  readonly name: string;
  readonly protocol: Protocol;

  constructor(
    readonly model: ScoreModel,
    protocol: Protocol,
    readonly label = 'untrained',
  ) {
    this.protocol = protocol;
    this.name = `gym:${label} (${model.kind}, ${model.dim} features) [non-LLM]`;
  }

  /** A policy with all weights zero: uniform over the candidates. */
  static fresh(protocol: Protocol, kind: ModelKind = 'linear', hidden = 16, seed = 0): GymPolicy {
    const dim = gymFeatureNames(protocol).length;
    const model = ScoreModel.init(kind, dim, hidden, new Float64Array(dim), new Float64Array(dim).fill(1), new Rng(seed));
    return new GymPolicy(model, protocol);
  }

  /**
   * Reads a file written by {@link GymPolicy.save}, for `protocol` (default: the one it was trained
   * for).
   * Throws an InputError for an unreadable file, another format version, or a feature count that does
   * not match.
   */
  static load(path: string, protocol?: Protocol): GymPolicy {
    const saved = readChecksummedJson<SavedGymPolicy>(
      path,
      { what: 'gym policy', fix: 'train one with `ragtrail train --policy-out FILE`' },
      'retrain it (`ragtrail train … --policy-out FILE`; in a pipeline run, delete that stage\'s folder and re-run the pipeline)',
    );
    if (saved.format !== 'ragtrail-gym-policy' || saved.version !== GYM_FORMAT_VERSION) throw new InputError(`${path}: gym policy format ${saved.format} v${saved.version} is not supported`, 'retrain it');
    const p = protocol ?? getProtocol(saved.agent);
    const dim = gymFeatureNames(p).length;
    if (saved.model.dim !== dim) throw new InputError(`${path}: the policy has ${saved.model.dim} features, this ragtrail computes ${dim} for ${p.name}`, saved.agent !== p.name ? `it was trained for ${saved.agent}: use it with that agent, or retrain it` : 'retrain it');
    return new GymPolicy(new ScoreModel(saved.model), p, path);
  }

  /** Writes the policy (and `training`, the log to keep with it) to `path` as JSON. */
  save(path: string, training: Record<string, unknown>[] = []): void {
    const saved: SavedGymPolicy = { format: 'ragtrail-gym-policy', version: GYM_FORMAT_VERSION, agent: this.protocol.name, features: gymFeatureNames(this.protocol), model: this.model.toJSON(), training };
    writeChecksummedJson(path, saved);
  }

  /** An independent copy of the weights (e.g. the frozen reference policy of DPO and KL terms). */
  clone(label = this.label): GymPolicy {
    return new GymPolicy(new ScoreModel(this.model.toJSON()), this.protocol, label);
  }

  /** The model's score r(φ(s, a)) of each candidate of `choice`. */
  scores(choice: Choice): number[] {
    return choice.features.map((x) => this.model.score(x));
  }

  /** log π(a | s) of each candidate at temperature `tau` (τ ≤ 0 is taken as 1). */
  logProbs(choice: Choice, tau = 1): number[] {
    return logSoftmax(this.scores(choice), tau);
  }

  /**
   * `opts.n` moves over the state's candidates: the argmax at temperature 0 (the default), else samples
   * from π at that temperature seeded by (seed, question, step). Each move carries its log π (at τ = 1
   * when greedy).
   */
  async propose(state: State, opts: ProposeOptions = {}): Promise<Move[]> {
    const choice = choicesFor(state, this.protocol);
    if (choice.candidates.length === 0) return [];
    const tau = opts.temperature ?? 0;
    const lp = this.logProbs(choice, tau > 0 ? tau : 1);
    const n = opts.n ?? 1;
    const rng = new Rng(`${opts.seed ?? 0}/${state.question.id}/${state.steps.length}`);
    const picks: number[] = [];
    for (let k = 0; k < n; k++) {
      if (tau <= 0) {
        picks.push(lp.indexOf(Math.max(...lp)));
        continue;
      }
      let u = rng.next();
      let i = 0;
      for (; i < lp.length - 1; i++) {
        u -= Math.exp(lp[i]!);
        if (u < 0) break;
      }
      picks.push(i);
    }
    return picks.map((i) => {
      const action = choice.candidates[i]!.action;
      return { action, raw: this.protocol.format(action, state), logprob: lp[i]! };
    });
  }
}

// `--policy gym` (untrained) and `--policy gym:FILE` (from `ragtrail train`): registered here, beside
// the model, so that agents/ and eval/ build it through the policy table without importing learn/.
policies.register('gym', (arg, protocol) => (arg ? GymPolicy.load(arg, protocol) : GymPolicy.fresh(protocol)));
