/**
 * A lock file that keeps two processes from writing the same output folder at once (two appenders
 * would interleave their records). It records its owner: pid, host, the process's start time (to tell
 * a reused pid from the owner) and the command. A lock whose owner is gone — say, after kill -9 — is
 * stale and is taken over, with a line saying so; a lock held by a live process, or by a process on
 * another host (whose liveness cannot be checked from here), is refused with one line naming it.
 *
 * The lock is created complete (written to a private file, then hard-linked into place, which fails
 * if the lock exists), so a racing process never reads a half-written one; and a stale lock is removed
 * under a second, short-lived lock (`.takeover`) after checking it is still the stale one, so two
 * processes that find it stale at once cannot both win.
 */
import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { InputError } from './errors.js';
import { onAbandon } from './interrupt.js';

/** What a lock file holds (older versions wrote the pid alone). */
export interface LockOwner {
  pid: number;
  host: string;
  /** The owner's start time in clock ticks since boot (Linux /proc), to tell a reused pid apart. */
  start?: number;
  /** When the lock was taken (ISO). */
  since?: string;
  /** The owner's command line, for the message. */
  command?: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A process's start time (field 22 of /proc/PID/stat), or undefined off Linux or when it is gone. */
/** The fields of /proc/PID/stat after the command name (Linux), or undefined where there is none. */
function procStat(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

function startTicks(pid: number): number | undefined {
  const start = Number(procStat(pid)?.[19]);
  return Number.isFinite(start) ? start : undefined;
}

/**
 * A process killed with -9 stays a zombie until its parent reaps it, and `kill(pid, 0)` still finds
 * it; in a container whose first process reaps nothing it stays one. Its lock is stale all the same.
 */
const isZombie = (pid: number) => ['Z', 'X', 'x'].includes(procStat(pid)?.[0] ?? '');

function parseOwner(text: string): LockOwner | undefined {
  const t = text.trim();
  if (/^\d+$/.test(t)) return { pid: Number(t), host: hostname() }; // an older lock: this host, pid only
  try {
    const o = JSON.parse(t) as Partial<LockOwner>;
    if (Number.isInteger(o.pid) && typeof o.host === 'string') return o as LockOwner;
  } catch {
    // not a lock this version can read: treated below as unowned
  }
  return undefined;
}

/** Whether the owner may still be writing: a live process on this host, or any process on another. */
function ownerLive(o: LockOwner): boolean {
  if (o.host !== hostname()) return true;
  if (o.pid <= 0 || o.pid === process.pid || !alive(o.pid) || isZombie(o.pid)) return false;
  // The pid lives, but a process started at another time is a newcomer that reuses it.
  const now = o.start === undefined ? undefined : startTicks(o.pid);
  return now === undefined || now === o.start;
}

function describeOwner(o: LockOwner): string {
  const where = o.host === hostname() ? 'on this host' : `on host ${o.host}`;
  const extra = [o.command ? `\`${o.command}\`` : '', o.since ? `since ${o.since}` : ''].filter(Boolean).join(', ');
  return `process ${o.pid} ${where}${extra ? ` (${extra})` : ''}`;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/** Creates `path` holding `text`, whole, unless it exists; false when it does. */
function createComplete(path: string, text: string): boolean {
  const mine = `${path}.${process.pid}.new`;
  writeFileSync(mine, text);
  try {
    linkSync(mine, path);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw e;
    // A file system without hard links: exclusive create, then write (a racing reader may see it empty).
    try {
      writeFileSync(path, text, { flag: 'wx' });
      return true;
    } catch (e2) {
      if ((e2 as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw e2;
    }
  } finally {
    rmSync(mine, { force: true });
  }
}

const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Removes the lock at `path` if it still holds `stale`, under the `.takeover` lock so that only one
 * process removes it. Returns whether this process removed it.
 */
function removeStale(path: string, stale: string): boolean {
  const guard = `${path}.takeover`;
  if (!createComplete(guard, JSON.stringify({ pid: process.pid, host: hostname(), start: startTicks(process.pid) }))) {
    // Another process is taking over right now; its guard is itself stale only if it died doing so.
    const text = readText(guard);
    const o = text === undefined ? undefined : parseOwner(text);
    if (text !== undefined && (o === undefined || !ownerLive(o))) rmSync(guard, { force: true });
    else pause(20);
    return false;
  }
  try {
    if (readText(path) !== stale) return false; // someone already took it
    rmSync(path, { force: true });
    return true;
  } finally {
    rmSync(guard, { force: true });
  }
}

export class DirLock {
  // A process stopped by a signal removes its lock too (see core/interrupt.ts), rather than leave it to be found stale.
  private readonly forget = onAbandon(() => rmSync(this.path, { force: true }));

  private constructor(readonly path: string) {}

  /**
   * Takes the lock at `path` for `what` (e.g. "run folder runs/x"); a stale one is taken over and
   * `note` told so (default: a line on stderr). Throws an InputError naming the holder when it is held.
   */
  static acquire(path: string, what: string, note: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): DirLock {
    const me: LockOwner = { pid: process.pid, host: hostname(), start: startTicks(process.pid), since: new Date().toISOString(), command: ['ragtrail', ...process.argv.slice(2)].join(' ') };
    const text = JSON.stringify(me) + '\n';
    for (let attempt = 0; attempt < 50; attempt++) {
      if (createComplete(path, text)) return new DirLock(path);
      const held = readText(path);
      if (held === undefined) continue; // released meanwhile
      const owner = parseOwner(held);
      if (owner && ownerLive(owner)) {
        const how =
          owner.host === hostname()
            ? `wait for it to finish, or stop it (kill ${owner.pid}) and re-run`
            : `wait for it to finish there; if it is no longer running, delete ${path} and re-run`;
        throw new InputError(`${what} is in use by ${describeOwner(owner)}`, how);
      }
      if (removeStale(path, held)) {
        note(`ragtrail: taking over the lock of ${what}: ${owner ? `${describeOwner(owner)} is no longer running` : `${path} names no owner`}`);
      }
    }
    throw new InputError(`cannot lock ${what} (${path})`, 'another process keeps taking it; re-run when it is done');
  }

  release(): void {
    this.forget();
    rmSync(this.path, { force: true });
  }
}
