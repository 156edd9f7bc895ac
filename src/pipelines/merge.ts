/**
 * `ragtrail merge`: joins the --out folders of a sharded job (`run`, `annotate` or `eval` with
 * `--shard i/n`, n processes on one or several machines) into the folder one process would have
 * written: the same records (in dataset order), the settings without the shard, and the derived files
 * (summary, pairs and trainer datasets, results and report) computed from the joined records. The
 * merged folder is a normal one: the same command without --shard resumes on it with nothing to do.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../core/errors.js';
import { ensureOutDir, readJsonFileSync, readJsonlValues, writeJsonAtomicSync, writeJsonl } from '../core/io.js';
import type { Trajectory } from '../core/trajectory.js';
import type { Question } from '../core/types.js';
import { loadDataset } from '../corpus/dataset.js';
import { getProtocol } from '../agents/registry.js';
import { runEval } from '../eval/harness.js';
import type { EvalConfig, EvalResults } from '../eval/results.js';
import { summarize } from '../eval/trajectories.js';
import { type AnnotateMethod, defaultPairSource, defaultValueLabel, deriveOutputs, goldFor } from '../process/annotate.js';
import { QRuleJudge } from '../process/sibling-judge.js';
import type { AnnotationStats } from '../process/stats.js';
import type { SavedTree } from '../process/tree.js';
import { parseShard, type Shard } from '../core/shard.js';

const SHARD_HINT = 'a shard folder is damaged: re-run that shard into a new --out folder';

export type MergeKind = 'run' | 'annotation' | 'eval';

export interface MergeResult {
  kind: MergeKind;
  shards: number;
  /** Trajectories (run, eval: over every run folder) or trees (annotation) in the merged folder. */
  records: number;
  /** The merged annotation's statistics, or the merged evaluation's results. */
  stats?: AnnotationStats;
  results?: EvalResults;
}

function kindOf(dir: string): MergeKind {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new InputError(`${dir}: no such folder`, 'pass the --out folders of the shards');
  if (existsSync(join(dir, 'results.json')) && existsSync(join(dir, 'runs'))) return 'eval';
  if (existsSync(join(dir, 'annotate.json'))) return 'annotation';
  if (existsSync(join(dir, 'run.json'))) return 'run';
  throw new InputError(`${dir}: not the folder of a run, an annotation or an evaluation`, 'pass the --out folders of `ragtrail run|annotate|eval --shard i/n`');
}

const settingsFile: Record<Exclude<MergeKind, 'eval'>, string> = { run: 'run.json', annotation: 'annotate.json' };

/**
 * Checks that the shards are one job: the same settings apart from the shard, the same shard count,
 * and every shard present exactly once. Returns the settings without the shard.
 */
function checkShards(dirs: readonly string[], configs: readonly Record<string, unknown>[], ignore: readonly string[] = []): Record<string, unknown> {
  const shards: Shard[] = configs.map((c, i) => {
    if (typeof c['shard'] !== 'string') throw new InputError(`${dirs[i]}: not a shard (its settings record no --shard)`, 'pass only folders written with --shard i/n');
    return parseShard(c['shard']);
  });
  const n = shards[0]!.count;
  const seen = new Map<number, string>();
  shards.forEach((s, i) => {
    if (s.count !== n) throw new InputError(`${dirs[i]} is shard ${s.index}/${s.count}, ${dirs[0]} is of ${n} shards`, 'merge the shards of one job');
    const twin = seen.get(s.index);
    if (twin) throw new InputError(`${twin} and ${dirs[i]} are both shard ${s.index}/${n}`, 'pass each shard once');
    seen.set(s.index, dirs[i]!);
  });
  const missing = Array.from({ length: n }, (_, i) => i).filter((i) => !seen.has(i));
  if (missing.length) throw new InputError(`shard${missing.length > 1 ? 's' : ''} ${missing.map((i) => `${i}/${n}`).join(', ')} missing`, `pass all ${n} shard folders`);
  const { shard: _drop, ...base } = configs[0]!;
  configs.forEach((c, i) => {
    const { shard: _s, ...rest } = c;
    for (const key of new Set([...Object.keys(base), ...Object.keys(rest)])) {
      if (ignore.includes(key)) continue;
      if (JSON.stringify(base[key]) !== JSON.stringify(rest[key])) throw new InputError(`${dirs[i]} was made with ${key}=${JSON.stringify(rest[key])}, ${dirs[0]} with ${JSON.stringify(base[key])}`, 'merge the shards of one job (the same command, only --shard differing)');
    }
  });
  return base;
}

/** The dataset's question order, when its file is still there (the merged records follow it). */
async function datasetOrder(config: Record<string, unknown>): Promise<Question[] | undefined> {
  const path = config['dataset'];
  if (typeof path !== 'string' || !existsSync(path)) return undefined;
  const split = typeof config['split'] === 'string' ? config['split'] : undefined;
  const out: Question[] = [];
  for await (const q of loadDataset(path)) if (!split || q.metadata?.['split'] === split) out.push(q);
  return out;
}

function sortByOrder<T extends { id: string }>(items: T[], order: readonly { id: string }[] | undefined): T[] {
  const rank = new Map((order ?? []).map((q, i) => [q.id, i]));
  return items.sort((a, b) => (rank.get(a.id) ?? Infinity) - (rank.get(b.id) ?? Infinity) || a.id.localeCompare(b.id));
}

/** Joins the shards' records, refusing an id found in two shards (a shard run twice, or not a shard). */
function joinRecords<T extends { id: string }>(dirs: readonly string[], perDir: readonly T[][]): T[] {
  const where = new Map<string, string>();
  const all: T[] = [];
  perDir.forEach((records, i) => {
    for (const r of records) {
      const other = where.get(r.id);
      if (other) throw new InputError(`question ${r.id} is in both ${other} and ${dirs[i]}`, 'merge the shard folders of one job, each once');
      where.set(r.id, dirs[i]!);
      all.push(r);
    }
  });
  return all;
}

type RunSession = { ran?: number; skipped?: number; wallSeconds?: number; llm?: Record<string, unknown> };

/** Sums of the shards' session counters (wall time: the slowest shard, as they ran side by side). */
function mergedSession(dirs: readonly string[]): Record<string, unknown> {
  const sessions = dirs.map((d) => (existsSync(join(d, 'summary.json')) ? (readJsonFileSync<{ session?: RunSession }>(join(d, 'summary.json'), SHARD_HINT).session ?? {}) : {}));
  const sum = (f: (s: RunSession) => number | undefined) => sessions.reduce((x, s) => x + (f(s) ?? 0), 0);
  const llm = sessions.filter((s) => s.llm);
  const llmSum = llm.length
    ? Object.fromEntries(['requests', 'cachedRequests', 'promptTokens', 'completionTokens', 'llmMs'].map((k) => [k, llm.reduce((x, s) => x + Number(s.llm![k] ?? 0), 0)]))
    : undefined;
  return { shards: dirs.length, ran: sum((s) => s.ran), skipped: sum((s) => s.skipped), wallSeconds: Math.max(0, ...sessions.map((s) => s.wallSeconds ?? 0)), ...(llmSum ? { llm: llmSum } : {}) };
}

/** One run folder from its shards: run.json, trajectories.jsonl, summary.json. */
async function mergeRunFolders(dirs: readonly string[], out: string, config?: Record<string, unknown>): Promise<number> {
  const configs = dirs.map((d) => readJsonFileSync<Record<string, unknown>>(join(d, 'run.json'), SHARD_HINT));
  const base = config ?? checkShards(dirs, configs);
  const trajectories = joinRecords(dirs, await Promise.all(dirs.map((d) => readJsonlValues<Trajectory>(join(d, 'trajectories.jsonl')))));
  sortByOrder(trajectories, await datasetOrder(base));
  ensureOutDir(out);
  writeJsonAtomicSync(join(out, 'run.json'), base);
  await writeJsonl(join(out, 'trajectories.jsonl'), trajectories);
  writeJsonAtomicSync(join(out, 'summary.json'), { ...summarize(trajectories), session: mergedSession(dirs) });
  return trajectories.length;
}

async function mergeAnnotations(dirs: readonly string[], out: string): Promise<MergeResult> {
  const configs = dirs.map((d) => readJsonFileSync<Record<string, unknown>>(join(d, settingsFile.annotation), SHARD_HINT));
  const base = checkShards(dirs, configs);
  const trees = joinRecords(dirs, await Promise.all(dirs.map((d) => readJsonlValues<SavedTree>(join(d, 'trees.jsonl')))));
  const order = await datasetOrder(base);
  sortByOrder(trees, order);
  ensureOutDir(out);
  writeJsonAtomicSync(join(out, 'annotate.json'), base);
  await writeJsonl(join(out, 'trees.jsonl'), trees);
  // The derived files with the annotate command's defaults for the method; re-running that command
  // (without --shard) on the merged folder re-derives them with other flags, with no model call.
  const method = String(base['method']) as AnnotateMethod;
  const pairs = defaultPairSource(method);
  const stats = await deriveOutputs(out, order, {
    minGap: 0.01,
    labelThreshold: 0.5,
    values: defaultValueLabel(method),
    pairs,
    ...(pairs === 'judge' && { judge: new QRuleJudge() }),
    gold: goldFor({ protocol: getProtocol(String(base['agent'])) }),
  });
  return { kind: 'annotation', shards: dirs.length, records: trees.length, stats };
}

async function mergeEvals(dirs: readonly string[], out: string, log: (m: string) => void): Promise<MergeResult> {
  const results = dirs.map((d) => readJsonFileSync<EvalResults>(join(d, 'results.json'), SHARD_HINT));
  // Each shard wrote to its own --out (and, by default, its own cache below it).
  const base = checkShards(dirs, results.map((r) => r.config as unknown as Record<string, unknown>), ['out']) as unknown as EvalConfig;
  let records = 0;
  for (const name of readdirSync(join(dirs[0]!, 'runs')).sort()) {
    const runDirs = dirs.map((d) => join(d, 'runs', name));
    for (const d of runDirs) if (!existsSync(join(d, 'run.json'))) throw new InputError(`${d}: missing`, 'every shard of an evaluation has the same run folders; finish the shard that lacks it');
    // The run folders' settings carry the shard too: drop it from each before comparing.
    const runConfigs = runDirs.map((d) => readJsonFileSync<Record<string, unknown>>(join(d, 'run.json'), SHARD_HINT));
    const runBase = checkShards(runDirs, runConfigs);
    records += await mergeRunFolders(runDirs, join(out, 'runs', name), runBase);
  }
  // Every question is in the merged run folders, so the harness only reads them: no model call.
  const merged = await runEval({ ...base, out }, log);
  return { kind: 'eval', shards: dirs.length, records, results: merged };
}

/** Merges the shard folders `dirs` into `out` (see the module comment). */
export async function mergeShards(dirs: readonly string[], out: string, log: (m: string) => void = () => {}): Promise<MergeResult> {
  if (dirs.length === 0) throw new InputError('nothing to merge', 'pass the --out folders of the shards');
  const kinds = dirs.map(kindOf);
  const kind = kinds[0]!;
  const other = kinds.findIndex((k) => k !== kind);
  if (other >= 0) throw new InputError(`${dirs[0]} is ${kind === 'annotation' ? 'an' : 'a'} ${kind} folder, ${dirs[other]} ${kinds[other] === 'annotation' ? 'an' : 'a'} ${kinds[other]} folder`, 'merge the shards of one job');
  if (existsSync(out) && readdirSync(out).length > 0) throw new InputError(`--out ${out}: not empty`, 'merge into a new folder');
  if (kind === 'run') return { kind, shards: dirs.length, records: await mergeRunFolders(dirs, out) };
  if (kind === 'annotation') return mergeAnnotations(dirs, out);
  return mergeEvals(dirs, out, log);
}
