import { type Command, InvalidArgumentError, Option } from 'commander';
import { QUESTION_TYPES, type QuestionMix } from '../corpus/world/index.js';
import { LLM_LOOP_DEFAULTS, type LlmLoopOptions, runLlmLoop } from '../pipelines/llm-loop.js';
import { PRM_INPUTS } from '../prm/remote.js';
import { choiceArg, intArg, numberArg } from './options.js';
import { resultsTable } from './table.js';

/** The command's flags: the loop's options with the model's size flattened into --hidden, --layers, --heads, --vocab. */
type LoopOpts = Omit<LlmLoopOptions, 'model' | 'log' | 'mix'> & LlmLoopOptions['model'] & { questionTypes: QuestionMix };

/** `single-hop,compositional` → equal weights on those types, 0 on the others. */
function questionTypes(value: string): QuestionMix {
  const names = value.split(',').map((t) => t.trim()).filter(Boolean);
  const unknown = names.filter((t) => !(QUESTION_TYPES as readonly string[]).includes(t));
  if (names.length === 0 || unknown.length > 0) throw new InvalidArgumentError(`expected a comma-separated list of ${QUESTION_TYPES.join(', ')}; got "${value}".`);
  const mix = {} as QuestionMix;
  for (const t of QUESTION_TYPES) mix[t] = names.includes(t) ? 1 : 0;
  return mix;
}

export function registerLlmLoop(program: Command): void {
  const d = LLM_LOOP_DEFAULTS;
  program
    .command('llm-loop')
    .description('the whole method with a real tiny transformer, offline on CPU: demonstrations → TRL SFT → transformers serve → agent eval → MCTS+SPRE annotation with the served model → TRL step-DPO, GRPO (rewards from serve-env) and PRM → every variant served and evaluated → report.html (needs Python; resumable)')
    .option('--out <dir>', 'output folder; a second run with the same folder resumes and skips finished stages', 'ragtrail-llm-loop')
    .option('--entities <n>', 'entities of the synthetic world', intArg(200, 1_000_000), d.entities)
    .option('--questions <n>', 'questions generated about the world (80% train, 10% dev, 10% test)', intArg(10, 100_000), d.questions)
    .option('--budget <n>', 'training questions annotated with MCTS, and the same questions for GRPO', intArg(1), d.budget)
    .option('--test-questions <n>', 'held-out questions evaluated (default: the whole split)', intArg(1))
    .option('--eval-split <split>', 'held-out split evaluated: test (the reported table) or dev (to choose settings without looking at the test questions)', choiceArg(['test', 'dev'] as const), d.evalSplit)
    .addOption(
      new Option('--question-types <list>', `question types of the world, comma-separated (${QUESTION_TYPES.join(', ')})`)
        .argParser(questionTypes)
        .default(d.mix, QUESTION_TYPES.filter((t) => d.mix[t] > 0).join(',')),
    )
    .option('--top-k <n>', 'documents per search', intArg(1, 20), d.topK)
    .option('--max-turns <n>', 'turns per episode', intArg(1, 20), d.maxTurns)
    .option('--hidden <n>', 'width of the tiny transformer', intArg(16, 4096), d.model.hidden)
    .option('--layers <n>', 'layers of the tiny transformer', intArg(1, 64), d.model.layers)
    .option('--heads <n>', 'attention heads', intArg(1, 64), d.model.heads)
    .option('--vocab <n>', 'BPE vocabulary learned on the world', intArg(300, 100_000), d.model.vocab)
    .option('--warmup-epochs <n>', 'epochs over the copy warm-up (each passage repeated) before SFT', intArg(1, 100), d.warmupEpochs)
    .option('--quote-epochs <n>', 'epochs over the quote warm-up (search results, each sentence quoted in random order) after the copy warm-up; 0 skips it', intArg(0, 100), d.quoteEpochs)
    .option('--sft-epochs <n>', 'SFT epochs over the demonstrations', intArg(1, 100), d.sftEpochs)
    .option('--direct-epochs <n>', 'epochs of the no-retrieval baseline (question → answer pairs only)', intArg(1, 100), d.directEpochs)
    .option('--simulations <n>', 'MCTS simulations per question', intArg(1, 1000), d.simulations)
    .option('--rollouts <n>', 'SPRE rollouts per expanded node', intArg(1, 64), d.rollouts)
    .option('--children <n>', 'steps sampled per expanded MCTS node', intArg(1, 16), d.children)
    .option('--mcts-temperature <t>', 'temperature of the steps MCTS samples as candidates', numberArg(0, 10), d.mctsTemperature)
    .option('--rollout-temperature <t>', 'temperature of the SPRE rollouts that value each node', numberArg(0, 10), d.rolloutTemperature)
    .option('--dpo-epochs <n>', 'step-DPO epochs over the pairs', intArg(1, 100), d.dpoEpochs)
    .option('--dpo-beta <x>', 'β of step-DPO (ReasonRAG Eq. 3; ReasonRAG\'s code: 0.3)', numberArg(0.001, 100), d.dpoBeta)
    .option('--dpo-lr <x>', 'learning rate of step-DPO', numberArg(1e-8, 1), d.dpoLr)
    .option('--grpo-steps <n>', 'GRPO optimizer steps (2 questions × 4 rollouts each)', intArg(1, 100_000), d.grpoSteps)
    .option('--prm-epochs <n>', 'PRM epochs over the pairs', intArg(1, 100), d.prmEpochs)
    .option('--n <n>', 'candidates per step for PRM best-of-N', intArg(2, 64), d.n)
    .option('--prm-temperature <t>', 'sampling temperature of the candidates of PRM best-of-N (RAG-Gym: 1.0)', numberArg(0, 10), d.prmTemperature)
    .option('--prm-input <what>', 'what the PRM reads of the state in training and at inference: steps (a summary of each step) or evidence (each step\'s text and the documents found)', choiceArg(PRM_INPUTS), d.prmInput)
    .option('--seed <n>', 'seed of the world, the initial weights and the samples', intArg(0), d.seed)
    .option('--venv <dir>', 'Python venv for TRL (default $RAGTRAIL_VENV or ~/.cache/ragtrail/trl-venv; created on first use)')
    .option('--serve <how>', 'how policy checkpoints are run for evaluation and annotation: transformers (`transformers serve`) or llama (exported to GGUF, run by node-llama-cpp in-process; see `ragtrail export-gguf`)', choiceArg(['transformers', 'llama'] as const), 'transformers')
    .option('--servers <n>', 'transformers serve processes per served checkpoint, requests spread least-loaded first (default: one per CPU core, at most 8)', intArg(1, 64))
    .option('--base-cache <dir>', 'where warmed-up bases are cached and reused by later runs of the same world and model (default $RAGTRAIL_CACHE/llm-loop-bases or ~/.cache/ragtrail/llm-loop-bases)')
    .option('--no-base-cache', 'build the warm-ups in the output folder only, neither reusing nor storing a cached base')
    .action(async (opts: LoopOpts) => {
      const options: Partial<LlmLoopOptions> & { out: string } = {
        ...opts, mix: opts.questionTypes, model: { hidden: opts.hidden, layers: opts.layers, heads: opts.heads, vocab: opts.vocab }, log: (l) => console.error(l),
      };
      const r = await runLlmLoop(options);
      console.log('');
      console.log(resultsTable(r.results.cells, 'SFT', { format: true }));
      console.log(`\n${r.results.cells[0]?.n ?? 0} held-out test questions; this invocation took ${r.seconds.toFixed(0)} s`);
      console.log(`report: ${r.report}`);
    });
}
