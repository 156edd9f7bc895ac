/**
 * `ragtrail sweep`: one setting varied over a list of values, each point evaluated with its CI, and the
 * curve the papers draw — EM against top-k, the search budget, best-of-N (RAG-Gym Fig. 4), the PRM's
 * training-set size (RAG-Gym), ProRAG's dual weight, MCTS simulations.
 *
 * Two kinds. An eval sweep sets a field of every chosen system of an eval config (`top-k`, `max-turns`,
 * `max-searches`, `n`, `temperature`; `checkpoint` fills `{checkpoint}` in a system's policy, model or
 * PRM with the epoch, over the checkpoints a pipeline's trainers keep) and runs `ragtrail eval` once per value: the points are paired
 * (the same questions) and carry bootstrap CIs. A recipe sweep sets a field of a pipeline recipe by a
 * dotted path (`stages.<id>.…` picks the stage with that id: `stages.prm.settings.trainPairs`,
 * `stages.annotate.mcts.simulations`, `stages.prorag.settings.dualWeight`) and runs the pipeline once per
 * value; a point is the mean over its seeds, its whisker the seeds' range (one seed: the test questions'
 * bootstrap CI). Every run folder is kept and resumes, so an interrupted sweep re-run continues.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../core/errors.js';
import { writeJsonAtomicSync } from '../core/io.js';
import { type EvalConfig, runEval } from './harness.js';
import { CSS, esc, htmlTable, mdTable } from './report.js';
import type { Cell } from './results.js';
import { lineChart, type LinePoint } from './svg.js';

/** The system fields an eval sweep may vary, by their flag-style names. */
export const EVAL_SWEEPS = { 'top-k': 'topK', 'max-turns': 'maxTurns', 'max-searches': 'maxSearches', n: 'n', temperature: 'temperature', checkpoint: '{checkpoint}' } as const;
/** A setting an eval sweep varies, by its flag-style name. */
export type EvalSweep = keyof typeof EVAL_SWEEPS;
/** The x-axis title of an eval sweep (a recipe sweep's is its path). */
const AXIS: Record<EvalSweep, string> = { 'top-k': 'top-k (documents per search)', 'max-turns': 'max turns', 'max-searches': 'max searches', n: 'N (candidates per step, or episodes voted)', temperature: 'temperature', checkpoint: 'training checkpoint (epoch)' };
export const axisTitle = (vary: string) => AXIS[vary as EvalSweep] ?? vary;

/** One system on one dataset at one value. */
export interface SweepPoint {
  value: number;
  system: string;
  dataset: string;
  em: { mean: number; low: number; high: number };
  f1: number;
  rc: number;
  /** Seeds averaged (recipe sweeps); 1 for an eval sweep. */
  seeds: number;
  /** Mean seconds per question (eval's latency), when measured. */
  seconds?: number;
}

/** A sweep's points and what they are: written as sweep.json. */
export interface SweepResult {
  kind: 'eval' | 'recipe';
  /** What was varied: an eval field name or a recipe path. */
  vary: string;
  values: number[];
  points: SweepPoint[];
  /** What the whiskers are. */
  whiskers: string;
  seconds: number;
}

/** The folder of one value's run inside the sweep's folder. */
export const pointDir = (out: string, vary: string, value: number) => join(out, `${vary.replace(/[^a-zA-Z0-9-]+/g, '_')}=${value}`);

/** Values of a `--values` list: numbers, comma-separated, at least two, distinct. */
export function parseValues(text: string): number[] {
  const values = text.split(',').map((x) => x.trim()).filter(Boolean).map(Number);
  if (values.length < 2 || values.some((v) => !Number.isFinite(v))) throw new InputError(`--values "${text}": needs two or more numbers, comma-separated`, 'e.g. --values 1,3,5,10');
  if (new Set(values).size !== values.length) throw new InputError(`--values "${text}": a value repeats`, 'list each value once');
  return values;
}

const cellPoint = (value: number, c: Cell): SweepPoint => ({ value, system: c.system, dataset: c.dataset, em: { mean: c.em.mean, low: c.em.low, high: c.em.high }, f1: c.f1.mean, rc: c.retrievalCount, seeds: 1, ...(c.latency && { seconds: c.latency.seconds }) });

/** Runs `config` once per value with `vary` set on the chosen systems (all by default); see the module comment. */
export async function sweepEval(config: EvalConfig, vary: EvalSweep, values: readonly number[], opts: { out: string; systems?: string[]; log?: (line: string) => void }): Promise<SweepResult> {
  const field = EVAL_SWEEPS[vary];
  if ((vary === 'top-k' || vary === 'max-turns' || vary === 'n') && values.some((v) => !Number.isInteger(v) || v < 1)) throw new InputError(`--values: ${vary} takes whole numbers ≥ 1`, 'e.g. --values 1,3,5');
  if (vary === 'max-searches' && values.some((v) => !Number.isInteger(v) || v < 0)) throw new InputError('--values: max-searches takes whole numbers ≥ 0', 'e.g. --values 0,1,2,4');
  const chosen = opts.systems?.length ? opts.systems : config.systems.map((s) => s.name);
  for (const name of chosen) if (!config.systems.some((s) => s.name === name)) throw new InputError(`--system ${name}: the config has no such system`, `its systems: ${config.systems.map((s) => s.name).join(', ')}`);
  if (vary === 'n' && config.systems.some((s) => chosen.includes(s.name) && (s.select ?? 'greedy') === 'greedy')) throw new InputError('--vary n: a greedy system has no N', 'choose prm or vote systems with --system');
  if (vary === 'checkpoint') {
    for (const s of config.systems.filter((x) => chosen.includes(x.name))) if (!CHECKPOINT_FIELDS.some((f) => s[f]?.includes('{checkpoint}'))) throw new InputError(`--vary checkpoint: system "${s.name}" names no {checkpoint} in its policy, llm or prm`, 'e.g. "policy": "gym:runs/seed-0/grpo/checkpoints/epoch-{checkpoint}.json" (the pipeline keeps one per epoch)');
    if (values.some((v) => !Number.isInteger(v) || v < 1)) throw new InputError('--values: checkpoints are epochs, whole numbers ≥ 1', 'e.g. --values 1,2,3');
  }
  const t0 = performance.now();
  const points: SweepPoint[] = [];
  for (const value of values) {
    opts.log?.(`${vary} = ${value}: evaluating ${chosen.length} system(s)`);
    const systems = config.systems.filter((s) => chosen.includes(s.name)).map((s) => (vary === 'checkpoint' ? atCheckpoint(s, value) : { ...s, [field]: value }));
    const r = await runEval({ ...config, systems, out: pointDir(opts.out, vary, value), baseline: chosen.includes(config.baseline ?? '') ? config.baseline : systems[0]!.name });
    points.push(...r.cells.map((c) => cellPoint(value, c)));
  }
  return { kind: 'eval', vary, values: [...values], points, whiskers: "each point's 95% bootstrap CI over the test questions", seconds: (performance.now() - t0) / 1000 };
}

/** The fields of a system a checkpoint sweep fills in. */
const CHECKPOINT_FIELDS = ['policy', 'llm', 'prm', 'resumeKey'] as const;

/** A system with `{checkpoint}` in its policy, model, PRM or resume key replaced by the epoch. */
function atCheckpoint<T extends Partial<Record<(typeof CHECKPOINT_FIELDS)[number], string>>>(s: T, epoch: number): T {
  const out = { ...s };
  for (const f of CHECKPOINT_FIELDS) if (typeof out[f] === 'string') (out as Record<string, string>)[f] = out[f]!.replaceAll('{checkpoint}', String(epoch));
  return out;
}

/**
 * A copy of `recipe` (a plain object) with the field at `path` set to `value`. `stages.<id>` picks the
 * stage with that id; a missing object on the way is created, a missing stage is an error.
 */
export function setRecipePath<T extends object>(recipe: T, path: string, value: number): T {
  const parts = path.split('.');
  if (parts.some((p) => p === '')) throw new InputError(`--vary ${path}: an empty part in the path`, 'e.g. stages.prm.settings.trainPairs');
  const copy = structuredClone(recipe) as Record<string, unknown>;
  let at: Record<string, unknown> = copy;
  for (let i = 0; i < parts.length - 1; i++) {
    const key = parts[i]!;
    if (key === 'stages' && Array.isArray(at['stages'])) {
      const stageId = parts[++i];
      const stage = (at['stages'] as Record<string, unknown>[]).find((s) => s['id'] === stageId);
      if (!stage) throw new InputError(`--vary ${path}: the recipe has no stage "${stageId}"`, `its stages: ${(at['stages'] as { id: string }[]).map((s) => s.id).join(', ')}`);
      if (i === parts.length - 1) throw new InputError(`--vary ${path}: names a stage, not one of its fields`, `e.g. ${path}.settings.KEY`);
      at = stage;
      continue;
    }
    const next = at[key];
    if (next !== undefined && (typeof next !== 'object' || next === null || Array.isArray(next))) throw new InputError(`--vary ${path}: "${key}" is not a group of fields`, 'name a numeric field');
    at = (at[key] ??= {}) as Record<string, unknown>;
  }
  const last = parts[parts.length - 1]!;
  if (at[last] !== undefined && typeof at[last] !== 'number') throw new InputError(`--vary ${path}: the recipe's value there is ${JSON.stringify(at[last])}, not a number`, 'a sweep varies a numeric setting');
  at[last] = value;
  return copy as T;
}

/** A recipe sweep's points from each value's per-seed cells: the mean over seeds, whiskers the seeds' range (one seed: its CI). */
export function recipePoints(value: number, seeds: readonly { cells: readonly Cell[] }[]): SweepPoint[] {
  const keys = [...new Set(seeds.flatMap((s) => s.cells.map((c) => `${c.system}\u0000${c.dataset}`)))];
  return keys.map((k) => {
    const cells = seeds.map((s) => s.cells.find((c) => `${c.system}\u0000${c.dataset}` === k)).filter((c): c is Cell => c !== undefined);
    if (cells.length === 1) return cellPoint(value, cells[0]!);
    const mean = (f: (c: Cell) => number) => cells.reduce((x, c) => x + f(c), 0) / cells.length;
    const ems = cells.map((c) => c.em.mean);
    return { value, system: cells[0]!.system, dataset: cells[0]!.dataset, em: { mean: mean((c) => c.em.mean), low: Math.min(...ems), high: Math.max(...ems) }, f1: mean((c) => c.f1.mean), rc: mean((c) => c.retrievalCount), seeds: cells.length };
  });
}

/** Writes sweep.json, sweep.md (value × system EM table) and sweep.html (the curve) into `out`. */
export function writeSweep(out: string, r: SweepResult): void {
  mkdirSync(out, { recursive: true });
  writeJsonAtomicSync(join(out, 'sweep.json'), r);
  const series = [...new Set(r.points.map((p) => seriesName(r, p)))];
  const f = (x: number) => x.toFixed(3);
  // Values alone as column heads (a recipe path is long); the caption names the setting.
  const head = [`system, by ${r.vary.split('.').at(-1)}`, ...r.values.map(String)];
  const rows = series.map((name) => [name, ...r.values.map((v) => {
    const p = r.points.find((x) => x.value === v && seriesName(r, x) === name);
    return p ? `${f(p.em.mean)} [${f(p.em.low)}, ${f(p.em.high)}]` : '–';
  })]);
  const caption = `EM against ${r.vary}; whiskers: ${r.whiskers}.`;
  writeFileSync(join(out, 'sweep.md'), `# Sweep: ${r.vary}\n\n${caption}\n\n${mdTable(head, rows)}\n`);
  // Doubling values (1, 2, 4, …, 16) read best on a log axis.
  const logX = r.values.every((v) => v > 0) && Math.max(...r.values) / Math.min(...r.values) >= 8;
  const chart = lineChart(`EM against ${r.vary}`, series.map((name): { name: string; points: LinePoint[] } => ({
    name,
    points: r.points.filter((p) => seriesName(r, p) === name).map((p) => ({ x: p.value, y: p.em.mean, low: p.em.low, high: p.em.high })),
  })), { xLabel: axisTitle(r.vary), yLabel: 'EM', yMin: 0, logX, dodge: series.length > 1, note: `Whiskers: ${r.whiskers}.` });
  writeFileSync(join(out, 'sweep.html'), `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>ragtrail sweep: ${esc(r.vary)}</title><style>${CSS}</style></head><body><h1>Sweep: ${esc(r.vary)}</h1><p>${esc(caption)}</p>${chart}${htmlTable(head, rows)}</body></html>\n`);
}

/** A series per system, and per dataset when there are several. */
function seriesName(r: SweepResult, p: SweepPoint): string {
  return new Set(r.points.map((x) => x.dataset)).size > 1 ? `${p.system} · ${p.dataset}` : p.system;
}
