/**
 * What `ragtrail view` shows: the ragtrail outputs found under the folders it is given, recursively — runs
 * (trajectories.jsonl), annotations (trees.jsonl / pairs.jsonl), results (an eval's or a recipe's
 * results.json) and training logs (a gym policy's or a PRM's training record, the log_history.jsonl of
 * `ragtrail train --engine trl` and the LLM loop, a transformers trainer_state.json).
 * A folder is recognised by the files ragtrail writes there, so a whole tree of outputs (a recipe with its
 * seeds and stages) is found at once.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, relative, resolve, sep } from 'node:path';
import { InputError } from '../core/errors.js';

export type SourceKind = 'run' | 'annotation' | 'results' | 'training';

/** One output found: its kind, where it is, and the files of it the viewer reads. */
export interface Source {
  /** Stable within a set of roots: a hash of the absolute path (and file, for training logs). */
  id: string;
  kind: SourceKind;
  /** Absolute folder. */
  dir: string;
  /** The folder relative to the root it was found under, starting with the root's own name: what is shown. */
  rel: string;
  title: string;
  /** Absolute paths by role (trajectories, summary, run, trees, pairs, results, log, rewards:<scheme> …). */
  files: Record<string, string>;
}

/** Folders that never hold outputs to show, or hold so many files that walking them is waste. */
const SKIP = new Set(['node_modules', '.git', '.cache', 'bm25', 'dense', 'world']);
const MAX_DEPTH = 12;

const idOf = (key: string) => createHash('sha256').update(key).digest('hex').slice(0, 12);

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function runTitle(dir: string): string {
  const run = readJson(join(dir, 'run.json'));
  if (isObject(run) && isObject(run['system']) && typeof run['system']['name'] === 'string') {
    const dataset = isObject(run['dataset']) && typeof run['dataset']['name'] === 'string' ? ` on ${run['dataset']['name']}` : '';
    return `${run['system']['name']}${dataset}`;
  }
  return basename(dir);
}

/** Sources in one folder (not its subfolders). */
function sourcesIn(dir: string, rel: string): Source[] {
  const out: Source[] = [];
  const has = (f: string) => existsSync(join(dir, f));
  if (has('trajectories.jsonl')) {
    const files: Record<string, string> = { trajectories: join(dir, 'trajectories.jsonl') };
    if (has('summary.json')) files['summary'] = join(dir, 'summary.json');
    if (has('run.json')) files['run'] = join(dir, 'run.json');
    // `ragtrail reward RUN` writes rewards.<scheme>.jsonl beside the trajectories.
    for (const f of readdirSync(dir)) {
      const m = /^rewards\.(.+)\.jsonl$/.exec(f);
      if (m) files[`rewards:${m[1]}`] = join(dir, f);
    }
    out.push({ id: idOf(dir), kind: 'run', dir, rel, title: runTitle(dir), files });
  }
  if (has('trees.jsonl') || has('pairs.jsonl')) {
    const files: Record<string, string> = {};
    for (const [role, f] of [['trees', 'trees.jsonl'], ['pairs', 'pairs.jsonl'], ['stats', 'stats.json'], ['settings', 'annotate.json']] as const) if (has(f)) files[role] = join(dir, f);
    out.push({ id: idOf(`${dir}#annotation`), kind: 'annotation', dir, rel, title: `annotation ${rel}`, files });
  }
  if (has('results.json')) {
    const results = readJson(join(dir, 'results.json'));
    if (isObject(results) && (Array.isArray(results['cells']) || Array.isArray(results['claims']) || Array.isArray(results['seeds']))) {
      const files: Record<string, string> = { results: join(dir, 'results.json') };
      if (has('recipe.json')) files['recipe'] = join(dir, 'recipe.json');
      const title = typeof results['recipe'] === 'string' ? `recipe ${results['recipe']}` : `results ${rel}`;
      out.push({ id: idOf(`${dir}#results`), kind: 'results', dir, rel, title, files });
    }
  }
  for (const f of ['policy.json', 'prm.json', 'trainer_state.json', 'log_history.jsonl']) {
    if (!has(f)) continue;
    const path = join(dir, f);
    // Policies and PRMs can be large (weights); only their size is checked here, the log is read on demand.
    if (f === 'policy.json' || f === 'prm.json') {
      const head = readJson(path);
      if (!isObject(head) || !('training' in head)) continue;
    }
    out.push({ id: idOf(path), kind: 'training', dir, rel, title: `training ${rel}/${f}`, files: { log: path } });
  }
  return out;
}

/**
 * Every source under `roots` (folders, searched recursively; a trajectories or trees file names its
 * folder), in a stable order: by root, then path. Throws an InputError for a root that does not exist.
 */
export function findSources(roots: readonly string[]): Source[] {
  const out: Source[] = [];
  const seen = new Set<string>();
  for (const given of roots) {
    let root = resolve(given);
    if (!existsSync(root)) throw new InputError(`${given}: no such file or folder`, 'pass folders written by ragtrail (run, annotate, eval, pipeline, demo)');
    if (statSync(root).isFile()) root = resolve(root, '..');
    const walk = (dir: string, depth: number) => {
      if (seen.has(dir)) return;
      seen.add(dir);
      const rel = [basename(root), relative(root, dir)].filter(Boolean).join('/').split(sep).join('/');
      out.push(...sourcesIn(dir, rel));
      if (depth >= MAX_DEPTH) return;
      let entries: string[];
      try {
        entries = readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory() && !SKIP.has(e.name) && !e.name.startsWith('.')).map((e) => e.name).sort();
      } catch {
        return;
      }
      for (const e of entries) walk(join(dir, e), depth + 1);
    };
    walk(root, 0);
  }
  return out;
}
