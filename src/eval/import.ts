/**
 * Imports runs made elsewhere as ragtrail trajectories, so they can be scored, rewarded and mined
 * like native ones. `search-r1`: FlashRAG / Search-R1 result files (`intermediate_data.json`: a
 * JSON array of {id, question, golden_answers, output: {final_response, pred, prompt_tokens,
 * completion_tokens, …}}): a search counts where the environment answered it (an <information> block
 * right after the turn's </search>), its documents are that block's, other turns are parsed with the
 * search-r1 protocol, and the prediction is the file's own `pred`.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppendLog } from '../core/append-log.js';
import { type ErrorRecord, errorRecord, InputError, RecordError } from '../core/errors.js';
import { DirLock } from '../core/lock.js';
import { readJsonRecordsEach, writeTextAtomicSync } from '../core/io.js';
import type { Trajectory } from '../core/trajectory.js';
import { searchR1Steps } from '../agents/transcript.js';
import { readTrajectories, scoreTrajectory, summarize } from './trajectories.js';

export const IMPORT_FORMATS = ['search-r1'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

interface FlashragRecord {
  id?: unknown;
  question?: unknown;
  golden_answers?: unknown;
  output?: { final_response?: unknown; pred?: unknown; prompt_tokens?: unknown; completion_tokens?: unknown; query?: unknown; stop_reason?: unknown };
}

/** One FlashRAG/Search-R1 record → a trajectory. */
export function fromSearchR1(rec: FlashragRecord, loc: { file: string; line: number; record?: number }): Trajectory {
  if (typeof rec.id !== 'string' && typeof rec.id !== 'number') throw new RecordError(loc, 'id', 'is missing');
  if (typeof rec.question !== 'string') throw new RecordError(loc, 'question', 'is missing');
  if (!Array.isArray(rec.golden_answers)) throw new RecordError(loc, 'golden_answers', 'is missing');
  const out = rec.output;
  if (!out || typeof out.final_response !== 'string') throw new RecordError(loc, 'output.final_response', 'is missing');
  const question = { id: String(rec.id), question: rec.question, answers: rec.golden_answers.map(String) };
  const steps = searchR1Steps(out.final_response, question);
  const pred = typeof out.pred === 'string' ? out.pred : '';
  const promptTokens = Number(out.prompt_tokens ?? 0) || 0;
  const completionTokens = Number(out.completion_tokens ?? 0) || 0;
  const t: Trajectory = {
    id: question.id,
    question: question.question,
    answers: question.answers,
    agent: 'search-r1',
    policy: 'imported:search-r1',
    steps,
    prediction: pred,
    finished: steps.some((s) => s.action.type === 'answer'),
    retrievalCount: steps.filter((s) => s.action.type === 'search').length,
    formatFailures: steps.filter((s) => s.action.type === 'invalid').length,
    usage: { promptTokens, completionTokens, requests: steps.length },
    latencyMs: 0,
    source: 'import:search-r1',
    meta: { stopReason: out.stop_reason, prompt: typeof out.query === 'string' ? out.query : undefined },
  };
  t.metrics = scoreTrajectory(t);
  return t;
}

/**
 * Imports every record of `file` into the run folder `outDir` (records already there are skipped). A record
 * that cannot be read or converted becomes an `{id, error}` line of `outDir/import-errors.jsonl` (rewritten
 * each import; removed when there are none) and the others are imported.
 */
export async function importRun(format: ImportFormat, file: string, outDir: string): Promise<{ imported: number; skipped: number; errors: number; errorsPath: string }> {
  if (format !== 'search-r1') throw new InputError(`unknown import format "${format}"`, `use one of ${IMPORT_FORMATS.join(', ')}`);
  mkdirSync(outDir, { recursive: true });
  const lock = DirLock.acquire(join(outDir, '.lock'), `run folder ${outDir}`);
  const log = AppendLog.open<Trajectory>(join(outDir, 'trajectories.jsonl'));
  let imported = 0;
  let skipped = 0;
  const errors: ErrorRecord[] = [];
  try {
    for await (const r of readJsonRecordsEach(file)) {
      let t: Trajectory;
      try {
        if ('error' in r) throw r.error;
        t = fromSearchR1((r.value ?? {}) as FlashragRecord, r.loc);
      } catch (e) {
        if (!(e instanceof InputError)) throw e;
        errors.push(errorRecord(e, 'error' in r ? undefined : r.value));
        continue;
      }
      if (log.has(t.id)) {
        skipped++;
        continue;
      }
      log.append(t);
      imported++;
    }
  } finally {
    log.close();
    lock.release();
  }
  const errorsPath = join(outDir, 'import-errors.jsonl');
  if (errors.length > 0) writeTextAtomicSync(errorsPath, errors.map((e) => JSON.stringify(e) + '\n').join(''));
  else rmSync(errorsPath, { force: true });
  const summary = { ...summarize(await readTrajectories(outDir)), source: `import:${format} of ${file}` };
  writeFileSync(join(outDir, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
  return { imported, skipped, errors: errors.length, errorsPath };
}
