import type { Command } from 'commander';
import { protocolNames } from '../agents/registry.js';
import { DEMO_DEFAULTS, type DemoOptions, runDemo } from '../pipelines/demo.js';
import { LLM_SPEC_HELP } from '../llm/create.js';
import { choiceArg, intArg } from './options.js';
import { resultsTable } from './table.js';

type DemoOpts = Omit<DemoOptions, 'llmOptions' | 'log'> & { apiKey?: string };

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('the whole loop offline (the comparison recipe on one seed; about 5 minutes of one core): synthetic world → index → MCTS+SPRE annotation → step-DPO vs GRPO (same questions) → PRM → PRM best-of-N → evaluation, report.html and results.json')
    .option('--out <dir>', 'output folder (a rerun with the same settings keeps every finished stage)', 'ragtrail-demo')
    .option('--entities <n>', 'entities of the synthetic world', intArg(200, 10_000_000), DEMO_DEFAULTS.entities)
    .option('--train-questions <n>', 'training questions: the budget of both learners', intArg(1), DEMO_DEFAULTS.trainQuestions)
    .option('--test-questions <n>', 'test questions evaluated (default: the whole test split)', intArg(1))
    .option('--simulations <n>', 'MCTS simulations per question', intArg(1, 10_000), DEMO_DEFAULTS.simulations)
    .option('--grpo-epochs <n>', 'GRPO passes over the training questions', intArg(1, 1000), DEMO_DEFAULTS.grpoEpochs)
    .option('--n <n>', 'candidates per step for PRM best-of-N', intArg(1, 1000), DEMO_DEFAULTS.n)
    .option('--seed <n>', 'seed of the world and of every sample', intArg(0), DEMO_DEFAULTS.seed)
    .option('--agent <name>', `protocol: ${protocolNames().join(', ')}`, choiceArg(protocolNames), DEMO_DEFAULTS.agent)
    .option('--llm <spec>', `use a real LLM as the policy (training then goes to TRL): ${LLM_SPEC_HELP}`)
    .option('--api-key <key>', 'API key for --llm (default: $OPENAI_API_KEY)')
    .action(async (opts: DemoOpts) => {
      const r = await runDemo({ ...opts, llmOptions: { apiKey: opts.apiKey }, log: (l) => console.error(l) });
      const cells = r.seeds[0]!.results.cells;
      console.log('');
      console.log(resultsTable(cells, 'base'));
      console.log('');
      for (const c of r.claims) console.log(`${c.holds ? 'holds' : 'does not hold'}: ${c.claim} — EM Δ ${c.delta >= 0 ? '+' : ''}${c.delta.toFixed(3)} [${c.ci[0].toFixed(3)}, ${c.ci[1].toFixed(3)}], p ${c.p.toFixed(3)} (one seed; \`ragtrail pipeline --recipe comparison\` runs three)`);
      if (!opts.llm) console.log('note: every policy here is the gym policy, a small non-LLM model over generated candidate actions; the numbers measure the pipeline, not a language model');
      console.log(`${cells[0]?.n ?? 0} held-out test questions; done in ${r.seconds.toFixed(0)} s`);
      console.log(`report: ${opts.out}/report.html\nresults: ${opts.out}/results.json`);
    });
}
