/**
 * `ragtrail view` at real sizes (`npm run bench:view`): a 10,000-question run and a 2,000-tree annotation,
 * made by repeating a small demo's trajectories and trees with fresh ids, opened in headless Chromium
 * (/usr/bin/chromium) over the view server, cold (nothing indexed yet) and warm. Times are from navigation
 * to the first list rows drawn, and from a click to a transcript or tree drawn. Anchor in the same run: reading
 * and parsing the whole trajectories file at once (what a viewer that loads the file would do before showing
 * anything), timed the same number of times. Also the bundle of the demo output: its size and write time.
 * Options: --questions 10000 --trees 2000 --rounds 3.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { runDemo } from '../src/pipelines/demo.js';
import { writeBundle } from '../src/view/bundle.js';
import { ViewData } from '../src/view/data.js';
import { viewServer } from '../src/view/server.js';
import { findSources } from '../src/view/sources.js';

const { values } = parseArgs({ options: { questions: { type: 'string', default: '10000' }, trees: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '3' } } });
const QUESTIONS = Number(values.questions), TREES = Number(values.trees), ROUNDS = Number(values.rounds);
const CHROMIUM = '/usr/bin/chromium';
if (!existsSync(CHROMIUM)) {
  console.log(`bench:view needs ${CHROMIUM} (apt-get install -y chromium)`);
  process.exit(0);
}
const dir = mkdtempSync(join(tmpdir(), 'ragtrail-bench-view-'));
const ms = (t0: number) => performance.now() - t0;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

try {
  const demo = join(dir, 'demo');
  await runDemo({ out: demo, entities: 2000, trainQuestions: 60, simulations: 8, grpoEpochs: 1, n: 4, log: () => {} });
  const sources = findSources([demo]);
  const base = sources.find((s) => s.kind === 'run' && s.rel.endsWith('/base__world-test'))!;
  const ann = sources.find((s) => s.kind === 'annotation')!;

  // The big outputs: the demo's lines repeated with fresh ids.
  const big = join(dir, 'big');
  const runDir = join(big, 'run'), annDir = join(big, 'annotate');
  mkdirSync(runDir, { recursive: true });
  mkdirSync(annDir, { recursive: true });
  const src = readFileSync(base.files['trajectories']!, 'utf8').split('\n').filter(Boolean);
  writeFileSync(join(runDir, 'trajectories.jsonl'), Array.from({ length: QUESTIONS }, (_, i) => {
    const t = JSON.parse(src[i % src.length]!) as Record<string, unknown>;
    return JSON.stringify({ ...t, id: `q${String(i).padStart(6, '0')}` });
  }).join('\n') + '\n');
  const trees = readFileSync(ann.files['trees']!, 'utf8').split('\n').filter(Boolean);
  const pairs = readFileSync(ann.files['pairs']!, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  const treeLines: string[] = [], pairLines: string[] = [];
  for (let i = 0; i < TREES; i++) {
    const t = JSON.parse(trees[i % trees.length]!) as Record<string, unknown>;
    const id = `t${String(i).padStart(6, '0')}`;
    treeLines.push(JSON.stringify({ ...t, id }));
    for (const p of pairs.filter((x) => x['questionId'] === t['id'])) pairLines.push(JSON.stringify({ ...p, id: `${id}:${String(p['id']).split(':').slice(1).join(':')}`, questionId: id }));
  }
  writeFileSync(join(annDir, 'trees.jsonl'), treeLines.join('\n') + '\n');
  writeFileSync(join(annDir, 'pairs.jsonl'), pairLines.join('\n') + '\n');
  const runBytes = statSync(join(runDir, 'trajectories.jsonl')).size, treeBytes = statSync(join(annDir, 'trees.jsonl')).size;
  console.log(`run: ${QUESTIONS} questions, ${(runBytes / 2 ** 20).toFixed(1)} MiB; annotation: ${TREES} trees (${(treeBytes / 2 ** 20).toFixed(1)} MiB), ${pairLines.length} pairs`);

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  const rows: Record<string, number[]> = { 'run list, cold': [], 'run list, warm': [], 'question opened': [], 'tree list, cold': [], 'tree opened': [], 'anchor: read + parse the whole run file': [] };
  for (let r = 0; r < ROUNDS; r++) {
    // A fresh server each round: "cold" means nothing indexed yet.
    const found = findSources([big]);
    const server = viewServer(new ViewData(found), '127.0.0.1');
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const runSrc = found.find((s) => s.kind === 'run')!, annSrc = found.find((s) => s.kind === 'annotation')!;
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    let t0 = performance.now();
    await page.goto(`${url}#/run/${runSrc.id}`);
    await page.locator('.vrow').first().waitFor();
    rows['run list, cold']!.push(ms(t0));
    t0 = performance.now();
    await page.goto('about:blank');
    await page.goto(`${url}#/run/${runSrc.id}`);
    await page.locator('.vrow').first().waitFor();
    rows['run list, warm']!.push(ms(t0));
    t0 = performance.now();
    await page.locator('.vrow').nth(5).click();
    await page.locator('section.step').first().waitFor();
    rows['question opened']!.push(ms(t0));
    t0 = performance.now();
    await page.goto(`${url}#/annotation/${annSrc.id}`);
    await page.locator('.vrow').first().waitFor();
    rows['tree list, cold']!.push(ms(t0));
    t0 = performance.now();
    await page.locator('.vrow').nth(3).click();
    await page.locator('svg.tree .node').first().waitFor();
    rows['tree opened']!.push(ms(t0));
    await page.close();
    server.close();
    t0 = performance.now();
    JSON.parse(`[${readFileSync(join(runDir, 'trajectories.jsonl'), 'utf8').trimEnd().split('\n').join(',')}]`);
    rows['anchor: read + parse the whole run file']!.push(ms(t0));
  }
  await browser.close();
  const anchor = median(rows['anchor: read + parse the whole run file']!);
  console.log(`\n${'what'.padEnd(42)} ${'median ms'.padStart(10)} ${'range'.padStart(16)} ${'÷ anchor'.padStart(9)}   (${ROUNDS} rounds)`);
  for (const [k, v] of Object.entries(rows)) console.log(`${k.padEnd(42)} ${median(v).toFixed(0).padStart(10)} ${`${Math.min(...v).toFixed(0)}–${Math.max(...v).toFixed(0)}`.padStart(16)} ${(median(v) / anchor).toFixed(2).padStart(9)}`);

  const t0 = performance.now();
  const b = await writeBundle(new ViewData(sources), join(dir, 'bundle'));
  console.log(`\nbundle of the demo output (${sources.length} sources): ${b.files} files, ${(b.bytes / 2 ** 20).toFixed(2)} MiB, written in ${ms(t0).toFixed(0)} ms`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
