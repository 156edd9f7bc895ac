/**
 * A trained checkpoint as one GGUF file for the `llama:` backend: `python -m ragtrail_trl.gguf_export`
 * from the TRL venv (the converter uses transformers to read the checkpoint and the `gguf` package
 * to write the file). Used by `ragtrail export-gguf` and by `ragtrail llm-loop --serve llama`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { InputError, RagtrailError } from '../core/errors.js';
import { PYTHON_DIR } from './trl.js';

export interface GgufExport {
  gguf: string;
  checkpoint: string;
  dtype: 'f32' | 'f16';
  tensors: number;
  vocab: number;
  bytes: number;
}

/** Newest modification time of the checkpoint's weight files (0 when none is found). */
function weightsTime(checkpoint: string): number {
  let t = 0;
  for (const f of ['model.safetensors', 'model.safetensors.index.json', 'pytorch_model.bin', 'config.json']) {
    const p = join(checkpoint, f);
    if (existsSync(p)) t = Math.max(t, statSync(p).mtimeMs);
  }
  return t;
}

/** Writes `out` from `checkpoint`; kept as it is when it is newer than the checkpoint's weights (unless `force`). */
export function exportGguf(python: string, checkpoint: string, out: string, opts: { dtype?: 'f32' | 'f16'; force?: boolean } = {}): GgufExport | { gguf: string; kept: true } {
  if (!existsSync(join(checkpoint, 'config.json'))) throw new InputError(`export-gguf: ${checkpoint} has no config.json`, 'pass a transformers checkpoint folder (e.g. OUT/models/sft of `ragtrail llm-loop`)');
  if (!opts.force && existsSync(out) && statSync(out).mtimeMs >= weightsTime(checkpoint)) return { gguf: out, kept: true };
  mkdirSync(dirname(out), { recursive: true });
  const env = { ...process.env, PYTHONPATH: [PYTHON_DIR, process.env['PYTHONPATH']].filter(Boolean).join(':'), HF_HUB_OFFLINE: '1', TOKENIZERS_PARALLELISM: 'false' };
  const r = spawnSync(python, ['-m', 'ragtrail_trl.gguf_export', checkpoint, out, '--dtype', opts.dtype ?? 'f32'], { env, encoding: 'utf8' });
  if (r.status !== 0) {
    const why = (r.stderr || r.error?.message || '').trim().split('\n').filter((l) => !/Loading weights/.test(l)).slice(-5).join('\n');
    if (r.status === 2) throw new InputError(`export-gguf ${checkpoint}: ${why.replace(/^error: /, '')}`);
    throw new RagtrailError(`export-gguf ${checkpoint} failed (exit ${r.status}): ${why}`, 'the venv needs the gguf package of python/requirements.txt: run `ragtrail train --setup-only`');
  }
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as GgufExport;
}
