import { readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { InputError } from '../core/errors.js';
import { type QuestionSelection, selectionFromFlags } from '../corpus/select.js';
import { parseShard } from '../core/shard.js';
import { getProtocol } from '../agents/registry.js';
import { PROMPT_TEMPLATE_HELP, usePromptTemplate } from '../agents/prompt-template.js';
import { type EvalConfig, readEvalConfig, runEval } from '../eval/harness.js';
import { POLICY_SPEC_HELP } from '../agents/policies.js';
import type { SelectMethod } from '../eval/systems.js';
import { LLM_SPEC_HELP } from '../llm/create.js';
import { PRM_CANDIDATES, PRM_SPEC_HELP, type PrmCandidates } from '../prm/select.js';
import { type PrmInput, PRM_INPUTS } from '../prm/remote.js';
import { addRetryOption, choiceArg, collect, intArg, numberArg } from './options.js';
import { formatMs, type RetryWait, retryEvents } from '../core/http.js';
import { policyArg } from './setup.js';

interface EvalOpts {
  config?: string;
  out?: string;
  index?: string;
  dataset: string[];
  split?: string;
  limit?: number;
  tail?: number;
  sample?: number;
  sampleSeed?: number;
  valFraction?: number;
  valPart?: 'train' | 'val';
  agent: string[];
  llm?: string;
  auxLlm?: string;
  policy?: string;
  competence?: number;
  select: string;
  prm?: string;
  prmCandidates?: PrmCandidates;
  prmInput?: PrmInput;
  n?: number;
  baseline?: string;
  judge?: string;
  concurrency?: number;
  seed?: number;
  shard?: string;
  promptTemplate?: string;
}

/** The question selection of the flags (corpus/select.ts), checked together. */
function selectionFlags(o: EvalOpts): QuestionSelection {
  return selectionFromFlags(o);
}

/** The config the flags describe: every agent × every selection method, on every dataset. */
function configFromFlags(o: EvalOpts): EvalConfig {
  if (!o.index || !o.out || o.dataset.length === 0) throw new InputError('give --config FILE, or --index, --dataset and --out', 'see `ragtrail eval --help`');
  if (!o.llm === !o.policy) throw new InputError('give exactly one of --llm SPEC or --policy sim|oracle|gym:FILE');
  const agents = o.agent.length ? o.agent : ['search-r1'];
  for (const a of agents) getProtocol(a);
  const selects = o.select.split(',').map((s) => s.trim()) as SelectMethod[];
  for (const s of selects) if (!['greedy', 'prm', 'vote', 'orm'].includes(s)) throw new InputError(`--select: unknown method "${s}"`, 'use greedy, prm, vote and/or orm, comma-separated');
  const systems = agents.flatMap((agent) => selects.map((select) => ({ name: `${agent}-${select}`, agent, select, llm: o.llm, ...(o.auxLlm && getProtocol(agent).withAux && { auxLlm: o.auxLlm }), policy: o.policy, competence: o.competence, prm: o.prm, n: o.n, prmCandidates: o.prmCandidates, prmInput: o.prmInput })));
  return {
    index: o.index,
    out: o.out,
    datasets: o.dataset.map((d) => {
      const eq = d.indexOf('=');
      const [name, path] = eq > 0 ? [d.slice(0, eq), d.slice(eq + 1)] : [basename(d).replace(/\.(jsonl?|json)(\.gz)?$/, ''), d];
      return { name, path, split: o.split, ...selectionFlags(o) };
    }),
    systems,
    baseline: o.baseline ?? systems[0]!.name,
    judge: o.judge,
    concurrency: o.concurrency,
    seed: o.seed,
  };
}

/** The eval harness runs quietly; an outage of a server still gets a line every 10 s. */
function reportWaits(): () => void {
  let last = 0;
  const onWait = (w: RetryWait) => {
    if (Date.now() - last < 10_000) return;
    last = Date.now();
    console.error(`… waiting for the ${w.serverKind} (${w.reason} from ${new URL(w.url).host}, ${formatMs(Date.now() - w.since)} so far)`);
  };
  retryEvents.on('wait', onWait);
  return () => retryEvents.off('wait', onWait);
}

export function registerEval(program: Command): void {
  const cmd = program
    .command('eval')
    .description('evaluate systems (agent × model/policy × selection) on datasets over one index: results.json, results.md, report.html')
    .option('--config <file>', 'eval config (JSON); its fields: docs/reference/eval.md')
    .option('--out <dir>', 'output folder (overrides the config\'s)')
    .option('--index <dir|url>', 'without --config: the index')
    .option('--dataset <[name=]file>', 'without --config: a dataset (repeatable)', collect, [])
    .option('--split <name>', 'without --config: only questions of this split')
    .option('--limit <n>', 'without --config: first N questions of each dataset', intArg(1))
    .option('--tail <n>', 'without --config: last N questions of each dataset', intArg(1))
    .option('--sample <n>', 'without --config: N questions of each dataset drawn at random (seed: --sample-seed)', intArg(1))
    .option('--sample-seed <n>', 'seed of --sample and --val-fraction (default: --seed, else 0)', intArg(0))
    .option('--val-fraction <f>', 'without --config: hold out this share of each dataset (by a seeded hash of the ids) as a validation part', numberArg(0, 1))
    .option('--val-part <part>', 'with --val-fraction: take the validation part (val) or the rest (train)', choiceArg(['train', 'val'] as const))
    .option('--agent <name>', 'without --config: an agent protocol (repeatable)', collect, [])
    .option('--prompt-template <file>', `${PROMPT_TEMPLATE_HELP}; applies to every agent of the run`)
    .option('--llm <spec>', `without --config: the model, ${LLM_SPEC_HELP}`)
    .option('--aux-llm <spec>', "without --config: the second model of the agents that use one (recomp, longllmlingua, selective-context, adaptive-rag); the others ignore it")
    .option('--policy <spec>', `without --config, instead of --llm: ${POLICY_SPEC_HELP}`, policyArg)
    .option('--competence <c>', 'sim competence', numberArg(0, 1))
    .option('--select <list>', 'without --config: selection methods, comma-separated (greedy,prm,vote,orm)', 'greedy')
    .option('--prm <spec>', `PRM for prm selection: ${PRM_SPEC_HELP}`)
    .option('--n <n>', 'candidates (prm) or episodes (vote)', intArg(1, 1000))
    .option('--prm-candidates <which>', 'candidates prm selection chooses among: well-formed (when any are) or all', choiceArg(PRM_CANDIDATES))
    .option('--prm-input <what>', 'what a remote text PRM reads of the state: steps or evidence (see `run --help`)', choiceArg(PRM_INPUTS))
    .option('--baseline <name>', 'system the others are tested against (default: the first)')
    .option('--judge <spec>', 'judge model for the LLM-as-judge metric')
    .option('--concurrency <n>', 'questions in flight', intArg(1, 4096))
    .option('--seed <n>', 'run seed', intArg(0))
    .option('--shard <i/n>', 'only shard i of n (0 ≤ i < n) of every dataset\'s questions, split by a hash of their ids; join the shards\' --out folders with `ragtrail merge`');
  addRetryOption(cmd)
    .action(async (o: EvalOpts) => {
      const config = o.config ? readEvalConfig(o.config) : configFromFlags(o);
      if (o.promptTemplate) usePromptTemplate(o.promptTemplate, config.systems.map((s) => s.agent));
      if (o.out) config.out = resolve(o.out);
      if (o.shard) config.shard = `${parseShard(o.shard).index}/${parseShard(o.shard).count}`;
      const t0 = performance.now();
      const stopReporting = reportWaits();
      const results = await runEval(config, (m) => console.error(`… ${m}`)).finally(stopReporting);
      console.log(readFileSync(join(config.out, 'results.md'), 'utf8').split('\n## Details')[0]!.trimEnd());
      console.log(`\n${results.cells.length} cells in ${((performance.now() - t0) / 1000).toFixed(1)} s → ${join(config.out, 'results.json')}, results.md, report.html`);
    });
}
