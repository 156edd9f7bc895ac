/**
 * A loopback Hub for trying `ragtrail download` offline: serves, at the Hub's URL layout, FlashRAG-
 * shaped files made from the shared real samples (../shared/data) and a wiki18_100w.zip of their
 * paragraphs, with LFS redirects, Range and checksums (test/corpus/hub-fixture.ts).
 *
 *   node --import tsx scripts/loopback-hub.ts [--corpus-mb N] [--drop-hotpotqa BYTES]
 *   ragtrail download hotpotqa bamboogle popqa wiki18 --out /tmp/dl --endpoint <printed URL>
 *
 * --corpus-mb pads the corpus with renumbered copies of the paragraphs to about N MB (for timing);
 * --drop-hotpotqa cuts the first transfer of hotpotqa/dev.jsonl after BYTES, to watch a resume.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeZip, startHub } from '../test/corpus/hub-fixture.js';

const args = process.argv.slice(2);
const arg = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const shared = resolve(fileURLToPath(new URL('..', import.meta.url)), '..', 'shared', 'data');

interface HfHotpot { question: string; answer: string; type: string; level: string; supporting_facts: unknown; context: { title: string[]; sentences: string[][] } }
const hf = JSON.parse(readFileSync(join(shared, 'hotpotqa', 'distractor_dev_sample100_hf.json'), 'utf8')) as HfHotpot[];
const hotpot = Buffer.from(hf.map((r, i) => JSON.stringify({ id: `dev_${i}`, question: r.question, golden_answers: [r.answer], metadata: { type: r.type, level: r.level, supporting_facts: r.supporting_facts, context: r.context } })).join('\n') + '\n');
const paragraphs = [...new Set(hf.flatMap((r) => r.context.title.map((t, i) => `"${t}"\n${r.context.sentences[i]!.join('').trim()}`)))];
const target = Number(arg('--corpus-mb') ?? 0) * 1e6;
const lines: string[] = [];
let bytes = 0;
for (let id = 0; lines.length < paragraphs.length || bytes < target; id++) {
  const line = JSON.stringify({ id: String(id), contents: paragraphs[id % paragraphs.length] });
  lines.push(line);
  bytes += line.length + 1;
}
const zip = makeZip([{ name: 'wiki18_100w.jsonl', data: Buffer.from(lines.join('\n') + '\n') }], true);

const hub = await startHub([
  { path: 'hotpotqa/dev.jsonl', body: hotpot, lfs: true },
  { path: 'bamboogle/test.jsonl', body: readFileSync(join(shared, 'flashrag', 'bamboogle_test.jsonl')), lfs: false },
  { path: 'popqa/test.jsonl', body: readFileSync(join(shared, 'flashrag', 'popqa_test_sample500.jsonl')), lfs: true },
  { path: 'retrieval-corpus/wiki18_100w.zip', body: zip, lfs: true },
]);
const drop = arg('--drop-hotpotqa');
if (drop) hub.dropAfter('hotpotqa/dev.jsonl', Number(drop));
console.log(`loopback Hub at ${hub.endpoint} (corpus: ${lines.length} passages, ${(bytes / 1e6).toFixed(1)} MB, zip ${(zip.length / 1e6).toFixed(1)} MB); Ctrl-C stops it`);
process.on('SIGINT', () => void hub.close().then(() => process.exit(0)));
process.on('SIGTERM', () => void hub.close().then(() => process.exit(0)));
