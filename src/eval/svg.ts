/**
 * Small, dependency-free SVG charts for the self-contained HTML report: grouped bars, a labelled
 * scatter and lines. Axes carry titles and "nice" ticks (1, 2 or 5 times a power of ten); legends wrap
 * onto as many rows as they need, inside the drawing. Elements carry classes (`legend-item`, `tick-x`,
 * `tick-y`, `axis-title`) so that the rendered page can be checked (test/eval/report-render.test.ts).
 */
const PALETTE = ['#2f6fb0', '#d9822b', '#3a9a5b', '#b03a48', '#7a5bb0', '#6b6b6b', '#c4a000', '#1f9aa6'];

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const num = (x: number, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : '–');
const color = (i: number) => PALETTE[i % PALETTE.length]!;

/**
 * Ticks at a multiple of 1, 2 or 5 × 10^k covering [lo, hi] with about `target` intervals; the first
 * tick is at or below lo and the last at or above hi. `integer` keeps the step at 1 or more.
 */
export function niceTicks(lo: number, hi: number, target = 5, integer = false): number[] {
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) [lo, hi] = [0, 1];
  if (hi - lo < 1e-12) hi = lo + (integer ? 1 : Math.max(Math.abs(lo) * 0.1, 1e-9));
  const raw = (hi - lo) / target;
  const mag = 10 ** Math.floor(Math.log10(raw));
  let step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw - 1e-12) ?? 10 * mag;
  if (integer) step = Math.max(1, Math.round(step));
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  const first = Math.floor(lo / step + 1e-9);
  const last = Math.ceil(hi / step - 1e-9);
  const out: number[] = [];
  for (let k = first; k <= last; k++) out.push(Number((k * step).toFixed(decimals)));
  return out;
}

/** A tick's text: as many decimals as the step needs, no more. */
function tickText(v: number, ticks: readonly number[]): string {
  const step = ticks.length > 1 ? Math.abs(ticks[1]! - ticks[0]!) : 1;
  return v.toFixed(Math.max(0, -Math.floor(Math.log10(step) + 1e-9)));
}

/** Rough width of a label at `size` px, for laying out legends (wide enough for DejaVu Sans). */
const textWidth = (s: string, size = 11) => s.length * size * 0.62;

interface LegendItem {
  label: string;
  /** How the swatch is drawn: a filled square, a dot, or a line segment. */
  mark: 'box' | 'dot' | 'line';
  color: string;
}

/** Legend items placed left to right, wrapping into rows within `width`; returns the SVG and its height. */
function legend(items: readonly LegendItem[], x0: number, y0: number, width: number): { svg: string; height: number } {
  const rowH = 16;
  let x = x0;
  let row = 0;
  const parts: string[] = [];
  for (const it of items) {
    const w = 16 + textWidth(it.label) + 18;
    if (x > x0 && x + w - 18 > x0 + width) {
      x = x0;
      row++;
    }
    const y = y0 + row * rowH;
    const mark = it.mark === 'box' ? `<rect x="${x}" y="${y - 9}" width="10" height="10" fill="${it.color}"/>` : it.mark === 'dot' ? `<circle cx="${x + 5}" cy="${y - 4}" r="5" fill="${it.color}"/>` : `<rect x="${x}" y="${y - 5}" width="12" height="3" fill="${it.color}"/>`;
    parts.push(`<g class="legend-item">${mark}<text x="${x + 16}" y="${y}" font-size="11">${esc(it.label)}</text></g>`);
    x += w;
  }
  return { svg: parts.join(''), height: items.length ? (row + 1) * rowH : 0 };
}

function open(W: number, H: number, title: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(title)}"><text x="${W / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">${esc(title)}</text>`;
}

function yTitle(text: string, top: number, plotH: number): string {
  return `<text class="axis-title" transform="translate(14 ${top + plotH / 2}) rotate(-90)" text-anchor="middle" font-size="12">${esc(text)}</text>`;
}

function xTitle(text: string, x: number, y: number): string {
  return `<text class="axis-title" x="${x}" y="${y}" text-anchor="middle" font-size="12">${esc(text)}</text>`;
}

export interface BarGroup {
  label: string;
  /** One value per series (undefined: no bar). */
  values: (number | undefined)[];
  /** How many items (questions, pairs) each value comes from, per series. */
  counts?: (number | undefined)[];
}

export interface BarOptions {
  yLabel?: string;
  /** Title of the x axis (what the groups are). */
  xLabel?: string;
  yMax?: number;
  digits?: number;
  width?: number;
  integer?: boolean;
  /** With counts: bars from fewer items than this are drawn pale, with their n (default 3). */
  minN?: number;
  /** With counts: what n counts, for the note under the chart ("questions", "pairs"). */
  countOf?: string;
}

export function barChart(title: string, series: readonly string[], groups: readonly BarGroup[], opts: BarOptions = {}): string {
  const W = opts.width ?? 720;
  // Room above the plot for the labels over a full-height bar (n and value), clear of the title.
  const [left, right, top] = [56, 16, 60];
  const plotW = W - left - right;
  const plotH = 200;
  const withCounts = groups.some((g) => g.counts);
  const minN = opts.minN ?? 3;
  const note = withCounts ? `n = ${opts.countOf ?? 'items'} behind a bar (every bar's in its tooltip); pale bars with n above: n < ${minN}, too few to read much into` : '';
  const items: LegendItem[] = series.length > 1 ? series.map((s, si) => ({ label: s, mark: 'box', color: color(si) })) : [];
  const axisBottom = top + plotH;
  const xTitleY = axisBottom + 34;
  const legendY = (opts.xLabel ? xTitleY : axisBottom + 16) + 22;
  const leg = legend(items, left, legendY, plotW);
  const noteY = legendY + leg.height + (note ? 4 : 0);
  const H = Math.ceil(noteY + (note ? 14 : 0) + 6);
  const all = groups.flatMap((g) => g.values.filter((v): v is number => v !== undefined));
  const ticks = niceTicks(0, opts.yMax ?? Math.max(1e-9, ...all), 5, opts.integer);
  const yMax = ticks[ticks.length - 1]!;
  const groupW = plotW / Math.max(1, groups.length);
  const barW = Math.max(4, (groupW * 0.8) / Math.max(1, series.length));
  const y = (v: number) => top + plotH - (v / yMax) * plotH;
  const parts: string[] = [open(W, H, title)];
  for (const v of ticks) parts.push(`<line x1="${left}" x2="${W - right}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/><text class="tick-y" x="${left - 6}" y="${y(v) + 4}" text-anchor="end" font-size="11">${tickText(v, ticks)}</text>`);
  if (opts.yLabel) parts.push(yTitle(opts.yLabel, top, plotH));
  groups.forEach((g, gi) => {
    const x0 = left + gi * groupW + groupW * 0.1;
    g.values.forEach((v, si) => {
      if (v === undefined) return;
      const x = x0 + si * barW;
      const n = g.counts?.[si];
      const few = n !== undefined && n < minN;
      const tip = `${g.label} · ${series[si]}: ${num(v, opts.digits ?? 3)}${n !== undefined ? ` (n = ${n})` : ''}`;
      // A zero still shows as a sliver, so that a bar of n questions with F1 0 is not mistaken for no bar.
      const h = Math.max(1.5, top + plotH - y(v));
      parts.push(`<rect x="${x}" y="${top + plotH - h}" width="${barW - 1}" height="${h}" fill="${color(si)}"${few ? ` fill-opacity="0.35" stroke="${color(si)}" stroke-dasharray="3 2"` : ''}><title>${esc(tip)}</title></rect>`);
      // Labels above the bar: n (always for a pale bar; for the others where there is room), then the value.
      const labels: string[] = [];
      if (n !== undefined && (few || barW >= 30)) labels.push(`n=${n}`);
      if (barW >= 18) labels.push(num(v, opts.digits ?? 2));
      labels.forEach((l, li) => parts.push(`<text x="${x + barW / 2}" y="${y(v) - 3 - li * 10}" text-anchor="middle" font-size="9"${l.startsWith('n=') ? ' fill="#555"' : ''}>${l}</text>`));
    });
    parts.push(`<text class="tick-x" x="${left + gi * groupW + groupW / 2}" y="${axisBottom + 16}" text-anchor="middle" font-size="11">${esc(g.label)}</text>`);
  });
  parts.push(`<line x1="${left}" x2="${W - right}" y1="${axisBottom}" y2="${axisBottom}" stroke="#333"/>`);
  if (opts.xLabel) parts.push(xTitle(opts.xLabel, left + plotW / 2, xTitleY));
  parts.push(leg.svg);
  if (note) parts.push(`<text x="${left}" y="${noteY + 8}" font-size="10" fill="#555">${esc(note)}</text>`);
  parts.push('</svg>');
  return parts.join('');
}

export interface ScatterPoint {
  x: number;
  y: number;
  /** A 95% interval of y, drawn as a whisker. */
  low?: number;
  high?: number;
  label: string;
  series: number;
}

export function scatterChart(title: string, series: readonly string[], points: readonly ScatterPoint[], opts: { xLabel: string; yLabel: string; width?: number; yMax?: number }): string {
  const W = opts.width ?? 720;
  const [left, right, top] = [56, 24, 40];
  const plotW = W - left - right;
  const plotH = 216;
  const whiskers = points.some((p) => p.low !== undefined && p.high !== undefined);
  const items: LegendItem[] = series.map((s, si) => ({ label: s, mark: 'dot', color: color(si) }));
  const legendY = top + plotH + 56;
  const leg = legend(whiskers ? [...items, { label: 'whiskers: 95% CI', mark: 'line', color: '#333' }] : items, left, legendY, plotW);
  const H = Math.ceil(legendY + leg.height + 4);
  // 5% headroom keeps a point off the frame's right edge.
  const xt = niceTicks(0, Math.max(1, ...points.map((p) => p.x)) * 1.05);
  const yt = niceTicks(0, opts.yMax ?? Math.max(1e-9, ...points.map((p) => Math.max(p.y, p.high ?? p.y))));
  const [xMax, yMax] = [xt[xt.length - 1]!, yt[yt.length - 1]!];
  const sx = (v: number) => left + (v / xMax) * plotW;
  const sy = (v: number) => top + plotH - (v / yMax) * plotH;
  const parts: string[] = [open(W, H, title)];
  for (const v of yt) parts.push(`<line x1="${left}" x2="${W - right}" y1="${sy(v)}" y2="${sy(v)}" stroke="#eee"/><text class="tick-y" x="${left - 6}" y="${sy(v) + 4}" text-anchor="end" font-size="11">${tickText(v, yt)}</text>`);
  for (const v of xt) parts.push(`<text class="tick-x" x="${sx(v)}" y="${top + plotH + 16}" text-anchor="middle" font-size="11">${tickText(v, xt)}</text>`);
  parts.push(`<line x1="${left}" x2="${W - right}" y1="${top + plotH}" y2="${top + plotH}" stroke="#333"/><line x1="${left}" x2="${left}" y1="${top}" y2="${top + plotH}" stroke="#333"/>`);
  parts.push(xTitle(opts.xLabel, left + plotW / 2, top + plotH + 34), yTitle(opts.yLabel, top, plotH));
  for (const p of points) {
    const c = color(p.series);
    const [cx, cy] = [sx(p.x), sy(p.y)];
    const ci = p.low !== undefined && p.high !== undefined ? ` [${num(p.low, 3)}, ${num(p.high, 3)}]` : '';
    if (ci) parts.push(`<path d="M${cx - 4} ${sy(p.low!)}h8M${cx} ${sy(p.low!)}V${sy(p.high!)}M${cx - 4} ${sy(p.high!)}h8" stroke="${c}" stroke-width="1.5" fill="none"/>`);
    parts.push(`<circle cx="${cx}" cy="${cy}" r="6" fill="${c}"><title>${esc(`${p.label}: ${opts.xLabel} ${num(p.x)}, ${opts.yLabel} ${num(p.y, 3)}${ci}`)}</title></circle>`);
    // The label goes left of the point where it would run past the plot's right edge.
    const rightSide = cx + 8 + textWidth(p.label, 10) <= W - right;
    parts.push(`<text x="${rightSide ? cx + 8 : cx - 8}" y="${cy - 6}" font-size="10"${rightSide ? '' : ' text-anchor="end"'}>${esc(p.label)}</text>`);
  }
  parts.push(leg.svg, '</svg>');
  return parts.join('');
}

/** One point of a line chart, with an optional confidence interval. */
export interface LinePoint {
  x: number;
  y: number;
  /** A confidence interval drawn as a whisker. */
  low?: number;
  high?: number;
}

/** One named line of a line chart. */
export interface LineSeries {
  name: string;
  points: readonly LinePoint[];
}

/** Lines with markers (and whiskers where a point has an interval): training curves, EM against budget. */
export function lineChart(title: string, series: readonly LineSeries[], opts: { xLabel: string; yLabel: string; width?: number; yMin?: number; yMax?: number; logX?: boolean }): string {
  const W = opts.width ?? 720;
  const [left, right, top] = [56, 24, 40];
  const plotW = W - left - right;
  const plotH = 216;
  const legendY = top + plotH + 56;
  const leg = legend(series.map((s, si) => ({ label: s.name, mark: 'line', color: color(si) })), left, legendY, plotW);
  const H = Math.ceil(legendY + leg.height + 4);
  const pts = series.flatMap((s) => s.points);
  const ys = pts.flatMap((p) => [p.y, p.low ?? p.y, p.high ?? p.y]).filter(Number.isFinite);
  const xs = pts.map((p) => p.x);
  const fx = (v: number) => (opts.logX ? Math.log(v) : v);
  const [x0, x1] = [Math.min(...xs.map(fx)), Math.max(...xs.map(fx))];
  const yt = niceTicks(opts.yMin ?? Math.min(0, ...ys), opts.yMax ?? Math.max(...ys));
  const [y0, y1] = [yt[0]!, yt[yt.length - 1]!];
  const sx = (v: number) => left + (x1 === x0 ? plotW / 2 : ((fx(v) - x0) / (x1 - x0)) * plotW);
  const sy = (v: number) => top + plotH - ((v - y0) / (y1 - y0)) * plotH;
  const parts: string[] = [open(W, H, title)];
  for (const v of yt) parts.push(`<line x1="${left}" x2="${W - right}" y1="${sy(v)}" y2="${sy(v)}" stroke="#eee"/><text class="tick-y" x="${left - 6}" y="${sy(v) + 4}" text-anchor="end" font-size="11">${tickText(v, yt)}</text>`);
  // Every x that occurs when they are few (epochs, budgets); nice ticks within the range when many.
  const distinct = [...new Set(xs)].sort((a, b) => a - b);
  const xTicks = distinct.length <= 12 || opts.logX ? distinct : niceTicks(Math.min(...xs), Math.max(...xs), 8, distinct.every(Number.isInteger)).filter((v) => v >= Math.min(...xs) && v <= Math.max(...xs));
  for (const v of xTicks) parts.push(`<text class="tick-x" x="${sx(v)}" y="${top + plotH + 16}" text-anchor="middle" font-size="11">${num(v, Number.isInteger(v) ? 0 : 2)}</text>`);
  parts.push(`<line x1="${left}" x2="${W - right}" y1="${top + plotH}" y2="${top + plotH}" stroke="#333"/><line x1="${left}" x2="${left}" y1="${top}" y2="${top + plotH}" stroke="#333"/>`);
  parts.push(xTitle(opts.xLabel, left + plotW / 2, top + plotH + 34), yTitle(opts.yLabel, top, plotH));
  series.forEach((s, si) => {
    const c = color(si);
    const sorted = [...s.points].sort((a, b) => a.x - b.x);
    if (sorted.length > 1) parts.push(`<polyline fill="none" stroke="${c}" stroke-width="2" points="${sorted.map((p) => `${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(' ')}"/>`);
    for (const p of sorted) {
      if (p.low !== undefined && p.high !== undefined) parts.push(`<line x1="${sx(p.x)}" x2="${sx(p.x)}" y1="${sy(p.low)}" y2="${sy(p.high)}" stroke="${c}" stroke-width="1.5"/>`);
      const ci = p.low !== undefined && p.high !== undefined ? ` [${num(p.low, 3)}, ${num(p.high, 3)}]` : '';
      parts.push(`<circle cx="${sx(p.x)}" cy="${sy(p.y)}" r="3.5" fill="${c}"><title>${esc(`${s.name}: ${opts.xLabel} ${num(p.x)}, ${opts.yLabel} ${num(p.y, 3)}${ci}`)}</title></circle>`);
    }
  });
  parts.push(leg.svg, '</svg>');
  return parts.join('');
}
