/**
 * The PRM trained in TypeScript: features (features.ts) into a linear or MLP head (model.ts) fitted
 * with the Bradley–Terry loss on `prm_pairs.jsonl` from `ragtrail annotate`. Saved as a versioned JSON
 * file with the embedder spec, so that loading it re-creates the exact feature map.
 */
import { type ErrorRecord, errorRecord, InputError, RecordError, type SourceLocation } from '../core/errors.js';
import { readChecksummedJson, writeChecksummedJson } from '../core/checksum.js';
import { readJsonlEach } from '../core/io.js';
import { Rng } from '../core/rng.js';
import type { Step } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import { createEmbedder, type Embedder } from '../retrieval/embedders/embedder.js';
import { FEATURES, featurize } from './features.js';
import { evaluatePairs, pairCredit, type ModelState, ScoreModel, trainModel, type TrainOptions, type PairX } from './model.js';
import type { Candidate, PRM } from './types.js';

export const PRM_FORMAT_VERSION = 1;

/** One line of `prm_pairs.jsonl`: a state, the chosen and the rejected next step, and their value gap. */
export interface PrmPairRecord {
  id: string;
  state: { question: string; steps: Step[] };
  chosen: Candidate & { type: string };
  rejected: Candidate & { type: string };
  gap?: number;
  /**
   * The state the rejected step was taken in, when it is not `state` (outcome pairs: two episodes'
   * final answers, each in its own episode; prm/outcome.ts). Absent for sibling steps.
   */
  rejectedState?: { question: string; steps: Step[] };
}

/** A trained PRM as saved to a file: the embedder and features it reads, the head's weights, and how training went. */
export interface SavedPrm {
  format: 'ragtrail-prm';
  version: number;
  embedder: string;
  features: string[];
  model: ModelState;
  training: { pairs: number; heldOut: number; trainAccuracy: number; heldOutAccuracy?: number; losses: number[] };
  /** SHA-256 of the rest (core/checksum.ts), checked on load; absent in files from before checksums. */
  checksum?: string;
}

export function pairState(rec: PrmPairRecord): State {
  return { question: { id: rec.id.split(':')[0] ?? rec.id, question: rec.state.question, answers: [] }, steps: rec.state.steps, done: false, mustAnswer: false, turnsLeft: 0, searchesLeft: 0 };
}

/** The state of a pair's rejected step: its own (outcome pairs) or the pair's shared one. */
export function rejectedPairState(rec: PrmPairRecord): State {
  return rec.rejectedState ? { ...pairState(rec), steps: rec.rejectedState.steps } : pairState(rec);
}

/** Scores a pair's chosen and rejected step, each in its own state (one call when they share it). */
export async function scorePair(prm: Pick<PRM, 'score'>, rec: PrmPairRecord, state: State = pairState(rec), rejectedState: State = rec.rejectedState ? { ...state, steps: rec.rejectedState.steps } : state): Promise<[number, number]> {
  if (!rec.rejectedState) {
    const [c, r] = await prm.score(state, [rec.chosen, rec.rejected]);
    return [c!, r!];
  }
  const [c] = await prm.score(state, [rec.chosen]);
  const [r] = await prm.score(rejectedState, [rec.rejected]);
  return [c!, r!];
}

/**
 * Reads `prm_pairs.jsonl` (from `ragtrail annotate`) into memory. A line that is not JSON, or a record
 * without state, chosen or rejected, throws a RecordError naming the line; with `errors`, it becomes an
 * error record there and the other pairs are still read.
 */
export async function readPrmPairs(path: string, errors?: ErrorRecord[]): Promise<PrmPairRecord[]> {
  const out: PrmPairRecord[] = [];
  for await (const line of readJsonlEach(path)) {
    try {
      if ('error' in line) throw line.error;
      out.push(prmPair(line.value, line.loc, out.length));
    } catch (e) {
      if (!errors || !(e instanceof InputError)) throw e;
      errors.push(errorRecord(e, 'error' in line ? undefined : line.value));
    }
  }
  return out;
}

function prmPair(value: unknown, loc: SourceLocation, index: number): PrmPairRecord {
  const r = (value && typeof value === 'object' ? value : {}) as Partial<PrmPairRecord>;
  if (!r.state || typeof r.state.question !== 'string' || !Array.isArray(r.state.steps)) throw new RecordError(loc, 'state', 'must be {question, steps}', 'use prm_pairs.jsonl from `ragtrail annotate`');
  if (!r.chosen?.action || !r.rejected?.action) throw new RecordError(loc, r.chosen?.action ? 'rejected' : 'chosen', 'must hold {type, action, raw}');
  if (r.rejectedState !== undefined && (typeof r.rejectedState?.question !== 'string' || !Array.isArray(r.rejectedState.steps))) throw new RecordError(loc, 'rejectedState', 'must be {question, steps}', 'use outcome_pairs.jsonl from `ragtrail prm outcome-pairs`');
  return { id: String(r.id ?? index), state: r.state, chosen: r.chosen, rejected: r.rejected, gap: r.gap, ...(r.rejectedState && { rejectedState: r.rejectedState }) };
}

/** The question a pair belongs to: held-out splits keep a question's pairs together. */
export function questionOf(p: PrmPairRecord): string {
  return p.id.split(':')[0] ?? p.id;
}

export async function pairFeatures(embedder: Embedder, pairs: readonly PrmPairRecord[]): Promise<PairX[]> {
  const out: PairX[] = [];
  for (const p of pairs) {
    if (p.rejectedState) {
      const [chosen] = await featurize(embedder, pairState(p), [p.chosen]);
      const [rejected] = await featurize(embedder, rejectedPairState(p), [p.rejected]);
      out.push({ chosen: chosen!, rejected: rejected! });
      continue;
    }
    const [chosen, rejected] = await featurize(embedder, pairState(p), [p.chosen, p.rejected]);
    out.push({ chosen: chosen!, rejected: rejected! });
  }
  return out;
}

/**
 * The PRM trained here: features of the state and the candidate (over the saved embedder) into a
 * linear
 * or MLP head fitted with the Bradley–Terry loss. Scores are unnormalised logits: P(a ≻ b) = σ(s_a −
 * s_b).
 */
export class TrainedPRM implements PRM {
  readonly name: string;

  constructor(
    readonly saved: SavedPrm,
    private readonly model: ScoreModel,
    private readonly embedder: Embedder,
    path = 'memory',
  ) {
    this.name = `prm(${saved.model.kind}, ${saved.embedder}) ${path}`;
  }

  /**
   * Reads a PRM file written by {@link TrainedPRM.save}; re-creates its embedder from the saved spec
   * unless
   * one is given. Throws an InputError for an unreadable file or another format version.
   */
  static async load(path: string, embedderOverride?: Embedder): Promise<TrainedPRM> {
    const saved = readChecksummedJson<SavedPrm>(
      path,
      { what: 'PRM file', fix: 'train one with `ragtrail prm train`' },
      'retrain it (`ragtrail prm train … --out FILE`; in a pipeline run, delete that stage\'s folder and re-run the pipeline)',
    );
    if (saved.format !== 'ragtrail-prm' || saved.version !== PRM_FORMAT_VERSION) {
      throw new InputError(`${path}: PRM format ${saved.format} v${saved.version} is not supported (this ragtrail reads v${PRM_FORMAT_VERSION})`, 'retrain it');
    }
    return new TrainedPRM(saved, new ScoreModel(saved.model), embedderOverride ?? (await createEmbedder(saved.embedder)), path);
  }

  /** Writes the model, its embedder spec and its training summary to `path` as one JSON document. */
  save(path: string): void {
    writeChecksummedJson(path, this.saved);
  }

  /** The model's score of each candidate (higher: preferred). */
  async score(state: State, candidates: readonly Candidate[]): Promise<number[]> {
    if (candidates.length === 0) return [];
    return (await featurize(this.embedder, state, candidates)).map((x) => this.model.score(x));
  }

  /** How often the chosen step outscores the rejected one (a tie counts 0.5), overall and by the chosen step's type, with the mean Bradley–Terry loss. */
  async evaluate(pairs: readonly PrmPairRecord[]): Promise<PairEval> {
    const xs = await pairFeatures(this.embedder, pairs);
    const margins = xs.map((x) => this.model.score(x.chosen) - this.model.score(x.rejected));
    const credits = margins.map((m) => pairCredit(m, 0));
    return { ...pairTally(pairs, credits), loss: evaluatePairs(this.model, xs).loss, calibration: pairCalibration(margins) };
  }
}

/**
 * Calibration of a Bradley–Terry head on pairs: the model says the step it scores higher is preferred
 * with probability σ(|s_a − s_b|); binned by that confidence (0.5–0.6, …, 0.9–1), each bin's mean
 * confidence against the share of its pairs where the higher-scored step is the chosen one (a tie
 * counts 0.5). ECE: the bins' |accuracy − confidence| weighted by their pairs. A PRM at chance with
 * confident scores shows a large ECE; a well-calibrated one, accuracy close to confidence in each bin.
 */
export function pairCalibration(margins: readonly number[]): NonNullable<PairEval['calibration']> {
  const edges = [0.5, 0.6, 0.7, 0.8, 0.9, 1.0000001];
  const bins = edges.slice(0, -1).map((from, i) => ({ from, to: Math.min(1, edges[i + 1]!), n: 0, confidence: 0, accuracy: 0 }));
  for (const m of margins) {
    const conf = 1 / (1 + Math.exp(-Math.abs(m)));
    const b = bins.find((x, i) => conf >= x.from && conf < edges[i + 1]!)!;
    b.confidence += conf;
    b.accuracy += m > 0 ? 1 : m === 0 ? 0.5 : 0;
    b.n++;
  }
  let ece = 0;
  for (const b of bins) {
    if (b.n === 0) continue;
    b.confidence /= b.n;
    b.accuracy /= b.n;
    ece += (b.n / Math.max(1, margins.length)) * Math.abs(b.accuracy - b.confidence);
  }
  return { ece, bins };
}

/** Accuracy overall and by the chosen step's type, from each pair's credit (1, 0.5 for a tie, 0). */
function pairTally(pairs: readonly PrmPairRecord[], credits: readonly number[]): Omit<PairEval, 'loss'> {
  const byType: Record<string, { n: number; accuracy: number }> = {};
  credits.forEach((credit, i) => {
    const b = (byType[pairs[i]!.chosen.type] ??= { n: 0, accuracy: 0 });
    b.accuracy = (b.accuracy * b.n + credit) / (b.n + 1);
    b.n++;
  });
  return { n: pairs.length, accuracy: pairs.length ? credits.reduce((a, b) => a + b, 0) / pairs.length : 0, by_type: byType };
}

/**
 * Pair accuracy of any PRM — a file, a served model, a judge: both steps of each pair scored in one call,
 * in the pair's state. `loss` is the mean Bradley-Terry loss −log σ(s⁺ − s⁻), meaningful where scores are logits.
 */
export async function evaluatePrm(prm: PRM, pairs: readonly PrmPairRecord[]): Promise<PairEval> {
  const credits: number[] = [];
  let loss = 0;
  for (const p of pairs) {
    const [chosen, rejected] = await scorePair(prm, p);
    credits.push(pairCredit(chosen, rejected));
    const margin = chosen - rejected;
    loss += margin > 0 ? Math.log1p(Math.exp(-margin)) : -margin + Math.log1p(Math.exp(margin));
  }
  return { ...pairTally(pairs, credits), loss: pairs.length ? loss / pairs.length : 0 };
}

/** Pairwise accuracy of a PRM on preference pairs (a tie counts 0.5: {@link pairCredit}), by action type, and its mean loss. */
export interface PairEval {
  n: number;
  accuracy: number;
  by_type: Record<string, { n: number; accuracy: number }>;
  loss: number;
  /** A trained head's calibration on the pairs ({@link pairCalibration}); absent for PRMs without a pairwise probability. */
  calibration?: { ece: number; bins: { from: number; to: number; n: number; confidence: number; accuracy: number }[] };
}

/** Options of {@link trainPrm}: the head's training settings plus the feature embedder spec (default `hash:512`) and the held-out share. */
export interface PrmTrainOptions extends TrainOptions {
  embedder?: string;
  /** Share of questions held out for evaluation (default 0.2); 0 trains on everything. */
  holdout?: number;
  /**
   * Train on this many of the training pairs, a seeded random subset, the held-out questions unchanged:
   * a PRM-data-size curve (RAG-Gym's) compares heads on the same held-out pairs. Default: all.
   */
  trainPairs?: number;
}

/** Splits pairs by question (a question's pairs stay together), deterministically for a seed. */
export function splitByQuestion(pairs: readonly PrmPairRecord[], holdout: number, seed: number | string = 0): { train: PrmPairRecord[]; heldOut: PrmPairRecord[] } {
  const questions = [...new Set(pairs.map(questionOf))].sort();
  new Rng(`split/${seed}`).shuffle(questions);
  const held = new Set(questions.slice(0, Math.round(questions.length * holdout)));
  return { train: pairs.filter((p) => !held.has(questionOf(p))), heldOut: pairs.filter((p) => held.has(questionOf(p))) };
}

/**
 * Fits a {@link TrainedPRM} on preference pairs, holding out a share of the questions (all pairs of a
 * question on one side) and reporting accuracy on them. `initialLoss` is ln 2, the loss of a model
 * that
 * scores every step alike. Writes nothing: call `prm.save`.
 */
export async function trainPrm(pairs: readonly PrmPairRecord[], opts: PrmTrainOptions = {}, onEpoch?: (epoch: number, loss: number) => void): Promise<{ prm: TrainedPRM; heldOut: PrmPairRecord[]; initialLoss: number }> {
  const embedderSpec = opts.embedder ?? 'hash:512';
  const embedder = await createEmbedder(embedderSpec);
  const split = splitByQuestion(pairs, opts.holdout ?? 0.2, opts.seed);
  const { heldOut } = split;
  const train = opts.trainPairs !== undefined && opts.trainPairs < split.train.length ? new Rng(`train-pairs/${opts.seed ?? 0}`).sample(split.train, opts.trainPairs) : split.train;
  if (train.length === 0) throw new InputError('no training pairs left after the held-out split', 'annotate more questions or lower --holdout');
  const xs = await pairFeatures(embedder, train);
  const losses: number[] = [];
  const model = trainModel(xs, opts, (e, l) => {
    losses.push(l);
    onEpoch?.(e, l);
  });
  const saved: SavedPrm = {
    format: 'ragtrail-prm',
    version: PRM_FORMAT_VERSION,
    embedder: embedderSpec,
    features: [...FEATURES],
    model: model.toJSON(),
    training: { pairs: train.length, heldOut: heldOut.length, trainAccuracy: evaluatePairs(model, xs).accuracy, losses },
  };
  const prm = new TrainedPRM(saved, model, embedder);
  if (heldOut.length) saved.training.heldOutAccuracy = (await prm.evaluate(heldOut)).accuracy;
  return { prm, heldOut, initialLoss: Math.log(2) };
}
