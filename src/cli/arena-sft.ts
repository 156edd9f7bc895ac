/** `ragtrail arena-sft`: ARENA's SFT baselines' data (process/arena-sft.ts) as TRL conversational JSONL. */
import type { Command } from 'commander';
import { InputError } from '../core/errors.js';
import { writeJsonl } from '../core/io.js';
import { createLLM, LLM_SPEC_HELP } from '../llm/create.js';
import { arenaSftExamples } from '../process/arena-sft.js';
import { choiceArg, intArg } from './options.js';
import { loadQuestions } from './setup.js';

interface ArenaSftOpts {
  dataset: string;
  mode: 'direct' | 'reasoning';
  out: string;
  traceLlm?: string;
  split?: string;
  limit?: number;
  sample?: number;
  sampleSeed?: number;
}

export function registerArenaSft(program: Command): void {
  program
    .command('arena-sft')
    .description("ARENA's SFT baselines' training data (appendix E): direct (references → answer) or reasoning (gold relevance, an analysis, the answer), as TRL conversational JSONL for `ragtrail train --engine trl --algo sft --data FILE`")
    .requiredOption('--dataset <file>', 'questions with their own paragraphs and supporting facts (HotpotQA, 2Wiki, MuSiQue layouts)')
    .requiredOption('--mode <mode>', 'direct or reasoning', choiceArg(['direct', 'reasoning'] as const))
    .requiredOption('--out <file>', 'the JSONL to write')
    .option('--trace-llm <spec>', `reasoning: the model that writes each analysis from the gold references and answer (default: a template from the references' own sentences): ${LLM_SPEC_HELP}`)
    .option('--split <name>', 'only questions of this split')
    .option('--limit <n>', 'first N questions', intArg(1))
    .option('--sample <n>', 'N questions at random (ARENA samples its training sets)', intArg(1))
    .option('--sample-seed <n>', 'seed of --sample', intArg(0))
    .action(async (o: ArenaSftOpts) => {
      if (o.traceLlm && o.mode !== 'reasoning') throw new InputError('--trace-llm writes the reasoning mode\'s analyses', 'drop it, or use --mode reasoning');
      const questions = await loadQuestions(o.dataset, o);
      const traceWriter = o.traceLlm ? await createLLM(o.traceLlm) : undefined;
      const r = await arenaSftExamples(questions, o.mode, traceWriter ? { traceWriter } : {});
      await traceWriter?.close?.();
      if (r.examples.length === 0) throw new InputError(`${o.dataset}: no question gave an example (${r.skipped[0]?.why ?? 'none read'})`, 'ARENA\'s data needs questions with their own paragraphs and supporting facts (HotpotQA, 2Wiki, MuSiQue)');
      await writeJsonl(o.out, r.examples);
      const reasons = [...new Set(r.skipped.map((s) => s.why))];
      console.log(`${r.examples.length} ${o.mode} examples → ${o.out}${r.skipped.length ? `; ${r.skipped.length} questions skipped (${reasons.join('; ')})` : ''}`);
    });
}
