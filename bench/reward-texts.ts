/**
 * `ragtrail reward --texts` throughput (`npm run bench:reward`): 10,000 episode texts made from the
 * parity dev sets in ../shared/data/parity (each set's lines repeated with fresh ids), scored by each
 * scheme in the paper's mode and in compat=authors, through the same streaming path as the CLI.
 * Baseline in the same run: reading, parsing and re-writing the same lines with no scoring (the I/O
 * floor). Prints lines/s and the ratio to that floor; the whole CLI command is timed once too.
 * Options: --lines 10000.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { readJsonl, writeJsonl } from '../src/core/io.js';
import { scoreTexts } from '../src/rewards/apply.js';
import { composeScheme } from '../src/rewards/schemes.js';

const { values } = parseArgs({ options: { lines: { type: 'string', default: '10000' } } });
const lines = Number(values.lines);
const root = resolve(import.meta.dirname, '..');
const parity = resolve(root, '..', 'shared', 'data', 'parity');
const dir = mkdtempSync(join(tmpdir(), 'ragtrail-bench-reward-'));

const sets: [string, string][] = [
  ['arena', 'arena'],
  ['prorag_outcome', 'prorag-outcome'],
  ['searchr1_qa_em', 'search-r1-em'],
  ['searchr1_qa_em_format', 'search-r1-format'],
  ['reasonrag_terminal', 'reasonrag-terminal'],
];

function makeFile(set: string): string {
  const src = readFileSync(join(parity, set, 'dev.jsonl'), 'utf8').split('\n').filter(Boolean);
  const out = Array.from({ length: lines }, (_, i) => {
    const r = JSON.parse(src[i % src.length]!) as Record<string, unknown>;
    return JSON.stringify({ ...r, id: `${String(r['id'])}-${i}` });
  });
  const file = join(dir, `${set}.jsonl`);
  writeFileSync(file, out.join('\n') + '\n');
  return file;
}

const seconds = async (f: () => Promise<unknown>) => {
  const t = performance.now();
  await f();
  return (performance.now() - t) / 1000;
};

try {
  console.log(`reward --texts on ${lines.toLocaleString('en')} lines per scheme (this machine: ${(await import('node:os')).cpus().length} cores; figures vary run to run)`);
  console.log('scheme               mode     lines/s   × I/O floor');
  for (const [set, scheme] of sets) {
    const file = makeFile(set);
    const floor = await seconds(() => writeJsonl(join(dir, 'floor.jsonl'), (async function* () {
      for await (const { value } of readJsonl(file)) yield { id: (value as { id: string }).id, total: 0, components: {} };
    })()));
    for (const mode of ['paper', 'authors']) {
      const s = composeScheme(scheme, [`compat=${mode}`]);
      const t = await seconds(() => scoreTexts(file, join(dir, 'out.jsonl'), s));
      console.log(`${scheme.padEnd(20)} ${mode.padEnd(7)} ${Math.round(lines / t).toString().padStart(8)}   ${(floor / t).toFixed(2).padStart(6)} (floor ${Math.round(lines / floor)} lines/s)`);
    }
  }
  const file = join(dir, 'arena.jsonl');
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'src', 'cli', 'main.ts'), 'reward', '--texts', file, '--scheme', 'arena', '--option', 'compat=authors', '--out', join(dir, 'cli.jsonl')], { cwd: root, encoding: 'utf8' });
  const wall = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(r.stderr);
  console.log(`whole command (ragtrail reward --texts … --scheme arena --option compat=authors, process start included): ${wall.toFixed(2)} s, ${Math.round(lines / wall)} lines/s`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
