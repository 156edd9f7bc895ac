import type { Command } from 'commander';
import { exportGguf } from '../learn/gguf.js';
import { ensureVenv } from '../learn/trl.js';
import { choiceArg } from './options.js';

export function registerExportGguf(program: Command): void {
  program
    .command('export-gguf')
    .description('write a trained Llama checkpoint (e.g. OUT/models/sft of `ragtrail llm-loop`) as one GGUF file, tokenizer and chat template included, for --llm llama:FILE (needs Python; uses the TRL venv)')
    .argument('<checkpoint>', 'transformers checkpoint folder')
    .argument('<out>', 'the .gguf file to write')
    .option('--dtype <type>', 'weight type of the matrices: f32 (the checkpoint\'s numbers) or f16 (half the size)', choiceArg(['f32', 'f16'] as const), 'f32')
    .option('--venv <dir>', 'Python venv (default $RAGTRAIL_VENV or ~/.cache/ragtrail/trl-venv; created on first use)')
    .action((checkpoint: string, out: string, opts: { dtype: 'f32' | 'f16'; venv?: string }) => {
      const python = ensureVenv({ venv: opts.venv });
      const r = exportGguf(python, checkpoint, out, { dtype: opts.dtype, force: true });
      console.log(JSON.stringify(r));
    });
}
