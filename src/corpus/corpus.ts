/**
 * Passage corpora on disk. Reads ragtrail's own JSON Lines (`{id, title, text}`), FlashRAG /
 * Pyserini JSON Lines (`{id, contents}` with contents = `"Title"\ntext`), MedRAG's chunks
 * (`{id, title, content, contents}`: title and content are read), and DPR-style TSV
 * (`id  text  title` with a header); writes the first two. Builds a deduplicated corpus from the
 * context passages of question sets.
 */
import { InputError, RecordError } from '../core/errors.js';
import { invalidUtf8Error, readLines, writeFileAtomic, writeLine } from '../core/io.js';
import type { Passage, Question } from '../core/types.js';

/** Layouts a corpus can be written in: ragtrail's `{id, title, text}` lines or FlashRAG's `{id, contents}` lines. */
export const CORPUS_FORMATS = ['ragtrail', 'flashrag'] as const;
/** One of {@link CORPUS_FORMATS}. */
export type CorpusFormat = (typeof CORPUS_FORMATS)[number];

/** FlashRAG's `contents`: the title in double quotes on the first line, the text after it. */
export function splitContents(contents: string): { title: string; text: string } {
  const nl = contents.indexOf('\n');
  if (nl < 0) return { title: '', text: contents.trim() };
  let title = contents.slice(0, nl).trim();
  if (title.length >= 2 && title.startsWith('"') && title.endsWith('"')) title = title.slice(1, -1);
  return { title, text: contents.slice(nl + 1).trim() };
}

export function joinContents(p: Passage): string {
  return `"${p.title}"\n${p.text}`;
}

function passageFromRecord(value: unknown, file: string, line: number): Passage {
  const loc = { file, line };
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new RecordError(loc, '(record)', 'is not a JSON object');
  const rec = value as Record<string, unknown>;
  const rawId = rec['id'] ?? rec['_id'] ?? rec['docid'];
  if (typeof rawId !== 'string' && typeof rawId !== 'number') throw new RecordError(loc, 'id', 'is missing', 'every passage needs an id');
  const id = String(rawId);
  if (typeof rec['text'] === 'string') {
    return { id, title: typeof rec['title'] === 'string' ? rec['title'] : '', text: rec['text'] };
  }
  // MedRAG's chunks (`{id, title, content, contents}`, contents = "title. content" for its BM25): title
  // and content kept apart, as MedCPT's article encoder reads them; before `contents`, which has no line
  // break for splitContents to find the title by.
  if (typeof rec['content'] === 'string') return { id, title: typeof rec['title'] === 'string' ? rec['title'] : '', text: rec['content'] };
  if (typeof rec['contents'] === 'string') return { id, ...splitContents(rec['contents']) };
  throw new RecordError(loc, 'text', 'is missing', 'a passage needs "text" (with "title"), MedRAG\'s "content" (with "title") or FlashRAG\'s "contents"');
}

/** DPR's TSV quotes fields containing tabs or quotes and doubles inner quotes. */
function unquoteTsv(field: string): string {
  if (field.length >= 2 && field.startsWith('"') && field.endsWith('"')) return field.slice(1, -1).replaceAll('""', '"');
  return field;
}

function tsvColumns(path: string, header: string): { id: number; text: number; title: number } {
  const names = header.split('\t').map((f) => f.trim().toLowerCase());
  const cols = { id: names.indexOf('id'), text: names.indexOf('text'), title: names.indexOf('title') };
  if (cols.id < 0 || cols.text < 0) throw new InputError(`${path}:1: a TSV corpus needs a header with "id" and "text" columns (and optionally "title")`, 'add the header line');
  return cols;
}

function tsvPassage(path: string, line: number, text: string, cols: { id: number; text: number; title: number }): Passage {
  const fields = text.split('\t');
  const id = fields[cols.id];
  const body = fields[cols.text];
  if (id === undefined || body === undefined) throw new RecordError({ file: path, line }, 'text', 'is missing (too few columns)');
  return { id: unquoteTsv(id), title: cols.title >= 0 ? unquoteTsv(fields[cols.title] ?? '') : '', text: unquoteTsv(body) };
}

/**
 * The passage ids seen so far, to refuse duplicates. Numeric ids (DPR's Wikipedia, FlashRAG's wiki
 * dumps: 21M of them) go in a bitset of a few MB instead of a Set of strings of a gigabyte or more.
 */
export class IdSet {
  private bits = new Uint8Array(1 << 16);
  // A JavaScript Set holds at most 2^24 entries (RangeError past 16,777,216 — hit by a 21M-passage
  // build with string ids), so string ids fill several Sets in turn.
  private readonly others: Set<string>[] = [new Set<string>()];

  /** `perSet`: entries per Set before the next one starts (below V8's 2^24 limit; small in tests). */
  constructor(private readonly perSet = 16_000_000) {}

  /** Adds `id`; false when it was already there. */
  add(id: string): boolean {
    if (/^(0|[1-9]\d{0,8})$/.test(id)) {
      const n = Number(id);
      if (n >> 3 >= this.bits.length) {
        const bigger = new Uint8Array(Math.max(this.bits.length * 2, (n >> 3) + 1));
        bigger.set(this.bits);
        this.bits = bigger;
      }
      const mask = 1 << (n & 7);
      if (this.bits[n >> 3]! & mask) return false;
      this.bits[n >> 3]! |= mask;
      return true;
    }
    for (const set of this.others) if (set.has(id)) return false;
    let last = this.others[this.others.length - 1]!;
    if (last.size >= this.perSet) this.others.push((last = new Set<string>()));
    last.add(id);
    return true;
  }
}

/** Settings of {@link readCorpus}. */
export interface CorpusReadOptions {
  /** Skip lines that are not UTF-8, records that do not fit and repeated ids (each reported to `onInvalid`) instead of failing. */
  skipInvalid?: boolean;
  /** Receives the error of each record skipped under `skipInvalid`. */
  onInvalid?: (error: InputError) => void;
}

/**
 * Streams a corpus file (.jsonl, .tsv, either optionally .gz); the layout of each JSON line is
 * detected. A repeated passage id is an error (the index would hold two passages under one id).
 * One generator, no per-record wrapper objects: this loop feeds index builds of millions of passages.
 */
export async function* readCorpus(path: string, opts: CorpusReadOptions = {}): AsyncGenerator<Passage> {
  const ids = new IdSet();
  const tsv = /\.tsv(\.gz)?$/i.test(path);
  let cols: { id: number; text: number; title: number } | undefined;
  for await (const { text, line, invalidUtf8 } of readLines(path)) {
    if (tsv && !cols) {
      // The header is not a record: a bad one stops the read even with skipInvalid.
      if (invalidUtf8) throw invalidUtf8Error(path, line);
      if (text !== '') cols = tsvColumns(path, text);
      continue;
    }
    let p: Passage;
    try {
      if (invalidUtf8) throw invalidUtf8Error(path, line, '--skip-invalid');
      if (cols) {
        if (text === '') continue;
        p = tsvPassage(path, line, text, cols);
      } else {
        if (text.trim() === '') continue;
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch (e) {
          throw new InputError(`${path}:${line}: invalid JSON (${e instanceof Error ? e.message : String(e)})`, 'fix or remove that line, or pass --skip-invalid');
        }
        p = passageFromRecord(value, path, line);
      }
      if (!ids.add(p.id)) throw new RecordError({ file: path, line }, 'id', `"${p.id}" repeats an earlier passage's id`, 'passage ids must be unique: fix the corpus, or pass --skip-invalid to keep the first');
    } catch (e) {
      if (opts.skipInvalid && e instanceof InputError) {
        opts.onInvalid?.(e);
        continue;
      }
      throw e;
    }
    yield p;
  }
}

export function passageToRecord(p: Passage, format: CorpusFormat): Record<string, string> {
  return format === 'flashrag' ? { id: p.id, contents: joinContents(p) } : { id: p.id, title: p.title, text: p.text };
}

/** Writes passages as JSON Lines (atomically; gzipped for .gz). Returns the count. */
export async function writeCorpus(path: string, passages: Iterable<Passage> | AsyncIterable<Passage>, format: CorpusFormat = 'ragtrail'): Promise<number> {
  let n = 0;
  await writeFileAtomic(path, async (out) => {
    for await (const p of passages) {
      await writeLine(out, JSON.stringify(passageToRecord(p, format)));
      n++;
    }
  });
  return n;
}

/** What {@link corpusFromQuestions} read and wrote. */
export interface CorpusBuildStats {
  questions: number;
  /** Context passages seen, duplicates included. */
  seen: number;
  /** Distinct passages written. */
  passages: number;
}

/**
 * The distinct context passages of the given questions, first-seen order. Passages are keyed by
 * their content-hash id, so the same paragraph shipped with many questions (or datasets) appears once.
 */
export async function* corpusFromQuestions(questions: AsyncIterable<Question> | Iterable<Question>, stats?: CorpusBuildStats): AsyncGenerator<Passage> {
  const seenIds = new Set<string>();
  for await (const q of questions) {
    if (stats) stats.questions++;
    for (const p of q.context ?? []) {
      if (stats) stats.seen++;
      if (seenIds.has(p.id)) continue;
      seenIds.add(p.id);
      if (stats) stats.passages++;
      yield p;
    }
  }
}
