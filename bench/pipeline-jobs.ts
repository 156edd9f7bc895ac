/**
 * `npm run bench:pipeline-jobs`: `ragtrail pipeline --jobs N` (the seeds in parallel processes) against
 * `--jobs 1` (one after another in one process, the anchor), wall time of the whole command from a
 * fresh folder, in paired rounds of alternating order; the figure is the median of the per-round
 * speed-ups (sequential ÷ parallel wall time), range in brackets. Each round also checks that the two
 * runs' results.json and results.md are equal once seconds and timings are masked.
 *
 * Options: --recipe comparison (a shipped recipe or a YAML file) --seeds 0,1,2 --entities 2000
 *          --train-questions 40 --test-questions 40 --jobs <cores> --rounds 3
 *          --cli src|dist (src: through tsx, as the tests run it, each child paying tsx's start-up;
 *          dist: the built dist/cli/main.js, as users run it: `npm run build` first)
 * The defaults are a small run (a few seconds a seed on two cores). The recipe's own sizes:
 *   npm run bench:pipeline-jobs -- --entities 10000 --train-questions 200 --test-questions 200
 * Figures depend on the machine and its load (printed); compare the ratio, not the seconds.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const { values: args } = parseArgs({
  options: {
    recipe: { type: 'string', default: 'comparison' },
    seeds: { type: 'string', default: '0,1,2' },
    entities: { type: 'string', default: '2000' },
    'train-questions': { type: 'string', default: '40' },
    'test-questions': { type: 'string', default: '40' },
    jobs: { type: 'string', default: String(availableParallelism()) },
    rounds: { type: 'string', default: '3' },
    cli: { type: 'string', default: 'src' },
  },
});
const ROUNDS = Number(args.rounds);
const JOBS = Number(args.jobs);
const CLI = args.cli === 'dist' ? [join(ROOT, 'dist', 'cli', 'main.js')] : ['--import', import.meta.resolve('tsx'), join(ROOT, 'src', 'cli', 'main.ts')];
const COMMON = ['pipeline', '--recipe', args.recipe, '--seeds', args.seeds, '--entities', args.entities, '--train-questions', args['train-questions'], '--test-questions', args['test-questions']];
const work = mkdtempSync(join(tmpdir(), 'ragtrail-bench-jobs-'));
const loadNow = () => loadavg().map((l) => l.toFixed(2)).join(', ');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Runs the CLI into a fresh folder; its wall time in seconds. */
function timed(jobs: number, out: string): Promise<number> {
  rmSync(out, { recursive: true, force: true });
  const t0 = performance.now();
  const child = spawn(process.execPath, [...CLI, ...COMMON, '--out', out, '--jobs', String(jobs)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((done, fail) =>
    child.on('close', (code) => (code === 0 ? done((performance.now() - t0) / 1000) : fail(new Error(`--jobs ${jobs} exited ${code}:\n${stderr}`)))),
  );
}

/** results.json / results.md with what differs between two runs masked: seconds, timings, dates, the folder. */
const masked = (out: string, name: string) =>
  readFileSync(join(out, name), 'utf8')
    .split(out)
    .join('OUT')
    .replace(/"seconds": [0-9.e+-]+/g, '"seconds": 0')
    .replace(/"timings": \{[^}]*\}/g, '"timings": {}')
    .replace(/^(\d+ seed\(s\)), \d+ s\.$/gm, '$1, N s.')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z/g, 'DATE');

console.log(`ragtrail pipeline ${COMMON.slice(1).join(' ')}: --jobs 1 against --jobs ${JOBS}, ${ROUNDS} paired rounds, CLI from ${args.cli}, ${availableParallelism()} cores`);
const seq = join(work, 'sequential');
const par = join(work, 'parallel');
const rows: { seq: number; par: number; load: string }[] = [];
try {
  for (let r = 0; r < ROUNDS; r++) {
    const load = loadNow();
    // Alternating order: whichever runs second in a round meets a warmer page cache and tsx cache.
    let s: number;
    let p: number;
    if (r % 2 === 0) {
      s = await timed(1, seq);
      p = await timed(JOBS, par);
    } else {
      p = await timed(JOBS, par);
      s = await timed(1, seq);
    }
    const same = ['results.json', 'results.md'].every((f) => masked(seq, f) === masked(par, f));
    if (!same) throw new Error(`round ${r + 1}: --jobs ${JOBS} gave other results than --jobs 1 (folders kept: ${work})`);
    rows.push({ seq: s, par: p, load });
    console.log(`  round ${r + 1} (load ${load}): --jobs 1 ${s.toFixed(1)} s, --jobs ${JOBS} ${p.toFixed(1)} s, speed-up ${(s / p).toFixed(2)}×; results equal`);
  }
  const ratios = rows.map((x) => x.seq / x.par);
  console.log(
    `\n--jobs ${JOBS} ÷ --jobs 1 speed-up, median of ${ROUNDS} paired rounds (range): ${median(ratios).toFixed(2)}× (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}); ` +
      `wall ${median(rows.map((x) => x.seq)).toFixed(1)} s → ${median(rows.map((x) => x.par)).toFixed(1)} s (medians); load after: ${loadNow()}`,
  );
  // What equal seeds allow at best: each of min(jobs, S) lanes runs ceil(S / jobs) seeds in turn, and C cores do S seed-times of work in S / C.
  const nSeeds = args.seeds.split(',').length;
  const ceiling = Math.min(nSeeds / Math.ceil(nSeeds / JOBS), availableParallelism());
  console.log(`ceiling for ${nSeeds} equal seeds, --jobs ${JOBS}, ${availableParallelism()} cores: ${ceiling.toFixed(2)}× (seeds differ in length, and each child pays a process start)`);
  rmSync(work, { recursive: true, force: true });
} catch (e) {
  console.error((e as Error).message);
  process.exitCode = 1;
}
