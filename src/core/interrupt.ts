/**
 * Ctrl-C in a long, resumable command (run, annotate, eval, pipeline, demo…). The first SIGINT lets
 * the record loops ({@link whileInterruptible}) finish the records in flight, take no new ones and
 * throw {@link InterruptedError}, so locks are released by the usual `finally` blocks; outside such a
 * loop, on a second SIGINT, or on SIGTERM, the process stops at once: the records in flight are
 * dropped (each record is appended by one synchronous write, so none is torn), the locks registered
 * with {@link onAbandon} are released, and it exits. Either way stderr gets one line with the command
 * that resumes, and the exit status is 130 (143 for SIGTERM), as a shell reports a signal.
 */
import { RagtrailError } from './errors.js';
import { removeCreatedEmptyDirs } from './io.js';

/** Thrown by a record loop that stopped because of Ctrl-C; the CLI prints {@link interruptMessage} and exits 130. */
export class InterruptedError extends RagtrailError {
  constructor() {
    super('interrupted');
  }
}

let received: NodeJS.Signals | undefined;
/** Record loops running now: while there is one, the first Ctrl-C waits for them. */
let loops = 0;
const undo = new Set<() => void>();
let resume: string | undefined;

/** True once SIGINT arrived: record loops take no new records. */
export function interrupted(): boolean {
  return received !== undefined;
}

/**
 * Runs a record loop that checks {@link interrupted} before each new record; while it runs, the
 * first Ctrl-C waits for it instead of stopping the process.
 */
export async function whileInterruptible<T>(loop: () => Promise<T>): Promise<T> {
  loops++;
  try {
    return await loop();
  } finally {
    loops--;
  }
}

/** Registers what an abrupt stop must still do (remove a lock file); returns its unregistration. */
export function onAbandon(f: () => void): () => void {
  undo.add(f);
  return () => undo.delete(f);
}

/** A word for a shell: quoted only when it has to be. */
function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The one line printed when a command is interrupted. */
export function interruptMessage(): string {
  return `ragtrail: interrupted; what finished is kept (resume with: ${resume ?? 'the same command'})`;
}

/**
 * Installs the handlers for a resumable command; `args` are its arguments as typed (after the
 * program name), for the resume line. Servers do not call this: they have their own graceful stop.
 */
export function handleInterrupts(args: readonly string[]): void {
  resume = ['ragtrail', ...args].map(shellWord).join(' ');
  const onSignal = (signal: NodeJS.Signals) => {
    const first = received === undefined;
    received ??= signal;
    if (first && signal === 'SIGINT' && loops > 0) return; // the loops stop after the records in flight
    for (const f of undo) {
      try {
        f();
      } catch {
        // stopping anyway: a lock left behind is taken over as stale by the next run
      }
    }
    removeCreatedEmptyDirs();
    // On a terminal a progress line may be half drawn: start a fresh one.
    process.stderr.write(`${process.stderr.isTTY ? '\n' : ''}${interruptMessage()}\n`);
    process.exit(signal === 'SIGTERM' ? 143 : 130);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}
