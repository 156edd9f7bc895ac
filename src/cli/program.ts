/**
 * The command tree of `ragtrail`: every subcommand with its flags, built without running anything, so
 * that `main` parses with it and tests can read it (the docs' commands are checked against it).
 */
import { Command } from 'commander';
import { registerAnnotate } from './annotate.js';
import { registerCorpus } from './corpus.js';
import { registerDemo } from './demo.js';
import { registerDownload } from './download.js';
import { registerLlmLoop } from './llm-loop.js';
import { registerExportGguf } from './export-gguf.js';
import { registerEval } from './eval.js';
import { registerImport } from './import.js';
import { registerIndex } from './index-cmd.js';
import { registerPipeline } from './pipeline.js';
import { registerPrm } from './prm.js';
import { registerReward } from './reward.js';
import { registerRun } from './run.js';
import { registerSearch } from './search.js';
import { registerServeEnv } from './serve-env.js';
import { registerServeRetriever } from './serve-retriever.js';
import { registerTrain } from './train.js';
import { registerScore } from './score.js';
import { registerWorld } from './world.js';
import { registerMerge } from './merge.js';
import { registerView } from './view.js';
import { registerSweep } from './sweep.js';
import { registerPaperTable } from './paper-table.js';
import { registerArenaSft } from './arena-sft.js';
import { collect } from './options.js';

export function buildProgram(): Command {
  const program = new Command('ragtrail')
    .description('agentic RAG with process-level rewards: environment, agents, process supervision, reward models, evaluation')
    .version('0.1.0')
    .exitOverride()
    .showSuggestionAfterError(true)
    .configureOutput({ outputError: (str, write) => write(`ragtrail: ${str.replace(/^error: /, '').trim()}\n`) })
    // Read (and loaded) in `main` before the program is built, so that every command's flags see the
    // plugin's names; declared here so that --help lists it and parsing accepts it.
    .option('--plugin <file>', 'an ES module that registers protocols, reward schemes, retrievers, LLM backends, PRMs or policies (repeatable; see docs/guides/plugins.md)', collect);
  registerDemo(program);
  registerLlmLoop(program);
  registerExportGguf(program);
  registerPipeline(program);
  registerWorld(program);
  registerCorpus(program);
  registerDownload(program);
  registerScore(program);
  registerIndex(program);
  registerSearch(program);
  registerServeRetriever(program);
  registerRun(program);
  registerImport(program);
  registerReward(program);
  registerAnnotate(program);
  registerPrm(program);
  registerEval(program);
  registerSweep(program);
  registerPaperTable(program);
  registerArenaSft(program);
  registerServeEnv(program);
  registerTrain(program);
  registerView(program);
  registerMerge(program);
  return program;
}
