/** Paths and small utilities shared by the tests. */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
/**
 * Real benchmark samples and parity vectors the tests read: copies of the files of ../shared/data that
 * the tests use, kept in the repository (same layout; source and licence in each folder's SOURCE.md), so
 * that a bare clone runs the same tests as CI. test/corpus/fixture-data.test.ts checks them against
 * ../shared/data where that folder is beside the clone.
 */
export const FIXTURE_DATA = join(ROOT, 'test', 'fixtures', 'data');
export const data = (...parts: string[]) => join(FIXTURE_DATA, ...parts);
/** The full shared data folder beside the clone (CI has it; a bare clone does not): only for checking the fixtures. */
export const SHARED_DATA = resolve(ROOT, '..', 'shared', 'data');

/** A fresh temporary folder, removed when `cleanup` runs. */
export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'ragtrail-test-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function collectAll<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** Runs the CLI from `cwd` as users do (a child process; the tsx loader named by its resolved URL). */
export function cliRunner(cwd: string) {
  const cli = ['--import', import.meta.resolve('tsx'), join(ROOT, 'src', 'cli', 'main.ts')];
  const run = (...args: string[]) => spawnSync(process.execPath, [...cli, ...args], { cwd, encoding: 'utf8' });
  /** Async variant, for commands that talk to a server running in this process. */
  const runAsync = (...args: string[]) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolvePromise) => {
      const child = spawn(process.execPath, [...cli, ...args], { cwd });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('close', (status) => resolvePromise({ status, stdout, stderr }));
    });
  return { run, runAsync };
}

/**
 * Starts a server command of the CLI (`serve-env`, `serve-retriever`) on a free loopback port and
 * resolves once it prints where it listens; `exited` resolves with its exit code and the time of exit.
 */
export function startServerCli(args: string[]): Promise<{ child: ChildProcess; base: string; exited: Promise<{ code: number | null; at: number }> }> {
  const cli = ['--import', import.meta.resolve('tsx'), join(ROOT, 'src', 'cli', 'main.ts')];
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [...cli, ...args, '--port', '0', '--quiet'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<{ code: number | null; at: number }>((r) => child.on('exit', (code) => r({ code, at: performance.now() })));
    let out = '';
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /(http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolvePromise({ child, base: m[1]!, exited });
    });
    child.on('exit', (code) => reject(new Error(`${args[0]} exited with ${code}: ${err}`)));
  });
}

/**
 * One HTTP request on a connection of its own (no keep-alive), so that successive calls to a server on
 * several processes spread over them; POST with a JSON body when `body` is given, else GET.
 */
export function callOnNewConnection(url: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = httpRequest(url, { method: data ? 'POST' : 'GET', agent: false, headers: { connection: 'close', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    req.end(data);
  });
}
