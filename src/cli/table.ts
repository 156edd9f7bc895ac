import type { Cell } from '../eval/harness.js';
/** Plain-text tables for terminal output: columns padded to their widest cell, numbers right-aligned. */
export function formatTable(header: string[], rows: (string | number)[][]): string {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, c) => Math.max(...cells.map((r) => (r[c] ?? '').length)));
  const numeric = header.map((_, c) => rows.length > 0 && rows.every((r) => typeof r[c] === 'number' || /^[-+]?[\d.,%]+$/.test(String(r[c]))));
  const line = (r: string[]) =>
    r.map((cell, c) => (numeric[c] ? cell.padStart(widths[c] as number) : cell.padEnd(widths[c] as number))).join('  ').trimEnd();
  return [line(cells[0] as string[]), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

export function fixed(x: number, digits = 4): string {
  return Number.isFinite(x) ? x.toFixed(digits) : String(x);
}

/** The summary table of an evaluation: EM with its CI, F1, retrievals, (format,) and the paired test against `baseline`. */
export function resultsTable(cells: readonly Cell[], baseline: string, opts: { format?: boolean } = {}): string {
  return formatTable(
    ['system', 'EM [95% CI]', 'F1', 'retrievals', ...(opts.format ? ['format ok'] : []), `Δ EM vs ${baseline} (p)`],
    cells.map((c) => [
      c.system,
      `${fixed(c.em.mean)} [${fixed(c.em.low)}, ${fixed(c.em.high)}]`,
      fixed(c.f1.mean),
      c.retrievalCount.toFixed(2),
      ...(opts.format ? [fixed(c.format)] : []),
      c.vsBaseline ? `${c.vsBaseline.em.diff >= 0 ? '+' : ''}${fixed(c.vsBaseline.em.diff)} (${c.vsBaseline.em.pT.toFixed(3)})` : '–',
    ]),
  );
}
