import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import type { Question } from '../core/types.js';
import { loadDataset } from '../corpus/dataset.js';
import { readTrajectoriesEach } from '../eval/trajectories.js';
import { createLLM, LLM_SPEC_HELP } from '../llm/create.js';
import { createEmbedder, EMBEDDER_SPEC_HELP } from '../retrieval/embedders/embedder.js';
import { InputError, RagtrailError, recordFailures } from '../core/errors.js';
import { addToSums, applyRewardsEach, protocolMismatch, type RewardRecord, scoreTexts, writeRewards } from '../rewards/apply.js';
import { Judge } from '../rewards/judge.js';
import { composeScheme, rewardSchemes } from '../rewards/schemes.js';
import { collect } from './options.js';
import { fixed, formatTable } from './table.js';

interface RewardOpts {
  scheme: string;
  texts?: string;
  agent?: string;
  option: string[];
  out?: string;
  dataset?: string;
  judgeLlm?: string;
  embedder: string;
  apiKey?: string;
  cacheDir: string;
}

const schemeHelp = () => rewardSchemes.values()
  .map((s) => `  ${s.name}: ${s.components.join(', ')}${Object.keys(s.defaults).length ? ` (options: ${Object.entries(s.defaults).map(([k, v]) => `${k}=${v}`).join(', ')})` : ''}\n      ${s.description}`)
  .join('\n');

export function registerReward(program: Command): void {
  program
    .command('reward')
    .description('score each trajectory of a run, or each line of an episode-text file (--texts), with a reward scheme of the papers; writes {id, total, components} per line and prints means')
    .argument('[run]', 'run folder or its trajectories.jsonl (native or imported); or use --texts')
    .option('--texts <file>', 'JSON Lines of {id, question, golden_answers, response, prompt?, references?, gold_reference_ids?, step?, answer?}: rollouts from verl, TRL or anywhere (response = the whole episode text)')
    .option('--agent <name>', "with --texts: the protocol whose parser reads the texts (default: the scheme's own, e.g. search-r1 for lws-*)")
    .requiredOption('--scheme <expr>', 'a scheme, or a weighted sum such as 0.5*f1+lws-stage1')
    .option('--option <k=v>', 'scheme option (repeatable); scheme.k=v for one term of a sum', collect, [])
    .option('--out <file>', 'where to write the rewards (default: RUN/rewards.<scheme>.jsonl)')
    .option('--dataset <file>', 'questions, for supporting passages that the trajectories do not carry (imported runs)')
    .option('--judge-llm <spec>', `judge model for "judge" and correct=judge: ${LLM_SPEC_HELP}`)
    .option('--embedder <spec>', `query embedder for the LWS search reward: ${EMBEDDER_SPEC_HELP}`, 'hash:512')
    .option('--api-key <key>', 'API key for the judge or embedder (default: $OPENAI_API_KEY)')
    .option('--cache-dir <dir>', 'response cache for the judge', '.ragtrail-cache')
    .addHelpText('after', `\nSchemes and their components:\n${schemeHelp()}`)
    .action(async (run: string | undefined, opts: RewardOpts) => {
      const scheme = composeScheme(opts.scheme, opts.option);
      if ((run === undefined) === (opts.texts === undefined)) throw new InputError(run === undefined ? 'nothing to score' : 'give a run folder or --texts, not both', 'ragtrail reward RUN --scheme S, or ragtrail reward --texts FILE.jsonl --scheme S --out OUT.jsonl');
      if (opts.texts !== undefined && !opts.out) throw new InputError('--texts needs --out', 'e.g. --out rewards.jsonl');
      if (opts.texts === undefined && opts.agent) throw new InputError('--agent applies to --texts only', 'a run folder records its own protocol');
      const judgeLlm = opts.judgeLlm ? await createLLM(opts.judgeLlm, { apiKey: opts.apiKey, cacheDir: opts.cacheDir }) : undefined;
      const common = { embedder: await createEmbedder(opts.embedder, { apiKey: opts.apiKey }), judge: judgeLlm ? new Judge(judgeLlm) : undefined };
      // Means of the total and of each component, printed as one table row.
      const printMeans = (count: number, sums: Record<string, number>) => {
        const n = count || 1;
        console.log(formatTable(['', 'total', ...scheme.components], [['mean', fixed((sums['total'] ?? 0) / n), ...scheme.components.map((c) => fixed((sums[c] ?? 0) / n))]]));
      };
      let failed: RagtrailError | undefined;
      if (opts.texts !== undefined) {
        const { count, errors, sums } = await scoreTexts(opts.texts, opts.out!, scheme, { ...common, agent: opts.agent });
        console.log(`${opts.scheme} over ${count} texts of ${opts.texts} → ${opts.out}${errors ? ` (and ${errors} error record${errors === 1 ? '' : 's'})` : ''}`);
        printMeans(count, sums);
        // Exit status 1 says some lines failed; each is an {id, error} line of the output, the others are scored.
        if (errors > 0) failed = new RagtrailError(`${errors} of ${count + errors} lines could not be scored: each is an {"id", "error"} line in ${opts.out}`, 'the error says what to fix in that line; the other lines are scored');
      } else {
        const items = [];
        for await (const item of readTrajectoriesEach(run!)) items.push(item);
        const trajectories = items.flatMap((i) => ('trajectory' in i ? [i.trajectory] : []));
        let questions: Map<string, Question> | undefined;
        if (opts.dataset) {
          questions = new Map();
          for await (const q of loadDataset(opts.dataset)) questions.set(q.id, q);
        }
        const mismatch = protocolMismatch(scheme, trajectories.map((t) => t.agent));
        if (mismatch) console.error(`warning: ${mismatch}`);
        const records = await applyRewardsEach(items, scheme, { ...common, questions });
        const dir = existsSync(run!) && statSync(run!).isDirectory() ? run! : join(run!, '..');
        const out = opts.out ?? join(dir, `rewards.${opts.scheme.replace(/[^a-z0-9.-]+/gi, '_')}.jsonl`);
        writeRewards(out, records);
        const sums: Record<string, number> = {};
        const scored = records.filter((r): r is RewardRecord => !('error' in r));
        for (const r of scored) addToSums(sums, r);
        const errors = records.length - scored.length;
        console.log(`${opts.scheme} over ${scored.length} trajectories of ${run} → ${out}${errors ? ` (and ${errors} error record${errors === 1 ? '' : 's'})` : ''}`);
        printMeans(scored.length, sums);
        // As with --texts: a line that could not be scored is an {id, error} line of the output; exit status 1.
        failed = recordFailures(errors, records.length, out);
      }
      if (judgeLlm) console.log(`judge: ${judgeLlm.totals.requests} requests (${judgeLlm.totals.cachedRequests} from cache)`);
      if (failed) throw failed;
    });
}
