import type { Command } from 'commander';
import { type ErrorRecord, InputError, recordFailures } from '../core/errors.js';
import { reportErrorRecords } from './error-records.js';
import { EMBEDDER_SPEC_HELP } from '../retrieval/embedders/embedder.js';
import { evaluatePrm, readPrmPairs, TrainedPRM, trainPrm } from '../prm/trained.js';
import { createPrm, PRM_SPEC_HELP } from '../prm/select.js';
import { choiceArg, collect, intArg, numberArg } from './options.js';
import { writeJsonl } from '../core/io.js';
import { readTrajectories } from '../eval/trajectories.js';
import { outcomePairs } from '../prm/outcome.js';
import { fixed, formatTable } from './table.js';

interface TrainOpts {
  pairs: string;
  out: string;
  embedder: string;
  model: 'linear' | 'mlp';
  hidden: number;
  epochs: number;
  lr?: number;
  l2?: number;
  holdout: number;
  seed: number;
}

export function registerPrm(program: Command): void {
  const prm = program.command('prm').description('process reward models trained in TypeScript on mined pairs (Bradley–Terry)');
  prm
    .command('train')
    .description('train a PRM on prm_pairs.jsonl from `ragtrail annotate`; a share of questions is held out and scored')
    .requiredOption('--pairs <file>', 'prm_pairs.jsonl')
    .requiredOption('--out <file>', 'model file to write (JSON)')
    .option('--embedder <spec>', `embedder for the similarity features: ${EMBEDDER_SPEC_HELP}`, 'hash:512')
    .option('--model <kind>', 'linear or mlp (one tanh hidden layer)', choiceArg(['linear', 'mlp'] as const), 'linear')
    .option('--hidden <n>', 'MLP hidden units', intArg(1, 4096), 32)
    .option('--epochs <n>', 'passes over the pairs', intArg(1, 100_000), 30)
    .option('--lr <x>', 'Adam learning rate (default 0.01 linear, 0.003 MLP)', numberArg(1e-7, 10))
    .option('--l2 <x>', 'weight decay (default 1e-4 linear, 1e-3 MLP)', numberArg(0, 10))
    .option('--holdout <x>', 'share of questions held out for evaluation', numberArg(0, 0.9), 0.2)
    .option('--seed <n>', 'seed of the split, the initialisation and the batches', intArg(0), 0)
    .action(async (opts: TrainOpts) => {
      // A line that is not a pair is an error record (on stderr, as JSON); training uses the others, then exits 1.
      const errors: ErrorRecord[] = [];
      const pairs = await readPrmPairs(opts.pairs, errors);
      reportErrorRecords(errors);
      if (pairs.length === 0) throw new InputError(`${opts.pairs}: no pairs`, errors.length ? `none of its ${errors.length} lines is a pair` : 'annotate more questions first');
      const { prm, heldOut, initialLoss } = await trainPrm(pairs, { embedder: opts.embedder, kind: opts.model, hidden: opts.hidden, epochs: opts.epochs, lr: opts.lr, l2: opts.l2, holdout: opts.holdout, seed: opts.seed });
      prm.save(opts.out);
      const t = prm.saved.training;
      console.log(`trained a ${opts.model} PRM on ${t.pairs} pairs (${heldOut.length} held out) → ${opts.out}`);
      console.log(`Bradley–Terry loss: ${fixed(initialLoss)} at start (ln 2) → ${fixed(t.losses[t.losses.length - 1] ?? NaN)} after ${t.losses.length} epochs; train pair accuracy ${fixed(t.trainAccuracy)}`);
      if (heldOut.length) {
        const e = await prm.evaluate(heldOut);
        console.log(`held-out pair accuracy ${fixed(e.accuracy)} on ${e.n} pairs`);
        console.log(formatTable(['preferred type', 'pairs', 'accuracy'], Object.entries(e.by_type).map(([k, v]) => [k, v.n, fixed(v.accuracy)])));
      }
      const failed = recordFailures(errors.length, errors.length + pairs.length, 'the error records above (stderr)');
      if (failed) throw failed;
    });
  prm
    .command('outcome-pairs')
    .description("pairs for an outcome reward model (RAG-Gym's ORM): each question's right episodes' final answers preferred to its wrong ones', from several runs of the same questions (samples, seeds)")
    .requiredOption('--run <dir>', 'a run folder (`ragtrail run`, e.g. at --temperature 1 with another --seed); repeatable', collect, [])
    .requiredOption('--out <file>', 'outcome_pairs.jsonl to write (train with `ragtrail prm train --pairs`)')
    .option('--per-question <n>', 'pairs per question at most', intArg(1, 1000), 4)
    .option('--seed <n>', 'seed of the choice among more pairs', intArg(0), 0)
    .action(async (opts: { run: string[]; out: string; perQuestion: number; seed: number }) => {
      if (opts.run.length < 2) throw new InputError('prm outcome-pairs needs two or more --run folders of the same questions', 'run the system again with --temperature 1 and another --seed, and pass each folder with --run');
      const runs = await Promise.all(opts.run.map((d) => readTrajectories(d)));
      const r = outcomePairs(runs, { perQuestion: opts.perQuestion, seed: opts.seed });
      await writeJsonl(opts.out, r.pairs);
      console.log(`${r.pairs.length} outcome pairs from ${r.paired} questions with a right and a wrong episode (${r.oneSided} questions all right or all wrong) → ${opts.out}`);
    });
  prm
    .command('eval')
    .description('pair accuracy of a PRM: the share of pairs where it scores the preferred side higher')
    .option('--model <file>', 'model file from `ragtrail prm train`')
    .option('--prm <spec>', `any PRM instead: ${PRM_SPEC_HELP} (e.g. a TRL-trained PRM behind python -m ragtrail_trl.serve_prm)`)
    .requiredOption('--pairs <file>', 'prm_pairs.jsonl (e.g. from another split)')
    .option('--json', 'print one JSON object {n, accuracy, by_type}', false)
    .action(async (opts: { model?: string; prm?: string; pairs: string; json: boolean }) => {
      if ((opts.model === undefined) === (opts.prm === undefined)) throw new InputError('prm eval needs --model FILE or --prm SPEC (one of them)', 'e.g. --model prm.json, or --prm remote:vllm-pooling:http://127.0.0.1:8090/pooling');
      // The PRM first: a damaged model file is the error to report, whatever the pairs.
      const trained = opts.model !== undefined ? await TrainedPRM.load(opts.model) : undefined;
      const other = trained ? undefined : await createPrm(opts.prm!);
      const errors: ErrorRecord[] = [];
      const pairs = await readPrmPairs(opts.pairs, errors);
      reportErrorRecords(errors);
      const e = trained ? await trained.evaluate(pairs) : await evaluatePrm(other!, pairs);
      opts.model ??= opts.prm!;
      const failed = recordFailures(errors.length, errors.length + pairs.length, 'the error records above (stderr)');
      if (opts.json) {
        console.log(JSON.stringify({ n: e.n, accuracy: e.accuracy, by_type: e.by_type }));
        if (failed) throw failed;
        return;
      }
      console.log(`${opts.model} on ${opts.pairs}: pair accuracy ${fixed(e.accuracy)} over ${e.n} pairs (mean BT loss ${fixed(e.loss)})`);
      console.log(formatTable(['preferred type', 'pairs', 'accuracy'], Object.entries(e.by_type).map(([k, v]) => [k, v.n, fixed(v.accuracy)])));
      if (failed) throw failed;
    });
}
