import type { Command } from 'commander';
import { InputError } from '../core/errors.js';
import { corpusFromQuestions, CORPUS_FORMATS, type CorpusBuildStats, type CorpusFormat, writeCorpus } from '../corpus/corpus.js';
import { DATASET_FORMATS, type DatasetFormat, loadDataset } from '../corpus/dataset.js';
import type { Question } from '../core/types.js';
import { choiceArg, collect, DATASET_FLAGS } from './options.js';

export function registerCorpus(program: Command): void {
  program
    .command('corpus')
    .description('build a deduplicated passage corpus from the context paragraphs of datasets (HotpotQA, 2WikiMultihopQA, MuSiQue, ...)')
    .requiredOption('--dataset <file>', 'dataset file (repeat for several); .json, .jsonl or .gz', collect)
    .requiredOption('--out <file>', 'corpus file to write (.jsonl or .jsonl.gz)')
    .option('--format <format>', `output layout: ragtrail {id,title,text} or flashrag {id,contents}`, choiceArg(CORPUS_FORMATS), 'ragtrail')
    .option('--dataset-format <format>', `dataset layout (default: detected): ${DATASET_FORMATS.join(', ')}`, choiceArg(DATASET_FORMATS))
    .option('--skip-invalid', 'skip records that do not parse or lack fields, and report how many', false)
    .action(async (opts: { dataset: string[]; out: string; format: CorpusFormat; datasetFormat?: DatasetFormat; skipInvalid: boolean }) => {
      const invalid: InputError[] = [];
      async function* all(): AsyncGenerator<Question> {
        for (const path of opts.dataset) {
          yield* loadDataset(path, { format: opts.datasetFormat, skipInvalid: opts.skipInvalid, onInvalid: (e) => invalid.push(e), flags: DATASET_FLAGS });
        }
      }
      const stats: CorpusBuildStats = { questions: 0, seen: 0, passages: 0 };
      await writeCorpus(opts.out, corpusFromQuestions(all(), stats), opts.format);
      if (stats.seen === 0) {
        throw new InputError(`no context passages found in ${opts.dataset.join(', ')}`, 'corpus building needs datasets that ship contexts (HotpotQA, 2WikiMultihopQA, MuSiQue)');
      }
      console.log(`${stats.questions} questions, ${stats.seen} context passages, ${stats.passages} distinct → ${opts.out}`);
      if (invalid.length > 0) {
        console.error(`skipped ${invalid.length} invalid record(s); first: ${invalid[0]?.message}`);
      }
    });
}
