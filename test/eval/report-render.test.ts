/**
 * The report's plots and tables as a reader sees them: a small demo writes report.html through the real
 * pipeline, headless Chromium (Debian's `chromium`, driven by playwright-core) renders it in a 1000 px
 * wide window, and the test reads the geometry back: legends inside their drawing and naming every
 * series, axis titles, ticks at nice numbers, pale bars for small n, error bars, tables that fit the
 * page without wrapping. A second page adds the plots the offline demo does not draw: the TRL loop's
 * training curves (from log_history files in TRL's format) and the annotation's reward-gap histogram.
 * A third renders the full-size demo's report (test/fixtures/report/demo-seed0.json) at 1280 and 800 px:
 * the page never wider than the window, scatter labels clear of the whiskers, n under every F1 bar, the
 * chance line. Screenshots go to a temporary folder named in the test's output.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium, type Page } from 'playwright-core';
import type { EvalResults } from '../../src/eval/harness.js';
import { renderHtml } from '../../src/eval/report.js';
import { niceTicks } from '../../src/eval/svg.js';
import { runDemo } from '../../src/pipelines/demo.js';
import { trlTrainingCurves } from '../../src/pipelines/llm-loop.js';
import type { AnnotationStats } from '../../src/process/stats.js';
import type { PipelineResult } from '../../src/pipelines/pipeline.js';
import { tempDir } from '../helpers.js';

const CHROMIUM = '/usr/bin/chromium';
/** Without the browser the two rendering tests skip with this one line (CI installs it: .ci/run). */
const NO_CHROMIUM = existsSync(CHROMIUM) ? false : `needs ${CHROMIUM} (apt-get install -y chromium); CI installs it`;
const tmp = tempDir();
after(tmp.cleanup);
// Kept after the run so that the screenshots can be looked at.
const shots = NO_CHROMIUM ? '' : mkdtempSync(join(tmpdir(), 'ragtrail-report-shots-'));

let browser: Browser;
let demo: PipelineResult;
const out = join(tmp.dir, 'demo');

before(async () => {
  if (NO_CHROMIUM) return;
  // Small enough for a test (about 20 s on 2 cores), large enough for every plot: 40 test questions, 7 systems.
  demo = await runDemo({ out, entities: 2000, trainQuestions: 30, simulations: 6, grpoEpochs: 1, n: 4 });
  browser = await chromium.launch({ executablePath: CHROMIUM });
});
after(async () => browser?.close());

interface SvgInfo {
  title: string;
  viewBox: number[];
  /** Bounding boxes (in the SVG's user units) of every text, and its text. */
  texts: { text: string; cls: string; x: number; y: number; w: number; h: number }[];
  legend: string[];
  axisTitles: string[];
  ticksX: string[];
  ticksY: string[];
  bars: { tip: string; pale: boolean }[];
  whiskers: number;
}

/** Every chart of the page, measured by the browser. */
async function charts(page: Page): Promise<SvgInfo[]> {
  return page.$$eval('svg', (svgs) =>
    svgs.map((svg) => {
      // Screen boxes relative to the drawing (whose width and height equal its viewBox: one unit a pixel), rotation included.
      const frame = svg.getBoundingClientRect();
      const texts = [...svg.querySelectorAll('text')].map((t) => {
        const b = t.getBoundingClientRect();
        const g = t.closest('g');
        return { text: t.textContent ?? '', cls: t.getAttribute('class') ?? g?.getAttribute('class') ?? '', x: b.left - frame.left, y: b.top - frame.top, w: b.width, h: b.height };
      });
      return {
        title: svg.getAttribute('aria-label') ?? '',
        viewBox: (svg.getAttribute('viewBox') ?? '').split(/\s+/).map(Number),
        texts,
        legend: [...svg.querySelectorAll('.legend-item text')].map((t) => t.textContent ?? ''),
        axisTitles: [...svg.querySelectorAll('.axis-title')].map((t) => t.textContent ?? ''),
        ticksX: [...svg.querySelectorAll('.tick-x')].map((t) => t.textContent ?? ''),
        ticksY: [...svg.querySelectorAll('.tick-y')].map((t) => t.textContent ?? ''),
        bars: [...svg.querySelectorAll('rect')].filter((r) => r.querySelector('title')).map((r) => ({ tip: r.querySelector('title')!.textContent ?? '', pale: r.getAttribute('fill-opacity') === '0.35' })),
        whiskers: svg.querySelectorAll('path').length,
      };
    }),
  );
}

/** Tables: their width against the page's, and whether any cell's text takes more than one line. */
async function tables(page: Page) {
  return page.$$eval('table', (ts) =>
    ts.map((t) => {
      const wrapped = [...t.querySelectorAll('td, th')].filter((cell) => {
        const range = cell.ownerDocument.createRange();
        range.selectNodeContents(cell);
        // One line box per line: a wrapped cell has text on two or more distinct lines.
        return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1;
      });
      return { width: t.getBoundingClientRect().width, page: t.ownerDocument.body.clientWidth, wrapped: wrapped.map((c) => c.textContent) };
    }),
  );
}

/** Consecutive ticks one step apart, the step 1, 2 or 5 × 10^k, each tick a multiple of it. */
function assertNice(ticks: string[], what: string): void {
  const v = ticks.map(Number);
  assert.ok(v.length >= 2 && v.every(Number.isFinite), `${what}: ticks ${ticks.join(', ')}`);
  const step = v[1]! - v[0]!;
  const mantissa = step / 10 ** Math.floor(Math.log10(step) + 1e-9);
  assert.ok([1, 2, 5].some((m) => Math.abs(mantissa - m) < 1e-6), `${what}: step ${step} (${ticks.join(', ')})`);
  for (let i = 1; i < v.length; i++) assert.ok(Math.abs(v[i]! - v[i - 1]! - step) < 1e-9, `${what}: uneven ticks ${ticks.join(', ')}`);
  for (const x of v) assert.ok(Math.abs(x / step - Math.round(x / step)) < 1e-6, `${what}: ${x} is not a multiple of ${step}`);
}

const overlap = (a: { x: number; y: number; w: number; h: number }, b: { x: number; y: number; w: number; h: number }) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

/** What every chart must satisfy: nothing outside the drawing, titled axes, a title clear of the rest, nice y ticks. */
function assertChart(c: SvgInfo): void {
  const [, , W, H] = c.viewBox as [number, number, number, number];
  for (const t of c.texts) assert.ok(t.x >= -0.5 && t.y >= -0.5 && t.x + t.w <= W + 0.5 && t.y + t.h <= H + 0.5, `"${c.title}": "${t.text}" (${t.cls || 'label'}) lies outside the ${W}×${H} drawing at x ${t.x.toFixed(1)}–${(t.x + t.w).toFixed(1)}, y ${t.y.toFixed(1)}–${(t.y + t.h).toFixed(1)}`);
  assert.equal(c.axisTitles.length, 2, `"${c.title}": axis titles ${JSON.stringify(c.axisTitles)}`);
  const title = c.texts[0]!;
  for (const t of c.texts.slice(1)) assert.ok(!overlap(title, t), `"${c.title}": "${t.text}" overlaps the title`);
  const xt = c.texts.filter((t) => t.cls === 'tick-x');
  for (let i = 1; i < xt.length; i++) assert.ok(!overlap(xt[i - 1]!, xt[i]!), `"${c.title}": x ticks "${xt[i - 1]!.text}" and "${xt[i]!.text}" overlap`);
  assertNice(c.ticksY, `"${c.title}" y axis`);
}

describe('the report as rendered by Chromium', () => {
  it('demo report: legends, axes, ticks, small-n bars, error bars and tables', { skip: NO_CHROMIUM }, async (t) => {
    const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
    await page.goto(`file://${join(out, 'report.html')}`);
    await page.screenshot({ path: join(shots, 'demo-report.png'), fullPage: true });
    t.diagnostic(`screenshot: ${join(shots, 'demo-report.png')}`);
    const all = await charts(page);
    const systems = demo.seeds[0]!.results.config.systems.map((s) => s.name);
    assert.equal(systems.length, 7);
    all.forEach(assertChart);

    const f1 = all.find((c) => c.title.startsWith('F1 by number of retrieval steps'))!;
    assert.deepEqual(f1.legend, systems, 'every system in the legend, in order');
    assert.deepEqual(f1.ticksX, ['0', '1', '2', '3', '4', '5+'], 'bucket labels without unexplained counts');
    assert.deepEqual(f1.axisTitles, ['mean F1', 'retrieval steps (searches) in the episode']);
    // Each bar's n is in its tooltip and written under it; the ones from fewer than 3 questions are pale.
    const cell = demo.seeds[0]!.results.cells;
    const expectedBars = cell.flatMap((c) => c.f1ByRetrievals.filter((b) => b.n > 0));
    assert.equal(f1.bars.length, expectedBars.length);
    let pale = 0;
    for (const b of f1.bars) {
      const n = Number(/\(n = (\d+)\)$/.exec(b.tip)?.[1]);
      assert.ok(n > 0, b.tip);
      assert.equal(b.pale, n < 3, b.tip);
      if (b.pale) pale++;
    }
    assert.ok(pale > 0, 'this run has small buckets, so pale bars are exercised');
    // One n under every slot, bar or not: the bar's n, or "–" where the bucket has no questions.
    const ns = f1.texts.filter((x) => x.cls === 'bar-n');
    assert.equal(ns.length, 6 * systems.length);
    assert.deepEqual(ns.filter((x) => x.text !== '–').map((x) => Number(x.text)).sort((a, b) => a - b), expectedBars.map((b) => b.n).sort((a, b) => a - b));
    for (let i = 1; i < ns.length; i++) assert.ok(!overlap(ns[i - 1]!, ns[i]!), `n labels "${ns[i - 1]!.text}" and "${ns[i]!.text}" overlap`);

    const acc = all.find((c) => c.title === 'Accuracy against retrieval count')!;
    assertNice(acc.ticksX, 'accuracy chart x axis');
    assert.equal(acc.whiskers, cell.length, 'an error bar per system');
    assert.deepEqual(acc.legend, ['world-test', 'whiskers: 95% CI']);

    // One quantity per chart (a noisy one with its moving mean: two legend items, both that quantity).
    for (const c of all.filter((x) => x.title.includes('by epoch') || x.title.includes('by batch'))) {
      assert.ok(c.legend.length >= 1 && c.legend.every((l) => l.startsWith(c.legend[0]!.split(' ')[0]!)), `${c.title}: one quantity per chart (${c.legend.join(', ')})`);
    }

    const tbls = await tables(page);
    assert.ok(tbls.length >= 4);
    for (const tb of tbls) {
      assert.ok(tb.width <= tb.page, `a table ${tb.width} px wide on a ${tb.page} px page`);
      assert.deepEqual(tb.wrapped, [], 'cells whose text wraps');
    }
    await page.close();
  });

  it('the TRL loop\'s curves and the reward-gap histogram: one quantity per axis, nice ticks', { skip: NO_CHROMIUM }, async (t) => {
    // TRL's log_history.jsonl lines for the loop's DPO and PRM runs (the fields TRL writes).
    const models = join(tmp.dir, 'models');
    const log = (name: string, rows: object[]) => {
      mkdirSync(join(models, name), { recursive: true });
      writeFileSync(join(models, name, 'log_history.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
    };
    log('dpo', Array.from({ length: 30 }, (_, i) => ({ step: i + 1, loss: 0.693 * Math.exp(-i / 12), 'rewards/accuracies': Math.min(1, 0.5 + i / 40) })));
    log('prm', Array.from({ length: 14 }, (_, i) => ({ step: 5 * (i + 1), loss: 0.7 - 0.03 * i, accuracy: 0.55 + 0.02 * i })));
    const curves = trlTrainingCurves(models);
    const seed = demo.seeds[0]!.results;
    const annotation = JSON.parse(readFileSync(join(out, 'seed-0', 'annotate', 'stats.json'), 'utf8')) as AnnotationStats;
    const page = await browser.newPage({ viewport: { width: 1000, height: 900 } });
    await page.setContent(renderHtml({ ...seed, curves, annotation } as EvalResults));
    await page.screenshot({ path: join(shots, 'trl-curves.png'), fullPage: true });
    t.diagnostic(`screenshot: ${join(shots, 'trl-curves.png')}`);
    const all = await charts(page);
    all.forEach(assertChart);
    const dpo = all.filter((c) => c.title.startsWith('Step-DPO'));
    assert.deepEqual(dpo.map((c) => c.axisTitles), [['step', 'DPO loss'], ['step', 'reward accuracy']], 'loss and accuracy on separate axes');
    assert.deepEqual(dpo.map((c) => c.legend), [['dpo loss'], ['dpo reward accuracy']]);
    assert.deepEqual(dpo[1]!.ticksY, ['0.0', '0.2', '0.4', '0.6', '0.8', '1.0']);
    const prm = all.filter((c) => c.title.startsWith('PRM (TRL'));
    assert.deepEqual(prm.map((c) => c.axisTitles[1]), ['PRM loss', 'pair accuracy']);
    // 30 steps: nice x ticks rather than one label per step.
    assertNice(dpo[0]!.ticksX, 'DPO loss x axis');
    const gap = all.find((c) => c.title.startsWith('Reward gap'))!;
    assertNice(gap.ticksY, 'gap histogram y axis');
    assert.ok(gap.ticksY.every((x) => Number.isInteger(Number(x))), 'whole-number ticks for counts');
    await page.close();
  });

  it('a full-size demo report at 1280 and 800 px: the page never overflows, labels clear of whiskers, n under every bar, chance line', { skip: NO_CHROMIUM }, async (t) => {
    // The default demo's seed-0 results (200 test questions, five systems), its folder written as /runs/demo.
    const fixture = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'report', 'demo-seed0.json'), 'utf8')) as { results: EvalResults; grpoReward: number[]; dpoPairAccuracy: number[] };
    const curves = [
      { title: 'step-dpo: pair accuracy by epoch', xLabel: 'epoch', yLabel: 'pair accuracy', series: [{ name: 'pair accuracy', points: fixture.dpoPairAccuracy.map((y, x) => ({ x, y })) }], yMin: 0, yMax: 1, refLine: { y: 0.5, label: 'chance' } },
      { title: 'grpo: mean reward of the sampled episodes by batch (grpo)', xLabel: 'batch', yLabel: 'mean reward', series: [{ name: 'reward', points: fixture.grpoReward.map((y, i) => ({ x: i + 1, y })) }], trend: 7 },
    ];
    const html = renderHtml({ ...fixture.results, curves }, { dir: '/runs/demo' });
    for (const width of [1280, 800]) {
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      await page.setContent(html);
      await page.screenshot({ path: join(shots, `full-demo-${width}.png`), fullPage: true });
      t.diagnostic(`screenshot: ${join(shots, `full-demo-${width}.png`)}`);
      const box = await page.$eval('html', (root) => ({ page: root.scrollWidth, window: root.clientWidth, scrolled: [...root.querySelectorAll('.table')].map((d) => d.scrollWidth - d.clientWidth) }));
      assert.ok(box.page <= box.window, `${width} px: the page is ${box.page} px wide`);
      assert.deepEqual(box.scrolled, box.scrolled.map(() => 0), `${width} px: every table fits its box (scrolled by ${box.scrolled.join(', ')} px)`);
      const all = await charts(page);
      all.forEach(assertChart);
      // Scatter labels: clear of every whisker, every point and one another.
      const shapes = await page.$eval('svg[aria-label="Accuracy against retrieval count"]', (svg) => {
        // Boxes relative to the drawing, labels first (no named helper: tsx would wrap it in a __name the page lacks).
        const frame = svg.getBoundingClientRect();
        const all = [...svg.querySelectorAll('.point-label, path.whisker, circle')].map((e) => {
          const b = e.getBoundingClientRect();
          return { label: e.classList.contains('point-label'), text: e.textContent ?? '', x: b.left - frame.left, y: b.top - frame.top, w: b.width, h: b.height };
        });
        return { labels: all.filter((b) => b.label), marks: all.filter((b) => !b.label) };
      });
      assert.equal(shapes.labels.length, 5);
      for (const [i, l] of shapes.labels.entries()) {
        for (const m of shapes.marks) assert.ok(!overlap(l, m), `${width} px: label "${l.text}" over a whisker or point at x ${m.x.toFixed(0)}, y ${m.y.toFixed(0)}`);
        for (const o of shapes.labels.slice(i + 1)) assert.ok(!overlap(l, o), `${width} px: labels "${l.text}" and "${o.text}" overlap`);
      }
      const f1 = all.find((c) => c.title.startsWith('F1 by number of retrieval steps'))!;
      const ns = f1.texts.filter((x) => x.cls === 'bar-n');
      assert.equal(ns.length, 30);
      for (let i = 1; i < ns.length; i++) assert.ok(!overlap(ns[i - 1]!, ns[i]!), `${width} px: n labels "${ns[i - 1]!.text}" and "${ns[i]!.text}" overlap`);
      const prm = all.find((c) => c.title.startsWith('PRM pair accuracy'))!;
      assert.ok(prm.texts.some((x) => x.cls === 'ref-label' && x.text === 'chance'));
      await page.close();
    }
  });

  it('niceTicks: steps of 1, 2 or 5 × 10^k covering the range', () => {
    // The old accuracy axis: 5.75 split in four gave 1.4, 2.9, 4.3.
    assert.deepEqual(niceTicks(0, 5.75), [0, 2, 4, 6]);
    assert.deepEqual(niceTicks(0, 0.76), [0, 0.2, 0.4, 0.6, 0.8]);
    assert.deepEqual(niceTicks(0, 1), [0, 0.2, 0.4, 0.6, 0.8, 1]);
    assert.deepEqual(niceTicks(-1.3, 0.4), [-1.5, -1, -0.5, 0, 0.5]);
    assert.deepEqual(niceTicks(0, 3, 5, true), [0, 1, 2, 3]);
    assert.deepEqual(niceTicks(0, 0.3, 5, true), [0, 1]);
    assert.ok(niceTicks(2, 2).length >= 2, 'a flat range still gets an axis');
  });
});
