/**
 * A paper's claim tested on a recipe's runs: the treatment and control systems' per-question values
 * of one metric, paired by (seed, question) and pooled over the seeds.
 *
 * delta = mean(treatment − control); ci = the paired bootstrap's 95% interval; p = the two-sided
 * paired t-test over the pooled pairs. Pooling treats each (seed, question) pair as one observation:
 * each seed is a separate world and separate training runs, so the seeds add both question and
 * training-run variation; the per-seed deltas are reported beside it so that a claim carried by one
 * seed is visible. A claim holds when:
 *   higher     delta > 0 and p < alpha
 *   lower      delta < 0 and p < alpha
 *   not-lower  ci[0] > −margin (non-inferiority at the margin)
 */
import { pairedBootstrap, pairedTTest } from '../eval/stats.js';
import type { ClaimMetric, Recipe, RecipeClaim } from './recipe.js';

export interface ClaimRow {
  paper: string;
  claim: string;
  metric: ClaimMetric;
  treatment: string;
  control: string;
  expect: RecipeClaim['expect'];
  /** Means over the pooled pairs. */
  treatmentMean: number;
  controlMean: number;
  delta: number;
  ci: [number, number];
  p: number;
  n: number;
  seeds: { seed: number; n: number; delta: number }[];
  holds: boolean;
  /**
   * The same test on the questions that need retrieval only (eval/question-types.ts: not yes/no, no
   * gold answer named in the question), where a guess between offered options cannot score.
   */
  needsRetrieval?: Omit<ClaimRow, 'paper' | 'claim' | 'metric' | 'treatment' | 'control' | 'expect' | 'needsRetrieval'>;
}

/** Per-question values of one system in one seed, keyed by question id. */
export type Values = ReadonlyMap<string, number>;

/**
 * Tests one claim over the seeds' paired values; where a seed gives `needsRetrieval` (the ids of its
 * questions that need retrieval), the same test on those questions only goes in `needsRetrieval`.
 */
export function testClaim(paper: string, claim: RecipeClaim, perSeed: readonly { seed: number; treatment: Values; control: Values; needsRetrieval?: ReadonlySet<string> }[], alpha = 0.05, bootSeed = 0): ClaimRow {
  const row = testPairs(paper, claim, perSeed, alpha, bootSeed);
  if (perSeed.length && perSeed.every((s) => s.needsRetrieval)) {
    const only = (v: Values, keep: ReadonlySet<string>) => new Map([...v].filter(([id]) => keep.has(id)));
    const sub = testPairs(paper, claim, perSeed.map((s) => ({ seed: s.seed, treatment: only(s.treatment, s.needsRetrieval!), control: only(s.control, s.needsRetrieval!) })), alpha, bootSeed);
    const { treatmentMean, controlMean, delta, ci, p, n, seeds, holds } = sub;
    row.needsRetrieval = { treatmentMean, controlMean, delta, ci, p, n, seeds, holds };
  }
  return row;
}

function testPairs(paper: string, claim: RecipeClaim, perSeed: readonly { seed: number; treatment: Values; control: Values }[], alpha: number, bootSeed: number): ClaimRow {
  const a: number[] = [];
  const b: number[] = [];
  const seeds: ClaimRow['seeds'] = [];
  for (const s of perSeed) {
    const ids = [...s.treatment.keys()].filter((id) => s.control.has(id)).sort();
    let sum = 0;
    for (const id of ids) {
      a.push(s.treatment.get(id)!);
      b.push(s.control.get(id)!);
      sum += s.treatment.get(id)! - s.control.get(id)!;
    }
    seeds.push({ seed: s.seed, n: ids.length, delta: ids.length ? sum / ids.length : NaN });
  }
  const mean = (xs: number[]) => xs.reduce((x, y) => x + y, 0) / Math.max(1, xs.length);
  const t = pairedTTest(a, b);
  const boot = pairedBootstrap(a, b, { seed: bootSeed });
  const delta = t.meanDiff;
  const p = Number.isFinite(t.p) ? t.p : 1;
  const holds = claim.expect === 'higher' ? delta > 0 && p < alpha : claim.expect === 'lower' ? delta < 0 && p < alpha : boot.low > -claim.margin;
  return { paper, claim: claim.claim, metric: claim.metric, treatment: claim.treatment, control: claim.control, expect: claim.expect, treatmentMean: mean(a), controlMean: mean(b), delta, ci: [boot.low, boot.high], p, n: a.length, seeds, holds };
}

export function claimLine(c: ClaimRow): string {
  const f = (x: number) => (x >= 0 ? '+' : '') + x.toFixed(3);
  const test = (t: NonNullable<ClaimRow['needsRetrieval']>) => `Δ ${f(t.delta)} [${f(t.ci[0])}, ${f(t.ci[1])}], p ${t.p < 0.001 ? '< .001' : t.p.toFixed(3)}, n ${t.n} (per seed: ${t.seeds.map((s) => f(s.delta)).join(', ')})`;
  const r = c.needsRetrieval;
  const sub = r ? `; on the questions that need retrieval ${r.holds ? 'HOLDS' : 'does not hold'}: ${r.treatmentMean.toFixed(3)} vs ${r.controlMean.toFixed(3)}, ${test(r)}` : '';
  return `${c.holds ? 'HOLDS' : 'does not hold'} — ${c.claim}: ${c.metric} ${c.treatment} ${c.treatmentMean.toFixed(3)} vs ${c.control} ${c.controlMean.toFixed(3)}, ${test(c)}${sub}`;
}

/** Candidates per step of a recipe's PRM best-of-N systems when the recipe leaves `n` out (eval/systems.ts). */
const DEFAULT_BEST_OF = 10;
const BEST_OF = /best-of-\d+/g;
const SAMPLING = /sampling \d+ candidates/g;

/**
 * The recipe with texts that say what the run does, built from its settings rather than from the
 * words the YAML was written with: each PRM best-of-N system's name carries its `n` ("base + PRM
 * best-of-10" with n 4 becomes "base + PRM best-of-4"), the claims' treatment and control follow the
 * renamed systems, and "best-of-K" in a claim's text takes the N of the best-of-N system(s) it compares
 * (where they share one N), in the description the N of every such system (where they share one).
 * A recipe whose texts already agree with its settings comes back equal.
 */
export function withRunSettings(recipe: Recipe): Recipe {
  const r = structuredClone(recipe);
  const nOf = new Map<string, number>();
  const renamed = new Map<string, string>();
  for (const s of r.evaluate.systems) {
    if (s.select !== 'prm') continue;
    const n = s.n ?? DEFAULT_BEST_OF;
    const name = s.name.replace(BEST_OF, `best-of-${n}`);
    // The one-sentence description the report gives the row says how many candidates, too.
    if (s.about) s.about = s.about.replace(BEST_OF, `best-of-${n}`).replace(SAMPLING, `sampling ${n} candidates`);
    renamed.set(s.name, name);
    s.name = name;
    nOf.set(name, n);
  }
  const single = (ns: number[]) => (new Set(ns).size === 1 ? ns[0] : undefined);
  for (const c of r.claims) {
    c.treatment = renamed.get(c.treatment) ?? c.treatment;
    c.control = renamed.get(c.control) ?? c.control;
    const n = single([c.treatment, c.control].flatMap((x) => (nOf.has(x) ? [nOf.get(x)!] : [])));
    if (n !== undefined) c.claim = c.claim.replace(BEST_OF, `best-of-${n}`);
  }
  const n = single([...nOf.values()]);
  if (n !== undefined) r.description = r.description.replace(BEST_OF, `best-of-${n}`);
  return r;
}
