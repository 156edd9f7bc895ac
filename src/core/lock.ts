/**
 * A lock file that keeps two processes from writing the same output folder at once (two appenders
 * would interleave their records). It holds the owner's pid; a lock whose process is gone — say,
 * after kill -9 — is stale and is taken over.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { InputError } from './errors.js';
import { onAbandon } from './interrupt.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class DirLock {
  // A process stopped by a signal removes its lock too (see core/interrupt.ts), rather than leave it to be found stale.
  private readonly forget = onAbandon(() => rmSync(this.path, { force: true }));

  private constructor(readonly path: string) {}

  static acquire(path: string, what: string): DirLock {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        writeFileSync(path, String(process.pid), { flag: 'wx' });
        return new DirLock(path);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        const pid = Number(readFileSync(path, 'utf8'));
        if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
          throw new InputError(`${what} is in use by process ${pid}`, 'wait for it to finish, or stop it first');
        }
        rmSync(path, { force: true }); // stale: its owner is gone
      }
    }
    throw new InputError(`cannot lock ${what} (${path})`);
  }

  release(): void {
    this.forget();
    rmSync(this.path, { force: true });
  }
}
