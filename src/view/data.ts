/**
 * The viewer's data: every answer the web app asks for, as plain JSON, computed from the sources' files.
 * The server (view/server.ts) answers them over HTTP as they are asked for; the bundle (view/bundle.ts)
 * computes them all once and writes them beside the app. Lists carry summaries only (a few hundred bytes a
 * row); a trajectory or a tree is read from disk by its line offset when it is opened.
 */
import { readFileSync } from 'node:fs';
import { InputError } from '../core/errors.js';
import { indexJsonl, isStale, type LineIndex, readIndexedLine } from './line-index.js';
import type { Source } from './sources.js';

/** One row of a run's question list. */
export interface RunRow {
  n: number;
  id: string;
  question: string;
  prediction: string;
  gold: string;
  em: number;
  f1: number;
  acc: number;
  steps: number;
  rc: number;
  type: string;
  formatFailures: number;
  finished: boolean;
  latencyMs: number;
}

/** One row of an annotation's tree list. */
export interface TreeRow {
  n: number;
  id: string;
  question: string;
  type: string;
  nodes: number;
  pairs: number;
  /** The highest value of a terminal node (the best leaf), if any has one. */
  best: number | null;
}

/** A line that could not be read, in the list in its place. */
export interface ErrorRow {
  n: number;
  error: string;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown, max: number) => {
  const s = typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
};
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

function runRow(v: unknown, n: number): RunRow {
  if (!isObject(v)) throw new Error('not a JSON object');
  const t = v;
  const metrics = isObject(t['metrics']) ? t['metrics'] : {};
  const meta = isObject(t['meta']) ? t['meta'] : {};
  const answers = Array.isArray(t['answers']) ? t['answers'] : [];
  return {
    n,
    id: String(t['id'] ?? n),
    question: str(t['question'], 200),
    prediction: str(t['prediction'], 120),
    gold: str(answers[0], 120),
    em: num(metrics['em']),
    f1: num(metrics['f1']),
    acc: num(metrics['acc']),
    steps: Array.isArray(t['steps']) ? t['steps'].length : 0,
    rc: num(t['retrievalCount']),
    type: typeof meta['type'] === 'string' ? meta['type'] : '',
    formatFailures: num(t['formatFailures']),
    finished: t['finished'] === true,
    latencyMs: num(t['latencyMs']),
  };
}

function treeRow(v: unknown, n: number): Omit<TreeRow, 'pairs'> {
  if (!isObject(v)) throw new Error('not a JSON object');
  const q = isObject(v['question']) ? v['question'] : {};
  const nodes = Array.isArray(v['nodes']) ? (v['nodes'] as unknown[]).filter(isObject) : [];
  const leaves = nodes.filter((x) => x['terminal'] === true && typeof x['value'] === 'number').map((x) => x['value'] as number);
  return {
    n,
    id: String(v['id'] ?? q['id'] ?? n),
    question: str(q['question'] ?? v['question'], 200),
    type: typeof q['type'] === 'string' ? q['type'] : '',
    nodes: nodes.length,
    best: leaves.length ? Math.max(...leaves) : null,
  };
}

const rowsOf = <S>(index: LineIndex<S>) => index.lines.map((l) => (l.summary !== undefined ? l.summary : { n: l.n, error: l.error ?? 'unreadable' }));

function readJsonFile(path: string | undefined): unknown {
  if (!path) return undefined;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch (e) {
    return { error: `${path}: ${(e as Error).message}` };
  }
}

/** A training curve: one metric over steps (or epochs). */
export interface Series {
  name: string;
  x: string;
  points: [number, number][];
}

/** The training curves of a gym policy's or a PRM's training record, or of TRL's log_history (trainer_state.json's, or ragtrail's log_history.jsonl). */
export function trainingSeries(value: unknown): { series: Series[]; scalars: Record<string, number> } {
  const series: Series[] = [];
  const scalars: Record<string, number> = {};
  const fromLog = (prefix: string, log: unknown[], x: string) => {
    const byKey = new Map<string, [number, number][]>();
    log.forEach((entry, i) => {
      if (!isObject(entry)) return;
      const step = typeof entry[x] === 'number' ? (entry[x] as number) : i;
      for (const [k, v] of Object.entries(entry)) {
        if (k === x || typeof v !== 'number' || !Number.isFinite(v)) continue;
        if (!byKey.has(k)) byKey.set(k, []);
        byKey.get(k)!.push([step, v]);
      }
    });
    for (const [k, points] of byKey) if (points.length > 1) series.push({ name: prefix ? `${prefix} ${k}` : k, x, points });
  };
  if (!isObject(value)) return { series, scalars };
  if (Array.isArray(value['log_history'])) fromLog('', value['log_history'] as unknown[], 'step'); // TRL / transformers
  const training = value['training'];
  if (Array.isArray(training)) {
    for (const t of training) if (isObject(t) && Array.isArray(t['log'])) fromLog(String(t['stage'] ?? t['algo'] ?? ''), t['log'] as unknown[], 'step');
  } else if (isObject(training)) {
    if (Array.isArray(training['losses'])) series.push({ name: 'loss', x: 'epoch', points: (training['losses'] as unknown[]).map((v, i) => [i + 1, num(v)]) });
    for (const [k, v] of Object.entries(training)) if (typeof v === 'number') scalars[k] = v;
  }
  return { series, scalars };
}

/** The data behind every view, read from the sources' files with their line indexes cached. */
export class ViewData {
  private readonly byId: Map<string, Source>;
  private readonly indexes = new Map<string, Promise<LineIndex<unknown>>>();

  constructor(readonly sources: readonly Source[]) {
    this.byId = new Map(sources.map((s) => [s.id, s]));
  }

  source(id: string, kind?: Source['kind']): Source {
    const s = this.byId.get(id);
    if (!s || (kind && s.kind !== kind)) throw new InputError(`no ${kind ?? 'source'} with id ${id}`, 'reload the list of sources');
    return s;
  }

  private index<S>(path: string, summarize: (v: unknown, n: number) => S): Promise<LineIndex<S>> {
    const key = `${path}|${summarize.name}`;
    const cached = this.indexes.get(key) as Promise<LineIndex<S>> | undefined;
    const fresh = (async (): Promise<LineIndex<S>> => {
      const have = cached ? await cached.catch(() => undefined) : undefined;
      return have && !isStale(have) ? have : indexJsonl(path, summarize);
    })();
    this.indexes.set(key, fresh as Promise<LineIndex<unknown>>);
    return fresh;
  }

  /** The list of sources with a headline figure each. */
  list(): { sources: { id: string; kind: string; rel: string; title: string; headline: Record<string, unknown> }[] } {
    return {
      sources: this.sources.map((s) => {
        const headline: Record<string, unknown> = {};
        if (s.kind === 'run') {
          const sum = readJsonFile(s.files['summary']);
          if (isObject(sum)) for (const k of ['questions', 'em', 'f1', 'acc', 'retrievalCount', 'agent', 'policy']) if (k in sum) headline[k] = sum[k];
        } else if (s.kind === 'annotation') {
          const stats = readJsonFile(s.files['stats']);
          if (isObject(stats)) for (const k of ['method', 'questions', 'pairs', 'values']) if (k in stats) headline[k] = stats[k];
        } else if (s.kind === 'results') {
          const r = readJsonFile(s.files['results']);
          if (isObject(r)) {
            if (Array.isArray(r['cells'])) headline['systems'] = r['cells'].length;
            if (Array.isArray(r['claims'])) headline['claims'] = r['claims'].length;
            if (typeof r['paper'] === 'string') headline['paper'] = r['paper'];
          }
        }
        return { id: s.id, kind: s.kind, rel: s.rel, title: s.title, headline };
      }),
    };
  }

  /** A run: its settings, summary, the reward files beside it, and one row per question. */
  async run(id: string): Promise<{ id: string; title: string; rel: string; settings: unknown; summary: unknown; rewards: string[]; rows: (RunRow | ErrorRow)[] }> {
    const s = this.source(id, 'run');
    const index = await this.index(s.files['trajectories']!, runRow);
    return {
      id,
      title: s.title,
      rel: s.rel,
      settings: readJsonFile(s.files['run']),
      summary: readJsonFile(s.files['summary']),
      rewards: Object.keys(s.files).filter((k) => k.startsWith('rewards:')).map((k) => k.slice('rewards:'.length)),
      rows: rowsOf(index),
    };
  }

  /** One trajectory in full, with its outcome rewards from every rewards file beside the run. */
  async trajectory(id: string, n: number): Promise<{ n: number; trajectory: unknown; rewards: Record<string, unknown> }> {
    const s = this.source(id, 'run');
    const index = await this.index(s.files['trajectories']!, runRow);
    const line = index.lines[n];
    if (!line) throw new InputError(`run ${id} has no line ${n}`, 'pick a question from the list');
    if (line.error) return { n, trajectory: { error: line.error }, rewards: {} };
    const trajectory = readIndexedLine(index.path, line);
    const rewards: Record<string, unknown> = {};
    const qid = (line.summary as RunRow).id;
    for (const [role, path] of Object.entries(s.files)) {
      if (!role.startsWith('rewards:')) continue;
      const rIndex = await this.index(path, rewardId);
      const hit = rIndex.lines.find((l) => l.summary === qid);
      if (hit) rewards[role.slice('rewards:'.length)] = readIndexedLine(path, hit);
    }
    return { n, trajectory, rewards };
  }

  /** An annotation: its settings and statistics and one row per tree. */
  async annotation(id: string): Promise<{ id: string; title: string; rel: string; settings: unknown; stats: unknown; rows: (TreeRow | ErrorRow)[]; pairsWithoutTrees: number }> {
    const s = this.source(id, 'annotation');
    const pairs = s.files['pairs'] ? await this.index(s.files['pairs'], pairQuestion) : undefined;
    const perQuestion = new Map<string, number>();
    for (const l of pairs?.lines ?? []) if (typeof l.summary === 'string') perQuestion.set(l.summary, (perQuestion.get(l.summary) ?? 0) + 1);
    const trees = s.files['trees'] ? await this.index(s.files['trees'], treeRow) : undefined;
    const rows = trees ? rowsOf(trees).map((r) => ('error' in r ? r : { ...r, pairs: perQuestion.get(r.id) ?? 0 })) : [];
    const treeIds = new Set(rows.flatMap((r) => ('id' in r ? [r.id] : [])));
    return {
      id,
      title: s.title,
      rel: s.rel,
      settings: readJsonFile(s.files['settings']),
      stats: readJsonFile(s.files['stats']),
      rows,
      pairsWithoutTrees: [...perQuestion.entries()].filter(([q]) => !treeIds.has(q)).reduce((a, [, c]) => a + c, 0),
    };
  }

  /** One search tree in full, with the pairs mined from it. */
  async tree(id: string, n: number): Promise<{ n: number; tree: unknown; pairs: unknown[] }> {
    const s = this.source(id, 'annotation');
    if (!s.files['trees']) throw new InputError(`annotation ${id} has no trees.jsonl`, 'annotate with an MCTS method to get trees');
    const index = await this.index(s.files['trees'], treeRow);
    const line = index.lines[n];
    if (!line) throw new InputError(`annotation ${id} has no tree ${n}`, 'pick a tree from the list');
    if (line.error) return { n, tree: { error: line.error }, pairs: [] };
    const qid = (line.summary as TreeRow).id;
    const pairsIndex = s.files['pairs'] ? await this.index(s.files['pairs'], pairQuestion) : undefined;
    const pairs = (pairsIndex?.lines ?? []).filter((l) => l.summary === qid).map((l) => readIndexedLine(pairsIndex!.path, l));
    return { n, tree: readIndexedLine(index.path, line), pairs };
  }

  /**
   * An eval's or a recipe's results, with the runs of its systems found among the sources (so a table row
   * links to the run's questions).
   */
  results(id: string): { id: string; title: string; rel: string; results: unknown; recipe: unknown; runs: { system: string; dataset: string; id: string }[] } {
    const s = this.source(id, 'results');
    const runs = this.sources
      .filter((r) => r.kind === 'run' && r.dir.startsWith(s.dir))
      .map((r) => {
        const run = readJsonFile(r.files['run']);
        const system = isObject(run) && isObject(run['system']) ? String(run['system']['name']) : r.title;
        const dataset = isObject(run) && isObject(run['dataset']) ? String(run['dataset']['name']) : '';
        return { system, dataset, id: r.id, rel: r.rel };
      });
    return { id, title: s.title, rel: s.rel, results: readJsonFile(s.files['results']), recipe: readJsonFile(s.files['recipe']), runs };
  }

  /** A training record's curves. */
  training(id: string): { id: string; title: string; rel: string; series: Series[]; scalars: Record<string, number> } {
    const s = this.source(id, 'training');
    const path = s.files['log']!;
    // ragtrail's TRL runs write TRL's log_history one entry a line; a bad line is left out of the curves.
    const value = path.endsWith('.jsonl') ? { log_history: readFileSync(path, 'utf8').split('\n').flatMap((l) => { try { return l.trim() ? [JSON.parse(l) as unknown] : []; } catch { return []; } }) } : readJsonFile(path);
    return { id, title: s.title, rel: s.rel, ...trainingSeries(value) };
  }
}

function rewardId(v: unknown): string {
  return isObject(v) ? String(v['id']) : '';
}

function pairQuestion(v: unknown): string {
  if (!isObject(v)) return '';
  if (typeof v['questionId'] === 'string') return v['questionId'];
  return String(v['id'] ?? '').split(':')[0] ?? '';
}
