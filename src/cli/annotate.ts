import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { InputError, RagtrailError } from '../core/errors.js';
import { selectShard, shardLabel } from '../core/shard.js';
import { ensureOutDir } from '../core/io.js';
import { createModel } from './setup.js';
import { ANNOTATE_METHODS, type AnnotateMethod, annotate, defaultPairSource, JUDGE_LOG_FILE } from '../process/annotate.js';
import { LlmSiblingJudge, PAIR_SOURCES, type PairSource, PlanJudge, Q_RULE_DEFAULTS, QRuleJudge } from '../process/sibling-judge.js';
import type { RankSource } from '../process/rank.js';
import type { AnnotationStats } from '../process/stats.js';
import { applyConfigFile, requireOptions } from './config.js';
import { PRIOR_MODES, type PriorMode } from '../process/mcts.js';
import { addRetryOption, choiceArg, collect, intArg, numberArg } from './options.js';
import { relabel, RELABEL_FILES } from '../process/relabel.js';
import type { LabellerMode } from '../process/reasonrag-tree.js';
import { VALUE_LABELS, type ValueLabel } from '../process/values.js';
import { stateOutcome } from '../rewards/apply.js';
import { formatEndpointUsage } from '../llm/middleware.js';
import { composeScheme } from '../rewards/schemes.js';
import { addAgentOptions, type AgentOpts, loadQuestions, nonLlmNote, setupAgent, warnAboutData } from './setup.js';
import { fixed, formatTable } from './table.js';

interface AnnotateOpts extends AgentOpts {
  method: AnnotateMethod;
  out?: string;
  judge?: string;
  seed: number;
  simulations?: number;
  maxChildren?: number;
  maxDepth: number;
  c?: number;
  rollouts: number;
  alpha: number;
  gamma: number;
  reward: 'f1' | 'binary';
  outcome?: string;
  outcomeOption: string[];
  prior: PriorMode;
  rolloutValue: 'correct' | 'f1';
  temperature?: number;
  batch: number;
  candidates: number;
  rankSource?: RankSource;
  minGap: number;
  labelThreshold: number;
  values?: ValueLabel;
  pairs?: PairSource;
  pairJudge?: 'rule' | 'llm' | 'plan';
  pairMinVisits: number;
  quiet: boolean;
}

export function printStats(s: AnnotationStats): void {
  const types = (t: Record<string, number>) => `A ${t['A'] ?? 0} / Q ${t['Q'] ?? 0} / E ${t['E'] ?? 0}${t['X'] ? ` / invalid ${t['X']}` : ''}`;
  const sum = (x: AnnotationStats['iterations']) => `${fixed(x.avg, 2)} / ${x.min} / ${x.median} / ${x.max}`;
  console.log(
    formatTable(['', 'value'], [
      ['method', s.method],
      ['questions (with pairs)', `${s.questions} (${s.questionsWithPairs})`],
      ['trees reaching an answer / kept', String(s.kept)],
      ['pairs', String(s.pairs)],
      ...(s.values ? [['pairs labelled by', s.values === 'bottom-up' ? 'bottom-up values (F1 · α^depth, N-weighted)' : 'running-mean Q']] : []),
      ...(s.judge
        ? [
            ['pairs labelled by', `a judge comparing siblings: ${s.judge.judge}`],
            ['sibling sets judged', `${s.judge.nodes}: ${s.judge.pairs} pairs, ${s.judge.declined} without a clear pair, ${s.judge.malformed} unreadable replies, ${s.judge.duplicates} same-action picks (skipped)`],
          ]
        : []),
      ['preferred side: actions by type', types(s.chosenTypes)],
      ['rejected side: actions by type', types(s.rejectedTypes)],
      ['iterations avg / min / median / max', sum(s.iterations)],
      ['tree nodes avg / min / median / max', sum(s.nodes)],
      ['tokens per action (chars / 4)', fixed(s.tokensPerAction, 1)],
      ...(s.goldPreferred ? [['preferred side is the gold step', `${fixed(100 * s.goldPreferred.share, 1)}% of ${s.goldPreferred.pairs} pairs with one gold side`]] : []),
    ]),
  );
  console.log(`\nreward gap ${s.values === 'bottom-up' ? '|Δvalue|' : s.judge ? '|ΔQ| of the judged pairs' : '|ΔQ|'}`);
  const max = Math.max(1, ...s.gapHistogram.map((h) => h.count));
  for (const h of s.gapHistogram) {
    const label = (h.to === null ? `> ${h.from}` : h.to === 1 ? `[${h.from}, 1]` : `[${h.from}, ${h.to})`).padEnd(13);
    console.log(`${label} ${String(h.count).padStart(6)}  ${'#'.repeat(Math.round((40 * h.count) / max))}`);
  }
}

export function registerAnnotate(program: Command): void {
  const cmd = program
    .command('annotate')
    .description('process supervision: MCTS (ReasonRAG SPRE/judge, ProRAG PUCT) or RAG-Gym ranking → trees, pairs and TRL datasets');
  addAgentOptions(cmd, { agent: 'reasonrag', concurrency: 8 })
    .option('--method <m>', `${ANNOTATE_METHODS.join(', ')}`, choiceArg(ANNOTATE_METHODS), 'mcts-spre')
    .option('--out <dir>', 'output folder (trees.jsonl, pairs.jsonl, trl_*.jsonl, prm_pairs.jsonl, stats.json); re-running resumes')
    .option('--judge <spec>', 'judge model for mcts-judge and rank with the judge source')
    .option('--seed <n>', 'seed of every sample', intArg(0), 0)
    .option('--simulations <n>', 'MCTS iterations (ReasonRAG code 7, ProRAG 200)', intArg(1, 100_000))
    .option('--max-children <n>', 'children per node (ReasonRAG 2, ProRAG 5)', intArg(1, 64))
    .option('--max-depth <n>', 'steps below the root that may be expanded', intArg(1, 100), 10)
    .option('--c <x>', 'exploration constant (UCT 1.414, PUCT 2.5)', numberArg(0, 100))
    .option('--rollouts <k>', 'SPRE rollouts per node / rollouts per ranked candidate', intArg(1, 1000), 4)
    .option('--alpha <a>', 'SPRE step decay α', numberArg(0.0001, 1), 0.9)
    .option('--gamma <g>', 'PUCT backup decay per step', numberArg(0, 1), 0.99)
    .option('--prior <p>', "PUCT prior of sampled steps: length-normalised (softmax of mean token log-probs), sequence (of summed log-probs) or uniform (ProRAG's code)", choiceArg(PRIOR_MODES), 'length-normalised')
    .option('--reward <r>', 'PUCT simulation reward: f1 (authors\' code) or binary', choiceArg(['f1', 'binary'] as const), 'f1')
    .option('--outcome <scheme>', "MCTS: score finished rollouts and answer leaves with this reward scheme (as in `ragtrail reward --scheme`, a registered one included) instead of the answer's F1; keep it in [0, 1]")
    .option('--outcome-option <k=v>', 'an option of the --outcome scheme (repeatable)', collect, [])
    .option('--temperature <t>', 'expansion sampling temperature (UCT 1.0, PUCT 0.9, rank 1.0)', numberArg(0, 10))
    .option('--batch <n>', 'tree leaves evaluated concurrently per question', intArg(1, 256), 4)
    .option('--candidates <n>', 'rank: candidate actions per step', intArg(2, 100), 10)
    .option('--rank-source <s>', "rank: judge (needs --judge), rollout (Math-Shepherd), plan (no model: the question's gold plan, grounded answers) or random", choiceArg(['judge', 'rollout', 'plan', 'random'] as const))
    .option('--rollout-value <v>', "rank by rollouts: a candidate's share of correct rollouts (Math-Shepherd) or their mean F1", choiceArg(['correct', 'f1'] as const), 'correct')
    .option('--min-gap <x>', 'pairs: smallest |ΔQ|', numberArg(0, 100), 0.01)
    .option('--values <v>', 'MCTS pair labels: bottom-up (re-score the finished tree: answer F1 · α^depth, N-weighted means; default for mcts-spre) or running-mean (the search\'s Q; default otherwise)', choiceArg(VALUE_LABELS))
    .option('--label-threshold <x>', 'stepwise labels and SFT steps: Q at or above this is good', numberArg(-100, 100), 0.5)
    .option('--pairs <s>', `MCTS pairs: q-gap (siblings by label, --min-gap, --values) or judge (ProRAG: a judge shown each sibling's step, Q and N names one better and one worse; ${JUDGE_LOG_FILE} logs every verdict). Default: judge for mcts-puct, q-gap otherwise`, choiceArg(PAIR_SOURCES))
    .option('--pair-judge <j>', "--pairs judge: llm (the --judge model), rule (no model: the unique highest Q among siblings with N ≥ --pair-min-visits against the lowest; a rule, not a judgement) or plan (no model: the best sibling by the question's gold plan, grounded answers, against the worst). Default: llm when --judge is given, else rule", choiceArg(['rule', 'llm', 'plan'] as const))
    .option('--pair-min-visits <n>', '--pair-judge rule: compare only siblings visited at least this often', intArg(1, 1_000_000), Q_RULE_DEFAULTS.minVisits)
    .option('--config <file>', 'JSON file of option values (command-line flags win)')
    .option('--quiet', 'no progress line', false)
    .hook('preAction', (c) => applyConfigFile(c));
  addRetryOption(cmd)
    .action(async (opts: AnnotateOpts, c: Command) => {
      requireOptions(c, ['index', 'dataset', 'out']);
      ensureOutDir(opts.out!);
      const rankSource = opts.rankSource ?? (opts.judge ? 'judge' : undefined);
      if (opts.method === 'rank' && !rankSource) throw new InputError('--method rank needs --judge SPEC, or --rank-source rollout|plan|random');
      if ((opts.method === 'mcts-judge' || rankSource === 'judge') && !opts.judge) throw new InputError(`--method ${opts.method} needs --judge SPEC`);
      if (opts.method === 'rank' && opts.values) throw new InputError('--values labels search-tree pairs; --method rank ranks candidates instead', 'drop --values or use an mcts method');
      const pairs = opts.pairs ?? defaultPairSource(opts.method);
      if (pairs === 'judge' && opts.method === 'rank') throw new InputError('--pairs judge compares siblings of search trees; --method rank ranks candidates instead', 'drop --pairs or use an mcts method');
      if (pairs === 'judge' && opts.values) throw new InputError(`--values labels q-gap pairs; the pairs of ${opts.pairs ? '--pairs judge' : `--method ${opts.method}`} come from a judge`, 'add --pairs q-gap to mine pairs by --values, or drop --values');
      const pairJudgeKind = opts.pairJudge ?? (opts.judge ? 'llm' : 'rule');
      if (pairs === 'judge' && pairJudgeKind === 'llm' && !opts.judge) throw new InputError('--pair-judge llm needs --judge SPEC', 'or --pair-judge rule for the offline rule');
      // PUCT priors come from the sampled steps' token log-probabilities (unless uniform, as ProRAG's code).
      const { protocol, policy, llm, retriever, env } = await setupAgent(opts, { logprobs: opts.method === 'mcts-puct' && opts.prior !== 'uniform' });
      const judge = opts.judge ? await createModel(opts.judge, opts) : undefined;
      // The limit applies before the shard, so that the shards of a limited run partition that run.
      const questions = selectShard(await loadQuestions(opts.dataset!, opts), opts.shard);
      if (questions.length === 0) throw new InputError(`--shard ${shardLabel(opts.shard)}: no question of ${opts.dataset} falls in this shard`, 'use fewer shards');
      const note = nonLlmNote(policy);
      if (note && !opts.quiet) console.error(note);
      warnAboutData(policy, questions);
      // The settings the trees depend on: a judge that only compares siblings (--pairs judge) shapes the derived files, not the trees.
      const treeJudge = opts.method === 'mcts-judge' || (opts.method === 'rank' && rankSource === 'judge');
      const config = {
        method: opts.method,
        agent: protocol.name,
        policy: policy.name,
        judge: treeJudge ? opts.judge! : null,
        index: resolve(opts.index!),
        dataset: resolve(opts.dataset!),
        split: opts.split ?? null,
        // Only when sharded: a merged folder's config then equals an unsharded run's.
        ...(opts.shard && { shard: shardLabel(opts.shard) }),
        seed: opts.seed,
        topK: env.config.topK,
        maxTurns: env.config.maxTurns,
        simulations: opts.simulations ?? null,
        maxChildren: opts.maxChildren ?? null,
        maxDepth: opts.maxDepth,
        c: opts.c ?? null,
        rollouts: opts.rollouts,
        alpha: opts.alpha,
        gamma: opts.gamma,
        reward: opts.reward,
        ...(opts.method === 'mcts-puct' && { prior: opts.prior }),
        temperature: opts.temperature ?? null,
        candidates: opts.candidates,
        rankSource: opts.method === 'rank' ? rankSource! : null,
        ...(rankSource === 'rollout' && { rolloutValue: opts.rolloutValue }),
        ...(opts.outcome && { outcome: opts.outcome, outcomeOptions: opts.outcomeOption }),
      };
      if (opts.outcome && opts.method === 'rank') throw new InputError('--outcome scores search-tree rollouts; --method rank ranks candidates instead', 'drop --outcome or use an mcts method');
      const outcome = opts.outcome ? stateOutcome(composeScheme(opts.outcome, opts.outcomeOption), protocol, { questions: new Map(questions.map((q) => [q.id, q])) }) : undefined;
      const mcts = {
        maxDepth: opts.maxDepth,
        rollouts: opts.rollouts,
        alpha: opts.alpha,
        gamma: opts.gamma,
        reward: opts.reward,
        prior: opts.prior,
        batch: opts.batch,
        judge,
        ...(outcome && { outcome }),
        ...(opts.simulations !== undefined && { simulations: opts.simulations }),
        ...(opts.maxChildren !== undefined && { maxChildren: opts.maxChildren }),
        ...(opts.c !== undefined && { c: opts.c }),
        ...(opts.temperature !== undefined && { temperature: opts.temperature, rolloutTemperature: opts.temperature }),
      };
      const rank = { candidates: opts.candidates, rollouts: opts.rollouts, judge, rolloutValue: opts.rolloutValue, ...(rankSource && { source: rankSource }), ...(opts.temperature !== undefined && { temperature: opts.temperature }) };
      const result = await annotate({
        method: opts.method,
        outDir: opts.out!,
        env,
        policy,
        questions,
        mcts,
        rank,
        concurrency: opts.concurrency,
        minGap: opts.minGap,
        labelThreshold: opts.labelThreshold,
        values: opts.values,
        pairs,
        ...(pairs === 'judge' && { pairJudge: pairJudgeKind === 'llm' ? new LlmSiblingJudge(judge!) : pairJudgeKind === 'plan' ? new PlanJudge() : new QRuleJudge({ minVisits: opts.pairMinVisits }) }),
        config,
        usage: llm ? () => llm.usage() : undefined,
        quiet: opts.quiet,
      });
      await llm?.close();
      await judge?.close();
      await retriever.close?.();
      console.log(`${opts.method} with ${policy.name} (${protocol.name}): ${result.annotated} questions annotated, ${result.skipped} already done → ${opts.out}\n`);
      printStats(result.stats);
      if (llm) console.log(`\nllm: ${llm.totals.requests} requests (${llm.totals.cachedRequests} from cache)`);
      const perEndpoint = formatEndpointUsage(llm?.endpointUsage());
      if (perEndpoint) console.log(perEndpoint);
    });
  cmd
    .command('relabel')
    .description("re-label trees in ReasonRAG's JSON layout: bottom-up values, preference pairs and TRL datasets")
    .requiredOption('--reasonrag-trees <file>', 'JSON lines {id, question, golden_answers, tree} (tree: intermediate_node_<id> → node, as ReasonRAG logs it)')
    .option('--option <k=v>', "compat=authors (the authors' code exactly, quirks included) or compat=paper (default, as in ragtrail reward); beta=X (leaf decay per step, 0.9)", collect, [])
    // --out, --min-gap and --label-threshold are annotate's own flags, which commander parses for the parent.
    .addHelpText('after', `\nAlso reads annotate's --out <dir> (required: ${RELABEL_FILES.join(', ')}), --min-gap <x> (0.01) and --label-threshold <x> (0.5).`)
    .action(async (opts: { reasonragTrees: string; option: string[] }, c: Command) => {
      const parent = c.parent!.opts<Pick<AnnotateOpts, 'out' | 'minGap' | 'labelThreshold'>>();
      if (!parent.out) throw new InputError('annotate relabel: --out <dir> is required', 'name the folder for values.jsonl, pairs.jsonl and the TRL files');
      const { mode, beta } = labellerOptions(opts.option);
      const s = await relabel(opts.reasonragTrees, parent.out, { mode, beta, minGap: parent.minGap, labelThreshold: parent.labelThreshold });
      const types = Object.entries(s.actionTypeCounts).map(([t, n]) => `${t} ${n}`).join(', ') || 'none';
      console.log(`relabelled ${s.trees} trees (${mode === 'authors' ? "authors' code" : 'ragtrail default'}): ${s.valuedNodes} of ${s.nodes} nodes valued, ${s.pairs} pairs in ${s.treesWithPairs} trees (chosen: ${types}) → ${parent.out}${s.errors ? ` (and ${s.errors} error record${s.errors === 1 ? '' : 's'})` : ''}`);
      // Exit status 1 says some trees failed; each is an {id, error} line of values.jsonl and pairs.jsonl.
      if (s.errors > 0) throw new RagtrailError(`${s.errors} of ${s.trees + s.errors} trees could not be valued: each is an {"id", "error"} line in ${join(parent.out, 'values.jsonl')} and pairs.jsonl`, 'the error says what to fix in that tree; the other trees are valued');
    });
  cmd
    .command('stats')
    .description('print the RAG-ProGuide statistics table of an annotation folder')
    .argument('<dir>', 'annotation folder')
    .action((dir: string) => {
      let stats: AnnotationStats;
      try {
        stats = JSON.parse(readFileSync(join(dir, 'stats.json'), 'utf8')) as AnnotationStats;
      } catch {
        throw new InputError(`${dir}: no readable stats.json`, 'run `ragtrail annotate` to completion first');
      }
      printStats(stats);
    });
}

/** `--option compat=paper|authors` and `--option beta=X` of `annotate relabel`. */
export function labellerOptions(args: readonly string[]): { mode: LabellerMode; beta: number } {
  let mode: LabellerMode = 'default';
  let beta = 0.9;
  for (const arg of args) {
    const eq = arg.indexOf('=');
    const [key, value] = [arg.slice(0, eq).trim(), arg.slice(eq + 1).trim()];
    if (eq < 1) throw new InputError(`--option "${arg}": expected key=value`, 'e.g. --option compat=authors');
    if (key === 'compat') {
      if (value !== 'authors' && value !== 'paper') throw new InputError(`--option compat: expected paper or authors, got "${value}"`, 'the same values as ragtrail reward --option compat');
      mode = value === 'authors' ? 'authors' : 'default';
    } else if (key === 'beta') {
      beta = Number(value);
      if (value === '' || !(beta > 0 && beta <= 1)) throw new InputError(`--option beta: expected a number in (0, 1], got "${value}"`);
    } else throw new InputError(`--option ${key}: unknown option of annotate relabel`, 'options: compat, beta');
  }
  return { mode, beta };
}
