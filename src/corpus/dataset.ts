/**
 * Loading question sets: one entry point for every dataset layout ragtrail reads. The layout is
 * detected from the first record (or forced with `format`); records stream one at a time, so a
 * file of any size loads in bounded memory.
 */
import { formatLocation, InputError, oneLine, RecordError, type SourceLocation } from '../core/errors.js';
import { firstSignificantChar, invalidUtf8Error, readJsonRecords, readLines } from '../core/io.js';
import type { Question } from '../core/types.js';
import { asObject, type Json } from './formats/fields.js';
import { fromFlashrag } from './formats/flashrag.js';
import { fromHotpot } from './formats/hotpotqa.js';
import { fromMusique } from './formats/musique.js';
import { fromMedqa, looksLikeMedqa } from './formats/medqa.js';

/** Question-set layouts {@link loadDataset} reads (`2wiki` shares HotpotQA's converter). */
export const DATASET_FORMATS = ['flashrag', 'hotpotqa', '2wiki', 'musique', 'medqa'] as const;
/** One of {@link DATASET_FORMATS}. */
export type DatasetFormat = (typeof DATASET_FORMATS)[number];

const CONVERTERS: Record<DatasetFormat, (rec: Json, loc: SourceLocation) => Question> = {
  flashrag: fromFlashrag,
  hotpotqa: fromHotpot,
  '2wiki': fromHotpot,
  musique: fromMusique,
  medqa: fromMedqa,
};

/** Guesses the layout from one record's fields; undefined when nothing fits. */
export function detectFormat(rec: Json): DatasetFormat | undefined {
  if ('golden_answers' in rec) return 'flashrag';
  if ('paragraphs' in rec || 'question_decomposition' in rec) return 'musique';
  if ('evidences' in rec) return '2wiki';
  if ('context' in rec || 'supporting_facts' in rec) return 'hotpotqa';
  if (looksLikeMedqa(rec)) return 'medqa';
  return undefined;
}

/** Options of {@link loadDataset}. */
export interface LoadOptions {
  /** Force a layout instead of detecting it from the first record. */
  format?: DatasetFormat;
  /** Skip records that do not fit (counted in `onInvalid`) instead of failing on the first one. */
  skipInvalid?: boolean;
  /** Called for each skipped record when `skipInvalid` is set. */
  onInvalid?: (error: InputError) => void;
  /** Stop after this many questions. */
  limit?: number;
  /**
   * The calling command's flags that force a layout and skip bad records, named in error hints.
   * Without them the hints say how to fix the file itself: a flag named there must exist.
   */
  flags?: { format?: string; skipInvalid?: string };
}

/** The field each layout is recognised by (detectFormat), for the hint of a file that fits none. */
const DETECTED_BY = 'golden_answers (flashrag), context or supporting_facts (hotpotqa), evidences (2wiki), paragraphs or question_decomposition (musique), options with answer_idx (medqa)';

/**
 * The hint for a split that holds no question: the splits the file has (from metadata.split), and the
 * `--split` forms that work. `total` is the number of questions in the file.
 */
export function missingSplitHint(splits: ReadonlySet<string>, total: number, flag = '--split'): string {
  if (splits.size === 0) return `it has no metadata.split: leave ${flag} out to use all ${total} questions`;
  return `its splits: ${[...splits].map((x) => JSON.stringify(x)).join(', ')}; pick one with ${flag} NAME, or use all ${total} questions with ${flag} ""`;
}

/** Streams the questions of a dataset file (JSON array, JSON Lines or .gz of either). */
export async function* loadDataset(path: string, opts: LoadOptions = {}): AsyncGenerator<Question> {
  let format = opts.format;
  let count = 0;
  const seen = new Set<string>();
  for await (const { value, loc } of readJsonRecordsTolerant(path, opts)) {
    if (opts.limit !== undefined && count >= opts.limit) return;
    try {
      const rec = asObject(value, loc);
      if (!format) {
        format = detectFormat(rec);
        if (!format) {
          throw new InputError(
            `${formatLocation(loc)}: cannot tell the dataset layout (fields: ${Object.keys(rec).slice(0, 8).join(', ')})`,
            opts.flags?.format
              ? `pass ${opts.flags.format} ${DATASET_FORMATS.join('|')}, or give the records the fields a layout is recognised by: ${DETECTED_BY}`
              : `give the records the fields a layout is recognised by: ${DETECTED_BY}`,
          );
        }
      }
      const q = CONVERTERS[format](rec, loc);
      if (seen.has(q.id)) throw new RecordError(loc, 'id', `"${q.id}" repeats an earlier question's id`, 'ids must be unique within a dataset');
      seen.add(q.id);
      count++;
      yield q;
    } catch (e) {
      if (opts.skipInvalid && e instanceof RecordError) opts.onInvalid?.(e);
      else throw e;
    }
  }
}

/** Like readJsonRecords, but with --skip-invalid a JSON Lines line that does not parse is reported and skipped. */
async function* readJsonRecordsTolerant(path: string, opts: LoadOptions) {
  if (!opts.skipInvalid) {
    yield* readJsonRecords(path, opts.flags?.skipInvalid);
    return;
  }
  if ((await firstSignificantChar(path)) === '[') {
    yield* readJsonRecords(path);
    return;
  }
  for await (const { text, line, invalidUtf8 } of readLines(path)) {
    if (invalidUtf8) {
      opts.onInvalid?.(invalidUtf8Error(path, line));
      continue;
    }
    if (text.trim() === '') continue;
    const loc = { file: path, line };
    try {
      yield { value: JSON.parse(text) as unknown, loc };
    } catch (e) {
      const why = oneLine(e instanceof Error ? e.message : String(e));
      opts.onInvalid?.(new InputError(`${path}:${line}: invalid JSON (${why})`));
    }
  }
}

/** All questions of a file, with the invalid records that were skipped (when `skipInvalid` is set). */
export async function loadDatasetAll(path: string, opts: LoadOptions = {}): Promise<{ questions: Question[]; invalid: InputError[] }> {
  const invalid: InputError[] = [];
  const questions: Question[] = [];
  for await (const q of loadDataset(path, { ...opts, onInvalid: (e) => { invalid.push(e); opts.onInvalid?.(e); } })) questions.push(q);
  return { questions, invalid };
}
