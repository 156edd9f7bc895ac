import { resolve } from 'node:path';
import type { Command } from 'commander';
import { mergeShards } from '../pipelines/merge.js';

export function registerMerge(program: Command): void {
  program
    .command('merge')
    .description('join the --out folders of a sharded run, annotate or eval (--shard i/n) into the folder one process would have written')
    .argument('<shards...>', 'the shard folders, all n of them')
    .requiredOption('--out <dir>', 'the merged folder (new or empty)')
    .action(async (shards: string[], opts: { out: string }) => {
      const r = await mergeShards(shards.map((s) => resolve(s)), resolve(opts.out), (m) => console.error(m));
      const what = r.kind === 'annotation' ? 'trees' : 'trajectories';
      console.log(`merged ${r.shards} ${r.kind} shards: ${r.records} ${what} → ${opts.out}`);
      if (r.stats) console.log(`${r.stats.pairs} step pairs from ${r.stats.questions} questions (derived with the annotate defaults for ${r.stats.method}; re-run the annotate command without --shard on ${opts.out} to derive with other flags)`);
      if (r.results) console.log(`${r.results.cells.length} cells → results.json, results.md, report.html`);
    });
}
