/** Paths and small utilities shared by the tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
/** Real benchmark samples, beside the repository (never copied into it). */
export const SHARED_DATA = resolve(ROOT, '..', 'shared', 'data');
export const data = (...parts: string[]) => join(SHARED_DATA, ...parts);

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
