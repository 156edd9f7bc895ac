import type { Command } from 'commander';
import { IMPORT_FORMATS, type ImportFormat, importRun } from '../eval/import.js';
import { readTrajectories, summarize } from '../eval/trajectories.js';
import { recordFailures } from '../core/errors.js';
import { choiceArg } from './options.js';
import { fixed, formatTable } from './table.js';

export function registerImport(program: Command): void {
  program
    .command('import')
    .description('turn a run made elsewhere into ragtrail trajectories (search-r1: FlashRAG / Search-R1 intermediate_data.json)')
    .argument('<file>', 'the result file')
    .option('--format <format>', `input format: ${IMPORT_FORMATS.join(', ')}`, choiceArg(IMPORT_FORMATS), 'search-r1')
    .requiredOption('--out <dir>', 'run folder to write (trajectories.jsonl, summary.json)')
    .action(async (file: string, opts: { format: ImportFormat; out: string }) => {
      const { imported, skipped, errors, errorsPath } = await importRun(opts.format, file, opts.out);
      const s = summarize(await readTrajectories(opts.out));
      console.log(`imported ${imported} trajectories (${skipped} already there) → ${opts.out}${errors ? `; ${errors} record${errors === 1 ? '' : 's'} could not be imported → ${errorsPath}` : ''}`);
      console.log(formatTable(['questions', 'EM', 'F1', 'Acc', 'RC', 'format fail'], [[s.questions, fixed(s.em), fixed(s.f1), fixed(s.acc), fixed(s.retrievalCount, 2), fixed(s.formatFailureRate, 3)]]));
      const failed = recordFailures(errors, imported + skipped + errors, errorsPath);
      if (failed) throw failed;
    });
}
