/** `ragtrail table`: a paper's main table as an evaluation (eval/paper-tables.ts, recipes/tables/*.yaml). */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../core/errors.js';
import { runEval } from '../eval/harness.js';
import { buildTableEval, loadPaperTable, paperTableNames } from '../eval/paper-tables.js';
import { LLM_SPEC_HELP } from '../llm/create.js';
import { PRM_SPEC_HELP } from '../prm/select.js';
import { collect, intArg } from './options.js';
import { formatTable } from './table.js';

interface TableOpts {
  recipe: string;
  list: boolean;
  llm?: string;
  data?: string;
  index?: string;
  out?: string;
  model: string[];
  aux: string[];
  prm?: string;
  limit?: number;
}

export function registerPaperTable(program: Command): void {
  program
    .command('table')
    .description("a paper's main table as an evaluation: its baselines on its backbone model, released checkpoints you serve, over its benchmarks (recipes/tables/*.yaml)")
    .requiredOption('--recipe <name|file>', `the table: ${paperTableNames().join(', ')}, or a YAML file`)
    .option('--list', 'list the rows: what runs with --llm, what needs a checkpoint, what is not implemented yet', false)
    .option('--llm <spec>', `the backbone model of the prompt-based rows: ${LLM_SPEC_HELP}`)
    .option('--data <dir>', 'the folder `ragtrail download` wrote the benchmarks to')
    .option('--index <dir|url>', 'the index the agents search (the paper\'s corpus)')
    .option('--out <dir>', 'output folder (runs resume)')
    .option('--model <name=spec>', 'a served checkpoint for a row that needs one, e.g. "Search-R1=openai:http://127.0.0.1:8001/v1#SearchR1" (repeatable)', collect, [])
    .option('--aux <name=spec>', "a row's second model, where the paper used one (RECOMP's compressor, LongLLMLingua's and Selective-Context's scorer, Adaptive-RAG's classifier); without it the row's own model does that work (repeatable)", collect, [])
    .option('--prm <spec>', `the reward model of rows that select by one: ${PRM_SPEC_HELP}`)
    .option('--limit <n>', "at most N questions per benchmark (a quick look; default: the paper's selection)", intArg(1))
    .action(async (o: TableOpts) => {
      const { table } = loadPaperTable(o.recipe);
      if (o.list) {
        console.log(`${table.paper}, ${table.table}; backbone ${table.backbone}; benchmarks: ${table.datasets.map((d) => d.name).join(', ')}`);
        console.log(formatTable(['row', 'agent', 'runs'], table.systems.map((s) => [s.name, s.agent ?? '–', s.missing ? `not yet: ${s.missing}` : `${s.checkpoint ? `with --model (${s.checkpoint})` : 'with --llm'}${s.aux ? `; --aux for its ${s.aux}` : ''}`])));
        console.log(`offline: ${table.offline}`);
        return;
      }
      if (!o.llm || !o.data || !o.index || !o.out) throw new InputError('ragtrail table needs --llm, --data, --index and --out (or --list)', `e.g. ragtrail table --recipe ${table.name} --llm openai:http://127.0.0.1:8000/v1#${table.backbone} --data data --index wiki18-index --out table-${table.name}`);
      const byRow = (flag: string, values: string[], example: string) => {
        const out: Record<string, string> = {};
        for (const m of values) {
          const eq = m.indexOf('=');
          if (eq <= 0) throw new InputError(`${flag} "${m}": expected NAME=SPEC`, `e.g. ${flag} "${example}"`);
          out[m.slice(0, eq)] = m.slice(eq + 1);
        }
        return out;
      };
      const models = byRow('--model', o.model, 'Search-R1=openai:http://127.0.0.1:8001/v1#SearchR1');
      const auxModels = byRow('--aux', o.aux, 'Selective-Context=openai:http://127.0.0.1:8002/v1#gpt2');
      const { config, notRun } = buildTableEval(table, { llm: o.llm, data: resolve(o.data), index: o.index, out: resolve(o.out), models, auxModels, ...(o.prm && { prm: o.prm }), ...(o.limit && { limit: o.limit }) });
      for (const r of notRun) console.error(`not run: ${r.name} — ${r.why}`);
      const t0 = performance.now();
      const results = await runEval(config);
      console.log(`${results.cells.length} cells of ${table.paper}'s ${table.table} in ${((performance.now() - t0) / 1000).toFixed(0)} s → ${config.out}/results.md, report.html${notRun.length ? `; ${notRun.length} rows not run (above)` : ''}`);
    });
}
