import type { Command } from 'commander';
import { type ErrorRecord, type InputError, recordFailures } from '../core/errors.js';
import { DATASET_FORMATS, type DatasetFormat, loadDatasetAll } from '../corpus/dataset.js';
import { loadPredictions, questionsFromRun } from '../eval/predictions.js';
import { ANSWER_METRICS, comparePaired, scorePredictions } from '../eval/score.js';
import { reportErrorRecords } from './error-records.js';
import { choiceArg, DATASET_FLAGS, intArg, seedArg } from './options.js';
import { fixed, formatTable } from './table.js';

interface ScoreOpts {
  dataset?: string;
  predictions: string;
  baseline?: string;
  json: boolean;
  datasetFormat?: DatasetFormat;
  skipInvalid: boolean;
  underscoreToSpace: boolean;
  resamples: number;
  seed: number | string;
}

const LABEL = { em: 'EM', f1: 'F1', acc: 'Acc' } as const;

export function registerScore(program: Command): void {
  program
    .command('score')
    .description('score predictions against a dataset with EM, F1 and Acc (SQuAD/HotpotQA/FlashRAG definitions), with 95% bootstrap CIs')
    .option('--dataset <file>', 'dataset file in any supported layout (optional for a ragtrail run, whose trajectories carry the gold answers)')
    .requiredOption('--predictions <file>', 'JSON Lines {id, prediction}, HotpotQA {"answer": {id: text}}, FlashRAG intermediate_data.json, or a ragtrail run folder')
    .option('--baseline <file>', 'a second prediction file: print paired t-tests and paired bootstrap of predictions − baseline')
    .option('--json', 'print exactly one JSON object {"n","em","f1","acc"} to stdout', false)
    .option('--dataset-format <format>', `dataset layout (default: detected): ${DATASET_FORMATS.join(', ')}`, choiceArg(DATASET_FORMATS))
    .option('--skip-invalid', 'skip dataset records that do not parse or lack fields', false)
    .option('--underscore-to-space', "normalise '_' to a space first (ARENA's variant)", false)
    .option('--resamples <n>', 'bootstrap resamples', intArg(100, 1_000_000), 1000)
    .option('--seed <seed>', 'bootstrap seed', seedArg, 0)
    .action(async (opts: ScoreOpts) => {
      const invalid: InputError[] = [];
      // A prediction record that cannot be read is an error record (on stderr, as JSON), not the end of the others.
      const errors: ErrorRecord[] = [];
      const questions = opts.dataset
        ? (await loadDatasetAll(opts.dataset, { format: opts.datasetFormat, skipInvalid: opts.skipInvalid, onInvalid: (e) => invalid.push(e), flags: DATASET_FLAGS })).questions
        : await questionsFromRun(opts.predictions, errors);
      const preds = await loadPredictions(opts.predictions, errors);
      const baseErrors: ErrorRecord[] = [];
      const baseline = opts.baseline ? await loadPredictions(opts.baseline, baseErrors) : undefined;
      reportErrorRecords(errors);
      reportErrorRecords(baseErrors, 'error record (baseline)');
      const failed = recordFailures(errors.length + baseErrors.length, undefined, 'the error records above (stderr)');
      const settings = { underscoreToSpace: opts.underscoreToSpace, resamples: opts.resamples, seed: opts.seed };
      const report = scorePredictions(questions, preds, settings);
      const warn = (msg: string) => console.error(`warning: ${msg}`);
      if (invalid.length > 0) warn(`skipped ${invalid.length} invalid dataset record(s); first: ${invalid[0]?.message}`);
      if (report.missing.length > 0) {
        warn(`${report.missing.length} question(s) of the dataset have no prediction and score 0 (e.g. ${report.missing.slice(0, 3).join(', ')})`);
      }
      if (report.unknown.length > 0) {
        warn(`${report.unknown.length} prediction id(s) are not in the dataset and were ignored (e.g. ${report.unknown.slice(0, 3).join(', ')})`);
      }
      if (opts.json) {
        console.log(JSON.stringify({ n: report.n, em: report.means.em, f1: report.means.f1, acc: report.means.acc }));
        if (failed) throw failed;
        return;
      }
      console.log(`${opts.predictions} on ${opts.dataset ?? 'its own gold answers'}: ${report.n} questions, ${report.n - report.missing.length} predicted`);
      console.log('');
      console.log(formatTable(['metric', 'mean', '95% CI low', '95% CI high'], ANSWER_METRICS.map((m) => [LABEL[m], fixed(report.ci[m].mean), fixed(report.ci[m].low), fixed(report.ci[m].high)])));
      if (opts.baseline && baseline) {
        const base = scorePredictions(questions, baseline, settings);
        console.log('');
        console.log(`paired against ${opts.baseline} (difference = predictions − baseline):`);
        console.log(formatTable(
          ['metric', 'baseline', 'diff', 't', 'p (t-test)', 'boot CI low', 'boot CI high', 'p (bootstrap)'],
          comparePaired(report, base, settings).map((c) => [
            LABEL[c.metric], fixed(base.means[c.metric]), fixed(c.tTest.meanDiff), fixed(c.tTest.t, 3), fixed(c.tTest.p), fixed(c.bootstrap.low), fixed(c.bootstrap.high), fixed(c.bootstrap.p),
          ]),
        ));
      }
      if (failed) throw failed;
    });
}
