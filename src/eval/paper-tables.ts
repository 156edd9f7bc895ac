/**
 * The papers' main tables as runnable evaluations (`recipes/tables/*.yaml`, `ragtrail table`): each row a
 * system — a baseline agent on the paper's backbone model, or a released or trained checkpoint served by
 * the user — and each column one of the paper's benchmarks as `ragtrail download` fetches it, with the
 * paper's selection of questions. A row ragtrail cannot run yet says why (`missing`), and a row that
 * needs a checkpoint says which (`checkpoint`: the paper's link where it gives one); `ragtrail table`
 * lists both and runs the rest through `ragtrail eval`, with CIs and paired tests.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { InputError } from '../core/errors.js';
import { DOWNLOADS } from '../corpus/download.js';
import { protocolNames } from '../agents/registry.js';
import type { EvalConfig } from './results.js';

/** Where the shipped tables live (recipes/tables of the package). */
export const TABLES_DIR = resolve(fileURLToPath(new URL('../../recipes/tables', import.meta.url)));

const row = z
  .object({
    name: z.string(),
    agent: z.string().optional(),
    select: z.enum(['greedy', 'prm', 'vote', 'orm']).optional(),
    n: z.number().int().positive().optional(),
    /** The checkpoint the row needs (a Hub id or a description): served by the user, `--model NAME=SPEC`. */
    checkpoint: z.string().optional(),
    /** The row's second model in the paper (a compressor, a classifier): passed as `--aux NAME=SPEC`; without it the row's own model does that work. */
    aux: z.string().optional(),
    /** Why ragtrail cannot run the row yet. */
    missing: z.string().optional(),
    note: z.string().optional(),
  })
  .strict()
  .refine((r) => r.agent !== undefined || r.missing !== undefined, { message: 'needs an agent, or a "missing" reason' });

/** The schema of a table file (recipes/tables/*.yaml). */
export const paperTableSchema = z
  .object({
    name: z.string(),
    paper: z.string(),
    table: z.string(),
    /** The model the prompt-based rows run on, in the paper. */
    backbone: z.string(),
    topK: z.number().int().positive().optional(),
    /** Benchmarks: a `ragtrail download` set and split, or a file the user brings (`file`, relative to --data). */
    datasets: z
      .array(
        z
          .object({ name: z.string(), download: z.string().optional(), split: z.string().optional(), file: z.string().optional(), sample: z.number().int().positive().optional(), seed: z.number().int().min(0).optional(), note: z.string().optional() })
          .strict()
          .refine((d) => (d.download !== undefined && d.split !== undefined) !== (d.file !== undefined), { message: 'needs download and split, or file' }),
      )
      .min(1),
    systems: z.array(row).min(1),
    /** What of the table has a meaning offline (the synthetic world, the gym), and where. */
    offline: z.string(),
  })
  .strict();

/** A paper's main table: its backbone, benchmarks and rows. */
export type PaperTable = z.infer<typeof paperTableSchema>;

/** A table by name (recipes/tables/NAME.yaml) or path; checked against the schema, the agents and the downloads. */
export function loadPaperTable(nameOrFile: string): { table: PaperTable; path: string } {
  const path = existsSync(nameOrFile) ? resolve(nameOrFile) : join(TABLES_DIR, `${nameOrFile}.yaml`);
  if (!existsSync(path)) throw new InputError(`no table "${nameOrFile}"`, `use one of ${paperTableNames().join(', ')}, or the path of a YAML file`);
  const parsed = paperTableSchema.safeParse(parseYaml(readFileSync(path, 'utf8')));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new InputError(`${path}: ${issue.path.join('.') || '(top)'} ${issue.message}`, 'see recipes/tables/*.yaml for the fields');
  }
  const t = parsed.data;
  for (const d of t.datasets) {
    if (d.file) continue;
    const set = (DOWNLOADS as Record<string, { files: { split: string }[] }>)[d.download!];
    if (!set) throw new InputError(`${path}: dataset ${d.name}: no download "${d.download}"`, `use one of ${Object.keys(DOWNLOADS).join(', ')}`);
    if (!set.files.some((f) => f.split === d.split)) throw new InputError(`${path}: dataset ${d.name}: ${d.download} has no split "${d.split}"`);
  }
  for (const s of t.systems) if (s.agent && !protocolNames().includes(s.agent)) throw new InputError(`${path}: system ${s.name}: no agent "${s.agent}"`, `agents: ${protocolNames().join(', ')}`);
  return { table: t, path };
}

/** The shipped tables' names. */
export function paperTableNames(): string[] {
  return ['reasonrag', 'rag-gym', 'lws', 'prorag', 'arena'];
}

/** Options of {@link buildTableEval}. */
export interface TableRunOptions {
  /** The backbone model for the prompt-based rows (an LLM spec). */
  llm: string;
  /** The folder `ragtrail download` wrote the datasets to. */
  data: string;
  index: string;
  out: string;
  /** Checkpoints served for the rows that need one, by row name. */
  models?: Record<string, string>;
  /** At most this many questions per dataset (a quick look; the paper's selection otherwise). */
  limit?: number;
  /** The PRM of the rows that select by one (`select: prm`). */
  prm?: string;
  /** Second models of the rows that use one (`aux`), by row name. */
  auxModels?: Record<string, string>;
}

/** The eval config of a table's runnable rows, and the rows left out with the reason. */
export function buildTableEval(t: PaperTable, o: TableRunOptions): { config: EvalConfig; notRun: { name: string; why: string }[] } {
  const notRun: { name: string; why: string }[] = [];
  const systems: EvalConfig['systems'] = [];
  for (const s of t.systems) {
    if (s.missing) {
      notRun.push({ name: s.name, why: `not in ragtrail yet: ${s.missing}` });
      continue;
    }
    const llm = s.checkpoint ? o.models?.[s.name] : o.llm;
    if (!llm) {
      notRun.push({ name: s.name, why: `needs its checkpoint (${s.checkpoint}): serve it and pass --model "${s.name}=openai:URL#MODEL"` });
      continue;
    }
    if ((s.select === 'prm' || s.select === 'orm') && !o.prm) {
      notRun.push({ name: s.name, why: `selects by a reward model: pass --prm SPEC` });
      continue;
    }
    const auxLlm = o.auxModels?.[s.name];
    systems.push({ name: s.name, agent: s.agent!, llm, ...(auxLlm && { auxLlm }), ...(s.select && { select: s.select }), ...(s.n && { n: s.n }), ...((s.select === 'prm' || s.select === 'orm') && { prm: o.prm }), ...(t.topK && { topK: t.topK }) });
  }
  for (const name of Object.keys(o.auxModels ?? {})) if (!t.systems.some((s) => s.name === name && s.aux)) throw new InputError(`--aux ${name}=…: the table has no row "${name}" with a second model`, `rows that have one: ${t.systems.filter((s) => s.aux).map((s) => s.name).join(', ') || 'none'}`);
  for (const name of Object.keys(o.models ?? {})) if (!t.systems.some((s) => s.name === name && s.checkpoint)) throw new InputError(`--model ${name}=…: the table has no row "${name}" that takes a checkpoint`, `rows that do: ${t.systems.filter((s) => s.checkpoint).map((s) => s.name).join(', ') || 'none'}`);
  if (systems.length === 0) throw new InputError(`table ${t.name}: no row can run`, 'pass --model for the rows that need a checkpoint');
  const datasets = t.datasets.map((d) => {
    const rel = d.file ?? (DOWNLOADS as Record<string, { files: { path: string; split: string }[] }>)[d.download!]!.files.find((f) => f.split === d.split)!.path;
    const path = join(o.data, rel);
    if (!existsSync(path)) throw new InputError(`${path} is missing (${t.paper}'s ${d.name})`, d.file ? (d.note ?? `bring the file to ${path}`) : `ragtrail download ${d.download} --split ${d.split} --out ${o.data}`);
    return { name: d.name, path, ...(o.limit ? { limit: o.limit } : d.sample ? { sample: d.sample, seed: d.seed ?? 0 } : {}) };
  });
  return { config: { index: o.index, out: o.out, datasets, systems, baseline: systems[0]!.name }, notRun };
}
