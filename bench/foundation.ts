/**
 * Foundation benchmarks: world generation at 10k entities (target < 10 s), and dataset loading
 * throughput of the streaming JSON-array scanner against a whole-file JSON.parse baseline on the
 * same bytes, in the same run. Prints figures and ratios; asserts nothing (the machine is noisy).
 */
import { writeFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import { readJsonArray } from '../src/core/io.js';
import { loadDataset } from '../src/corpus/dataset.js';
import { generateWorld, writeWorld } from '../src/corpus/world/index.js';

const dir = mkdtempSync(join(tmpdir(), 'ragtrail-bench-'));
const time = async (f: () => unknown | Promise<unknown>) => {
  const t = performance.now();
  await f();
  return (performance.now() - t) / 1000;
};
const best = async (runs: number, f: () => unknown | Promise<unknown>) => {
  let b = Infinity;
  for (let i = 0; i < runs; i++) b = Math.min(b, await time(f));
  return b;
};

try {
  for (const n of [10_000, 100_000]) {
    let passages = 0;
    const gen = await best(3, () => (passages = generateWorld({ seed: 1, entities: n }).passages.length));
    const genWrite = await best(1, async () => writeWorld(join(dir, `w${n}`), generateWorld({ seed: 1, entities: n })));
    console.log(`world ${n} entities: generate ${gen.toFixed(2)} s, generate+write ${genWrite.toFixed(2)} s (${passages} passages; target < 10 s at 10k)`);
  }

  // Build a ~50 MB HotpotQA-shaped array from the real sample by repetition.
  const sample = resolve(import.meta.dirname, '..', '..', 'shared', 'data', 'hotpotqa', 'distractor_dev_first53_official.json');
  const records = JSON.parse(readFileSync(sample, 'utf8')) as Record<string, unknown>[];
  const big = join(dir, 'hotpot_big.json');
  const copies = 140;
  const all = Array.from({ length: copies }, (_, k) => records.map((r) => ({ ...r, _id: `${r['_id']}-${k}` }))).flat();
  writeFileSync(big, JSON.stringify(all));
  const mb = readFileSync(big).length / 1e6;
  const baseline = await best(3, () => JSON.parse(readFileSync(big, 'utf8')));
  let count = 0;
  const scan = await best(3, async () => {
    count = 0;
    for await (const _ of readJsonArray(big)) count++;
  });
  const load = await best(3, async () => {
    count = 0;
    for await (const _ of loadDataset(big)) count++;
  });
  console.log(`JSON array ${mb.toFixed(1)} MB, ${count} records: JSON.parse(whole file) ${(mb / baseline).toFixed(0)} MB/s; streaming scanner ${(mb / scan).toFixed(0)} MB/s (${(baseline / scan).toFixed(2)}× the baseline's speed); loadDataset → Question ${(mb / load).toFixed(0)} MB/s`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
