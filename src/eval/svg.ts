/**
 * Small, dependency-free SVG charts for the self-contained HTML report: grouped bars, a labelled
 * scatter and lines. Axes carry titles and "nice" ticks (1, 2 or 5 times a power of ten); legends wrap
 * onto as many rows as they need, inside the drawing. Elements carry classes (`legend-item`, `tick-x`,
 * `tick-y`, `axis-title`, `bar-n`, `no-data`, `point-label`, `whisker`, `ref-line`, `trend`, `caption`) so
 * that the rendered page can be checked (test/eval/report-render.test.ts).
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
  /** Drawn lighter (the raw points under a trend line). */
  opacity?: number;
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
    const fill = `fill="${it.color}"${it.opacity !== undefined ? ` fill-opacity="${it.opacity}"` : ''}`;
    const mark = it.mark === 'box' ? `<rect x="${x}" y="${y - 9}" width="10" height="10" ${fill}/>` : it.mark === 'dot' ? `<circle cx="${x + 5}" cy="${y - 4}" r="5" ${fill}/>` : `<rect x="${x}" y="${y - 5}" width="12" height="3" ${fill}/>`;
    parts.push(`<g class="legend-item">${mark}<text x="${x + 16}" y="${y}" font-size="11">${esc(it.label)}</text></g>`);
    x += w;
  }
  return { svg: parts.join(''), height: items.length ? (row + 1) * rowH : 0 };
}

function open(W: number, H: number, title: string): string {
  // A title longer than the drawing (a long stage id before a long curve name) is squeezed to fit it.
  const fit = textWidth(title, 14) > W - 16 ? ` textLength="${W - 16}" lengthAdjust="spacingAndGlyphs"` : '';
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="${esc(title)}"><text x="${W / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold"${fit}>${esc(title)}</text>`;
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
  /** How many items (questions, pairs) each value comes from, per series (0 or undefined with `counts` given: none, drawn as ×). */
  counts?: (number | undefined)[];
}

/** A dashed horizontal line across the plot at `y` (chance, a baseline), named in the right margin. */
export interface RefLine {
  y: number;
  label: string;
}

export interface BarOptions {
  yLabel?: string;
  /** Title of the x axis (what the groups are). */
  xLabel?: string;
  yMax?: number;
  digits?: number;
  width?: number;
  integer?: boolean;
  /** With counts: bars from fewer items than this are drawn pale (default 3). */
  minN?: number;
  /** With counts: what n counts, for the note under the chart ("questions", "pairs"). */
  countOf?: string;
  /** A dashed reference line, e.g. chance at 0.5 for a pair accuracy. */
  refLine?: RefLine;
}

/** A dashed reference line across [x1, x2] at pixel height `y`, its label right of it. */
function refLineSvg(r: RefLine, x1: number, x2: number, y: number): string {
  return `<line class="ref-line" x1="${x1}" x2="${x2}" y1="${y}" y2="${y}" stroke="#444" stroke-width="1.2" stroke-dasharray="6 4"/><text class="ref-label" x="${x2 + 4}" y="${y + 4}" font-size="10" fill="#444">${esc(r.label)}</text>`;
}

/**
 * Grouped bars. With `counts`, every bar's n is written under it (row "n" below the axis), a bar from
 * fewer than `minN` items is pale, and a slot with no items at all gets a grey × and "–" instead of a
 * bar, so that "no questions" never looks like a bar at 0 (which is drawn as a coloured sliver).
 */
export function barChart(title: string, series: readonly string[], groups: readonly BarGroup[], opts: BarOptions = {}): string {
  const W = opts.width ?? 720;
  // Room above the plot for the value over a full-height bar, clear of the title; on the right for a reference line's label.
  const [left, right, top] = [56, opts.refLine ? 16 + textWidth(opts.refLine.label, 10) + 8 : 16, 48];
  const plotW = W - left - right;
  const plotH = 200;
  const withCounts = groups.some((g) => g.counts);
  const minN = opts.minN ?? 3;
  const what = opts.countOf ?? 'items';
  const note = withCounts ? `n under each bar: ${what} behind it; × and –: no ${what}; pale bars: n < ${minN}, too few to read much into` : '';
  const items: LegendItem[] = series.length > 1 ? series.map((s, si) => ({ label: s, mark: 'box', color: color(si) })) : [];
  const axisBottom = top + plotH;
  // With counts, a row of n sits between the axis and the group labels.
  const nRowY = axisBottom + 12;
  const groupLabelY = axisBottom + (withCounts ? 28 : 16);
  const xTitleY = groupLabelY + 18;
  const legendY = (opts.xLabel ? xTitleY : groupLabelY) + 22;
  const leg = legend(items, left, legendY, plotW);
  const noteY = legendY + leg.height + (note ? 4 : 0);
  const H = Math.ceil(noteY + (note ? 14 : 0) + 6);
  const all = groups.flatMap((g) => g.values.filter((v): v is number => v !== undefined));
  const ticks = niceTicks(0, opts.yMax ?? Math.max(1e-9, ...all), 5, opts.integer);
  const yMax = ticks[ticks.length - 1]!;
  const groupW = plotW / Math.max(1, groups.length);
  // Bars fill 80% of their group, 90% with counts under several series (room between the n's).
  const fill = withCounts && series.length > 1 ? 0.9 : 0.8;
  const barW = Math.max(4, (groupW * fill) / Math.max(1, series.length));
  const y = (v: number) => top + plotH - (v / yMax) * plotH;
  const parts: string[] = [open(W, H, title)];
  for (const v of ticks) parts.push(`<line x1="${left}" x2="${W - right}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/><text class="tick-y" x="${left - 6}" y="${y(v) + 4}" text-anchor="end" font-size="11">${tickText(v, ticks)}</text>`);
  if (opts.yLabel) parts.push(yTitle(opts.yLabel, top, plotH));
  // Values over the bars are drawn last, over a reference line.
  const values: string[] = [];
  if (withCounts) parts.push(`<text class="bar-n-head" x="${left - 6}" y="${nRowY}" text-anchor="end" font-size="9" fill="#555">n</text>`);
  groups.forEach((g, gi) => {
    const x0 = left + gi * groupW + (groupW * (1 - fill)) / 2;
    series.forEach((name, si) => {
      const v = g.values[si];
      const x = x0 + si * barW;
      const cx = x + barW / 2;
      const n = g.counts?.[si];
      if (v === undefined || n === 0) {
        // No items: a grey × on the axis and "–" for n, never a bar.
        if (g.counts) {
          const d = Math.min(3.5, barW / 2 - 1);
          parts.push(`<g class="no-data"><title>${esc(`${g.label} · ${name}: no ${what}`)}</title><path d="M${cx - d} ${axisBottom - 2 - 2 * d}L${cx + d} ${axisBottom - 2}M${cx - d} ${axisBottom - 2}L${cx + d} ${axisBottom - 2 - 2 * d}" stroke="#999" stroke-width="1.2" fill="none"/></g>`);
          parts.push(`<text class="bar-n" x="${cx}" y="${nRowY}" text-anchor="middle" font-size="8" fill="#999">–</text>`);
        }
        return;
      }
      const few = n !== undefined && n < minN;
      const tip = `${g.label} · ${name}: ${num(v, opts.digits ?? 3)}${n !== undefined ? ` (n = ${n})` : ''}`;
      // A zero still shows as a sliver, so that a bar of n questions with F1 0 is not mistaken for no bar.
      const h = Math.max(1.5, top + plotH - y(v));
      parts.push(`<rect x="${x}" y="${top + plotH - h}" width="${barW - 1}" height="${h}" fill="${color(si)}"${few ? ` fill-opacity="0.35" stroke="${color(si)}" stroke-dasharray="3 2"` : ''}><title>${esc(tip)}</title></rect>`);
      if (n !== undefined) parts.push(`<text class="bar-n" x="${cx}" y="${nRowY}" text-anchor="middle" font-size="8" fill="#555">${n}</text>`);
      // The value over the bar where it fits, on a white ground that keeps it legible where a reference line runs through it.
      const text = num(v, opts.digits ?? 2);
      const tw = textWidth(text, 9);
      if (barW >= tw + 4) values.push(`<rect x="${cx - tw / 2 - 1}" y="${y(v) - 12}" width="${tw + 2}" height="10" fill="#fff"/><text class="bar-value" x="${cx}" y="${y(v) - 3}" text-anchor="middle" font-size="9">${text}</text>`);
    });
    parts.push(`<text class="tick-x" x="${left + gi * groupW + groupW / 2}" y="${groupLabelY}" text-anchor="middle" font-size="11">${esc(g.label)}</text>`);
  });
  parts.push(`<line x1="${left}" x2="${W - right}" y1="${axisBottom}" y2="${axisBottom}" stroke="#333"/>`);
  if (opts.refLine) parts.push(refLineSvg(opts.refLine, left, W - right, y(opts.refLine.y)));
  parts.push(...values);
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

interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

const overlapArea = (a: Box, b: Box) => Math.max(0, Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x)) * Math.max(0, Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y));

/**
 * Where each point's label goes: the first of a list of spots around the point (right, left, above,
 * below, then further up and down on either side) that stays inside `frame` and clears every marker,
 * whisker and label placed before it; where none does, the spot that overlaps least. Returns the
 * label's anchor (`x`, baseline `y`, `anchor`) and whether it sits away from its point (then drawn
 * with a leader line).
 */
function placeLabels(points: readonly { cx: number; cy: number; label: string; size: number }[], obstacles: readonly Box[], frame: Box): { x: number; y: number; anchor: 'start' | 'end' | 'middle'; far: boolean }[] {
  const placed: Box[] = [];
  return points.map((p) => {
    const w = textWidth(p.label, p.size);
    const h = p.size + 3;
    // Baseline offsets: the box spans [y − size, y + 3].
    const spots: { x: number; y: number; anchor: 'start' | 'end' | 'middle'; far: boolean }[] = [
      { x: p.cx + 8, y: p.cy - 6, anchor: 'start', far: false },
      { x: p.cx + 9, y: p.cy + 4, anchor: 'start', far: false },
      { x: p.cx - 8, y: p.cy - 6, anchor: 'end', far: false },
      { x: p.cx - 9, y: p.cy + 4, anchor: 'end', far: false },
      { x: p.cx + 8, y: p.cy + 15, anchor: 'start', far: false },
      { x: p.cx - 8, y: p.cy + 15, anchor: 'end', far: false },
      { x: p.cx, y: p.cy - 10, anchor: 'middle', far: false },
      { x: p.cx, y: p.cy + 19, anchor: 'middle', far: false },
    ];
    for (const dy of [-18, 27, -30, 39, -42, 51, -54, 63]) spots.push({ x: p.cx + 10, y: p.cy + dy, anchor: 'start', far: true }, { x: p.cx - 10, y: p.cy + dy, anchor: 'end', far: true });
    const boxOf = (s: (typeof spots)[number]): Box => ({ x: s.anchor === 'start' ? s.x : s.anchor === 'end' ? s.x - w : s.x - w / 2, y: s.y - p.size, w, h });
    const inside = (b: Box) => b.x >= frame.x && b.y >= frame.y && b.x + b.w <= frame.x + frame.w && b.y + b.h <= frame.y + frame.h;
    const cost = (b: Box) => [...obstacles, ...placed].reduce((sum, o) => sum + overlapArea(b, o), 0);
    const fits = spots.filter((s) => inside(boxOf(s)));
    const best = fits.find((s) => cost(boxOf(s)) === 0) ?? [...(fits.length ? fits : spots)].sort((a, b) => cost(boxOf(a)) - cost(boxOf(b)))[0]!;
    placed.push(boxOf(best));
    return best;
  });
}

/**
 * Points with 95% whiskers and a label each, placed clear of every marker, whisker and other label
 * (see `placeLabels`); labels carry the class `point-label`, whiskers `whisker`.
 */
export function scatterChart(title: string, series: readonly string[], points: readonly ScatterPoint[], opts: { xLabel: string; yLabel: string; width?: number; yMax?: number; note?: string }): string {
  const W = opts.width ?? 720;
  const [left, right, top] = [56, 24, 40];
  const plotW = W - left - right;
  const plotH = 216;
  const whiskers = points.some((p) => p.low !== undefined && p.high !== undefined);
  const items: LegendItem[] = series.map((s, si) => ({ label: s, mark: 'dot', color: color(si) }));
  const legendY = top + plotH + 56;
  const leg = legend(whiskers ? [...items, { label: 'whiskers: 95% CI', mark: 'line', color: '#333' }] : items, left, legendY, plotW);
  const noteY = legendY + leg.height + (opts.note ? 4 : 0);
  const H = Math.ceil(noteY + (opts.note ? 14 : 0) + 4);
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
  const at = points.map((p) => ({ cx: sx(p.x), cy: sy(p.y), label: p.label, size: 10 }));
  // Every marker and whisker (caps and stroke included) is an obstacle for every label.
  const obstacles: Box[] = points.flatMap((p, i) => {
    const { cx, cy } = at[i]!;
    const dot = { x: cx - 6, y: cy - 6, w: 12, h: 12 };
    return p.low !== undefined && p.high !== undefined ? [dot, { x: cx - 5, y: sy(p.high) - 1, w: 10, h: sy(p.low) - sy(p.high) + 2 }] : [dot];
  });
  const labels = placeLabels(at, obstacles, { x: left + 2, y: top - 12, w: plotW - 2, h: plotH + 12 });
  const labelParts: string[] = [];
  points.forEach((p, i) => {
    const c = color(p.series);
    const { cx, cy } = at[i]!;
    const ci = p.low !== undefined && p.high !== undefined ? ` [${num(p.low, 3)}, ${num(p.high, 3)}]` : '';
    if (ci) parts.push(`<path class="whisker" d="M${cx - 4} ${sy(p.low!)}h8M${cx} ${sy(p.low!)}V${sy(p.high!)}M${cx - 4} ${sy(p.high!)}h8" stroke="${c}" stroke-width="1.5" fill="none"/>`);
    parts.push(`<circle cx="${cx}" cy="${cy}" r="6" fill="${c}"><title>${esc(`${p.label}: ${opts.xLabel} ${num(p.x)}, ${opts.yLabel} ${num(p.y, 3)}${ci}`)}</title></circle>`);
    const l = labels[i]!;
    // A label moved away from its point is tied to it by a thin grey line.
    if (l.far) labelParts.push(`<line class="leader" x1="${cx}" y1="${cy}" x2="${l.anchor === 'start' ? l.x - 2 : l.x + 2}" y2="${l.y - 4}" stroke="#999" stroke-width="0.8"/>`);
    labelParts.push(`<text class="point-label" x="${l.x}" y="${l.y}" font-size="10"${l.anchor === 'start' ? '' : ` text-anchor="${l.anchor}"`}>${esc(p.label)}</text>`);
  });
  parts.push(...labelParts, leg.svg);
  if (opts.note) parts.push(`<text class="caption" x="${left}" y="${noteY + 8}" font-size="10" fill="#555">${esc(opts.note)}</text>`);
  parts.push('</svg>');
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

/**
 * Centred moving mean: each value replaced by the mean of the `window` values around it (window/2 either
 * side, rounded down), fewer at the ends where the window runs past them. `window` ≤ 1 returns a copy.
 */
export function movingMean(values: readonly number[], window: number): number[] {
  const k = Math.max(0, Math.floor(window / 2));
  return values.map((_, i) => {
    const part = values.slice(Math.max(0, i - k), Math.min(values.length, i + k + 1));
    return part.reduce((a, b) => a + b, 0) / part.length;
  });
}

/** Window of the moving mean drawn over a noisy curve of `n` points: about n/6, odd, at least 3; none under 10 points. */
export function trendWindow(n: number): number | undefined {
  return n >= 10 ? 2 * Math.round(n / 12) + 1 : undefined;
}

/** Options of {@link lineChart}. */
export interface LineOptions {
  xLabel: string;
  yLabel: string;
  width?: number;
  yMin?: number;
  yMax?: number;
  logX?: boolean;
  /** A centred moving mean over this many points ({@link movingMean}) drawn bold over each series, the raw points kept, lighter. */
  trend?: number;
  /** A dashed reference line, e.g. chance at 0.5 for a pair accuracy. */
  refLine?: RefLine;
  /** A caption under the chart (what the lines are, how the trend is computed). */
  note?: string;
  /** Shift each series a few pixels sideways, so that whiskers at the same x stay apart (sweeps). */
  dodge?: boolean;
}

/**
 * Lines with markers (and whiskers where a point has an interval): training curves, EM against budget.
 * With `trend`, each series' points are drawn light and its moving mean bold (class `trend`).
 */
export function lineChart(title: string, series: readonly LineSeries[], opts: LineOptions): string {
  const W = opts.width ?? 720;
  const [left, right, top] = [56, opts.refLine ? 24 + textWidth(opts.refLine.label, 10) : 24, 40];
  const plotW = W - left - right;
  const plotH = 216;
  const legendY = top + plotH + 56;
  const trend = opts.trend !== undefined && opts.trend > 1 ? opts.trend : undefined;
  const legendItems: LegendItem[] = series.flatMap((s, si) =>
    trend ? [{ label: `${s.name} (each ${opts.xLabel})`, mark: 'dot' as const, color: color(si), opacity: 0.4 }, { label: `${s.name}, moving mean of ${trend}`, mark: 'line' as const, color: color(si) }] : [{ label: s.name, mark: 'line' as const, color: color(si) }],
  );
  const leg = legend(legendItems, left, legendY, plotW);
  const noteY = legendY + leg.height + (opts.note ? 4 : 0);
  const H = Math.ceil(noteY + (opts.note ? 14 : 0) + 4);
  const pts = series.flatMap((s) => s.points);
  const ys = pts.flatMap((p) => [p.y, p.low ?? p.y, p.high ?? p.y]).filter(Number.isFinite);
  const xs = pts.map((p) => p.x);
  const fx = (v: number) => (opts.logX ? Math.log(v) : v);
  const [x0, x1] = [Math.min(...xs.map(fx)), Math.max(...xs.map(fx))];
  const yt = niceTicks(opts.yMin ?? Math.min(0, ...ys), opts.yMax ?? Math.max(...ys));
  const [y0, y1] = [yt[0]!, yt[yt.length - 1]!];
  const sx0 = (v: number) => left + (x1 === x0 ? plotW / 2 : ((fx(v) - x0) / (x1 - x0)) * plotW);
  const sy = (v: number) => top + plotH - ((v - y0) / (y1 - y0)) * plotH;
  const parts: string[] = [open(W, H, title)];
  for (const v of yt) parts.push(`<line x1="${left}" x2="${W - right}" y1="${sy(v)}" y2="${sy(v)}" stroke="#eee"/><text class="tick-y" x="${left - 6}" y="${sy(v) + 4}" text-anchor="end" font-size="11">${tickText(v, yt)}</text>`);
  // Every x that occurs when they are few (epochs, budgets); nice ticks within the range when many.
  const distinct = [...new Set(xs)].sort((a, b) => a - b);
  const xTicks = distinct.length <= 12 || opts.logX ? distinct : niceTicks(Math.min(...xs), Math.max(...xs), 8, distinct.every(Number.isInteger)).filter((v) => v >= Math.min(...xs) && v <= Math.max(...xs));
  for (const v of xTicks) parts.push(`<text class="tick-x" x="${sx0(v)}" y="${top + plotH + 16}" text-anchor="middle" font-size="11">${num(v, Number.isInteger(v) ? 0 : 2)}</text>`);
  parts.push(`<line x1="${left}" x2="${W - right}" y1="${top + plotH}" y2="${top + plotH}" stroke="#333"/><line x1="${left}" x2="${left}" y1="${top}" y2="${top + plotH}" stroke="#333"/>`);
  parts.push(xTitle(opts.xLabel, left + plotW / 2, top + plotH + 34), yTitle(opts.yLabel, top, plotH));
  if (opts.refLine) parts.push(refLineSvg(opts.refLine, left, W - right, sy(opts.refLine.y)));
  series.forEach((s, si) => {
    const c = color(si);
    const sorted = [...s.points].sort((a, b) => a.x - b.x);
    // Dodged: series i of n drawn (i − (n−1)/2)·6 px to the side of its x.
    const dx = opts.dodge ? (si - (series.length - 1) / 2) * 6 : 0;
    const sx = (v: number) => sx0(v) + dx;
    const poly = (ps: readonly { x: number; y: number }[]) => ps.map((p) => `${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(' ');
    // Under a trend the raw line is thin and light, its markers small and pale.
    if (sorted.length > 1) parts.push(`<polyline fill="none" stroke="${c}" ${trend ? 'stroke-width="1" stroke-opacity="0.3"' : 'stroke-width="2"'} points="${poly(sorted)}"/>`);
    for (const p of sorted) {
      if (p.low !== undefined && p.high !== undefined) parts.push(`<line x1="${sx(p.x)}" x2="${sx(p.x)}" y1="${sy(p.low)}" y2="${sy(p.high)}" stroke="${c}" stroke-width="1.5"/>`);
      const ci = p.low !== undefined && p.high !== undefined ? ` [${num(p.low, 3)}, ${num(p.high, 3)}]` : '';
      parts.push(`<circle cx="${sx(p.x)}" cy="${sy(p.y)}" r="${trend ? 2.5 : 3.5}" fill="${c}"${trend ? ' fill-opacity="0.4"' : ''}><title>${esc(`${s.name}: ${opts.xLabel} ${num(p.x)}, ${opts.yLabel} ${num(p.y, 3)}${ci}`)}</title></circle>`);
    }
    if (trend && sorted.length > 1) {
      const m = movingMean(sorted.map((p) => p.y), trend);
      parts.push(`<polyline class="trend" fill="none" stroke="${c}" stroke-width="2.5" points="${poly(sorted.map((p, i) => ({ x: p.x, y: m[i]! })))}"/>`);
    }
  });
  parts.push(leg.svg);
  if (opts.note) parts.push(`<text class="caption" x="${left}" y="${noteY + 8}" font-size="10" fill="#555">${esc(opts.note)}</text>`);
  parts.push('</svg>');
  return parts.join('');
}
