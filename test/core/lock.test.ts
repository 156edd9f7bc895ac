/**
 * One writer per output folder, across processes (issue 49): the lock records pid, host and start
 * time; processes racing for one folder leave exactly one winner, also when they race to take over a
 * stale lock; a lock whose process died (kill -9) is taken over with a line saying so; a live
 * holder, a holder on another host, and a pid reused by a newer process are told apart.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DirLock } from '../../src/core/lock.js';
import { ROOT, tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);

// A child that waits for `go`, tries the lock, says whether it won, and holds a won lock for a while
// (so the others try while it is held), then releases it. With KILL it is killed holding it instead.
const CHILD = `
import { existsSync } from 'node:fs';
import { DirLock } from ${JSON.stringify(join(ROOT, 'src', 'core', 'lock.ts'))};
const [lockPath, go, hold] = process.argv.slice(2);
console.log('ready');
while (!existsSync(go)) await new Promise((r) => setTimeout(r, 2));
try {
  const lock = DirLock.acquire(lockPath, 'run folder X');
  console.log('won');
  await new Promise((r) => setTimeout(r, Number(hold)));
  lock.release();
} catch (e) {
  console.log('lost: ' + e.message);
}
`;
const childFile = join(tmp.dir, 'child.mts');
writeFileSync(childFile, CHILD);

interface Child {
  pid: number;
  ready: Promise<void>;
  done: Promise<{ out: string; err: string; code: number | null }>;
}

function child(lockPath: string, go: string, holdMs: number): Child {
  const c = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), childFile, lockPath, go, String(holdMs)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let onReady: () => void;
  const ready = new Promise<void>((r) => (onReady = r));
  c.stdout!.on('data', (d) => {
    out += d;
    if (out.includes('ready')) onReady();
  });
  c.stderr!.on('data', (d) => (err += d));
  const done = new Promise<{ out: string; err: string; code: number | null }>((r) => c.on('close', (code) => r({ out, err, code })));
  return { pid: c.pid!, ready, done };
}

/** Starts `n` children, lets them go at once, and returns what each said. */
async function race(lockPath: string, n: number, round: string): Promise<{ out: string; err: string }[]> {
  const go = join(tmp.dir, `go-${round}`);
  const kids = Array.from({ length: n }, () => child(lockPath, go, 1000));
  await Promise.all(kids.map((k) => k.ready));
  writeFileSync(go, '');
  return Promise.all(kids.map((k) => k.done));
}

describe('DirLock across processes', () => {
  it('three processes racing for one folder: exactly one wins, the others are refused naming it; also when they race to take over a stale lock', async () => {
    const stale = { pid: 2147483646, host: hostname(), since: '2026-01-01T00:00:00.000Z' };
    const rounds: [string, string | undefined][] = [
      ['free', undefined],
      ['stale', JSON.stringify(stale)],
      ['stale-old-format', '2147483646'], // what versions before issue 49 wrote
    ];
    for (const [round, before] of rounds) {
      const lockPath = join(tmp.dir, `${round}.lock`);
      if (before !== undefined) writeFileSync(lockPath, before);
      const results = await race(lockPath, 3, round);
      const won = results.filter((r) => r.out.includes('won'));
      const lost = results.filter((r) => r.out.includes('lost'));
      assert.equal(won.length, 1, `${round}: ${JSON.stringify(results)}`);
      assert.equal(lost.length, 2, `${round}: ${JSON.stringify(results)}`);
      for (const r of lost) assert.match(r.out, /lost: run folder X is in use by process \d+ on this host \(.*\) \(wait for it to finish, or stop it \(kill \d+\) and re-run\)/);
      // The stale lock was removed once, and the process that removed it said so (not always the
      // winner: another may create the lock between that removal and its own attempt).
      const said = results.map((r) => r.err).join('');
      assert.equal(said, before === undefined ? '' : 'ragtrail: taking over the lock of run folder X: process 2147483646 on this host' + (round === 'stale' ? ' (since 2026-01-01T00:00:00.000Z)' : '') + ' is no longer running\n');
      assert.equal(existsSync(lockPath), false, 'the winner released it');
      assert.equal(existsSync(`${lockPath}.takeover`), false);
    }
  });

  it('takes over the lock of a process killed with -9, saying whose it was', async () => {
    const lockPath = join(tmp.dir, 'killed.lock');
    const go = join(tmp.dir, 'go-killed');
    writeFileSync(go, '');
    const holder = child(lockPath, go, 60_000);
    while (!existsSync(lockPath)) await new Promise((r) => setTimeout(r, 10));
    const owner = JSON.parse(readFileSync(lockPath, 'utf8'));
    assert.equal(owner.pid, holder.pid);
    assert.equal(owner.host, hostname());
    assert.throws(() => DirLock.acquire(lockPath, 'run folder X', () => assert.fail('not stale')), new RegExp(`run folder X is in use by process ${holder.pid} on this host`));
    process.kill(holder.pid, 'SIGKILL'); // no chance to remove its lock
    await holder.done;
    assert.ok(existsSync(lockPath));
    const notes: string[] = [];
    const lock = DirLock.acquire(lockPath, 'run folder X', (l) => notes.push(l));
    assert.equal(notes.length, 1);
    assert.match(notes[0]!, new RegExp(`^ragtrail: taking over the lock of run folder X: process ${holder.pid} on this host \\(.*\\) is no longer running$`));
    assert.equal(JSON.parse(readFileSync(lockPath, 'utf8')).pid, process.pid);
    lock.release();
  });

  it('refuses a lock held on another host, naming it and the file to delete', () => {
    const lockPath = join(tmp.dir, 'remote.lock');
    writeFileSync(lockPath, JSON.stringify({ pid: 4242, host: 'gpu-node-7', since: '2026-11-27T10:00:00.000Z', command: 'ragtrail run --out runs/x' }));
    assert.throws(
      () => DirLock.acquire(lockPath, 'run folder runs/x'),
      (e: Error) =>
        e.message ===
        `run folder runs/x is in use by process 4242 on host gpu-node-7 (\`ragtrail run --out runs/x\`, since 2026-11-27T10:00:00.000Z) (wait for it to finish there; if it is no longer running, delete ${lockPath} and re-run)`,
    );
    assert.ok(existsSync(lockPath), 'left alone');
  });

  it('a live pid that started at another time than the lock says is a reused pid: the lock is stale', { skip: !existsSync('/proc/self/stat') && 'no /proc here to read start times from' }, () => {
    const lockPath = join(tmp.dir, 'reused.lock');
    // Our parent is alive; the lock says it started at tick 1, which it did not.
    writeFileSync(lockPath, JSON.stringify({ pid: process.ppid, host: hostname(), start: 1 }));
    const notes: string[] = [];
    DirLock.acquire(lockPath, 'run folder X', (l) => notes.push(l)).release();
    assert.deepEqual(notes, [`ragtrail: taking over the lock of run folder X: process ${process.ppid} on this host is no longer running`]);
  });

  it('a process killed with -9 and not yet reaped (a zombie) holds no lock', { skip: !existsSync('/proc/self/stat') && 'no /proc here to read process states from' }, async () => {
    // A parent that never waits for its child: the child, once dead, stays a zombie while it sleeps
    // (as a process killed with -9 does under a container's first process, which reaps nothing).
    const parent = spawn('python3', ['-c', 'import os, time\npid = os.fork()\nif pid == 0:\n    os._exit(0)\nprint(pid, flush=True)\ntime.sleep(30)'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      const zombie = Number(await new Promise<string>((resolve) => parent.stdout!.once('data', (d) => resolve(String(d).trim()))));
      for (let i = 0; i < 100 && !/^\S+ \(\S+\) Z/.test(readFileSync(`/proc/${zombie}/stat`, 'utf8')); i++) await new Promise((r) => setTimeout(r, 10));
      const start = Number(readFileSync(`/proc/${zombie}/stat`, 'utf8').split(') ')[1]!.split(' ')[19]);
      const lockPath = join(tmp.dir, 'zombie.lock');
      writeFileSync(lockPath, JSON.stringify({ pid: zombie, host: hostname(), start }));
      const notes: string[] = [];
      DirLock.acquire(lockPath, 'run folder X', (l) => notes.push(l)).release();
      assert.deepEqual(notes, [`ragtrail: taking over the lock of run folder X: process ${zombie} on this host is no longer running`]);
    } finally {
      parent.kill();
    }
  });
});
