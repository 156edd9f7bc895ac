/**
 * The LLM loop's warmed-up base model, cached like a downloaded pretrained checkpoint.
 *
 * The copy and quote warm-ups (pipelines/warmup.ts) are the loop's stand-in for pretraining: they take
 * about 9 of the loop's minutes on this machine and depend only on the world, the tokenizer's texts and
 * the model's shape, never on the method being compared. A user of a real LLM downloads its base once;
 * the loop builds its base once per world and reuses it, and reports that build apart from the loop's
 * own time (`results.json`: `base`). The key is a hash of every input file's bytes and every setting
 * the warm-ups read, so a changed world, model or warm-up length builds a new base.
 */
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Bump when the warm-up's data or training changes in a way the key's inputs do not show. */
const BASE_FORMAT = 'llm-loop-base/1';

/** What a cached base records about its build. */
export interface BaseInfo {
  key: string;
  /** Seconds the warm-up stages took when the base was built. */
  seconds: Record<string, number>;
  builtAt: string;
  /** The model folders the base holds (copied into a run's `models/`). */
  models: string[];
}

/** `$RAGTRAIL_CACHE/llm-loop-bases`, else `~/.cache/ragtrail/llm-loop-bases`. */
export function defaultBaseCacheDir(): string {
  return join(process.env['RAGTRAIL_CACHE'] ?? join(homedir(), '.cache', 'ragtrail'), 'llm-loop-bases');
}

/** The cache key: SHA-256 over the format tag, the settings (as JSON) and each input file's bytes. */
export function baseKey(files: readonly string[], settings: unknown): string {
  const h = createHash('sha256');
  h.update(BASE_FORMAT);
  h.update('\0');
  h.update(JSON.stringify(settings));
  for (const f of files) {
    h.update('\0');
    h.update(readFileSync(f));
  }
  return h.digest('hex').slice(0, 24);
}

/** The cached base under `root` for `key`, or undefined (a folder without info.json is an interrupted store). */
export function findBase(root: string, key: string): { dir: string; info: BaseInfo } | undefined {
  const dir = join(root, key);
  const infoPath = join(dir, 'info.json');
  if (!existsSync(infoPath)) return undefined;
  return { dir, info: JSON.parse(readFileSync(infoPath, 'utf8')) as BaseInfo };
}

/** Copies the base's model folders into `modelsDir` (each replaced whole). */
export function copyBaseInto(base: { dir: string; info: BaseInfo }, modelsDir: string): void {
  mkdirSync(modelsDir, { recursive: true });
  for (const m of base.info.models) {
    rmSync(join(modelsDir, m), { recursive: true, force: true });
    cpSync(join(base.dir, m), join(modelsDir, m), { recursive: true });
  }
}

/**
 * Stores the run's freshly built base: copied to a temporary folder, then renamed into place, so a
 * reader never sees half a base; when another run stored the same key first, its copy is kept.
 */
export function storeBase(root: string, modelsDir: string, info: BaseInfo): void {
  const final = join(root, info.key);
  if (existsSync(join(final, 'info.json'))) return;
  const tmp = join(root, `.tmp-${info.key}-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  for (const m of info.models) cpSync(join(modelsDir, m), join(tmp, m), { recursive: true });
  writeFileSync(join(tmp, 'info.json'), JSON.stringify(info, null, 2) + '\n');
  rmSync(final, { recursive: true, force: true }); // an interrupted store (no info.json)
  try {
    renameSync(tmp, final);
  } catch {
    rmSync(tmp, { recursive: true, force: true }); // stored by a concurrent run in between
  }
}
