/** `ragtrail sweep`: one setting over a list of values, each evaluated with its CI, and the curve (eval/sweep.ts). */
import { cpSync, existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../core/errors.js';
import { readEvalConfig } from '../eval/harness.js';
import { EVAL_SWEEPS, type EvalSweep, parseValues, pointDir, recipePoints, setRecipePath, type SweepPoint, sweepEval, writeSweep } from '../eval/sweep.js';
import { runPipeline } from '../pipelines/pipeline.js';
import { loadRecipe, parseRecipe } from '../pipelines/recipe.js';
import { collect, intArg } from './options.js';
import { seedList } from './pipeline.js';

interface SweepOpts {
  config?: string;
  recipe?: string;
  vary: string;
  values: string;
  system: string[];
  out?: string;
  seeds?: string;
  entities?: number;
  trainQuestions?: number;
  testQuestions?: number;
  jobs?: number;
}

export function registerSweep(program: Command): void {
  program
    .command('sweep')
    .description('vary one setting over a list of values, evaluate every point with its CI, and draw the curve (sweep.json, sweep.md, sweep.html)')
    .option('--config <file>', `an eval config: --vary one of ${Object.keys(EVAL_SWEEPS).join(', ')}, set on its systems`)
    .option('--recipe <name|file>', 'a pipeline recipe: --vary a dotted path into it (stages.ID.… picks a stage), e.g. stages.prm.settings.trainPairs')
    .requiredOption('--vary <setting>', 'the setting varied (see --config and --recipe)')
    .requiredOption('--values <list>', 'its values, comma-separated, e.g. 1,3,5,10')
    .option('--system <name>', '--config: only this system (repeatable; default: all)', collect, [])
    .option('--out <dir>', 'output folder (default: sweep-SETTING); each value runs in OUT/SETTING=VALUE, kept and resumed')
    .option('--seeds <list>', "--recipe: seeds (default: the recipe's)")
    .option('--entities <n>', "--recipe: entities of the synthetic world (default: the recipe's)", intArg(200, 10_000_000))
    .option('--train-questions <n>', "--recipe: training questions (default: the recipe's)", intArg(1))
    .option('--test-questions <n>', "--recipe: test questions (default: the recipe's)", intArg(1))
    .option('--jobs <n>', '--recipe: seeds run at once (default: the number of cores)', intArg(1, 1024))
    .action(async (o: SweepOpts) => {
      if (!o.config === !o.recipe) throw new InputError('give exactly one of --config FILE (an eval sweep) or --recipe NAME|FILE (a pipeline sweep)', 'see `ragtrail sweep --help`');
      const values = parseValues(o.values);
      const out = resolve(o.out ?? `sweep-${o.vary.replace(/[^a-zA-Z0-9-]+/g, '_')}`);
      const log = (l: string) => console.error(l);
      let result;
      if (o.config) {
        if (!(o.vary in EVAL_SWEEPS)) throw new InputError(`--vary ${o.vary}: an eval sweep varies one of ${Object.keys(EVAL_SWEEPS).join(', ')}`, 'or sweep a recipe setting with --recipe');
        const t0 = performance.now();
        result = await sweepEval(readEvalConfig(o.config), o.vary as EvalSweep, values, { out, systems: o.system, log });
        result.seconds = (performance.now() - t0) / 1000;
      } else {
        if (o.system.length) throw new InputError('--system belongs to --config sweeps', "a recipe sweep evaluates the recipe's systems");
        const { recipe, path } = loadRecipe(o.recipe!);
        const t0 = performance.now();
        const points: SweepPoint[] = [];
        for (const value of values) {
          // Through the recipe parser again, so that a value the recipe cannot take is refused before any run.
          const varied = parseRecipe(JSON.stringify(setRecipePath(recipe, o.vary, value)), `${path} with ${o.vary} = ${value}`);
          const dir = pointDir(out, o.vary, value);
          const previous = points.length ? pointDir(out, o.vary, values[values.indexOf(value) - 1]!) : undefined;
          // Seeded from the previous value's folder: the stages before the varied one are the same and are kept.
          if (previous && !existsSync(dir)) cpSync(previous, dir, { recursive: true });
          log(`${o.vary} = ${value}: the pipeline${previous ? ` (the stages before the varied one kept from ${o.vary} = ${values[values.indexOf(value) - 1]})` : ''}`);
          const r = await runPipeline({
            recipe: varied, recipePath: path, out: dir, log,
            ...(o.seeds !== undefined && { seeds: seedList(o.seeds) }),
            ...(o.entities !== undefined && { entities: o.entities }),
            ...(o.trainQuestions !== undefined && { trainQuestions: o.trainQuestions }),
            ...(o.testQuestions !== undefined && { testQuestions: o.testQuestions }),
            jobs: o.jobs ?? availableParallelism(),
          });
          points.push(...recipePoints(value, r.seeds.map((s) => ({ cells: s.results.cells }))));
        }
        const seeds = Math.max(...points.map((p) => p.seeds));
        result = { kind: 'recipe' as const, vary: o.vary, values, points, whiskers: seeds > 1 ? `the range over ${seeds} seeds (the point: their mean)` : "the point's 95% bootstrap CI over the test questions", seconds: (performance.now() - t0) / 1000 };
      }
      writeSweep(out, result);
      for (const p of result.points) console.log(`${o.vary} = ${p.value}\t${p.system}\t${p.dataset}\tEM ${p.em.mean.toFixed(3)} [${p.em.low.toFixed(3)}, ${p.em.high.toFixed(3)}]\tRC ${p.rc.toFixed(2)}`);
      console.log(`done in ${result.seconds.toFixed(0)} s: ${out}/sweep.json, sweep.md, sweep.html`);
    });
}
