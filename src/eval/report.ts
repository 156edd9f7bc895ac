/**
 * The evaluation report: `results.md` (the papers' main-table shape — systems down, datasets across,
 * EM and F1 with their average, * marking p < 0.05 against the baseline — then the process metrics)
 * and `report.html`, one self-contained file (inline CSS and SVG, no scripts, nothing fetched) with the
 * same tables and the plots: accuracy against retrieval count (LWS Fig. 1), F1 by number of retrieval
 * steps (ReasonRAG Fig. 6), PRM pair accuracy by action type, and the reward-gap histogram.
 *
 * One convention throughout: every rate is a proportion in [0, 1] with 3 decimals, as in the claims;
 * paths are relative to the report's folder; detail columns empty or zero in every row are left out and
 * named under the tables; the page never gets wider than an 800 px window (tables wrap a value's
 * interval under it, then scroll inside their box; plots shrink).
 */
import { writeFileSync } from 'node:fs';
import { basename, isAbsolute, join, relative } from 'node:path';
import type { Cell, EvalResults, LabelCheckSummary } from './results.js';
import { barChart, lineChart, scatterChart } from './svg.js';

/** Every rate of the report (EM, F1, Acc, shares, differences) is a proportion in [0, 1] with 3 decimals, as in the claims. */
const prop = (x: number) => x.toFixed(3);
const signed = (x: number) => `${x >= 0 ? '+' : ''}${prop(x)}`;
export const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const plural = (w: string) => (/(s|x|ch|sh)$/.test(w) ? `${w}es` : `${w}s`);
const ci = (m: { mean: number; low: number; high: number }) => `${prop(m.mean)} [${prop(m.low)}, ${prop(m.high)}]`;

/** Options of {@link renderHtml} and {@link renderMarkdown}. */
export interface ReportOptions {
  /** The folder the report is written to: paths in it (the index, the policies, the PRM) are shown relative to it. */
  dir?: string;
}

/**
 * A path as the report shows it: relative to `dir` (the report's folder) when it is absolute, also
 * behind a scheme such as `gym:`; unchanged without `dir` or when it is relative already.
 */
export function reportPath(path: string, dir?: string): string {
  if (!dir) return path;
  const m = /^([a-z][a-z0-9+-]*:)(.*)$/i.exec(path);
  // "gym:/abs/policy.json" has a path behind its scheme; "http://host/…" (rest "//host/…") does not.
  const [scheme, rest] = m && isAbsolute(m[2]!) && !m[2]!.startsWith('//') ? [m[1]!, m[2]!] : ['', path];
  if (!isAbsolute(rest)) return path;
  return scheme + (relative(dir, rest) || '.');
}

function cellOf(r: EvalResults, system: string, dataset: string): Cell | undefined {
  return r.cells.find((c) => c.system === system && c.dataset === dataset);
}

function star(c: Cell | undefined, m: 'em' | 'f1'): string {
  const v = c?.vsBaseline?.[m];
  return v && v.pT < 0.05 ? '*' : '';
}

/** Rows of the main table: per dataset EM / F1 (proportions), then the averages. */
function mainRows(r: EvalResults): string[][] {
  const systems = r.config.systems.map((s) => s.name);
  const datasets = r.config.datasets.map((d) => d.name);
  return systems.map((s) => {
    const cells = datasets.map((d) => cellOf(r, s, d));
    const avg = (m: 'em' | 'f1') => cells.reduce((x, c) => x + (c?.[m].mean ?? 0), 0) / Math.max(1, cells.length);
    return [s, ...cells.flatMap((c) => [c ? `${prop(c.em.mean)}${star(c, 'em')}` : '–', c ? `${prop(c.f1.mean)}${star(c, 'f1')}` : '–']), prop(avg('em')), prop(avg('f1'))];
  });
}

/** One column of the details: its head, which of the two HTML tables it goes to, its number (undefined: not measured) and text. */
interface DetailColumn {
  head: string;
  part: 'answers' | 'process';
  value?: (c: Cell) => number | undefined;
  text: (c: Cell) => string;
}

const DETAIL_COLUMNS: DetailColumn[] = [
  { head: 'system', part: 'answers', text: (c) => c.system },
  { head: 'dataset', part: 'answers', text: (c) => c.dataset },
  { head: 'n', part: 'answers', text: (c) => String(c.n) },
  { head: 'EM [95% CI]', part: 'answers', text: (c) => ci(c.em) },
  { head: 'F1 [95% CI]', part: 'answers', text: (c) => ci(c.f1) },
  { head: 'Acc (cover-EM) [95% CI]', part: 'answers', text: (c) => ci(c.acc) },
  { head: 'judge [95% CI]', part: 'answers', value: (c) => c.judge?.mean, text: (c) => (c.judge ? ci(c.judge) : '–') },
  { head: 'RC', part: 'process', value: (c) => c.retrievalCount, text: (c) => c.retrievalCount.toFixed(2) },
  // Present (a count) wherever questions name their supporting passages, so that a measured 0 is shown.
  { head: 'over-search (share)', part: 'process', value: (c) => c.searchUse?.n, text: (c) => (c.searchUse ? `${c.searchUse.overSearch.toFixed(2)} (${prop(c.searchUse.overSearchShare)})` : '–') },
  { head: 'ended early', part: 'process', value: (c) => c.searchUse?.n, text: (c) => (c.searchUse ? prop(c.searchUse.answeredEarly) : '–') },
  { head: 'format ok', part: 'process', value: (c) => c.format, text: (c) => prop(c.format) },
  { head: 'relevance', part: 'process', value: (c) => c.relevance, text: (c) => (c.relevance === undefined ? '–' : prop(c.relevance)) },
  { head: 'citation precision', part: 'process', value: (c) => c.citationPrecision, text: (c) => (c.citationPrecision === undefined ? '–' : prop(c.citationPrecision)) },
  { head: 'tokens/q', part: 'process', value: (c) => c.tokensPerQuestion, text: (c) => c.tokensPerQuestion.toFixed(0) },
  // Seconds per question; in brackets the model's and the retriever's share of it.
  { head: 's/q (LLM, search)', part: 'process', value: (c) => c.latency?.seconds, text: (c) => (c.latency ? `${seconds(c.latency.seconds)} (${seconds(c.latency.llmSeconds)}, ${seconds(c.latency.retrievalSeconds)})` : '–') },
];

/** Seconds with 3 significant digits (0.00412, 0.412, 41.2, 412). */
const seconds = (s: number) => (s === 0 ? '0' : s >= 100 ? s.toFixed(0) : s.toPrecision(3));

/**
 * The detail columns that measured something: a column with a `value` is left out when it is empty or
 * zero in every row (the judge without a judge model, ARENA's relevance and citation precision on other
 * protocols, tokens of a policy that generates none); `dropped` names them for the note under the table.
 */
function detailColumns(r: EvalResults): { kept: DetailColumn[]; dropped: string[] } {
  const measured = (col: DetailColumn) => !col.value || r.cells.some((c) => (col.value!(c) ?? 0) !== 0);
  return { kept: DETAIL_COLUMNS.filter(measured), dropped: DETAIL_COLUMNS.filter((c) => !measured(c)).map((c) => c.head) };
}

const droppedNote = (dropped: string[]) => (dropped.length ? `Left out, empty or zero in every row (not measured in this run): ${dropped.map((d) => d.replace(' [95% CI]', '')).join(', ')}.` : '');

function testRows(r: EvalResults): string[][] {
  return r.cells
    .filter((c) => c.vsBaseline)
    .flatMap((c) =>
      (['em', 'f1'] as const).map((m) => {
        const v = c.vsBaseline![m];
        return [c.system, c.dataset, m.toUpperCase(), signed(v.diff), v.t.toFixed(2), v.pT.toFixed(4), `[${signed(v.low)}, ${signed(v.high)}]`, v.pBoot.toFixed(4)];
      }),
    );
}

/**
 * EM by question type, one table per dataset whose questions carry types: systems down, the types and
 * "needs retrieval" (questions whose answer is not offered by the question) across, each "EM (n)".
 */
function typeTables(r: EvalResults): { dataset: string; head: string[]; rows: string[][] }[] {
  const out = [];
  for (const d of r.config.datasets.map((x) => x.name)) {
    const cells = r.cells.filter((c) => c.dataset === d && c.emByType?.length);
    if (!cells.length) continue;
    const types = [...new Set(cells.flatMap((c) => c.emByType!.map((t) => t.type)))];
    const rows = cells.map((c) => [c.system, ...types.map((t) => {
      const x = c.emByType!.find((y) => y.type === t);
      return x && x.n ? `${prop(x.em)} (${x.n})` : '–';
    })]);
    out.push({ dataset: d, head: ['system', ...types], rows });
  }
  return out;
}

/** EM by hops, one table per dataset where questions need different numbers of hops: systems down, hop counts across. */
function hopTables(r: EvalResults): { dataset: string; head: string[]; rows: string[][] }[] {
  const out = [];
  for (const d of r.config.datasets.map((x) => x.name)) {
    const cells = r.cells.filter((c) => c.dataset === d && c.byHops?.length);
    if (!cells.length) continue;
    const hops = [...new Set(cells.flatMap((c) => c.byHops!.map((h) => h.hops)))].sort((a, b) => a - b);
    const rows = cells.map((c) => [c.system, ...hops.map((h) => {
      const x = c.byHops!.find((y) => y.hops === h);
      if (!x) return '–';
      return x.relevance === undefined ? `${prop(x.em)} (${x.n})` : `${prop(x.em)} · rel ${prop(x.relevance)} · both ${prop(x.allCorrect!)} (${x.n})`;
    })]);
    out.push({ dataset: d, head: ['system', ...hops.map((h) => `${h} hop${h === 1 ? '' : 's'}`)], rows });
  }
  return out;
}

const HOP_NOTE = 'EM (questions) by the hops a question needs (its hop count, else its decomposition, else its supporting passages); for citing protocols also the share whose cited references are exactly the gold ones (rel) and the share right on both (ARENA, Table 13).';

const CATEGORY_HEAD = ['with retrieval', 'without', 'dataset', 'n', 'right both', 'only with retrieval', 'only without', 'neither'];
const categoryRows = (r: EvalResults) => (r.answerCategories ?? []).map((c) => [c.withRetrieval, c.without, c.dataset, String(c.n), prop(c.both), prop(c.onlyWith), prop(c.onlyWithout), prop(c.neither)]);
const CATEGORY_NOTE = 'LWS §4, Fig. 4: each question right (EM) with and without retrieval, only with it (the documents helped), only without it (the documents misled), or neither; shares of the questions both systems answered.';

const TYPE_NOTE = 'EM (questions) per question type; "needs retrieval": the questions whose answer the question does not offer (not yes/no, no gold answer named in it), where a guess between options cannot score.';

type Calibration = NonNullable<NonNullable<EvalResults['prm']>['calibration']>;
const labelsNote = (l: LabelCheckSummary) =>
  `Its training labels against the gold plan: the gold PRM prefers the annotation's chosen step in ${prop(l.goldAgreement)} of the pairs it does not tie (${prop(l.goldTies)} tied; 0.5 is noise)` +
  (l.featuresCeiling === null ? '.' : `; the same head trained on the gold verdicts holds out ${prop(l.featuresCeiling)} (what its features can express).`) +
  (l.byKind && Object.keys(l.byKind).length
    ? ` By the kind of pair (chosen/rejected; A answer, Q query, E evidence): ${Object.entries(l.byKind)
        .map(([k, v]) => `${k} ${v.goldAgreement === null ? '–' : prop(v.goldAgreement)} of ${v.pairs} (${prop(v.goldTies)} tied)`)
        .join(', ')}.`
    : '');
const calibrationNote = (c: Calibration) => `Calibration (the head's σ(score gap) as its confidence that the higher-scored step is the chosen one): ECE ${prop(c.ece)}.`;
const calibrationRows = (c: Calibration) => c.bins.filter((b) => b.n > 0).map((b) => [`${b.from.toFixed(1)}–${b.to.toFixed(1)}`, String(b.n), prop(b.confidence), prop(b.accuracy)]);

const TEST_HEAD = ['system', 'dataset', 'metric', 'Δ vs baseline', 't', 'p (t-test)', 'bootstrap 95% CI of Δ', 'p (bootstrap)'];
const SEARCH_USE_NOTE = 'over-search: searches per question made after every supporting passage of the question had been retrieved (in brackets the share of questions with one); ended early: the share whose episode ended, answered or out of turns, before that (LWS: over- and under-retrieval). Over the questions that name their supporting passages.';

const UNITS = 'EM, F1 and every other rate as proportions (0–1, 3 decimals, as in the claims)';

export function mdTable(head: string[], rows: string[][]): string {
  return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

/**
 * A table in a box of the page's width: a cell's parts in `<span>`s (a mean, its interval) may go onto
 * two lines when the page is narrow, and a table still wider than the page scrolls inside its box
 * instead of widening the page.
 */
export function htmlTable(head: string[], rows: string[][], groupHead?: string[]): string {
  const g = groupHead ? `<tr>${groupHead.map((h, i) => (i === 0 ? '<th></th>' : `<th colspan="2">${esc(h)}</th>`)).join('')}</tr>` : '';
  // "0.175 [0.125, 0.230]": the interval may wrap under the mean.
  const cell = (c: string) => {
    const m = /^(\S+) (\[.*\])$/.exec(c);
    return m ? `<td class="wrap"><span>${esc(m[1]!)}</span> <span class="ci">${esc(m[2]!)}</span></td>` : `<td>${esc(c)}</td>`;
  };
  // A head may wrap at its spaces, never at a hyphen ("t-test"): U+2011 is a hyphen that does not break.
  return `<div class="table"><table>${g}<tr>${head.map((h) => `<th>${esc(h).replace(/-/g, '\u2011')}</th>`).join('')}</tr>${rows.map((r) => `<tr>${r.map((c, i) => (i === 0 ? `<th>${esc(c)}</th>` : cell(c))).join('')}</tr>`).join('')}</table></div>`;
}

/** The policies of the non-LLM systems, each path once, with the systems that use it. */
function nonLlmPolicies(r: EvalResults, dir?: string): string[] {
  const by = new Map<string, string[]>();
  for (const s of r.config.systems.filter((x) => x.policy)) {
    const p = reportPath(s.policy!, dir);
    by.set(p, [...(by.get(p) ?? []), s.name]);
  }
  return [...by].map(([p, names]) => `${p} (${names.join(', ')})`);
}

/** The line that points at the per-question view of the run. */
function viewHint(dir?: string): string {
  const folder = dir ? basename(dir) : 'OUT';
  return `Per-question detail (every question's steps, searches and answer): browse it with \`ragtrail view ${folder}\` (${folder}: this report's folder).`;
}

/**
 * `results.md`: the main table (systems × datasets, EM and F1 as proportions, * for p < 0.05 against
 * the baseline), the details table (columns empty or zero in every row left out, and named), and paired
 * tests and PRM pair accuracy when present. Paths are relative to `opts.dir` when given.
 */
export function renderMarkdown(r: EvalResults, opts: ReportOptions = {}): string {
  const datasets = r.config.datasets.map((d) => d.name);
  const head = ['system', ...datasets.flatMap((d) => [`${d} EM`, `${d} F1`]), 'Avg EM', 'Avg F1'];
  const { kept, dropped } = detailColumns(r);
  const out = [`# Evaluation (${r.createdAt})`, '', ...(r.notes ?? []).flatMap((n) => [n, '']), `Index \`${reportPath(r.config.index, opts.dir)}\`. ${UNITS}.${r.config.baseline ? ` * p < 0.05 (paired t-test) against ${r.config.baseline}.` : ''}`, '', mdTable(head, mainRows(r)), '', '## Details', '', mdTable(kept.map((c) => c.head), r.cells.map((c) => kept.map((k) => k.text(c)))), ...(dropped.length ? ['', droppedNote(dropped)] : [])];
  if (r.cells.some((c) => c.searchUse)) out.push('', SEARCH_USE_NOTE);
  for (const t of typeTables(r)) out.push('', `## EM by question type (${t.dataset})`, '', TYPE_NOTE, '', mdTable(t.head, t.rows));
  for (const t of hopTables(r)) out.push('', `## EM by hops (${t.dataset})`, '', HOP_NOTE, '', mdTable(t.head, t.rows));
  if (r.answerCategories?.length) out.push('', '## Answer categories', '', CATEGORY_NOTE, '', mdTable(CATEGORY_HEAD, categoryRows(r)));
  if (r.config.baseline) out.push('', `## Paired tests against ${r.config.baseline}`, '', mdTable(TEST_HEAD, testRows(r)));
  if (r.prm) out.push('', `## PRM pair accuracy`, '', `${reportPath(r.prm.model, opts.dir)} on ${reportPath(r.prm.pairs, opts.dir)}: ${prop(r.prm.accuracy)} of ${r.prm.n} pairs (a tie counts 0.5; chance 0.5)`, '', mdTable(['preferred type', 'pairs', 'accuracy'], Object.entries(r.prm.by_type).map(([k, v]) => [k, String(v.n), prop(v.accuracy)])));
  if (r.prm?.labels) out.push('', labelsNote(r.prm.labels));
  if (r.prm?.calibration) out.push('', calibrationNote(r.prm.calibration), '', mdTable(['confidence', 'pairs', 'mean confidence', 'accuracy'], calibrationRows(r.prm.calibration)));
  return out.join('\n') + '\n';
}

export const CSS = `body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;padding:0 1rem;max-width:980px;color:#222;line-height:1.4}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
table{border-collapse:collapse;margin:.8rem 0;font-size:.85rem}th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:right;white-space:nowrap}
td.wrap{white-space:normal}td.wrap span{white-space:nowrap}tr:first-child th{white-space:normal}
.table{max-width:100%;overflow-x:auto}code{display:inline-block;max-width:100%;overflow-wrap:anywhere;vertical-align:bottom}
th{background:#f3f5f8}tr th:first-child{text-align:left}.note{color:#555;font-size:.85rem}svg{display:block;margin:1rem 0;background:#fff;max-width:100%;height:auto}`;

/**
 * `report.html`: one self-contained page (inline CSS and SVG, no scripts, nothing fetched) with the
 * same tables and the plots. Paths are shown relative to `opts.dir` (the report's folder) when given.
 * The page never gets wider than the window: tables scroll inside their box, plots shrink to fit.
 */
export function renderHtml(r: EvalResults, opts: ReportOptions = {}): string {
  const systems = r.config.systems.map((s) => s.name);
  const datasets = r.config.datasets.map((d) => d.name);
  const nonLlm = nonLlmPolicies(r, opts.dir);
  const body: string[] = [
    `<h1>ragtrail evaluation</h1>`,
    `<p class="note">${esc(r.createdAt)} · index <code>${esc(reportPath(r.config.index, opts.dir))}</code> · ${UNITS}${r.config.baseline ? ` · * p &lt; 0.05 (paired t-test) against <b>${esc(r.config.baseline)}</b>` : ''}</p>`,
    `<p class="note view-hint">${esc(viewHint(opts.dir)).replace(/`([^`]+)`/, '<code>$1</code>')}</p>`,
  ];
  for (const n of r.notes ?? []) body.push(`<p>${esc(n)}</p>`);
  if (nonLlm.length) body.push(`<p class="note"><b>Non-LLM policies</b> (measure the pipeline, not a language model): ${nonLlm.map((x) => esc(x).replace(/^(\S+)/, '<code>$1</code>')).join('; ')}</p>`);
  body.push('<h2>Main results</h2>', htmlTable(['system', ...datasets.flatMap(() => ['EM', 'F1']), 'EM', 'F1'], mainRows(r), ['', ...datasets, 'Average']));
  // The details in two tables (answers; process and cost), each with only the columns that measured
  // something; with one dataset its name goes in the heading instead of a column, so the tables fit 800 px.
  const { kept, dropped } = detailColumns(r);
  const one = datasets.length === 1 ? datasets[0]! : undefined;
  const on = one ? ` (${esc(one)})` : '';
  const keys = kept.slice(0, 3).filter((c) => !(one && c.head === 'dataset'));
  for (const [part, heading] of [['answers', 'Details: answers'], ['process', 'Details: process and cost']] as const) {
    const own = kept.slice(3).filter((c) => c.part === part);
    const cols = [...keys.filter((c) => part === 'answers' || c.head !== 'n'), ...own];
    if (own.length) body.push(`<h2>${heading}${on}</h2>`, htmlTable(cols.map((c) => c.head), r.cells.map((c) => cols.map((k) => k.text(c)))));
    if (part === 'process' && own.length && r.cells.some((c) => c.searchUse)) body.push(`<p class="note">${esc(SEARCH_USE_NOTE)}</p>`);
  }
  if (dropped.length) body.push(`<p class="note dropped-columns">${esc(droppedNote(dropped))}</p>`);
  for (const t of typeTables(r)) body.push(`<h2>EM by question type (${esc(t.dataset)})</h2>`, `<p class="note">${esc(TYPE_NOTE)}</p>`, htmlTable(t.head, t.rows));
  for (const t of hopTables(r)) body.push(`<h2>EM by hops (${esc(t.dataset)})</h2>`, `<p class="note">${esc(HOP_NOTE)}</p>`, htmlTable(t.head, t.rows));
  if (r.answerCategories?.length) body.push('<h2>Answer categories</h2>', `<p class="note">${esc(CATEGORY_NOTE)}</p>`, htmlTable(CATEGORY_HEAD, categoryRows(r)));
  if (r.config.baseline) {
    const drop = (row: string[]) => (one ? row.filter((_, i) => i !== 1) : row);
    body.push(`<h2>Paired tests against ${esc(r.config.baseline)}${on}</h2>`, htmlTable(drop(TEST_HEAD), testRows(r).map(drop)));
  }
  body.push('<h2>Plots</h2>');
  body.push(
    scatterChart(
      'Accuracy against retrieval count',
      datasets,
      r.cells.map((c) => ({ x: c.retrievalCount, y: c.acc.mean, low: c.acc.low, high: c.acc.high, label: c.system, series: datasets.indexOf(c.dataset) })),
      { xLabel: 'mean retrieval count (searches per question)', yLabel: 'Acc (cover-EM)', note: 'Acc (cover-EM): the prediction contains a gold answer; EM (in the tables): it equals one.' },
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
          // 0 for a bucket with no questions: drawn as × with n "–", never as a bar at F1 0.
          counts: cells.map((c) => c?.f1ByRetrievals[i]?.n ?? 0),
        })),
        { yLabel: 'mean F1', yMax: 1, xLabel: 'retrieval steps (searches) in the episode', countOf: 'questions' },
      ),
    );
  }
  if (r.prm) {
    const byType = [...Object.entries(r.prm.by_type).map(([k, v]) => ({ label: k, values: [v.accuracy], counts: [v.n] })), { label: 'all', values: [r.prm.accuracy], counts: [r.prm.n] }];
    if (r.prm.labels) body.push(`<p class="note">${esc(labelsNote(r.prm.labels))}</p>`);
    if (r.prm.calibration) body.push(`<p class="note">${esc(calibrationNote(r.prm.calibration))}</p>`, htmlTable(['confidence', 'pairs', 'mean confidence', 'accuracy'], calibrationRows(r.prm.calibration)));
    body.push(barChart(`PRM pair accuracy by preferred action type (${r.prm.n} pairs)`, ['accuracy'], byType, { yLabel: 'pair accuracy', yMax: 1, xLabel: 'action type of the preferred step (A answer, Q query, E evidence, X invalid)', countOf: 'pairs', refLine: { y: 0.5, label: 'chance' } }));
  }
  if (r.annotation) {
    body.push(barChart(`Reward gap |ΔQ| of the mined pairs (${r.annotation.pairs} pairs, ${r.annotation.method})`, ['pairs'], r.annotation.gapHistogram.map((h) => ({ label: h.to === null ? `> ${h.from}` : `${h.from}–${h.to}`, values: [h.count] })), { yLabel: 'pairs', xLabel: '|ΔQ| between the preferred and the rejected step', digits: 0, integer: true }));
  }
  for (const c of r.curves ?? []) {
    const note = c.trend ? `Light dots: each ${c.xLabel}; bold line: centred moving mean over ${c.trend} ${plural(c.xLabel)} (${Math.floor(c.trend / 2)} either side, fewer at the ends).` : undefined;
    body.push(lineChart(c.title, c.series, { xLabel: c.xLabel, yLabel: c.yLabel, yMin: c.yMin, yMax: c.yMax, trend: c.trend, refLine: c.refLine, note }));
  }
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>ragtrail evaluation</title><style>${CSS}</style></head><body>${body.join('\n')}</body></html>\n`;
}

/** Writes `results.md` and `report.html` into `dir`, replacing them; paths in them are shown relative to `dir`. */
export function writeReport(dir: string, r: EvalResults): void {
  writeFileSync(join(dir, 'results.md'), renderMarkdown(r, { dir }));
  writeFileSync(join(dir, 'report.html'), renderHtml(r, { dir }));
}
