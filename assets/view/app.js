// ragtrail view: the web app over `ragtrail view`'s data (its server, or a bundle's data/*.js files).
// A classic script, not a module: a bundle opened from disk (file://) may load classic scripts only.
// Every text from the data is set as text (never parsed as HTML). Views are addressed by the URL's hash,
// so every view has a URL to share or reload.
'use strict';
(function () {
  const MODE = document.querySelector('meta[name="ragtrail-mode"]')?.getAttribute('content') ?? 'server';
  const CHUNK = { traj: 100, tree: 50 }; // as src/view/bundle.ts BUNDLE_CHUNK
  const main = /** @type {HTMLElement} */ (document.getElementById('main'));
  const crumbs = /** @type {HTMLElement} */ (document.getElementById('crumbs'));
  document.getElementById('mode').textContent = MODE === 'bundle' ? 'static bundle' : 'live, read-only';

  // ---------- data ----------
  const cache = new Map();
  /** The answer for `key` (e.g. "run/<id>"): fetched from the server, or a bundle's data script loaded. */
  function load(key) {
    if (cache.has(key)) return cache.get(key);
    let p;
    if (MODE === 'bundle') {
      p = new Promise((resolve, reject) => {
        const store = (window.__RAGTRAIL__ = window.__RAGTRAIL__ || {});
        if (key in store) return resolve(store[key]);
        const s = document.createElement('script');
        s.src = 'data/' + key.replace(/\//g, '_') + '.js';
        s.onload = () => (key in store ? resolve(store[key]) : reject(new Error('no data for ' + key)));
        s.onerror = () => reject(new Error('no data file for ' + key));
        document.head.appendChild(s);
      });
    } else {
      p = fetch('api/' + key.split('/').map(encodeURIComponent).join('/')).then(async (r) => {
        const body = await r.json();
        if (!r.ok) throw new Error(body.error || r.statusText);
        return body;
      });
    }
    p.catch(() => cache.delete(key));
    cache.set(key, p);
    return p;
  }
  async function trajectory(id, n) {
    if (MODE !== 'bundle') return load('traj/' + id + '/' + n);
    return (await load('traj/' + id + '/' + Math.floor(n / CHUNK.traj)))[n];
  }
  async function tree(id, n) {
    if (MODE !== 'bundle') return load('tree/' + id + '/' + n);
    return (await load('tree/' + id + '/' + Math.floor(n / CHUNK.tree)))[n];
  }

  // ---------- DOM helpers ----------
  /** An element with attributes and children; strings become text nodes. */
  function h(tag, attrs, ...kids) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else if (k === 'class') el.className = v;
      else if (k === 'style') el.style.cssText = v; // CSSOM, which the page's CSP allows (a style attribute it does not)
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of kids.flat()) if (c !== undefined && c !== null && c !== false) el.append(c instanceof Node ? c : String(c));
    return el;
  }
  const SVG = 'http://www.w3.org/2000/svg';
  function s(tag, attrs, ...kids) {
    const el = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null) continue;
      if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, String(v));
    }
    for (const c of kids.flat()) if (c !== undefined && c !== null) el.append(c instanceof Node ? c : String(c));
    return el;
  }
  /** Replaces an element's children, skipping null / undefined / false (replaceChildren would print them). */
  function fill(el, ...kids) { el.replaceChildren(...kids.flat().filter((k) => k !== null && k !== undefined && k !== false)); }
  const f3 = (x) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(3) : '—');
  const fp = (x) => (typeof x === 'number' && Number.isFinite(x) ? (x < 0.001 ? '<0.001' : x.toFixed(3)) : '—');
  const f2 = (x) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(2) : '—');
  const trunc = (t, n) => { t = String(t ?? ''); return t.length > n ? t.slice(0, n - 1) + '…' : t; };
  function setCrumbs(items) {
    fill(crumbs, ...items.flatMap((it, i) => [i ? h('span', { class: 'sep' }, '›') : null, it.href ? h('a', { href: it.href }, it.label) : h('span', {}, it.label)]));
  }
  function query() {
    const q = location.hash.split('?')[1] || '';
    return new URLSearchParams(q);
  }
  /** Rewrites the current view's query string without a new history entry or a re-render. */
  function setQuery(params) {
    const base = location.hash.split('?')[0];
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== '' && v !== undefined && v !== null) q.set(k, v);
    const next = base + (q.toString() ? '?' + q.toString() : '');
    history.replaceState(null, '', next);
  }
  function table(head, rows, numCols = []) {
    return h('div', { class: 'scroll-x' }, h('table', {},
      h('thead', {}, h('tr', {}, head.map((c, i) => h('th', { class: numCols.includes(i) ? 'num' : '' }, c)))),
      h('tbody', {}, rows.map((r) => h('tr', {}, r.map((c, i) => h('td', { class: numCols.includes(i) ? 'num' : '' }, c)))))));
  }

  // ---------- statistics (as src/eval/stats.ts: percentile bootstrap, paired t-test) ----------
  function mulberry32(a) { return () => { a |= 0; a = (a + 0x6d2b79f5) | 0; let t = Math.imul(a ^ (a >>> 15), 1 | a); t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t; return ((t ^ (t >>> 14)) >>> 0) / 4294967296; }; }
  const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
  function bootstrapCi(xs, resamples = 1000, seed = 0) {
    if (!xs.length) return [NaN, NaN];
    const rnd = mulberry32(seed + 1);
    const ms = [];
    for (let r = 0; r < resamples; r++) { let sum = 0; for (let i = 0; i < xs.length; i++) sum += xs[Math.floor(rnd() * xs.length)]; ms.push(sum / xs.length); }
    ms.sort((a, b) => a - b);
    return [ms[Math.floor(0.025 * resamples)], ms[Math.min(resamples - 1, Math.floor(0.975 * resamples))]];
  }
  // Regularised incomplete beta by its continued fraction (Lentz), for Student's t distribution.
  function lgamma(x) { const c = [76.18009172947146, -86.50532032941677, 24.01409824083091, -1.231739572450155, 0.1208650973866179e-2, -0.5395239384953e-5]; let y = x; const t = x + 5.5 - (x + 0.5) * Math.log(x + 5.5); let ser = 1.000000000190015; for (const ci of c) ser += ci / ++y; return -t + Math.log((2.5066282746310005 * ser) / x); }
  function betacf(a, b, x) { let qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - (qab * x) / qap; if (Math.abs(d) < 1e-300) d = 1e-300; d = 1 / d; let hh = d; for (let m = 1; m <= 300; m++) { const m2 = 2 * m; let aa = (m * (b - m) * x) / ((qam + m2) * (a + m2)); d = 1 + aa * d; if (Math.abs(d) < 1e-300) d = 1e-300; c = 1 + aa / c; if (Math.abs(c) < 1e-300) c = 1e-300; d = 1 / d; hh *= d * c; aa = (-(a + m) * (qab + m) * x) / ((a + m2) * (qap + m2)); d = 1 + aa * d; if (Math.abs(d) < 1e-300) d = 1e-300; c = 1 + aa / c; if (Math.abs(c) < 1e-300) c = 1e-300; d = 1 / d; const del = d * c; hh *= del; if (Math.abs(del - 1) < 3e-16) break; } return hh; }
  function ibeta(a, b, x) { if (x <= 0) return 0; if (x >= 1) return 1; const bt = Math.exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * Math.log(x) + b * Math.log(1 - x)); return x < (a + 1) / (a + b + 2) ? (bt * betacf(a, b, x)) / a : 1 - (bt * betacf(b, a, 1 - x)) / b; }
  /** Paired t-test of a − b: mean difference, t, two-sided p (p = 1 when every difference is 0). */
  function pairedT(a, b) {
    const d = a.map((x, i) => x - b[i]);
    const n = d.length, m = mean(d);
    if (n < 2) return { n, diff: m, t: NaN, p: NaN };
    const sd = Math.sqrt(d.reduce((s2, x) => s2 + (x - m) ** 2, 0) / (n - 1));
    if (sd === 0) return { n, diff: m, t: m === 0 ? 0 : Infinity, p: m === 0 ? 1 : 0 };
    const t = m / (sd / Math.sqrt(n)), df = n - 1;
    return { n, diff: m, t, p: ibeta(df / 2, 0.5, df / (df + t * t)) };
  }
  /** Exponential moving average with bias correction (as TensorBoard's smoothing): the trend line of a noisy curve. */
  function ema(ys, alpha) { const out = []; let v = 0; ys.forEach((y, i) => { v = alpha * v + (1 - alpha) * y; out.push(v / (1 - alpha ** (i + 1))); }); return out; }

  // ---------- a virtualised, sortable, filterable list ----------
  /**
   * A list of `rows` in a fixed-height scroller that draws only the rows in view (10,000 rows stay fast).
   * columns: [{key, label, width, num, fmt}]; sort state and filters live in the URL (via onState).
   */
  function vlist(columns, rows, { sort, dir, onOpen, onSort }) {
    const ROW = 28;
    const grid = columns.map((c) => c.width || '1fr').join(' ');
    const box = h('div', { class: 'vlist', role: 'grid', 'aria-rowcount': rows.length });
    const head = h('div', { class: 'vhead', style: 'grid-template-columns:' + grid },
      columns.map((c) => h('span', { class: c.num ? 'num' : '', title: 'sort by ' + c.label, onclick: () => onSort(c.key) }, c.label + (sort === c.key ? (dir === 'asc' ? ' ▲' : ' ▼') : ''))));
    const body = h('div', { style: 'position:relative;height:' + rows.length * ROW + 'px' });
    box.append(head, body);
    let drawn = '';
    function draw() {
      const first = Math.max(0, Math.floor(box.scrollTop / ROW) - 10);
      const last = Math.min(rows.length, first + Math.ceil(box.clientHeight / ROW) + 20);
      const key = first + ':' + last;
      if (key === drawn) return;
      drawn = key;
      const frag = [];
      for (let i = first; i < last; i++) {
        const r = rows[i];
        const el = h('div', { class: 'vrow', role: 'row', style: 'top:' + i * ROW + 'px;grid-template-columns:' + grid, 'data-n': r.n, onclick: () => onOpen(r) },
          columns.map((c) => { const v = r.error && c.key !== 'n' ? (c.key === columns[1].key ? r.error : '') : c.fmt ? c.fmt(r[c.key], r) : r[c.key]; return h('span', { class: (c.num ? 'num ' : '') + (c.cls ? c.cls(r) : ''), title: typeof v === 'string' ? v : '' }, v === undefined ? '' : v); }));
        frag.push(el);
      }
      fill(body, ...frag);
    }
    box.addEventListener('scroll', () => requestAnimationFrame(draw));
    new ResizeObserver(() => { drawn = ''; draw(); }).observe(box);
    requestAnimationFrame(draw);
    return box;
  }
  function sortRows(rows, key, dir) {
    const sign = dir === 'asc' ? 1 : -1;
    return rows.slice().sort((a, b) => {
      const x = a[key], y = b[key];
      if (x === y) return a.n - b.n;
      if (x === undefined || x === null) return 1;
      if (y === undefined || y === null) return -1;
      return (typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y))) * sign;
    });
  }

  // ---------- charts ----------
  /** Means with 95% CIs as dots and whiskers, one row per label (labels in their own column, never over a whisker). */
  /** Tick values at 1, 2 or 5 times a power of ten covering [lo, hi]. */
  function niceTicks(lo, hi, count = 5) {
    const raw = (hi - lo) / Math.max(1, count - 1) || 1, mag = 10 ** Math.floor(Math.log10(raw));
    const step = [1, 2, 5, 10].map((m) => m * mag).find((st) => st >= raw) ?? 10 * mag;
    const out = [];
    for (let v = Math.floor(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Math.round(v / step) * step);
    if (out[out.length - 1] < hi) out.push(out[out.length - 1] + step);
    return { ticks: out, digits: Math.max(0, -Math.floor(Math.log10(step) + 1e-9)) };
  }
  function ciChart(items, { axis, chance, caption }) {
    const W = 640, L = 230, R = 20, rowH = 26, H = items.length * rowH + 40;
    const { ticks, digits } = niceTicks(Math.min(0, ...items.map((i) => i.low)), Math.max(1e-9, ...items.map((i) => i.high), chance ?? 0));
    const lo = ticks[0], hi = ticks[ticks.length - 1];
    const x = (v) => L + ((v - lo) / (hi - lo || 1)) * (W - L - R);
    const svg = s('svg', { class: 'chart', viewBox: `0 0 ${W} ${H}`, width: W, role: 'img', 'aria-label': axis });
    for (const v of ticks) svg.append(s('line', { x1: x(v), x2: x(v), y1: 10, y2: H - 24, stroke: '#eef1f5' }), s('text', { x: x(v), y: H - 8, 'text-anchor': 'middle' }, v.toFixed(digits)));
    if (chance !== undefined) svg.append(s('line', { x1: x(chance), x2: x(chance), y1: 10, y2: H - 24, stroke: '#999', 'stroke-dasharray': '4 3' }), s('text', { x: x(chance) + 3, y: 20 }, 'chance'));
    items.forEach((it, i) => {
      const y = 24 + i * rowH;
      svg.append(s('text', { x: L - 10, y: y + 4, 'text-anchor': 'end' }, trunc(it.label, 34)),
        s('line', { x1: x(it.low), x2: x(it.high), y1: y, y2: y, stroke: '#2457c5', 'stroke-width': 2 }),
        s('circle', { cx: x(it.mean), cy: y, r: 4, fill: '#2457c5' }, s('title', {}, `${it.label}: ${f3(it.mean)} [${f3(it.low)}, ${f3(it.high)}]`)));
    });
    svg.append(s('text', { x: (L + W) / 2, y: H - 22 + 14, 'text-anchor': 'middle', 'font-weight': 600 }, ''));
    return h('figure', {}, svg, h('figcaption', { class: 'small muted' }, `${axis} (proportion, 0–1), ${caption ?? 'mean and 95% bootstrap CI'}` + (chance !== undefined ? '; dashed: chance (0.5)' : '')));
  }
  /** A curve: raw points (light) and their smoothed trend (EMA, stated in the caption). */
  function lineChart(series, { smooth = 0.8 } = {}) {
    if (series.points.every((p) => p[1] === series.points[0][1])) return h('div', { class: 'card' }, h('strong', {}, series.name), h('span', { class: 'small muted' }, ` constant ${series.points[0][1]} over ${series.points.length} points`));
    const W = 560, H = 220, L = 48, B = 28, T = 10, R = 10;
    const pts = series.points;
    const xs = pts.map((p) => p[0]), ys = pts.map((p) => p[1]);
    const x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(...ys), y1 = Math.max(...ys);
    const X = (v) => L + ((v - x0) / (x1 - x0 || 1)) * (W - L - R), Y = (v) => H - B - ((v - y0) / (y1 - y0 || 1)) * (H - B - T);
    const svg = s('svg', { class: 'chart', viewBox: `0 0 ${W} ${H}`, width: W, role: 'img', 'aria-label': series.name });
    for (let k = 0; k <= 4; k++) { const v = y0 + ((y1 - y0) * k) / 4; svg.append(s('line', { x1: L, x2: W - R, y1: Y(v), y2: Y(v), stroke: '#eef1f5' }), s('text', { x: L - 4, y: Y(v) + 4, 'text-anchor': 'end' }, Math.abs(y1 - y0) >= 20 ? v.toFixed(0) : Math.abs(y1 - y0) >= 2 ? v.toFixed(1) : v.toFixed(3))); }
    svg.append(s('text', { x: W / 2, y: H - 6, 'text-anchor': 'middle' }, series.x));
    svg.append(s('polyline', { points: pts.map((p) => X(p[0]) + ',' + Y(p[1])).join(' '), fill: 'none', stroke: '#9db4e6', 'stroke-width': 1 }));
    for (const p of pts) svg.append(s('circle', { cx: X(p[0]), cy: Y(p[1]), r: 1.8, fill: '#9db4e6' }));
    if (pts.length >= 5) svg.append(s('polyline', { class: 'trend', points: ema(ys, smooth).map((v, i) => X(xs[i]) + ',' + Y(v)).join(' '), fill: 'none', stroke: '#2457c5', 'stroke-width': 2.2 }));
    return h('figure', { class: 'card' }, h('div', {}, h('strong', {}, series.name), h('span', { class: 'small muted' }, ` ${pts.length} points, first ${f3(ys[0])}, last ${f3(ys[ys.length - 1])}`)), svg,
      h('figcaption', { class: 'small muted' }, pts.length >= 5 ? `light: each logged point; dark: trend, exponential moving average (smoothing ${smooth}, bias-corrected)` : 'each logged point'));
  }

  // ---------- views ----------
  async function viewHome() {
    setCrumbs([{ label: 'sources' }]);
    const { sources, bundle } = await load('sources');
    const qs = query();
    const filter = h('input', { type: 'search', placeholder: 'filter by path or title', value: qs.get('q') || '', 'aria-label': 'filter sources' });
    const runs = sources.filter((x) => x.kind === 'run');
    const pickA = h('select', { 'aria-label': 'first run' }, runs.map((r) => h('option', { value: r.id }, r.rel)));
    const pickB = h('select', { 'aria-label': 'second run' }, runs.map((r, i) => h('option', { value: r.id, selected: i === 1 }, r.rel)));
    const list = h('div', {});
    const KINDS = [['results', 'Results'], ['run', 'Runs'], ['annotation', 'Annotations'], ['training', 'Training logs']];
    function draw() {
      const f = filter.value.toLowerCase();
      setQuery({ q: filter.value });
      fill(list, ...KINDS.flatMap(([k, label]) => {
        const items = sources.filter((x) => x.kind === k && (x.rel + ' ' + x.title).toLowerCase().includes(f));
        if (!items.length) return [];
        const headline = (x) => {
          const hl = x.headline || {};
          if (k === 'run') return `${hl.questions ?? '?'} questions · EM ${f3(hl.em)} · F1 ${f3(hl.f1)} · RC ${f2(hl.retrievalCount)}`;
          if (k === 'annotation') return `${hl.method ?? ''} · ${hl.questions ?? '?'} questions · ${hl.pairs ?? '?'} pairs`;
          if (k === 'results') return [hl.paper, hl.systems !== undefined ? hl.systems + ' cells' : '', hl.claims !== undefined ? hl.claims + ' claims' : ''].filter(Boolean).join(' · ');
          return '';
        };
        return [h('h2', {}, `${label} (${items.length})`), table(['path', 'what', 'summary'], items.map((x) => [h('a', { href: `#/${x.kind}/${x.id}` }, x.rel), x.title, headline(x)]))];
      }));
    }
    filter.addEventListener('input', draw);
    draw();
    fill(main, h('h1', {}, 'ragtrail outputs'), bundle ? h('p', { class: 'muted small' }, 'Static bundle made ' + bundle.createdAt) : null,
      runs.length >= 2 ? h('div', { class: 'row card' }, h('strong', {}, 'Compare two runs:'), pickA, 'against', pickB, h('button', { onclick: () => (location.hash = `#/compare/${pickA.value}/${pickB.value}`) }, 'compare')) : null,
      h('div', { class: 'row' }, filter), list);
  }

  const RUN_COLUMNS = [
    { key: 'n', label: '#', width: '48px', num: true },
    { key: 'id', label: 'id', width: '110px' },
    { key: 'question', label: 'question', width: 'minmax(0, 3fr)' },
    { key: 'prediction', label: 'prediction', width: 'minmax(0, 1.3fr)' },
    { key: 'gold', label: 'gold', width: 'minmax(0, 1.3fr)' },
    { key: 'em', label: 'EM', width: '44px', num: true, fmt: (v) => (v ? '1' : '0'), cls: (r) => (r.em ? 'good' : 'bad') },
    { key: 'f1', label: 'F1', width: '56px', num: true, fmt: f2 },
    { key: 'rc', label: 'RC', width: '40px', num: true },
    { key: 'steps', label: 'steps', width: '48px', num: true },
    { key: 'type', label: 'type', width: '110px' },
  ];
  const RUN_FILTERS = { all: () => true, correct: (r) => r.em > 0, wrong: (r) => !r.error && r.em === 0, 'format failure': (r) => r.formatFailures > 0, unfinished: (r) => !r.finished, unreadable: (r) => !!r.error };
  function rowsMatching(rows, text, which) {
    const t = text.toLowerCase();
    return rows.filter((r) => (RUN_FILTERS[which] || RUN_FILTERS.all)(r) && (!t || [r.id, r.question, r.prediction, r.gold, r.type, r.error].some((v) => String(v ?? '').toLowerCase().includes(t))));
  }
  function metricsBlock(rows) {
    const ok = rows.filter((r) => !r.error);
    const line = (label, key) => { const xs = ok.map((r) => r[key]); const [lo, hi] = bootstrapCi(xs); return [label, f3(mean(xs)), `[${f3(lo)}, ${f3(hi)}]`]; };
    const types = [...new Set(ok.map((r) => r.type).filter(Boolean))].sort();
    return h('div', { class: 'cols' },
      h('div', {}, h('h2', {}, 'Metrics'), table(['metric', 'mean', '95% CI'], [line('EM', 'em'), line('F1', 'f1'), line('Acc', 'acc'), ['retrieval count', f2(mean(ok.map((r) => r.rc))), ''], ['steps', f2(mean(ok.map((r) => r.steps))), '']], [1])),
      types.length ? h('div', {}, h('h2', {}, 'By question type'), table(['type', 'n', 'EM', 'F1', 'RC'], types.map((t) => { const g = ok.filter((r) => r.type === t); return [t, g.length, f3(mean(g.map((r) => r.em))), f3(mean(g.map((r) => r.f1))), f2(mean(g.map((r) => r.rc)))]; }), [1, 2, 3, 4])) : h('div', {}));
  }
  async function viewRun(id) {
    const run = await load('run/' + id);
    setCrumbs([{ label: 'sources', href: '#/' }, { label: run.rel }]);
    const qs = query();
    let sort = qs.get('sort') || 'n', dir = qs.get('dir') || 'asc';
    const text = h('input', { type: 'search', placeholder: 'search question, prediction, id', value: qs.get('q') || '', 'aria-label': 'search questions' });
    const which = h('select', { 'aria-label': 'show' }, Object.keys(RUN_FILTERS).map((k) => h('option', { value: k, selected: k === (qs.get('show') || 'all') }, k)));
    const count = h('span', { class: 'muted' });
    const holder = h('div', {});
    function draw() {
      setQuery({ q: text.value, show: which.value === 'all' ? '' : which.value, sort: sort === 'n' ? '' : sort, dir: dir === 'asc' ? '' : dir });
      const rows = sortRows(rowsMatching(run.rows, text.value, which.value), sort, dir);
      count.textContent = `${rows.length} of ${run.rows.length} questions`;
      fill(holder, vlist(RUN_COLUMNS, rows, { sort, dir, onOpen: (r) => (location.hash = `#/run/${id}/${r.n}`), onSort: (k) => { dir = sort === k && dir === 'desc' ? 'asc' : sort === k ? 'desc' : k === 'n' ? 'asc' : 'desc'; sort = k; draw(); } }));
    }
    text.addEventListener('input', draw);
    which.addEventListener('change', draw);
    const settings = run.settings && run.settings.system ? `${run.settings.system.name} · agent ${run.settings.system.agent} · policy ${run.settings.system.policy} · dataset ${run.settings.dataset?.name ?? ''} · seed ${run.settings.seed ?? ''}` : run.summary?.policy ?? '';
    fill(main, h('h1', {}, run.title), h('p', { class: 'muted small' }, settings),
      run.rewards.length ? h('p', { class: 'small' }, 'Rewards beside this run: ' + run.rewards.join(', ')) : null,
      metricsBlock(run.rows), h('h2', {}, 'Questions'), h('div', { class: 'row' }, text, which, count), holder);
    draw();
  }

  function actionText(a) {
    if (!a) return '';
    return a.query ?? a.answer ?? a.evidence ?? a.text ?? a.content ?? a.reason ?? JSON.stringify(a);
  }
  function transcript(t, rewards, golds) {
    if (t.error) return h('p', { class: 'bad' }, 'This line cannot be shown: ' + t.error);
    const supporting = new Set(Array.isArray(t.meta?.supporting) ? t.meta.supporting : []);
    const metrics = t.metrics || {};
    const out = [h('div', { class: 'card' },
      h('div', {}, h('strong', {}, 'Question: '), t.question),
      h('div', {}, h('strong', {}, 'Gold: '), (t.answers || []).join(' | ')),
      h('div', {}, h('strong', {}, 'Prediction: '), h('span', { class: metrics.em ? 'good' : 'bad' }, t.prediction ?? '—'), `  EM ${metrics.em ?? '—'} · F1 ${f2(metrics.f1)} · ${t.retrievalCount ?? 0} searches · ${(t.steps || []).length} steps${t.formatFailures ? ' · ' + t.formatFailures + ' format failures' : ''}${t.finished ? '' : ' · unfinished'}`),
      h('div', { class: 'small muted' }, `agent ${t.agent} · policy ${t.policy}` + (t.meta?.type ? ` · type ${t.meta.type}` : '')))];
    const schemes = Object.entries(rewards || {});
    if (schemes.length) out.push(h('h2', {}, 'Outcome rewards'), table(['scheme', 'total', 'components'], schemes.map(([k, r]) => [k, r.error ? h('span', { class: 'bad' }, r.error) : f3(r.total), r.components ? Object.entries(r.components).map(([c, v]) => `${c} ${f3(v)}`).join(' · ') : ''])));
    out.push(h('h2', {}, 'Steps'));
    (t.steps || []).forEach((st, i) => {
      const a = st.action || {};
      const box = h('section', { class: 'step', 'data-step': i },
        h('h3', {}, `Step ${i + 1}`, h('span', { class: 'badge ' + (a.type || '') }, a.type || '?'), h('span', {}, trunc(actionText(a), 160)),
          typeof st.logprob === 'number' ? h('span', { class: 'small muted' }, 'log p ' + f2(st.logprob)) : null,
          st.forced ? h('span', { class: 'badge invalid' }, 'forced') : null, st.formatError ? h('span', { class: 'badge invalid', title: st.formatError }, 'format failure') : null));
      if (st.messages || st.prompt) box.append(h('details', {}, h('summary', {}, 'prompt'), h('pre', {}, Array.isArray(st.messages) ? st.messages.map((m) => `[${m.role}] ${m.content}`).join('\n\n') : String(st.prompt))));
      box.append(h('details', { open: i === 0 || undefined }, h('summary', {}, 'reply'), h('pre', {}, st.raw ?? '')));
      if (st.selection) {
        const sel = st.selection;
        box.append(h('div', { class: 'small' }, h('strong', {}, `PRM best-of: ${sel.candidates} candidates, chosen score ${f3(sel.score)}`)));
        if (Array.isArray(sel.scored)) box.append(table(['', 'candidate', 'PRM score'], sel.scored.slice().sort((x, y) => y.score - x.score).map((c) => [c.score === sel.score ? '✓' : '', h('span', {}, h('span', { class: 'badge ' + (c.action?.type || '') }, c.action?.type || '?'), ' ', trunc(actionText(c.action), 120)), f3(c.score)]), [2]));
      }
      if (Array.isArray(st.docs) && st.docs.length) {
        box.append(h('div', { class: 'small muted' }, `${st.docs.length} passages returned` + (supporting.size ? ` (gold passages marked)` : '')));
        for (const d of st.docs) box.append(h('div', { class: 'doc' + (supporting.has(d.passageId) ? ' gold' : '') }, h('strong', {}, d.title ?? ''), ` [${d.passageId}] `, supporting.has(d.passageId) ? h('span', { class: 'badge' }, 'gold') : null, typeof d.score === 'number' ? h('span', { class: 'muted' }, ` score ${f2(d.score)}`) : null, h('div', {}, trunc(d.text, 600))));
      }
      out.push(box);
    });
    return out;
  }
  async function viewQuestion(id, n) {
    const [run, item] = await Promise.all([load('run/' + id), trajectory(id, n)]);
    const row = run.rows.find((r) => r.n === n);
    setCrumbs([{ label: 'sources', href: '#/' }, { label: run.rel, href: `#/run/${id}` }, { label: row?.id ?? String(n) }]);
    const nav = h('div', { class: 'row small' }, n > 0 ? h('a', { href: `#/run/${id}/${n - 1}` }, '← previous') : null, n + 1 < run.rows.length ? h('a', { href: `#/run/${id}/${n + 1}` }, 'next →') : null);
    fill(main, h('h1', {}, `${row?.id ?? n}`), nav, ...transcript(item.trajectory, item.rewards));
  }

  async function viewAnnotation(id) {
    const ann = await load('annotation/' + id);
    setCrumbs([{ label: 'sources', href: '#/' }, { label: ann.rel }]);
    const st = ann.stats || {};
    const qs = query();
    let sort = qs.get('sort') || 'n', dir = qs.get('dir') || 'asc';
    const text = h('input', { type: 'search', placeholder: 'search question or id', value: qs.get('q') || '', 'aria-label': 'search trees' });
    const onlyPairs = h('select', { 'aria-label': 'show' }, ['all', 'with pairs', 'without pairs'].map((k) => h('option', { value: k, selected: k === (qs.get('show') || 'all') }, k)));
    const holder = h('div', {});
    const count = h('span', { class: 'muted' });
    const cols = [
      { key: 'n', label: '#', width: '48px', num: true }, { key: 'id', label: 'id', width: '110px' }, { key: 'question', label: 'question', width: 'minmax(0, 4fr)' },
      { key: 'type', label: 'type', width: '110px' }, { key: 'nodes', label: 'nodes', width: '56px', num: true }, { key: 'pairs', label: 'pairs', width: '52px', num: true }, { key: 'best', label: 'best leaf', width: '72px', num: true, fmt: f3 }];
    function draw() {
      setQuery({ q: text.value, show: onlyPairs.value === 'all' ? '' : onlyPairs.value, sort: sort === 'n' ? '' : sort, dir: dir === 'asc' ? '' : dir });
      const t = text.value.toLowerCase();
      let rows = ann.rows.filter((r) => !t || [r.id, r.question, r.type, r.error].some((v) => String(v ?? '').toLowerCase().includes(t)));
      if (onlyPairs.value === 'with pairs') rows = rows.filter((r) => r.pairs > 0);
      if (onlyPairs.value === 'without pairs') rows = rows.filter((r) => !r.pairs);
      rows = sortRows(rows, sort, dir);
      count.textContent = `${rows.length} of ${ann.rows.length} trees`;
      fill(holder, vlist(cols, rows, { sort, dir, onOpen: (r) => (location.hash = `#/tree/${id}/${r.n}`), onSort: (k) => { dir = sort === k && dir === 'desc' ? 'asc' : sort === k ? 'desc' : k === 'n' ? 'asc' : 'desc'; sort = k; draw(); } }));
    }
    text.addEventListener('input', draw);
    onlyPairs.addEventListener('change', draw);
    const gaps = Array.isArray(st.gapHistogram) ? table(['value gap', 'pairs'], st.gapHistogram.map((g) => [`${g.from}–${g.to ?? '∞'}`, g.count]), [1]) : null;
    fill(main, h('h1', {}, ann.title),
      h('p', { class: 'small muted' }, `method ${st.method ?? ann.settings?.stage?.method ?? '?'} · values ${st.values ?? '?'} · policy ${ann.settings?.policy ?? '?'}`),
      h('div', { class: 'cols' }, table(['', ''], [['questions', st.questions ?? ann.rows.length], ['with pairs', st.questionsWithPairs ?? '—'], ['pairs', st.pairs ?? '—'], ['chosen types', JSON.stringify(st.chosenTypes ?? {})], ['gold preferred', st.goldPreferred ? `${f3(st.goldPreferred.share)} of ${st.goldPreferred.pairs}` : '—']]), gaps || h('div', {})),
      ann.pairsWithoutTrees ? h('p', { class: 'small muted' }, `${ann.pairsWithoutTrees} pairs belong to questions without a tree here`) : null,
      h('h2', {}, 'Trees'), h('div', { class: 'row' }, text, onlyPairs, count), holder);
    draw();
  }

  /** Lays out a tree: leaves side by side, each parent centred over its children (collapsed subtrees hidden). */
  function layout(nodes, collapsed) {
    const kids = new Map();
    for (const nd of nodes) if (nd.parent >= 0) { if (!kids.has(nd.parent)) kids.set(nd.parent, []); kids.get(nd.parent).push(nd.id); }
    const root = nodes.find((nd) => nd.parent < 0) || nodes[0];
    const pos = new Map();
    let next = 0;
    const place = (id, depth) => {
      const ch = collapsed.has(id) ? [] : kids.get(id) || [];
      if (!ch.length) { pos.set(id, { x: next++, y: depth }); return; }
      ch.forEach((c) => place(c, depth + 1));
      pos.set(id, { x: (pos.get(ch[0]).x + pos.get(ch[ch.length - 1]).x) / 2, y: depth });
    };
    if (root) place(root.id, 0);
    return { pos, kids, root };
  }
  function valueColour(v) {
    if (typeof v !== 'number' || !Number.isFinite(v)) return '#eceff4';
    const t = Math.max(0, Math.min(1, v));
    return `hsl(${Math.round(10 + 120 * t)}, 60%, ${Math.round(92 - 40 * t)}%)`;
  }
  async function viewTree(id, n) {
    const [ann, item] = await Promise.all([load('annotation/' + id), tree(id, n)]);
    const t = item.tree;
    const row = ann.rows.find((r) => r.n === n);
    setCrumbs([{ label: 'sources', href: '#/' }, { label: ann.rel, href: `#/annotation/${id}` }, { label: row?.id ?? String(n) }]);
    if (t.error) { fill(main, h('p', { class: 'bad' }, 'This tree cannot be shown: ' + t.error)); return; }
    const nodes = Array.isArray(t.nodes) ? t.nodes : [];
    const byId = new Map(nodes.map((nd) => [nd.id, nd]));
    const pairs = item.pairs || [];
    const qs = query();
    let pairIdx = qs.has('pair') ? Number(qs.get('pair')) : -1;
    let selected = qs.has('node') ? Number(qs.get('node')) : -1;
    const collapsed = new Set();
    // The best leaf: the terminal node of highest value; its path to the root is drawn thick.
    const leaves = nodes.filter((nd) => nd.terminal && typeof nd.value === 'number');
    // (No best leaf when every leaf has the same value: a path drawn then would single out one at random.)
    const bestLeaf = leaves.length && leaves.some((l) => l.value !== leaves[0].value) ? leaves.reduce((a, b) => (b.value > a.value ? b : a)) : undefined;
    const bestPath = new Set();
    for (let c = bestLeaf; c; c = byId.get(c.parent)) bestPath.add(c.id);
    const svg = s('svg', { class: 'tree', role: 'img', 'aria-label': 'search tree' });
    const detail = h('div', { class: 'card small' });
    const pairList = h('ol', { class: 'pairs small' });
    let view = null;
    const DX = 120, DY = 110;
    function draw() {
      setQuery({ pair: pairIdx >= 0 ? pairIdx : '', node: selected >= 0 ? selected : '' });
      const { pos, kids } = layout(nodes, collapsed);
      const pair = pairs[pairIdx];
      const role = new Map();
      if (pair) { role.set(pair.parent, 'parent'); role.set(pair.chosen?.node, 'chosen'); role.set(pair.rejected?.node, 'rejected'); }
      const g = s('g', {});
      for (const nd of nodes) {
        if (!pos.has(nd.id) || nd.parent < 0 || !pos.has(nd.parent)) continue;
        const a = pos.get(nd.parent), b = pos.get(nd.id);
        const best = bestPath.has(nd.id) && bestPath.has(nd.parent);
        g.append(s('path', { class: 'edge' + (best ? ' best' : ''), d: `M${a.x * DX},${a.y * DY + 36} C${a.x * DX},${(a.y + 0.6) * DY} ${b.x * DX},${(b.y - 0.5) * DY} ${b.x * DX},${b.y * DY - 16}` }));
        const act = nd.step?.action;
        if (act) g.append(s('text', { x: b.x * DX, y: b.y * DY - 22, 'text-anchor': 'middle' }, trunc(`${act.type}: ${actionText(act)}`, 22)));
      }
      for (const nd of nodes) {
        const p = pos.get(nd.id);
        if (!p) continue;
        const cls = 'node' + (role.has(nd.id) ? ' ' + role.get(nd.id) : '') + (nd.id === selected ? ' selected' : '');
        const shape = nd.terminal ? s('rect', { class: cls, x: p.x * DX - 15, y: p.y * DY - 15, width: 30, height: 30, rx: 4, fill: valueColour(nd.value), 'data-node': nd.id }) : s('circle', { class: cls, cx: p.x * DX, cy: p.y * DY, r: 16, fill: valueColour(nd.value), 'data-node': nd.id });
        shape.append(s('title', {}, `node ${nd.id}: N ${nd.N}, Q ${f3(nd.Q)}, value ${f3(nd.value)}${nd.terminal ? ', terminal' : ''}`));
        shape.addEventListener('click', (e) => { e.stopPropagation(); selected = nd.id; draw(); });
        g.append(shape, s('text', { x: p.x * DX, y: p.y * DY + 4, 'text-anchor': 'middle' }, String(nd.id)),
          s('text', { x: p.x * DX, y: p.y * DY + 30, 'text-anchor': 'middle' }, `N ${nd.N} · v ${f2(nd.value)}`));
        if ((kids.get(nd.id) || []).length) {
          const tg = s('circle', { class: 'toggle', cx: p.x * DX + 18, cy: p.y * DY - 14, r: 6, 'data-toggle': nd.id });
          tg.append(s('title', {}, collapsed.has(nd.id) ? 'expand' : 'collapse'));
          tg.addEventListener('click', (e) => { e.stopPropagation(); if (collapsed.has(nd.id)) collapsed.delete(nd.id); else collapsed.add(nd.id); draw(); });
          g.append(tg, s('text', { x: p.x * DX + 18, y: p.y * DY - 10.5, 'text-anchor': 'middle' }, collapsed.has(nd.id) ? '+' : '−'));
        }
      }
      fill(svg, g);
      const xs = [...pos.values()].map((p) => p.x), ys = [...pos.values()].map((p) => p.y);
      // Fit the tree, but never magnify a small one past the drawing's own scale (1 unit = 1 px at 900 × 520).
      const tw = (Math.max(...xs) - Math.min(...xs)) * DX + 160, th = Math.max(...ys) * DY + 120;
      const w = Math.max(tw, 900, (th * 900) / 520), hh = Math.max(th, (w * 520) / 900);
      const fit = { x: (Math.min(...xs) * DX - 80) - (w - tw) / 2, y: -60, w, h: hh };
      if (!view) view = fit;
      svg.setAttribute('viewBox', `${view.x} ${view.y} ${view.w} ${view.h}`);
      svg.fitBox = fit;
      const nd = byId.get(selected);
      fill(detail, ...(nd ? [h('strong', {}, `node ${nd.id}`), table(['', ''], [['depth', nd.depth], ['visits N', nd.N], ['Q', f3(nd.Q)], ['value', f3(nd.value)], ['prior', f3(nd.prior)], ['terminal', String(!!nd.terminal)], ['score', f3(nd.score)]]),
        nd.step ? h('div', {}, h('span', { class: 'badge ' + (nd.step.action?.type || '') }, nd.step.action?.type || ''), ' ', actionText(nd.step.action)) : h('div', { class: 'muted' }, 'the root: the question'),
        nd.step ? h('pre', {}, nd.step.raw ?? '') : null] : [h('span', { class: 'muted' }, 'Click a node for its statistics and text.')]));
      fill(pairList, ...pairs.map((p, i) => h('li', { class: i === pairIdx ? 'on' : '', 'data-pair': i, onclick: () => { pairIdx = i === pairIdx ? -1 : i; draw(); } },
        `at node ${p.parent}: `, h('span', { class: 'good' }, `✓ ${p.chosen?.node} ${p.chosen?.type ?? ''} (${f3(p.chosen?.value)})`), ' over ', h('span', { class: 'bad' }, `✗ ${p.rejected?.node} ${p.rejected?.type ?? ''} (${f3(p.rejected?.value)})`), ` gap ${f3(p.gap)}`)));
    }
    // Zoom on the wheel around the pointer, pan by dragging; buttons for fit and steps.
    const zoom = (k, cx, cy) => { cx ??= view.x + view.w / 2; cy ??= view.y + view.h / 2; view = { x: cx - (cx - view.x) * k, y: cy - (cy - view.y) * k, w: view.w * k, h: view.h * k }; svg.setAttribute('viewBox', `${view.x} ${view.y} ${view.w} ${view.h}`); };
    svg.addEventListener('wheel', (e) => { e.preventDefault(); const r = svg.getBoundingClientRect(); zoom(e.deltaY > 0 ? 1.15 : 1 / 1.15, view.x + ((e.clientX - r.left) / r.width) * view.w, view.y + ((e.clientY - r.top) / r.height) * view.h); }, { passive: false });
    let drag = null;
    svg.addEventListener('pointerdown', (e) => { drag = { x: e.clientX, y: e.clientY, v: { ...view } }; });
    window.addEventListener('pointerup', () => (drag = null));
    svg.addEventListener('pointermove', (e) => { if (!drag) return; const r = svg.getBoundingClientRect(); view = { ...drag.v, x: drag.v.x - ((e.clientX - drag.x) / r.width) * drag.v.w, y: drag.v.y - ((e.clientY - drag.y) / r.height) * drag.v.h }; svg.setAttribute('viewBox', `${view.x} ${view.y} ${view.w} ${view.h}`); });
    const q = t.question || {};
    fill(main, h('h1', {}, row?.id ?? String(n)), h('div', { class: 'card' }, h('div', {}, h('strong', {}, 'Question: '), q.question ?? ''), h('div', {}, h('strong', {}, 'Gold: '), (q.answers || []).join(' | ')),
      h('div', { class: 'small muted' }, `${t.method ?? ''} · ${t.iterations ?? '?'} iterations · ${nodes.length} nodes · ${pairs.length} pairs · best leaf ${bestLeaf ? `node ${bestLeaf.id}, value ${f3(bestLeaf.value)}` : leaves.length === 1 ? `none (one leaf, valued ${f3(leaves[0].value)})` : leaves.length ? `none (all ${leaves.length} leaves valued ${f3(leaves[0].value)})` : 'none'} · policy ${t.policy ?? ''}`)),
      h('div', { class: 'row small' }, h('button', { onclick: () => zoom(1 / 1.3) }, 'zoom in'), h('button', { onclick: () => zoom(1.3) }, 'zoom out'), h('button', { onclick: () => { view = svg.fitBox; svg.setAttribute('viewBox', `${view.x} ${view.y} ${view.w} ${view.h}`); } }, 'fit'),
        h('span', { class: 'legend muted' }, h('span', {}, 'circle: step · square: terminal · fill: value (red 0 → green 1) · thick gold: path to the best leaf · green / red outline: chosen / rejected of the selected pair, dashed blue: their parent'))),
      h('div', { class: 'tree-wrap' }, svg, h('div', {}, h('h2', {}, `Pairs mined here (${pairs.length})`), pairs.length ? pairList : h('p', { class: 'muted small' }, 'No pair was mined from this tree.'), h('h2', {}, 'Node'), detail)));
    draw();
  }

  async function pairedFor(runIds) {
    const runs = await Promise.all(runIds.map((r) => load('run/' + r)));
    return runs;
  }
  async function viewResults(id) {
    const r = await load('results/' + id);
    setCrumbs([{ label: 'sources', href: '#/' }, { label: r.rel }]);
    const res = r.results || {};
    const out = [h('h1', {}, r.title)];
    if (r.recipe?.recipe?.description) out.push(h('p', { class: 'muted' }, r.recipe.recipe.description));
    const runFor = (system, dataset) => r.runs.find((x) => x.system === system && (!dataset || !x.dataset || x.dataset === dataset));
    if (Array.isArray(res.claims) && res.claims.length) {
      out.push(h('h2', {}, 'Claims'), table(['claim', 'treatment', 'control', 'metric', 'treatment', 'control', 'Δ', '95% CI', 'p', 'n', 'holds'], res.claims.map((c) => [
        c.claim, c.treatment, c.control, c.metric, f3(c.treatmentMean), f3(c.controlMean), f3(c.delta), Array.isArray(c.ci) ? `[${f3(c.ci[0])}, ${f3(c.ci[1])}]` : '—', fp(c.p), c.n ?? '', c.holds ? h('span', { class: 'good' }, 'holds') : h('span', { class: 'bad' }, 'does not hold')]), [4, 5, 6, 8, 9]));
      out.push(h('p', { class: 'small muted' }, 'Means are proportions (0–1); Δ = treatment − control, paired over the same questions.'));
    }
    const cells = Array.isArray(res.cells) ? res.cells : [];
    if (cells.length) {
      out.push(h('h2', {}, 'Systems'), table(['system', 'dataset', 'n', 'EM', 'EM 95% CI', 'F1', 'F1 95% CI', 'Acc', 'RC', 'questions'], cells.map((c) => {
        const run = runFor(c.system, c.dataset);
        return [c.system, c.dataset, c.n, f3(c.em?.mean), `[${f3(c.em?.low)}, ${f3(c.em?.high)}]`, f3(c.f1?.mean), `[${f3(c.f1?.low)}, ${f3(c.f1?.high)}]`, f3(c.acc?.mean), f2(c.retrievalCount), run ? h('a', { href: `#/run/${run.id}` }, 'open') : '—'];
      }), [2, 3, 5, 7, 8]));
      out.push(ciChart(cells.map((c) => ({ label: c.system + (new Set(cells.map((x) => x.dataset)).size > 1 ? ' · ' + c.dataset : ''), mean: c.em?.mean, low: c.em?.low, high: c.em?.high })), { axis: 'EM' }));
      // Paired tests against the baseline, over the same questions, from the runs' own rows.
      const baseline = res.config?.baseline;
      const linked = cells.map((c) => ({ c, run: runFor(c.system, c.dataset) })).filter((x) => x.run);
      const base = linked.find((x) => x.c.system === baseline);
      if (base && linked.length > 1) {
        const rows = await pairedFor(linked.map((x) => x.run.id));
        const baseRows = new Map(rows[linked.indexOf(base)].rows.filter((x) => !x.error).map((x) => [x.id, x]));
        out.push(h('h2', {}, `Paired against ${baseline}`), table(['system', 'n paired', 'EM Δ', 'p (t-test)', 'F1 Δ', 'p (t-test)', 'compare'], linked.filter((x) => x !== base).map((x) => {
          const mine = rows[linked.indexOf(x)].rows.filter((y) => !y.error && baseRows.has(y.id));
          const em = pairedT(mine.map((y) => y.em), mine.map((y) => baseRows.get(y.id).em)), f1 = pairedT(mine.map((y) => y.f1), mine.map((y) => baseRows.get(y.id).f1));
          return [x.c.system, em.n, f3(em.diff), fp(em.p), f3(f1.diff), fp(f1.p), h('a', { href: `#/compare/${x.run.id}/${base.run.id}` }, 'side by side')];
        }), [1, 2, 3, 4, 5]));
        // Per question type, per system: where the differences come from.
        const types = [...new Set(rows.flatMap((x) => x.rows.map((y) => y.type)).filter(Boolean))].sort();
        if (types.length) out.push(h('h2', {}, 'EM by question type'), table(['system', ...types.map((t) => `${t}`)], linked.map((x, i) => [x.c.system, ...types.map((t) => { const g = rows[i].rows.filter((y) => y.type === t); return g.length ? `${f3(mean(g.map((y) => y.em)))} (n ${g.length})` : '—'; })])));
      }
    }
    if (res.prm) {
      out.push(h('h2', {}, 'PRM pair accuracy (held-out pairs)'), ciChart([{ label: 'all pairs', mean: res.prm.accuracy, low: res.prm.accuracy, high: res.prm.accuracy }, ...Object.entries(res.prm.by_type || {}).map(([k, v]) => ({ label: `preferred ${k} (n ${v.n})`, mean: v.accuracy, low: v.accuracy, high: v.accuracy }))], { axis: 'pair accuracy', chance: 0.5, caption: 'share of held-out pairs where the PRM scores the preferred step higher' }));
    }
    // What else this output holds: the same folder and the folders beside it (a recipe's seeds, an eval's stages).
    const scope = r.rel.split('/').length > 1 && !Array.isArray(res.claims) ? r.rel.split('/').slice(0, -1).join('/') : r.rel;
    const inside = (await load('sources')).sources.filter((x) => x.id !== r.id && x.kind !== 'run' && (x.rel === scope || x.rel.startsWith(scope + '/')));
    if (inside.length) out.push(h('h2', {}, 'Also in this output'), h('ul', {}, inside.map((x) => h('li', {}, h('a', { href: `#/${x.kind}/${x.id}` }, x.rel), ` — ${x.title}`))));
    fill(main, ...out);
  }

  async function viewTraining(id) {
    const tr = await load('training/' + id);
    setCrumbs([{ label: 'sources', href: '#/' }, { label: tr.rel }]);
    const scal = Object.entries(tr.scalars || {});
    fill(main, h('h1', {}, tr.title), scal.length ? table(['', ''], scal.map(([k, v]) => [k, f3(v)])) : null,
      tr.series.length ? h('div', { class: 'cols' }, tr.series.map((x) => lineChart(x))) : h('p', { class: 'muted' }, 'No curve with more than one point.'));
  }

  async function viewCompare(a, b, qid) {
    const [ra, rb] = await Promise.all([load('run/' + a), load('run/' + b)]);
    setCrumbs([{ label: 'sources', href: '#/' }, { label: `${ra.rel} vs ${rb.rel}`, href: qid ? `#/compare/${a}/${b}` : undefined }, qid ? { label: qid } : null].filter(Boolean));
    const bRows = new Map(rb.rows.filter((x) => !x.error).map((x) => [x.id, x]));
    const shared = ra.rows.filter((x) => !x.error && bRows.has(x.id)).map((x) => ({ ...x, other: bRows.get(x.id) }));
    if (qid) {
      const x = shared.find((y) => y.id === qid);
      if (!x) { fill(main, h('p', { class: 'bad' }, `question ${qid} is not in both runs`)); return; }
      const [ta, tb] = await Promise.all([trajectory(a, x.n), trajectory(b, x.other.n)]);
      fill(main, h('h1', {}, qid), h('div', { class: 'cols' }, h('div', {}, h('h2', {}, ra.title), ...transcript(ta.trajectory, ta.rewards)), h('div', {}, h('h2', {}, rb.title), ...transcript(tb.trajectory, tb.rewards))));
      return;
    }
    const qs = query();
    const only = h('select', { 'aria-label': 'show' }, ['disagree', 'all', `only ${ra.title} right`, `only ${rb.title} right`].map((k, i) => h('option', { value: ['disagree', 'all', 'a', 'b'][i], selected: ['disagree', 'all', 'a', 'b'][i] === (qs.get('show') || 'disagree') }, k)));
    const em = pairedT(shared.map((x) => x.em), shared.map((x) => x.other.em)), f1 = pairedT(shared.map((x) => x.f1), shared.map((x) => x.other.f1));
    const both = shared.filter((x) => x.em && x.other.em).length, onlyA = shared.filter((x) => x.em && !x.other.em).length, onlyB = shared.filter((x) => !x.em && x.other.em).length;
    const holder = h('div', {});
    const count = h('span', { class: 'muted' });
    const cols = [
      { key: 'id', label: 'id', width: '100px' }, { key: 'question', label: 'question', width: 'minmax(0, 2.4fr)' }, { key: 'gold', label: 'gold', width: 'minmax(0, 1fr)' },
      { key: 'prediction', label: 'A predicted', width: 'minmax(0, 1.2fr)', cls: (r) => (r.em ? 'good' : 'bad') }, { key: 'otherPrediction', label: 'B predicted', width: 'minmax(0, 1.2fr)', cls: (r) => (r.other.em ? 'good' : 'bad') },
      { key: 'f1', label: 'F1 A', width: '52px', num: true, fmt: f2 }, { key: 'otherF1', label: 'F1 B', width: '52px', num: true, fmt: f2 }];
    function draw() {
      setQuery({ show: only.value === 'disagree' ? '' : only.value });
      const keep = { all: () => true, disagree: (x) => x.em !== x.other.em || x.prediction.trim().toLowerCase() !== x.other.prediction.trim().toLowerCase(), a: (x) => x.em && !x.other.em, b: (x) => !x.em && x.other.em }[only.value];
      const rows = shared.filter(keep).map((x) => ({ ...x, otherPrediction: x.other.prediction, otherF1: x.other.f1 }));
      count.textContent = `${rows.length} of ${shared.length} shared questions`;
      fill(holder, vlist(cols, rows, { sort: '', dir: '', onOpen: (x) => (location.hash = `#/compare/${a}/${b}/${encodeURIComponent(x.id)}`), onSort: () => {} }));
    }
    only.addEventListener('change', draw);
    fill(main, h('h1', {}, `${ra.title} vs ${rb.title}`), h('p', { class: 'small' }, h('strong', {}, 'A: '), h('a', { href: `#/run/${a}` }, ra.rel), h('strong', {}, '  B: '), h('a', { href: `#/run/${b}` }, rb.rel), h('span', { class: 'muted' }, ` — paired over the ${shared.length} questions both answered`)),
      table(['', 'A', 'B', 'A − B', 'p (paired t-test)'], [['EM', f3(mean(shared.map((x) => x.em))), f3(mean(shared.map((x) => x.other.em))), f3(em.diff), fp(em.p)], ['F1', f3(mean(shared.map((x) => x.f1))), f3(mean(shared.map((x) => x.other.f1))), f3(f1.diff), fp(f1.p)]], [1, 2, 3, 4]),
      h('p', {}, `Both right ${both} · only A right ${onlyA} · only B right ${onlyB} · both wrong ${shared.length - both - onlyA - onlyB}`),
      h('div', { class: 'row' }, only, count), holder);
    draw();
  }

  // ---------- routing ----------
  async function route() {
    const path = location.hash.replace(/^#\/?/, '').split('?')[0];
    const [kind, id, x, y] = path.split('/').map(decodeURIComponent);
    fill(main, h('p', { class: 'muted' }, 'Loading…'));
    try {
      if (!kind) await viewHome();
      else if (kind === 'run' && x !== undefined) await viewQuestion(id, Number(x));
      else if (kind === 'run') await viewRun(id);
      else if (kind === 'annotation') await viewAnnotation(id);
      else if (kind === 'tree') await viewTree(id, Number(x));
      else if (kind === 'results') await viewResults(id);
      else if (kind === 'training') await viewTraining(id);
      else if (kind === 'compare') await viewCompare(id, x, y);
      else fill(main, h('p', { class: 'bad' }, 'No such view: ' + path));
      document.title = 'ragtrail view — ' + (crumbs.textContent || 'sources');
    } catch (e) {
      fill(main, h('p', { class: 'bad' }, 'Could not load this view: ' + (e && e.message ? e.message : String(e))));
    }
  }
  window.addEventListener('hashchange', route);
  route();
})();
