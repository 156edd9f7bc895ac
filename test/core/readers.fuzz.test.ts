/**
 * Property-based tests of the record readers (fast-check, fixed seed and run counts): arbitrary
 * bytes per line give an InputError naming file:line, or with --skip-invalid an error record while
 * every good line is still read; the dataset converters refuse arbitrary records with a RecordError,
 * never another exception.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { InputError, RecordError } from '../../src/core/errors.js';
import { readJsonl, readJsonRecords } from '../../src/core/io.js';
import { loadDatasetAll } from '../../src/corpus/dataset.js';
import { fromFlashrag } from '../../src/corpus/formats/flashrag.js';
import { fromHotpot } from '../../src/corpus/formats/hotpotqa.js';
import { fromMusique } from '../../src/corpus/formats/musique.js';

const SEED = 49;
const dir = mkdtempSync(join(tmpdir(), 'ragtrail-readers-fuzz-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const fileOf = (bytes: Buffer | string) => {
  const path = join(dir, `f${++files}.jsonl`);
  writeFileSync(path, bytes);
  return path;
};

const KEYS = ['id', 'question', 'golden_answers', 'answer', 'answers', 'context', 'supporting_facts', 'evidences', 'paragraphs', 'question_decomposition', 'metadata', 'is_supporting', 'paragraph_text', 'title', 'answer_aliases', '_id'];
const json: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null)),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 5 })), tie('value'), { maxKeys: 6 }),
  ),
})).value;
// One line's bytes, without a newline: JSON of any value, or anything (invalid UTF-8 included).
const noNewline = (b: Uint8Array) => Buffer.from(b.filter((x) => x !== 10));
const badLine = fc.oneof(fc.uint8Array({ maxLength: 40 }).map(noNewline), fc.constantFrom('{', '{"id": ', '[1,', 'nul', '\u00ff', '"unterminated', '{"a":1}}').map((s) => Buffer.from(s)), fc.constant(Buffer.from([0xc3, 0x28])));
const line = fc.oneof(json.map((v) => ({ bytes: Buffer.from(JSON.stringify(v) ?? 'null'), value: v as unknown })), badLine.map((bytes) => ({ bytes, value: undefined as unknown })));

/** What a line should read as: undefined when blank, else { ok, value }. */
function expected(bytes: Buffer): { ok: boolean; value?: unknown } | undefined {
  let text = bytes.toString('utf8');
  if (text.endsWith('\r')) text = text.slice(0, -1);
  if (!Buffer.from(text, 'utf8').equals(bytes.subarray(0, bytes.length - (bytes.toString('utf8').endsWith('\r') ? 1 : 0)))) return { ok: false };
  if (text.trim() === '') return undefined;
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

describe('readJsonl on arbitrary bytes per line', () => {
  it('yields every line before the first bad one, then one InputError naming file:line', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(line, { maxLength: 12 }), async (lines) => {
        const path = fileOf(Buffer.concat(lines.flatMap((l) => [l.bytes, Buffer.from('\n')])));
        const got: unknown[] = [];
        let error: unknown;
        try {
          for await (const { value, loc } of readJsonl(path)) {
            got.push(value);
            assert.equal(loc.file, path);
          }
        } catch (e) {
          error = e;
        }
        const want: unknown[] = [];
        let badAt: number | undefined;
        for (const [i, l] of lines.entries()) {
          const e = expected(l.bytes);
          if (!e) continue;
          if (!e.ok) {
            badAt = i + 1;
            break;
          }
          want.push(e.value);
        }
        assert.deepEqual(got, want);
        if (badAt === undefined) assert.equal(error, undefined);
        else {
          assert.ok(error instanceof InputError, String(error));
          assert.ok(error.message.startsWith(`${path}:${badAt}: `), error.message);
          assert.ok(!error.message.includes('\n'), error.message);
        }
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
});

describe('readJsonRecords on arbitrary files', () => {
  it('arbitrary bytes, and JSON arrays with a damaged element: records or an InputError, nothing else', async () => {
    const damaged = fc.tuple(fc.array(json, { maxLength: 5 }), fc.nat(200), fc.uint8Array({ maxLength: 4 })).map(([vs, at, junk]) => {
      const text = Buffer.from(JSON.stringify(vs, null, vs.length % 2 ? 1 : undefined));
      const cut = at % (text.length + 1);
      return Buffer.concat([text.subarray(0, cut), Buffer.from(junk), text.subarray(cut)]);
    });
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)), damaged, json.map((v) => Buffer.from(JSON.stringify(v, null, 2) ?? ''))), async (bytes) => {
        try {
          for await (const r of readJsonRecords(fileOf(bytes))) assert.ok(r.loc.line >= 1);
        } catch (e) {
          assert.ok(e instanceof InputError, `not an InputError: ${String(e)}`);
          assert.ok(!e.message.includes('\n'), e.message);
        }
      }),
      { seed: SEED, numRuns: 400 },
    );
  });
});

describe('loadDataset with --skip-invalid', () => {
  it('reads every good question, in order, and reports each bad line', async () => {
    const good = fc.record({ question: fc.string({ minLength: 1, maxLength: 10 }).filter((s) => s.trim() !== ''), golden_answers: fc.array(fc.string({ minLength: 1, maxLength: 6 }).filter((s) => s.trim() !== ''), { minLength: 1, maxLength: 2 }) });
    const entry = fc.oneof(good.map((g) => ({ good: g })), line.map((l) => ({ bad: l.bytes })));
    await fc.assert(
      fc.asyncProperty(good, fc.array(entry, { maxLength: 10 }), async (first, entries) => {
        const goods: { id: string; question: string }[] = [];
        const bytes: Buffer[] = [];
        const add = (g: { question: string; golden_answers: string[] }) => {
          const id = `good-${goods.length}`;
          goods.push({ id, question: g.question });
          bytes.push(Buffer.from(JSON.stringify({ id, ...g })));
        };
        add(first);
        for (const e of entries) 'good' in e ? add(e.good) : bytes.push(e.bad);
        const path = fileOf(Buffer.concat(bytes.flatMap((b) => [b, Buffer.from('\n')])));
        const { questions, invalid } = await loadDatasetAll(path, { skipInvalid: true });
        const ids = new Set(goods.map((g) => g.id));
        assert.deepEqual(questions.filter((q) => ids.has(q.id)).map((q) => q.id), goods.map((g) => g.id));
        for (const e of invalid) assert.ok(e instanceof InputError && e.message.startsWith(`${path}:`) && !e.message.includes('\n'), e.message);
      }),
      { seed: SEED, numRuns: 200 },
    );
  });
});

describe('dataset converters on arbitrary records', () => {
  for (const [name, convert] of [['flashrag', fromFlashrag], ['hotpotqa / 2wiki', fromHotpot], ['musique', fromMusique]] as const) {
    it(`${name}: a question or a RecordError`, () => {
      fc.assert(
        fc.property(fc.dictionary(fc.constantFrom(...KEYS), json, { maxKeys: 8 }), (rec) => {
          try {
            const q = convert(rec as never, { file: 'd.jsonl', line: 3 });
            assert.equal(typeof q.id, 'string');
            assert.equal(typeof q.question, 'string');
            assert.ok(Array.isArray(q.answers) && q.answers.every((a) => typeof a === 'string'));
          } catch (e) {
            assert.ok(e instanceof RecordError, `not a RecordError: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
            assert.ok(e.message.startsWith('d.jsonl:3: ') && !e.message.includes('\n'), e.message);
          }
        }),
        { seed: SEED, numRuns: 1500 },
      );
    });
  }
});

describe('defects the fuzzing found, kept as examples', () => {
  it('a JSON parser message that quotes a line break stays one line', async () => {
    const path = fileOf(Buffer.from([91, 0, 10, 32, 123, 125, 10, 93])); // "[\0\n {}\n]"
    await assert.rejects(async () => {
      for await (const _ of readJsonRecords(path));
    }, (e: Error) => e instanceof InputError && e.message.startsWith(`${path}:1 (record 1): invalid JSON (`) && e.message.includes('\\n') && !e.message.includes('\n'));
    const lines = fileOf('{"id": "a", "question": "q", "golden_answers": ["x"]}\n{"a": \u2028 1}\n');
    const { questions, invalid } = await loadDatasetAll(lines, { skipInvalid: true });
    assert.deepEqual(questions.map((q) => q.id), ['a']);
    assert.equal(invalid.length, 1);
    assert.ok(invalid[0]!.message.startsWith(`${lines}:2: invalid JSON (`) && invalid[0]!.message.includes('\\u2028') && !invalid[0]!.message.includes('\u2028'), invalid[0]!.message);
  });
});
