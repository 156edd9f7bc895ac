/**
 * Small, dependency-free SVG charts for the self-contained HTML report: grouped bars and a labelled
 * scatter. Axes start at 0; every value is also printed, so the plots can be read without the table.
 */
const PALETTE = ['#2f6fb0', '#d9822b', '#3a9a5b', '#b03a48', '#7a5bb0', '#6b6b6b', '#c4a000', '#1f9aa6'];

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const num = (x: number, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : '–');

export interface BarGroup {
  label: string;
  /** One value per series (undefined: no bar). */
  values: (number | undefined)[];
}

export function barChart(title: string, series: readonly string[], groups: readonly BarGroup[], opts: { yLabel?: string; yMax?: number; digits?: number; width?: number; integer?: boolean } = {}): string {
  const W = opts.width ?? 720;
  const H = 300;
  const [left, right, top, bottom] = [56, 16, 40, 60];
  const plotW = W - left - right;
  const plotH = H - top - bottom;
  const all = groups.flatMap((g) => g.values.filter((v): v is number => v !== undefined));
  let yMax = opts.yMax ?? Math.max(1e-9, ...all) * 1.1;
  // Counts get whole-number ticks.
  if (opts.integer) yMax = Math.max(4, Math.ceil(yMax / 4) * 4);
  const groupW = plotW / Math.max(1, groups.length);
  const barW = Math.max(4, (groupW * 0.8) / Math.max(1, series.length));
  const y = (v: number) => top + plotH - (v / yMax) * plotH;
  const parts: string[] = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" role="img" aria-label="${esc(title)}">`];
  parts.push(`<text x="${W / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">${esc(title)}</text>`);
  for (let i = 0; i <= 4; i++) {
    const v = (yMax * i) / 4;
    parts.push(`<line x1="${left}" x2="${W - right}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/><text x="${left - 6}" y="${y(v) + 4}" text-anchor="end" font-size="11">${num(v, opts.integer ? 0 : 2)}</text>`);
  }
  if (opts.yLabel) parts.push(`<text transform="translate(14 ${top + plotH / 2}) rotate(-90)" text-anchor="middle" font-size="12">${esc(opts.yLabel)}</text>`);
  groups.forEach((g, gi) => {
    const x0 = left + gi * groupW + groupW * 0.1;
    g.values.forEach((v, si) => {
      if (v === undefined) return;
      const x = x0 + si * barW;
      parts.push(`<rect x="${x}" y="${y(v)}" width="${barW - 1}" height="${top + plotH - y(v)}" fill="${PALETTE[si % PALETTE.length]}"><title>${esc(`${g.label} · ${series[si]}: ${num(v, opts.digits ?? 3)}`)}</title></rect>`);
      if (barW >= 18) parts.push(`<text x="${x + barW / 2}" y="${y(v) - 3}" text-anchor="middle" font-size="9">${num(v, opts.digits ?? 2)}</text>`);
    });
    parts.push(`<text x="${left + gi * groupW + groupW / 2}" y="${top + plotH + 16}" text-anchor="middle" font-size="11">${esc(g.label)}</text>`);
  });
  parts.push(`<line x1="${left}" x2="${W - right}" y1="${top + plotH}" y2="${top + plotH}" stroke="#333"/>`);
  series.forEach((s, si) => {
    const x = left + si * 150;
    parts.push(`<rect x="${x}" y="${H - 22}" width="10" height="10" fill="${PALETTE[si % PALETTE.length]}"/><text x="${x + 14}" y="${H - 13}" font-size="11">${esc(s)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('');
}

export interface ScatterPoint {
  x: number;
  y: number;
  label: string;
  series: number;
}

export function scatterChart(title: string, series: readonly string[], points: readonly ScatterPoint[], opts: { xLabel: string; yLabel: string; width?: number }): string {
  const W = opts.width ?? 720;
  const H = 320;
  const [left, right, top, bottom] = [56, 24, 40, 64];
  const plotW = W - left - right;
  const plotH = H - top - bottom;
  const xMax = Math.max(1, ...points.map((p) => p.x)) * 1.15;
  const yMax = Math.max(1e-9, ...points.map((p) => p.y)) * 1.15;
  const sx = (v: number) => left + (v / xMax) * plotW;
  const sy = (v: number) => top + plotH - (v / yMax) * plotH;
  const parts: string[] = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" role="img" aria-label="${esc(title)}">`];
  parts.push(`<text x="${W / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">${esc(title)}</text>`);
  for (let i = 0; i <= 4; i++) {
    const yv = (yMax * i) / 4;
    const xv = (xMax * i) / 4;
    parts.push(`<line x1="${left}" x2="${W - right}" y1="${sy(yv)}" y2="${sy(yv)}" stroke="#eee"/><text x="${left - 6}" y="${sy(yv) + 4}" text-anchor="end" font-size="11">${num(yv)}</text>`);
    parts.push(`<text x="${sx(xv)}" y="${top + plotH + 16}" text-anchor="middle" font-size="11">${num(xv, 1)}</text>`);
  }
  parts.push(`<line x1="${left}" x2="${W - right}" y1="${top + plotH}" y2="${top + plotH}" stroke="#333"/><line x1="${left}" x2="${left}" y1="${top}" y2="${top + plotH}" stroke="#333"/>`);
  parts.push(`<text x="${left + plotW / 2}" y="${top + plotH + 34}" text-anchor="middle" font-size="12">${esc(opts.xLabel)}</text>`);
  parts.push(`<text transform="translate(14 ${top + plotH / 2}) rotate(-90)" text-anchor="middle" font-size="12">${esc(opts.yLabel)}</text>`);
  for (const p of points) {
    const color = PALETTE[p.series % PALETTE.length];
    parts.push(`<circle cx="${sx(p.x)}" cy="${sy(p.y)}" r="6" fill="${color}"><title>${esc(`${p.label}: ${opts.xLabel} ${num(p.x)}, ${opts.yLabel} ${num(p.y, 3)}`)}</title></circle>`);
    parts.push(`<text x="${sx(p.x) + 8}" y="${sy(p.y) - 6}" font-size="10">${esc(p.label)}</text>`);
  }
  series.forEach((s, si) => {
    const x = left + si * 150;
    parts.push(`<circle cx="${x + 5}" cy="${H - 14}" r="5" fill="${PALETTE[si % PALETTE.length]}"/><text x="${x + 14}" y="${H - 10}" font-size="11">${esc(s)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('');
}

export interface LinePoint {
  x: number;
  y: number;
  /** A confidence interval drawn as a whisker. */
  low?: number;
  high?: number;
}

export interface LineSeries {
  name: string;
  points: readonly LinePoint[];
}

/** Lines with markers (and whiskers where a point has an interval): training curves, EM against budget. */
export function lineChart(title: string, series: readonly LineSeries[], opts: { xLabel: string; yLabel: string; width?: number; yMin?: number; yMax?: number; logX?: boolean }): string {
  const W = opts.width ?? 720;
  const H = 320;
  const [left, right, top, bottom] = [56, 24, 40, 64];
  const plotW = W - left - right;
  const plotH = H - top - bottom;
  const pts = series.flatMap((s) => s.points);
  const ys = pts.flatMap((p) => [p.y, p.low ?? p.y, p.high ?? p.y]).filter(Number.isFinite);
  const xs = pts.map((p) => p.x);
  const fx = (v: number) => (opts.logX ? Math.log(v) : v);
  const [x0, x1] = [Math.min(...xs.map(fx)), Math.max(...xs.map(fx))];
  let y0 = opts.yMin ?? Math.min(0, ...ys);
  let y1 = opts.yMax ?? Math.max(...ys);
  if (y1 - y0 < 1e-9) [y0, y1] = [y0 - 1, y1 + 1];
  if (opts.yMax === undefined) y1 += (y1 - y0) * 0.1;
  const sx = (v: number) => left + (x1 === x0 ? plotW / 2 : ((fx(v) - x0) / (x1 - x0)) * plotW);
  const sy = (v: number) => top + plotH - ((v - y0) / (y1 - y0)) * plotH;
  const parts: string[] = [`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" role="img" aria-label="${esc(title)}">`];
  parts.push(`<text x="${W / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">${esc(title)}</text>`);
  for (let i = 0; i <= 4; i++) {
    const yv = y0 + ((y1 - y0) * i) / 4;
    parts.push(`<line x1="${left}" x2="${W - right}" y1="${sy(yv)}" y2="${sy(yv)}" stroke="#eee"/><text x="${left - 6}" y="${sy(yv) + 4}" text-anchor="end" font-size="11">${num(yv)}</text>`);
  }
  for (const xv of [...new Set(xs)].sort((a, b) => a - b)) parts.push(`<text x="${sx(xv)}" y="${top + plotH + 16}" text-anchor="middle" font-size="11">${num(xv, Number.isInteger(xv) ? 0 : 2)}</text>`);
  parts.push(`<line x1="${left}" x2="${W - right}" y1="${top + plotH}" y2="${top + plotH}" stroke="#333"/><line x1="${left}" x2="${left}" y1="${top}" y2="${top + plotH}" stroke="#333"/>`);
  parts.push(`<text x="${left + plotW / 2}" y="${top + plotH + 34}" text-anchor="middle" font-size="12">${esc(opts.xLabel)}</text>`);
  parts.push(`<text transform="translate(14 ${top + plotH / 2}) rotate(-90)" text-anchor="middle" font-size="12">${esc(opts.yLabel)}</text>`);
  series.forEach((s, si) => {
    const color = PALETTE[si % PALETTE.length];
    const sorted = [...s.points].sort((a, b) => a.x - b.x);
    if (sorted.length > 1) parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${sorted.map((p) => `${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(' ')}"/>`);
    for (const p of sorted) {
      if (p.low !== undefined && p.high !== undefined) parts.push(`<line x1="${sx(p.x)}" x2="${sx(p.x)}" y1="${sy(p.low)}" y2="${sy(p.high)}" stroke="${color}" stroke-width="1.5"/>`);
      const ci = p.low !== undefined && p.high !== undefined ? ` [${num(p.low, 3)}, ${num(p.high, 3)}]` : '';
      parts.push(`<circle cx="${sx(p.x)}" cy="${sy(p.y)}" r="3.5" fill="${color}"><title>${esc(`${s.name}: ${opts.xLabel} ${num(p.x)}, ${opts.yLabel} ${num(p.y, 3)}${ci}`)}</title></circle>`);
    }
    const x = left + si * 170;
    parts.push(`<rect x="${x}" y="${H - 20}" width="12" height="3" fill="${color}"/><text x="${x + 16}" y="${H - 14}" font-size="11">${esc(s.name)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('');
}
