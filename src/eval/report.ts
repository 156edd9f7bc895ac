/**
 * The evaluation report: `results.md` (the papers' main-table shape — systems down, datasets across,
 * EM and F1 with their average, * marking p < 0.05 against the baseline — then the process metrics)
 * and `report.html`, one self-contained file (inline CSS and SVG, no scripts, nothing fetched) with the
 * same tables and the plots: accuracy against retrieval count (LWS Fig. 1), F1 by number of retrieval
 * steps (ReasonRAG Fig. 6), PRM pair accuracy by action type, and the reward-gap histogram.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Cell, EvalResults } from './results.js';
import { barChart, lineChart, scatterChart } from './svg.js';

const pct = (x: number) => (100 * x).toFixed(1);
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function cellOf(r: EvalResults, system: string, dataset: string): Cell | undefined {
  return r.cells.find((c) => c.system === system && c.dataset === dataset);
}

function star(c: Cell | undefined, m: 'em' | 'f1'): string {
  const v = c?.vsBaseline?.[m];
  return v && v.pT < 0.05 ? '*' : '';
}

/** Rows of the main table: per dataset EM / F1 (%), then the averages. */
function mainRows(r: EvalResults): string[][] {
  const systems = r.config.systems.map((s) => s.name);
  const datasets = r.config.datasets.map((d) => d.name);
  return systems.map((s) => {
    const cells = datasets.map((d) => cellOf(r, s, d));
    const avg = (m: 'em' | 'f1') => cells.reduce((x, c) => x + (c?.[m].mean ?? 0), 0) / Math.max(1, cells.length);
    return [s, ...cells.flatMap((c) => [c ? `${pct(c.em.mean)}${star(c, 'em')}` : '–', c ? `${pct(c.f1.mean)}${star(c, 'f1')}` : '–']), pct(avg('em')), pct(avg('f1'))];
  });
}

function detailRows(r: EvalResults): string[][] {
  return r.cells.map((c) => [
    c.system,
    c.dataset,
    String(c.n),
    `${pct(c.em.mean)} [${pct(c.em.low)}, ${pct(c.em.high)}]`,
    `${pct(c.f1.mean)} [${pct(c.f1.low)}, ${pct(c.f1.high)}]`,
    `${pct(c.acc.mean)} [${pct(c.acc.low)}, ${pct(c.acc.high)}]`,
    c.judge ? `${pct(c.judge.mean)} [${pct(c.judge.low)}, ${pct(c.judge.high)}]` : '–',
    c.retrievalCount.toFixed(2),
    pct(c.format),
    c.relevance === undefined ? '–' : pct(c.relevance),
    c.citationPrecision === undefined ? '–' : pct(c.citationPrecision),
    c.tokensPerQuestion.toFixed(0),
  ]);
}

function testRows(r: EvalResults): string[][] {
  return r.cells
    .filter((c) => c.vsBaseline)
    .flatMap((c) =>
      (['em', 'f1'] as const).map((m) => {
        const v = c.vsBaseline![m];
        return [c.system, c.dataset, m.toUpperCase(), `${v.diff >= 0 ? '+' : ''}${pct(v.diff)}`, v.t.toFixed(2), v.pT.toFixed(4), `[${pct(v.low)}, ${pct(v.high)}]`, v.pBoot.toFixed(4)];
      }),
    );
}

const DETAIL_HEAD = ['system', 'dataset', 'n', 'EM [95% CI]', 'F1 [95% CI]', 'Acc [95% CI]', 'judge', 'RC', 'format %', 'relevance %', 'citation precision %', 'tokens/q'];
const TEST_HEAD = ['system', 'dataset', 'metric', 'Δ vs baseline', 't', 'p (t-test)', 'bootstrap 95% CI of Δ', 'p (bootstrap)'];

function mdTable(head: string[], rows: string[][]): string {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

/** A table in a scrolling box: cells never wrap, and a table wider than the page scrolls instead of stretching it. */
function htmlTable(head: string[], rows: string[][], groupHead?: string[]): string {
  const g = groupHead ? `<tr>${groupHead.map((h, i) => (i === 0 ? '<th></th>' : `<th colspan="2">${esc(h)}</th>`)).join('')}</tr>` : '';
  return `<div class="table"><table>${g}<tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr>${rows.map((r) => `<tr>${r.map((c, i) => (i === 0 ? `<th>${esc(c)}</th>` : `<td>${esc(c)}</td>`)).join('')}</tr>`).join('')}</table></div>`;
}

/** Columns `keep` of a table (head and rows), for splitting a wide table into two that fit the page. */
function columns(head: string[], rows: string[][], keep: number[]): [string[], string[][]] {
  return [keep.map((i) => head[i]!), rows.map((r) => keep.map((i) => r[i]!))];
}

/**
 * `results.md`: the main table (systems × datasets, EM and F1 in %, * for p < 0.05 against the
 * baseline), the details table, and paired tests and PRM pair accuracy when present.
 */
export function renderMarkdown(r: EvalResults): string {
  const datasets = r.config.datasets.map((d) => d.name);
  const head = ['system', ...datasets.flatMap((d) => [`${d} EM`, `${d} F1`]), 'Avg EM', 'Avg F1'];
  const out = [`# Evaluation (${r.createdAt})`, '', ...(r.notes ?? []).flatMap((n) => [n, '']), `Index \`${r.config.index}\`. EM / F1 in %.${r.config.baseline ? ` * p < 0.05 (paired t-test) against ${r.config.baseline}.` : ''}`, '', mdTable(head, mainRows(r)), '', '## Details', '', mdTable(DETAIL_HEAD, detailRows(r))];
  if (r.config.baseline) out.push('', `## Paired tests against ${r.config.baseline}`, '', mdTable(TEST_HEAD, testRows(r)));
  if (r.prm) out.push('', `## PRM pair accuracy`, '', `${r.prm.model} on ${r.prm.pairs}: ${pct(r.prm.accuracy)}% of ${r.prm.n} pairs`, '', mdTable(['preferred type', 'pairs', 'accuracy %'], Object.entries(r.prm.by_type).map(([k, v]) => [k, String(v.n), pct(v.accuracy)])));
  return out.join('\n') + '\n';
}

const CSS = `body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:980px;color:#222;line-height:1.4}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
table{border-collapse:collapse;margin:.8rem 0;font-size:.85rem}th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:right;white-space:nowrap}
.table{max-width:100%;overflow-x:auto}
th{background:#f3f5f8}tr th:first-child{text-align:left}.note{color:#555;font-size:.85rem}svg{display:block;margin:1rem 0;background:#fff}`;

/** `report.html`: one self-contained page (inline CSS and SVG, no scripts, nothing fetched) with the same tables and the plots. */
export function renderHtml(r: EvalResults): string {
  const systems = r.config.systems.map((s) => s.name);
  const datasets = r.config.datasets.map((d) => d.name);
  const nonLlm = r.config.systems.filter((s) => s.policy).map((s) => `${s.name} (${s.policy})`);
  const body: string[] = [
    `<h1>ragtrail evaluation</h1>`,
    `<p class="note">${esc(r.createdAt)} · index <code>${esc(r.config.index)}</code> · EM / F1 in %${r.config.baseline ? ` · * p &lt; 0.05 (paired t-test) against <b>${esc(r.config.baseline)}</b>` : ''}</p>`,
  ];
  for (const n of r.notes ?? []) body.push(`<p>${esc(n)}</p>`);
  if (nonLlm.length) body.push(`<p class="note"><b>Non-LLM policies</b> (measure the pipeline, not a language model): ${esc(nonLlm.join(', '))}</p>`);
  body.push('<h2>Main results</h2>', htmlTable(['system', ...datasets.flatMap(() => ['EM', 'F1']), 'EM', 'F1'], mainRows(r), ['', ...datasets, 'Average']));
  // The details split in two (answers; process and cost) so that each fits the page without wrapping.
  const details = detailRows(r);
  body.push('<h2>Details: answers</h2>', htmlTable(...columns(DETAIL_HEAD, details, [0, 1, 2, 3, 4, 5, 6])));
  body.push('<h2>Details: process and cost</h2>', htmlTable(...columns(DETAIL_HEAD, details, [0, 1, 7, 8, 9, 10, 11])));
  if (r.config.baseline) body.push(`<h2>Paired tests against ${esc(r.config.baseline)}</h2>`, htmlTable(TEST_HEAD, testRows(r)));
  body.push('<h2>Plots</h2>');
  body.push(
    scatterChart(
      'Accuracy against retrieval count',
      datasets,
      r.cells.map((c) => ({ x: c.retrievalCount, y: c.acc.mean, low: c.acc.low, high: c.acc.high, label: c.system, series: datasets.indexOf(c.dataset) })),
      { xLabel: 'mean retrieval count (searches per question)', yLabel: 'Acc' },
    ),
  );
  for (const d of datasets) {
    const cells = systems.map((s) => cellOf(r, s, d));
    body.push(
      barChart(
        `F1 by number of retrieval steps — ${d}`,
        systems,
        ['0', '1', '2', '3', '4', '5+'].map((rc, i) => ({
          label: rc,
          values: cells.map((c) => (c?.f1ByRetrievals[i]?.n ? c.f1ByRetrievals[i]!.f1 : undefined)),
          counts: cells.map((c) => (c?.f1ByRetrievals[i]?.n ? c.f1ByRetrievals[i]!.n : undefined)),
        })),
        { yLabel: 'mean F1', yMax: 1, xLabel: 'retrieval steps (searches) in the episode', countOf: 'questions' },
      ),
    );
  }
  if (r.prm) {
    const byType = [...Object.entries(r.prm.by_type).map(([k, v]) => ({ label: k, values: [v.accuracy], counts: [v.n] })), { label: 'all', values: [r.prm.accuracy], counts: [r.prm.n] }];
    body.push(barChart(`PRM pair accuracy by preferred action type (${r.prm.n} pairs)`, ['accuracy'], byType, { yLabel: 'pair accuracy', yMax: 1, xLabel: 'action type of the preferred step (A answer, Q query, E evidence, X invalid)', countOf: 'pairs' }));
  }
  if (r.annotation) {
    body.push(barChart(`Reward gap |ΔQ| of the mined pairs (${r.annotation.pairs} pairs, ${r.annotation.method})`, ['pairs'], r.annotation.gapHistogram.map((h) => ({ label: h.to === null ? `> ${h.from}` : `${h.from}–${h.to}`, values: [h.count] })), { yLabel: 'pairs', xLabel: '|ΔQ| between the preferred and the rejected step', digits: 0, integer: true }));
  }
  for (const c of r.curves ?? []) body.push(lineChart(c.title, c.series, { xLabel: c.xLabel, yLabel: c.yLabel, yMin: c.yMin, yMax: c.yMax }));
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>ragtrail evaluation</title><style>${CSS}</style></head><body>${body.join('\n')}</body></html>\n`;
}

/** Writes `results.md` and `report.html` into `dir`, replacing them. */
export function writeReport(dir: string, r: EvalResults): void {
  writeFileSync(join(dir, 'results.md'), renderMarkdown(r));
  writeFileSync(join(dir, 'report.html'), renderHtml(r));
}
