/**
 * Progress for long jobs, on stderr: a self-rewriting line on a terminal, and a plain line every few
 * seconds otherwise (so logs of multi-day runs stay readable). Shows count, total, rate and ETA, and
 * while a server's requests are being retried, "waiting for the LLM server" with how long so far.
 */
import { formatMs, type RetryWait, retryEvents } from './http.js';

export interface ProgressOptions {
  /** What is being counted, e.g. "passages". */
  unit?: string;
  total?: number;
  /** Seconds between log lines when stderr is not a terminal (default 10). */
  logEvery?: number;
  /** Silence it (tests, --json output). */
  quiet?: boolean;
  stream?: NodeJS.WriteStream;
}

function human(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)}G`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (n >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  return String(Math.round(n));
}

function duration(s: number): string {
  if (!Number.isFinite(s)) return '?';
  if (s < 60) return `${s.toFixed(0)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(Math.round(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.round((s % 3600) / 60)).padStart(2, '0')}m`;
}

export class Progress {
  private count = 0;
  private readonly start = performance.now();
  private lastDraw = 0;
  private readonly tty: boolean;
  private readonly stream: NodeJS.WriteStream;

  constructor(
    private readonly label: string,
    private readonly opts: ProgressOptions = {},
  ) {
    this.stream = opts.stream ?? process.stderr;
    this.tty = Boolean(this.stream.isTTY);
    if (!opts.quiet) {
      retryEvents.on('wait', this.onWait);
      retryEvents.on('recovered', this.onRecovered);
    }
  }

  /** The outage being waited out, if any: shown on every line until a request gets through. */
  private waiting: RetryWait | undefined;

  private readonly onWait = (w: RetryWait): void => {
    const first = this.waiting === undefined;
    if (first || w.since <= this.waiting!.since) this.waiting = w;
    const now = performance.now();
    // The first notice of an outage is shown at once; later ones at the usual pace.
    if (first || now - this.lastDraw >= (this.tty ? 200 : (this.opts.logEvery ?? 10) * 1000)) {
      this.lastDraw = now;
      this.draw(false);
    }
  };

  private readonly onRecovered = (): void => {
    if (this.waiting === undefined) return;
    this.waiting = undefined;
    this.draw(false);
  };

  get done(): number {
    return this.count;
  }

  private note = '';

  /** Counts `n` more units; `note` (e.g. running metrics) is shown after the rate. */
  tick(n = 1, note?: string): void {
    this.count += n;
    if (note !== undefined) this.note = note;
    const now = performance.now();
    const every = this.tty ? 200 : (this.opts.logEvery ?? 10) * 1000;
    if (now - this.lastDraw >= every) {
      this.lastDraw = now;
      this.draw(false);
    }
  }

  /** Final line with the totals. */
  finish(note?: string): void {
    retryEvents.off('wait', this.onWait);
    retryEvents.off('recovered', this.onRecovered);
    this.waiting = undefined;
    this.draw(true, note ?? this.note);
  }

  private draw(final: boolean, note = this.note): void {
    if (this.opts.quiet) return;
    const secs = (performance.now() - this.start) / 1000;
    const rate = this.count / Math.max(secs, 1e-9);
    const unit = this.opts.unit ? ` ${this.opts.unit}` : '';
    const total = this.opts.total;
    let text = `${this.label}: ${human(this.count)}${total ? `/${human(total)}` : ''}${unit}`;
    if (total) text += ` (${((100 * this.count) / total).toFixed(1)}%)`;
    text += ` ${human(rate)}${unit}/s, ${duration(secs)} elapsed`;
    if (total && !final && rate > 0) text += `, ETA ${duration((total - this.count) / rate)}`;
    if (note) text += ` ${note}`;
    const w = this.waiting;
    if (w) text += ` — waiting for the ${w.serverKind} (${w.reason} from ${new URL(w.url).host}, ${formatMs(Date.now() - w.since)} so far, attempt ${w.attempts + 1} in ${formatMs(w.waitMs)})`;
    if (this.tty) this.stream.write(`\r\x1b[2K${text}${final ? '\n' : ''}`);
    else this.stream.write(`${text}\n`);
  }
}
