/**
 * Prediction files accepted by `ragtrail score`:
 * - JSON Lines `{"id", "prediction"}` (ragtrail's own);
 * - HotpotQA's official prediction file `{"answer": {id: text}, "sp": {...}}`;
 * - FlashRAG's `intermediate_data.json` (array of `{id, output: {pred}}`), so a FlashRAG run can be rescored as is;
 * - a ragtrail run (its folder or `trajectories.jsonl`), whose lines carry `prediction` and the gold `answers`.
 */
import { type ErrorRecord, errorRecord, formatLocation, InputError, RecordError, type SourceLocation } from '../core/errors.js';
import { readJsonRecordsEach } from '../core/io.js';
import type { Question } from '../core/types.js';
import { trajectoriesPath } from './trajectories.js';

/** id → predicted answer text. */
export type Predictions = Map<string, string>;

function addPrediction(preds: Predictions, id: unknown, text: unknown, file: string, line: number): void {
  const loc = { file, line };
  if (typeof id !== 'string' && typeof id !== 'number') throw new RecordError(loc, 'id', 'is missing');
  if (text === null || text === undefined) text = '';
  if (typeof text !== 'string' && typeof text !== 'number') throw new RecordError(loc, 'prediction', `must be a string, got ${typeof text}`);
  const key = String(id);
  if (preds.has(key)) throw new RecordError(loc, 'id', `"${key}" has two predictions`, 'keep one prediction per question');
  preds.set(key, String(text));
}

/**
 * Reads predictions by question id from a ragtrail run (folder or trajectories.jsonl), JSON Lines
 * `{id, prediction}`, HotpotQA's official `{answer: {id: text}}` or FlashRAG's
 * `intermediate_data.json`.
 * A record that is not JSON, malformed, or repeats an id throws its RecordError; with `errors`, it becomes
 * an error record there and the other records are still read. Throws an InputError when none are found.
 */
export async function loadPredictions(location: string, errors?: ErrorRecord[]): Promise<Predictions> {
  const path = trajectoriesPath(location);
  const preds: Predictions = new Map();
  for await (const r of readJsonRecordsEach(path)) {
    try {
      if ('error' in r) throw r.error;
      readPrediction(preds, r.value, r.loc);
    } catch (e) {
      if (!errors || !(e instanceof InputError)) throw e;
      errors.push(errorRecord(e, 'error' in r ? undefined : r.value));
    }
  }
  if (preds.size === 0) throw new InputError(`${path}: no predictions found`, errors?.length ? `none of its ${errors.length} records could be read` : 'the file is empty');
  return preds;
}

/** Adds the prediction(s) of one record in any accepted layout; throws a RecordError when it fits none. */
function readPrediction(preds: Predictions, value: unknown, loc: SourceLocation): void {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new RecordError(loc, '(record)', 'is not a JSON object');
  const rec = value as Record<string, unknown>;
  const answerMap = rec['answer'];
  if (answerMap && typeof answerMap === 'object' && !Array.isArray(answerMap) && !('id' in rec)) {
    // HotpotQA official: one object holding every answer.
    for (const [id, text] of Object.entries(answerMap as Record<string, unknown>)) addPrediction(preds, id, text, loc.file, loc.line);
    return;
  }
  const output = rec['output'];
  if (output && typeof output === 'object' && 'pred' in output) {
    addPrediction(preds, rec['id'], (output as Record<string, unknown>)['pred'], loc.file, loc.line);
    return;
  }
  if (!('prediction' in rec) && !('pred' in rec)) {
    throw new RecordError(loc, 'prediction', 'is missing', 'lines must look like {"id": ..., "prediction": ...}');
  }
  addPrediction(preds, rec['id'], rec['prediction'] ?? rec['pred'], loc.file, loc.line);
}

/**
 * The gold side of a predictions file that carries it, for scoring without a dataset: a ragtrail run
 * (each trajectory's `answers`) or FlashRAG's intermediate_data.json (a JSON array whose records hold
 * `golden_answers`). Files without gold answers (HotpotQA's, `{id, prediction}` lines) need --dataset.
 * With `errors`, a later record without gold answers becomes an error record there (records that are not
 * readable at all are loadPredictions' to report) and the others are still read.
 */
export async function questionsFromRun(location: string, errors?: ErrorRecord[]): Promise<Question[]> {
  const path = trajectoriesPath(location);
  const out: Question[] = [];
  for await (const r of readJsonRecordsEach(path)) {
    // An unreadable record is already an error record of loadPredictions, which reads the same file.
    if ('error' in r) {
      if (errors) continue;
      throw r.error;
    }
    const { value, loc } = r;
    const rec = (value && typeof value === 'object' && !Array.isArray(value) ? value : undefined) as Record<string, unknown> | undefined;
    const id = rec?.['id'];
    if (!rec || (typeof id !== 'string' && typeof id !== 'number')) {
      if (errors) continue; // loadPredictions gives this record its error record
      throw rec ? new RecordError(loc, 'id', 'is missing') : new RecordError(loc, '(record)', 'is not a JSON object');
    }
    const answers = rec['answers'] ?? rec['golden_answers'];
    if (!Array.isArray(answers)) {
      const noGold = new InputError(`${formatLocation(loc)}: no gold answers ("answers" or "golden_answers") in this predictions file`, 'pass --dataset FILE with the questions and their gold answers');
      // A file whose first record has no gold answers has none: that is the file's problem, not a record's.
      if (!errors || out.length === 0) throw noGold;
      errors.push(errorRecord(noGold, rec));
      continue;
    }
    out.push({ id: String(id), question: typeof rec['question'] === 'string' ? rec['question'] : '', answers: answers.map(String) });
  }
  if (out.length === 0) throw new InputError(`${path}: no records`, 'the file is empty');
  return out;
}
