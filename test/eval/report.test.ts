/**
 * The report's text and drawings, without a browser, on the numbers of a real run: the default
 * `ragtrail demo` (seed 0, 200 test questions, five systems) of test/fixtures/report/demo-seed0.json,
 * its output folder written as /runs/demo. Proportions with 3 decimals, paths relative to the report's
 * folder, columns that measured nothing left out and named, n under every F1 bar and × where a bucket
 * has no questions, the chance line on pair accuracies, the moving mean over the GRPO rewards.
 * test/eval/report-render.test.ts checks the same page's geometry in Chromium.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { renderHtml, renderMarkdown, reportPath } from '../../src/eval/report.js';
import type { Curve, EvalResults } from '../../src/eval/results.js';
import { barChart, lineChart, movingMean, trendWindow } from '../../src/eval/svg.js';

const fixture = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'report', 'demo-seed0.json'), 'utf8')) as { results: EvalResults; grpoReward: number[]; dpoPairAccuracy: number[] };
const DIR = '/runs/demo';
const curves: Curve[] = [
  { title: 'step-dpo: pair accuracy by epoch', xLabel: 'epoch', yLabel: 'pair accuracy', series: [{ name: 'pair accuracy', points: fixture.dpoPairAccuracy.map((y, x) => ({ x, y })) }], yMin: 0, yMax: 1, refLine: { y: 0.5, label: 'chance' } },
  { title: 'grpo: mean reward of the sampled episodes by batch (grpo)', xLabel: 'batch', yLabel: 'mean reward', series: [{ name: 'reward', points: fixture.grpoReward.map((y, i) => ({ x: i + 1, y })) }], trend: trendWindow(fixture.grpoReward.length) },
];
const results: EvalResults = { ...fixture.results, curves };
const html = renderHtml(results, { dir: DIR });
const md = renderMarkdown(results, { dir: DIR });

/** The SVG whose title (aria-label) starts with `title`. */
function svg(page: string, title: string): string {
  const m = new RegExp(`<svg [^>]*aria-label="${title.replace(/[()|+]/g, '\\$&')}[^"]*"[\\s\\S]*?</svg>`).exec(page);
  assert.ok(m, `no chart "${title}"`);
  return m[0];
}

/** Heads and rows of the HTML table after the heading that starts with `h2`. */
function table(page: string, h2: string): { head: string[]; rows: string[][] } {
  const at = page.indexOf(`<h2>${h2}`);
  assert.ok(at >= 0, `no heading "${h2}"`);
  const t = page.slice(at, page.indexOf('</table>', at));
  const text = (s: string) => s.replace(/<[^>]+>/g, '').replace(/\u2011/g, '-');
  const rows = [...t.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((r) => [...r[1]!.matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/g)].map((c) => text(c[1]!)));
  return { head: rows[0]!, rows: rows.slice(1) };
}

describe('report: paths relative to its folder', () => {
  it('reportPath: absolute paths (also behind gym:) relative to the folder, the rest unchanged', () => {
    assert.equal(reportPath('/runs/demo/seed-0/index', DIR), 'seed-0/index');
    assert.equal(reportPath('gym:/runs/demo/seed-0/base.json', DIR), 'gym:seed-0/base.json');
    assert.equal(reportPath('gym:/runs/demo/seed-0/base.json', '/runs/demo/seed-0/eval'), 'gym:../base.json');
    assert.equal(reportPath('/runs/demo', DIR), '.');
    assert.equal(reportPath('seed-0/index', DIR), 'seed-0/index');
    assert.equal(reportPath('openai:http://127.0.0.1:8000/v1#m', DIR), 'openai:http://127.0.0.1:8000/v1#m');
    assert.equal(reportPath('/runs/demo/seed-0/index'), '/runs/demo/seed-0/index', 'without a folder: as given');
  });

  it('the header names the index and each policy once, relative, and no absolute path is left', () => {
    assert.ok(!html.includes('/runs/demo'), 'an absolute path in report.html');
    assert.ok(!md.includes('/runs/demo'), 'an absolute path in results.md');
    assert.match(html, /index <code>seed-0\/index<\/code>/);
    // Five systems on three policies: each path once, with the systems that use it.
    for (const p of ['gym:seed-0/base.json', 'gym:seed-0/step-dpo/policy.json', 'gym:seed-0/grpo/policy.json']) assert.equal(html.split(p).length - 1, 1, p);
    assert.ok(html.includes('<code>gym:seed-0/base.json</code> (base, base + PRM best-of-10)'));
    assert.ok(md.includes('seed-0/prm/prm.json on seed-0/prm/heldout.jsonl: 0.551 of 49 pairs'));
  });

  it("states the PRM's labels against the gold plan where the pipeline checked them (comparison seed 31's figures)", () => {
    const withLabels: EvalResults = { ...results, prm: { ...results.prm!, labels: { goldAgreement: 0.652, goldTies: 0.343, featuresCeiling: 0.711 } } };
    const line = "Its training labels against the gold plan: the gold PRM prefers the annotation's chosen step in 0.652 of the pairs it does not tie (0.343 tied; 0.5 is noise); the same head trained on the gold verdicts holds out 0.711 (what its features can express).";
    assert.ok(renderMarkdown(withLabels, { dir: DIR }).includes(line));
    assert.ok(renderHtml(withLabels, { dir: DIR }).includes(`<p class="note">${line}</p>`));
    assert.ok(!md.includes('against the gold plan'), 'no line without a check');
    // With the split by kind of pair (comparison seed 41's query and evidence pairs).
    const byKind = { ...withLabels, prm: { ...withLabels.prm!, labels: { ...withLabels.prm!.labels!, byKind: { 'E/E': { pairs: 212, goldAgreement: 0.514, goldTies: 0.67 }, 'Q/Q': { pairs: 289, goldAgreement: 0.558, goldTies: 0.2 } } } } };
    assert.ok(renderMarkdown(byKind, { dir: DIR }).includes('(what its features can express). By the kind of pair (chosen/rejected; A answer, Q query, E evidence): E/E 0.514 of 212 (0.670 tied), Q/Q 0.558 of 289 (0.200 tied).'));
  });

  it('says near the top how to browse the per-question detail', () => {
    const hint = html.indexOf('<code>ragtrail view demo</code>');
    assert.ok(hint > 0 && hint < html.indexOf('<h2>'), 'the view hint before the first table');
    assert.match(renderHtml(fixture.results), /ragtrail view OUT<\/code> \(OUT: this report's folder\)/);
  });
});

describe('report: one convention for numbers, columns that measured something', () => {
  it('main table, details and tests in proportions with 3 decimals, as the claims', () => {
    const main = table(html, 'Main results');
    assert.deepEqual(main.rows.find((r) => r[0] === 'step-DPO (process)'), ['step-DPO (process)', '0.225*', '0.237', '0.225', '0.237']);
    assert.deepEqual(main.rows.find((r) => r[0] === 'base'), ['base', '0.175', '0.204', '0.175', '0.204']);
    const answers = table(html, 'Details: answers');
    assert.deepEqual(answers.rows[0], ['base', '200', '0.175 [0.125, 0.230]', '0.204 [0.153, 0.256]', '0.200 [0.145, 0.255]']);
    const tests = table(html, 'Paired tests against base');
    assert.deepEqual(tests.rows[0], ['step-DPO (process)', 'EM', '+0.050', '2.38', '0.0180', '[+0.005, +0.090]', '0.0280']);
    assert.ok(!/<td[^>]*>[^<]*%/.test(html), 'no percentage in a table cell');
    assert.match(md, /\| base \| 0\.175 \| 0\.204 \| 0\.175 \| 0\.204 \|/);
    assert.match(md, /\| GRPO \(outcome\) \| 0\.275\* \| 0\.283\* \| 0\.275 \| 0\.283 \|/);
  });

  it('axes are titled with the metric they show', () => {
    const acc = svg(html, 'Accuracy against retrieval count');
    assert.deepEqual([...acc.matchAll(/class="axis-title"[^>]*>([^<]*)</g)].map((m) => m[1]), ['mean retrieval count (searches per question)', 'Acc (cover-EM)']);
    assert.match(acc, /Acc \(cover-EM\): the prediction contains a gold answer; EM \(in the tables\): it equals one\./);
  });

  it('drops the detail columns empty or zero in every row, and names them', () => {
    // The gym policies have no judge, no ARENA relevance or citations, and generate no tokens.
    assert.deepEqual(table(html, 'Details: answers').head, ['system', 'n', 'EM [95% CI]', 'F1 [95% CI]', 'Acc (cover-EM) [95% CI]']);
    assert.deepEqual(table(html, 'Details: process and cost').head, ['system', 'RC', 'format ok']);
    assert.deepEqual(table(html, 'Details: process and cost').rows.map((r) => r[1]), ['5.00', '4.05', '1.50', '2.63', '4.72']);
    assert.ok(html.includes('Left out, empty or zero in every row (not measured in this run): judge, over-search (share), ended early, relevance, citation precision, tokens/q, s/q (LLM, search).'));
    assert.match(md, /\| system \| dataset \| n \| EM \[95% CI\] \| F1 \[95% CI\] \| Acc \(cover-EM\) \[95% CI\] \| RC \| format ok \|/);
    // A column measured in one row comes back.
    const withTokens = { ...results, cells: results.cells.map((c, i) => (i === 2 ? { ...c, tokensPerQuestion: 812 } : c)) };
    assert.deepEqual(table(renderHtml(withTokens, { dir: DIR }), 'Details: process and cost').rows.map((r) => r.at(-1)), ['0', '0', '812', '0', '0']);
    // Over-search is shown wherever it was measured, a measured 0 included, with what it counts.
    const withUse = { ...results, cells: results.cells.map((c, i) => ({ ...c, searchUse: { n: 200, overSearch: i === 0 ? 0.65 : 0, overSearchShare: i === 0 ? 0.195 : 0, answeredEarly: 0.715 } })) };
    const process = table(renderHtml(withUse, { dir: DIR }), 'Details: process and cost');
    assert.deepEqual(process.head, ['system', 'RC', 'over-search (share)', 'ended early', 'format ok']);
    assert.deepEqual(process.rows.map((r) => r[2]), ['0.65 (0.195)', '0.00 (0.000)', '0.00 (0.000)', '0.00 (0.000)', '0.00 (0.000)']);
    assert.match(renderMarkdown(withUse, { dir: DIR }), /over-search: searches per question made after every supporting passage/);
  });
});

describe('report: charts', () => {
  it('F1 by retrieval steps: n under every bar, × and "–" for a bucket without questions, a sliver for F1 0', () => {
    const f1 = svg(html, 'F1 by number of retrieval steps');
    const buckets = results.cells.flatMap((c) => c.f1ByRetrievals.map((b) => ({ system: c.system, ...b })));
    assert.equal(buckets.length, 30);
    const ns = [...f1.matchAll(/<text class="bar-n"[^>]*>([^<]*)</g)].map((m) => m[1]);
    // Drawn group by group (0 … 5+), the systems in order within each.
    const expected = [0, 1, 2, 3, 4, 5].flatMap((i) => results.cells.map((c) => (c.f1ByRetrievals[i]!.n ? String(c.f1ByRetrievals[i]!.n) : '–')));
    assert.deepEqual(ns, expected);
    const empty = buckets.filter((b) => b.n === 0).length;
    assert.equal(empty, 10, 'this run has empty buckets (base always searches 5+ times)');
    assert.equal((f1.match(/<g class="no-data">/g) ?? []).length, empty);
    assert.equal((f1.match(/<rect [^>]*><title>/g) ?? []).length, 30 - empty, 'a bar for every bucket with questions, none for the others');
    // GRPO after 3 searches: 10 questions, F1 0 — a bar (sliver), not the no-data mark.
    const zero = buckets.find((b) => b.system === 'GRPO (outcome)' && b.rc === '3')!;
    assert.deepEqual([zero.n, zero.f1], [10, 0]);
    assert.match(f1, /<rect [^>]*height="1\.5"[^>]*><title>3 · GRPO \(outcome\): 0\.000 \(n = 10\)<\/title>/);
    assert.match(f1, /<title>3 · base: no questions<\/title>/);
  });

  it('PRM pair accuracy: a dashed line at 0.5 labelled "chance"', () => {
    const prm = svg(html, 'PRM pair accuracy by preferred action type');
    // Plot 200 px tall from y 48, y axis 0 … 1: 0.5 is at 148.
    assert.match(prm, /<line class="ref-line" x1="56" x2="[\d.]+" y1="148" y2="148" stroke="#444" stroke-width="1.2" stroke-dasharray="6 4"\/><text class="ref-label" [^>]*>chance<\/text>/);
    assert.ok(!barChart('t', ['a'], [{ label: 'x', values: [0.4] }]).includes('ref-line'), 'no line unless asked for');
  });

  it('step-DPO pair accuracy starts at chance (ties count 0.5), with the chance line', () => {
    assert.equal(fixture.dpoPairAccuracy[0], 0.5, 'the untrained policy: every pair a tie');
    const dpo = svg(html, 'step-dpo: pair accuracy by epoch');
    assert.match(dpo, /class="ref-line"/);
    assert.match(dpo, />chance</);
  });

  it('movingMean: centred, the window shrinking at the ends', () => {
    assert.deepEqual(movingMean([1, 2, 3, 4, 10], 3), [1.5, 2, 3, 17 / 3, 7]);
    assert.deepEqual(movingMean([1, 2, 3, 4, 10], 5), [2, 2.5, 4, 19 / 4, 17 / 3]);
    assert.deepEqual(movingMean([3, 1], 1), [3, 1]);
    assert.equal(trendWindow(39), 7);
    assert.equal(trendWindow(40), 7);
    assert.equal(trendWindow(9), undefined, 'too few points for a trend');
  });

  it('GRPO reward by batch: the raw points kept, lighter, under a moving mean stated in the caption', () => {
    const g = svg(html, 'grpo: mean reward');
    const r = fixture.grpoReward;
    assert.equal(r.length, 39);
    assert.match(g, /<polyline fill="none" stroke="#2f6fb0" stroke-width="1" stroke-opacity="0.3" points=/);
    assert.equal((g.match(/<circle [^>]*fill-opacity="0.4"><title>/g) ?? []).length, 39, 'every batch kept as a pale dot');
    const trend = /<polyline class="trend" [^>]*points="([^"]*)"/.exec(g);
    assert.ok(trend, 'a trend line');
    // Its first point: the mean of batches 1–4 (3 to the right, none to the left).
    const first = (r[0]! + r[1]! + r[2]! + r[3]!) / 4;
    const ys = r.concat([first]);
    const [lo, hi] = [0, 0.4]; // the y axis of this chart (nice ticks over 0 … max 0.367)
    assert.ok(Math.max(...ys) <= hi);
    const y0 = Number(trend[1]!.split(' ')[0]!.split(',')[1]);
    assert.ok(Math.abs(y0 - (40 + 216 - ((first - lo) / (hi - lo)) * 216)) < 0.06, `first trend point at y ${y0}`);
    assert.match(g, /Light dots: each batch; bold line: centred moving mean over 7 batches \(3 either side, fewer at the ends\)\./);
    assert.deepEqual([...g.matchAll(/class="legend-item">.*?<text[^>]*>([^<]*)</g)].map((m) => m[1]), ['reward (each batch)', 'reward, moving mean of 7']);
    assert.ok(!lineChart('t', [{ name: 'loss', points: [{ x: 1, y: 1 }, { x: 2, y: 0.5 }] }], { xLabel: 'epoch', yLabel: 'loss' }).includes('trend'), 'no trend unless asked for');
  });
});
