/**
 * A reward of your own, used by the CLI's `annotate` (as the MCTS rollouts' outcome score) and
 * `train` (as the gym RL reward). This one file is both the plugin (its default export registers the
 * scheme) and the script that runs the two commands with `--plugin` pointing at itself.
 *
 *   node custom-reward.js
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { definePlugin, exactMatch } from 'ragtrail';
import type { RewardScheme } from 'ragtrail/rewards';

/** Exact match, discounted by `decay` for every search after the first: right and thrifty scores most. */
const thriftyEm: RewardScheme = {
  name: 'thrifty-em',
  description: 'exact match × decay^(searches − 1): a correct answer found with fewer searches is worth more',
  components: ['em', 'searches'],
  defaults: { decay: 0.8 },
  compute(ctx, options) {
    const t = ctx.trajectory;
    const em = exactMatch(t.prediction, t.answers);
    const total = em * Number(options['decay']) ** Math.max(0, t.retrievalCount - 1);
    return { total, components: { em, searches: t.retrievalCount } };
  },
};

export default definePlugin((api) => api.registerRewardScheme(thriftyEm));

// Run as a script (not when the CLI imports this file as a plugin).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { smallWorld } = await import('./world.js');
  const w = await smallWorld();
  const cli = join(dirname(createRequire(import.meta.url).resolve('ragtrail/package.json')), 'dist', 'cli', 'main.js');
  const self = fileURLToPath(import.meta.url);
  const ragtrail = (...args: string[]) => execFileSync(process.execPath, [cli, '--plugin', self, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const common = ['--index', w.index, '--dataset', w.questionsFile, '--split', 'train', '--agent', 'search-r1', '--policy', 'sim'];

  ragtrail('annotate', ...common, '--limit', '6', '--method', 'mcts-spre', '--outcome', 'thrifty-em', '--out', join(w.dir, 'annotation'), '--quiet');
  const stats = JSON.parse(readFileSync(join(w.dir, 'annotation', 'stats.json'), 'utf8')) as { questions?: number; pairs?: number };
  console.log(`annotate --outcome thrifty-em: ${stats.pairs ?? '?'} step pairs from ${stats.questions ?? 6} questions`);

  const out = ragtrail('train', ...common.filter((a) => a !== 'sim' && a !== '--policy'), '--algo', 'grpo', '--reward', 'thrifty-em', '--option', 'decay=0.7', '--epochs', '1', '--policy-out', join(w.dir, 'policy.json'));
  console.log(`train --reward thrifty-em: ${out.split('\n').find((l) => l.startsWith('trained')) ?? out.trim()}`);
}
