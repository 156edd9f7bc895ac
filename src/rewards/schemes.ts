/**
 * Named reward schemes (`ragtrail reward --scheme S`), and their composition by weighted sums:
 * "lws-stage1", "0.5*f1+arena", … Options (`--option k=v`) reach every term that has that option;
 * `term.k=v` reaches one.
 */
import { InputError } from '../core/errors.js';
import { type RegisterOptions, Registry } from '../core/registry.js';
import { exactMatch } from '../core/metrics.js';
import { createEmbedder, type Embedder } from '../retrieval/embedders/embedder.js';
import { arenaAuthorsRewards, arenaRewards, goldReferenceNumbers, referenceIds } from './arena.js';
import { type EpisodeText, trajectoryEpisode } from './episode.js';
import { reasonragAuthorsTerminal, reasonragProcessText } from './reasonrag.js';
import { informationBlocks, retrievalHasAnswer, searchR1AuthorsEm, searchR1AuthorsFormat, searchR1EmScore, searchR1FormatScore, searchR1Valid } from './search-r1.js';
import { lwsAnswerReward, lwsFormat, lwsSearchReward } from './lws.js';
import { type CorrectnessRule, discountedReturn, isCorrect, metricOf } from './outcome.js';
import { proragAuthorsOutcome, proragOutcome, type ProragForm } from './prorag.js';
import type { OptionValue, RewardContext, RewardResult, RewardScheme } from './types.js';

const num = (o: Record<string, OptionValue>, k: string) => Number(o[k]);
const bool = (o: Record<string, OptionValue>, k: string) => o[k] === true || o[k] === 'true' || o[k] === 1;

/**
 * `compat=paper` (default) follows the paper's stated intent on ragtrail's parse of the episode;
 * `compat=authors` reproduces the authors' public reward function exactly, quirks included.
 */
function authorsMode(scheme: string, o: Record<string, OptionValue>): boolean {
  const v = String(o['compat']);
  if (v !== 'paper' && v !== 'authors') throw new InputError(`${scheme}: compat must be paper or authors, got "${v}"`, 'e.g. --option compat=authors');
  return v === 'authors';
}

/** ARENA's gold reference numbers: given with an episode text, else the supporting passages among the references shown. */
function arenaGold(ctx: RewardContext): number[] {
  const given = ctx.episode?.gold_reference_ids;
  if (given) return given.map(Number);
  return goldReferenceNumbers(referenceIds(ctx.trajectory, ctx.contextIds), ctx.supporting ?? []);
}

/** The episode's text: as given (`--texts`), else rebuilt from the trajectory. */
function episodeOf(ctx: RewardContext): EpisodeText {
  return ctx.episode ?? trajectoryEpisode(ctx.trajectory, { goldReferenceIds: arenaGold(ctx) });
}

/** The episode's final answer, or undefined when it ended without one. */
function finalAnswer(ctx: RewardContext): string | undefined {
  const t = ctx.trajectory;
  return t.steps.some((s) => s.action.type === 'answer') ? t.prediction : undefined;
}

function metricScheme(metric: 'em' | 'f1' | 'acc'): RewardScheme {
  return {
    name: metric,
    description: `${metric.toUpperCase()} of the prediction against the gold answers`,
    components: [metric],
    defaults: {},
    compute: ({ trajectory }) => {
      const v = metricOf(trajectory, metric);
      return { total: v, components: { [metric]: v } };
    },
  };
}

const embedders = new Map<string, Promise<Embedder>>();
/** One embedder per spec for the process: schemes run once per trajectory. */
function embedderFor(spec: string): Promise<Embedder> {
  let e = embedders.get(spec);
  if (!e) {
    e = createEmbedder(spec);
    embedders.set(spec, e);
    e.catch(() => embedders.delete(spec));
  }
  return e;
}

function lwsScheme(stage: 1 | 2 | 'unified'): RewardScheme {
  const answerRule = stage === 1 ? 'wrong: −1 + β·RC' : stage === 2 ? 'correct: 1 − β·RC' : 'both: correct 1 − β·RC, wrong −1 + β·RC, no stages (the "unified dynamic reward" of LWS Table 2, as ragtrail reads it)';
  return {
    name: stage === 'unified' ? 'lws-unified' : `lws-stage${stage}`,
    description: `LWS ${stage === 'unified' ? 'unstaged' : `stage ${stage}`}: format (±1) + search (conciseness / −avg query similarity) + answer (${answerRule}); format_weight / search_weight / answer_weight weigh the terms (LWS Table 4: search_weight=0 is "w/o r_s", answer_weight=0 "w/o r_a")`,
    components: ['format', 'search', 'answer'],
    // embedder "": the caller's embedder (the command's --embedder), else the lexical hash:512; a spec overrides both.
    defaults: { beta: 0.3, correct: 'em', threshold: 0.5, strict: false, embedder: '', similarity: 'mean', maxWords: 8, maxFunctionWords: 2, format_weight: 1, search_weight: 1, answer_weight: 1 },
    protocol: 'search-r1',
    formatComponent: 'format',
    async compute(ctx, o) {
      const t = ctx.trajectory;
      const spec = String(o['embedder']);
      const embedder = spec ? await embedderFor(spec) : (ctx.embedder ?? (await embedderFor('hash:512')));
      const format = lwsFormat(t, bool(o, 'strict'));
      const search = await lwsSearchReward(t, embedder, {
        rules: { maxWords: num(o, 'maxWords'), maxFunctionWords: num(o, 'maxFunctionWords') },
        variant: o['similarity'] === 'paper' ? 'paper' : 'mean',
      });
      const correct = await isCorrect(ctx, String(o['correct']) as CorrectnessRule, num(o, 'threshold'));
      const answer = stage === 'unified' ? lwsAnswerReward(correct, t.retrievalCount, correct ? 2 : 1, num(o, 'beta')) : lwsAnswerReward(correct, t.retrievalCount, stage, num(o, 'beta'));
      const [wf, ws, wa] = ['format_weight', 'search_weight', 'answer_weight'].map((k) => num(o, k));
      // Components are reported as measured, whatever their weight in the total.
      return { total: wf! * format + ws! * search + wa! * answer, components: { format, search, answer } };
    },
  };
}

/** The built-in reward schemes, by name. */
export const SCHEMES: Record<string, RewardScheme> = {
  em: metricScheme('em'),
  f1: metricScheme('f1'),
  acc: metricScheme('acc'),
  judge: {
    name: 'judge',
    description: 'LLM-as-judge: 1 when the judge model says the prediction means the same as a gold answer',
    components: ['judge'],
    defaults: {},
    async compute(ctx) {
      const v = (await isCorrect(ctx, 'judge')) ? 1 : 0;
      return { total: v, components: { judge: v } };
    },
  },
  correct: {
    name: 'correct',
    description: 'binary correctness under a rule (correct=em|acc|f1|judge, threshold for f1)',
    components: ['correct'],
    defaults: { correct: 'em', threshold: 0.5 },
    async compute(ctx, o) {
      const v = (await isCorrect(ctx, String(o['correct']) as CorrectnessRule, num(o, 'threshold'))) ? 1 : 0;
      return { total: v, components: { correct: v } };
    },
  },
  discounted: {
    name: 'discounted',
    description: 'RAG-Gym eq. 4 with a terminal reward: γ^(T−1) · metric, T = number of steps',
    components: ['outcome', 'discount'],
    defaults: { gamma: 1, metric: 'f1' },
    compute({ trajectory: t }, o) {
      const metric = String(o['metric']) as 'em' | 'f1' | 'acc';
      if (!['em', 'f1', 'acc'].includes(metric)) throw new InputError(`discounted: metric must be em, f1 or acc, got "${metric}"`);
      const outcome = metricOf(t, metric);
      const rewards = t.steps.map((_, i) => (i === t.steps.length - 1 ? outcome : 0));
      const total = discountedReturn(rewards, num(o, 'gamma'));
      return { total, components: { outcome, discount: outcome === 0 ? 0 : total / outcome } };
    },
  },
  'lws-stage1': lwsScheme(1),
  'lws-stage2': lwsScheme(2),
  'lws-unified': lwsScheme('unified'),
  arena: {
    name: 'arena',
    description:
      'ARENA: format (1/0) + accuracy (normalised EM) + relevance_weight · relevance (cited refs vs gold: 1 / 0.5 / 0) + bonus (10 when all three are 1); relevance_weight=0 drops the relevance reward, from the sum and from the bonus condition (the bonus then needs format and accuracy only); accuracy=f1|judge scores accuracy by F1 or an LLM judge (ARENA §5.3), bonus=0 drops the bonus; compat=authors: ARENA src/rewards.py exactly',
    components: ['format', 'accuracy', 'relevance', 'bonus'],
    defaults: { bonus: 10, underscore: true, compat: 'paper', relevance_weight: 1, accuracy: 'em' },
    protocol: 'arena',
    formatComponent: 'format',
    async compute(ctx, o) {
      const w = num(o, 'relevance_weight');
      if (!Number.isFinite(w) || w < 0) throw new InputError(`arena: relevance_weight must be a number ≥ 0, got "${o['relevance_weight']}"`, 'e.g. --option relevance_weight=0 (no relevance reward)');
      const rule = String(o['accuracy']);
      if (!['em', 'f1', 'judge'].includes(rule)) throw new InputError(`arena: accuracy must be em, f1 or judge, got "${rule}"`, 'e.g. --option accuracy=f1');
      if (authorsMode('arena', o)) {
        if (w !== 1) throw new InputError(`arena: relevance_weight=${w} has no counterpart in the authors' reward`, 'use it with compat=paper (the default), or drop it');
        if (rule !== 'em') throw new InputError(`arena: accuracy=${rule} has no counterpart in the authors' reward`, 'use it with compat=paper (the default), or drop it');
        const ep = episodeOf(ctx);
        const r = arenaAuthorsRewards(ep.response, ep.golden_answers, ep.gold_reference_ids ?? [], num(o, 'bonus'));
        return { total: r.format + r.accuracy + r.relevance + r.bonus, components: { ...r } };
      }
      const accuracy = rule === 'f1' ? metricOf(ctx.trajectory, 'f1') : rule === 'judge' ? ((await isCorrect(ctx, 'judge')) ? 1 : 0) : undefined;
      const r = arenaRewards(ctx.trajectory, arenaGold(ctx), { bonus: num(o, 'bonus'), underscoreToSpace: bool(o, 'underscore'), bonusNeedsRelevance: w > 0, ...(accuracy !== undefined ? { accuracy } : {}) });
      // The relevance component is reported as measured, whatever its weight in the total.
      return { total: r.format + r.accuracy + w * r.relevance + r.bonus, components: { ...r } };
    },
  },
  'prorag-outcome': {
    name: 'prorag-outcome',
    description: 'ProRAG outcome: code form (0 if F1 < 0.2 else 2·F1) + (±1 workflow); spec form F1 + λ_o·1[workflow]; compat=authors: prorag/rl/reward.py outcome_reward exactly',
    components: ['answer', 'workflow'],
    defaults: { form: 'code', lambdaO: 1, compat: 'paper' },
    protocol: 'prorag',
    formatComponent: 'workflow',
    compute(ctx, o) {
      if (authorsMode('prorag-outcome', o)) {
        const ep = episodeOf(ctx);
        const r = proragAuthorsOutcome(ep.response, ep.answer ?? ep.golden_answers[0] ?? '');
        return { total: r.total, components: { answer: r.answer, workflow: r.workflow } };
      }
      const form = String(o['form']);
      if (form !== 'code' && form !== 'spec') throw new InputError(`prorag-outcome: form must be code or spec, got "${form}"`);
      const r = proragOutcome(ctx.trajectory, form as ProragForm, num(o, 'lambdaO'));
      return { total: r.total, components: { answer: r.answer, workflow: r.workflow } };
    },
  },
  'reasonrag-terminal': {
    name: 'reasonrag-terminal',
    description: "ReasonRAG's terminal value F1 · β^step (β 0.95; step from the text line, else the number of steps); compat=authors: ReasonRAGPipeline.get_reward exactly (process=true first applies the handlers' process_text)",
    components: ['f1', 'decay'],
    defaults: { beta: 0.95, compat: 'paper', process: false },
    protocol: 'reasonrag',
    compute(ctx, o) {
      const beta = num(o, 'beta');
      const step = ctx.episode?.step ?? ctx.trajectory.steps.length;
      if (authorsMode('reasonrag-terminal', o)) {
        const ep = episodeOf(ctx);
        const r = reasonragAuthorsTerminal(bool(o, 'process') ? reasonragProcessText(ep.response) : ep.response, ep.golden_answers, step, beta);
        return { total: r.reward, components: { f1: r.f1, decay: beta ** step } };
      }
      const f1 = metricOf(ctx.trajectory, 'f1');
      const decay = beta ** step;
      return { total: f1 * decay, components: { f1, decay } };
    },
  },
  'search-r1-em': {
    name: 'search-r1-em',
    description: "Search-R1's outcome reward: 1 for an exact-match answer, format_score for a wrong one, 0 for none; compat=authors: qa_em.py compute_score_em on prompt + response exactly",
    components: ['em', 'answered'],
    defaults: { format_score: 0, compat: 'paper' },
    protocol: 'search-r1',
    compute(ctx, o) {
      const ep = authorsMode('search-r1-em', o) ? episodeOf(ctx) : undefined;
      const answer = ep ? searchR1AuthorsEm((ep.prompt ?? '') + ep.response, ep.golden_answers).answer : finalAnswer(ctx);
      const golds = ep?.golden_answers ?? ctx.trajectory.answers;
      const total = searchR1EmScore(answer, golds, num(o, 'format_score'));
      return { total, components: { em: answer !== undefined ? exactMatch(answer, golds) : 0, answered: answer === undefined ? 0 : 1 } };
    },
  },
  'search-r1-format': {
    name: 'search-r1-format',
    description: "Search-R1 v0.3's format-aware reward: EM with structure / final-format / retrieval terms; compat=authors: qa_em_format.py compute_score_em exactly (format_score is accepted and, as there, unused)",
    components: ['em', 'valid', 'retrieval'],
    defaults: { structure_format_score: 0.2, final_format_score: 0.1, retrieval_score: 0, format_score: 0, compat: 'paper' },
    protocol: 'search-r1',
    formatComponent: 'valid',
    compute(ctx, o) {
      const w = { structure: num(o, 'structure_format_score'), finalFormat: num(o, 'final_format_score'), retrieval: num(o, 'retrieval_score') };
      if (authorsMode('search-r1-format', o)) {
        const ep = episodeOf(ctx);
        const r = searchR1AuthorsFormat((ep.prompt ?? '') + ep.response, ep.golden_answers, w);
        return { total: r.score, components: { em: r.answer !== undefined ? exactMatch(r.answer, ep.golden_answers) : 0, valid: r.valid ? 1 : 0, retrieval: r.retrievalCorrect ? 1 : 0 } };
      }
      const response = ctx.episode?.response ?? trajectoryEpisode(ctx.trajectory).response;
      const answer = finalAnswer(ctx);
      const { valid } = searchR1Valid(response);
      const retrieval = valid && retrievalHasAnswer(informationBlocks(response), ctx.trajectory.answers);
      const total = searchR1FormatScore(answer, ctx.trajectory.answers, valid, retrieval, w);
      const em = answer !== undefined && metricOf(ctx.trajectory, 'em') === 1 ? 1 : 0;
      return { total, components: { em, valid: valid ? 1 : 0, retrieval: retrieval ? 1 : 0 } };
    },
  },
};

/** The scheme table (built-ins and registered ones) that `composeScheme` reads. */
export const rewardSchemes = new Registry<RewardScheme>('reward scheme');
for (const s of Object.values(SCHEMES)) rewardSchemes.register(s.name, s);

/** Makes `scheme` usable as `--scheme scheme.name` (alone or in a weighted sum) everywhere. */
export function registerRewardScheme(scheme: RewardScheme, opts?: RegisterOptions): void {
  rewardSchemes.register(scheme.name, scheme, opts);
}

/** A parsed `--scheme` expression: weighted terms with their options, computed as one reward. */
export interface ComposedScheme {
  expression: string;
  terms: { weight: number; scheme: RewardScheme; options: Record<string, OptionValue> }[];
  components: string[];
  /**
   * Σ weight · total over the terms. Components are named as the scheme names them when there is one
   * term, else `scheme.component`.
   */
  compute(ctx: RewardContext): Promise<RewardResult>;
}

/** Whether computing `scheme` asks an LLM judge: the `judge` scheme, or a term whose `correct` (LWS, correct) or `accuracy` (ARENA) option is `judge`. */
export function usesJudge(scheme: ComposedScheme): boolean {
  return scheme.terms.some((t) => t.scheme.name === 'judge' || t.options['correct'] === 'judge' || t.options['accuracy'] === 'judge');
}

function parseValue(v: string): OptionValue {
  if (v === 'true' || v === 'false') return v === 'true';
  const n = Number(v);
  return v.trim() !== '' && Number.isFinite(n) ? n : v;
}

/** Parses "w1*scheme1+scheme2" and `k=v` / `scheme.k=v` options into a weighted sum of schemes. */
export function composeScheme(expression: string, optionArgs: readonly string[] = []): ComposedScheme {
  const terms = expression.split('+').map((raw) => {
    const m = /^\s*(?:([0-9.eE+-]+)\s*\*\s*)?([A-Za-z0-9._-]+)\s*$/.exec(raw);
    const scheme = m ? rewardSchemes.find(m[2]!) : undefined;
    if (!m || !scheme) throw new InputError(`unknown reward scheme "${raw.trim()}"`, `use one of ${rewardSchemes.names().join(', ')}, or a weighted sum like 0.5*f1+lws-stage1`);
    return { weight: m[1] === undefined ? 1 : Number(m[1]), scheme, options: { ...scheme.defaults } };
  });
  for (const arg of optionArgs) {
    const eq = arg.indexOf('=');
    if (eq < 1) throw new InputError(`--option "${arg}": expected key=value`, 'e.g. --option beta=0.3');
    const key = arg.slice(0, eq);
    const value = parseValue(arg.slice(eq + 1));
    const dot = key.indexOf('.');
    const [target, name] = dot > 0 ? [key.slice(0, dot), key.slice(dot + 1)] : [undefined, key];
    const hit = terms.filter((t) => (!target || t.scheme.name === target) && Object.hasOwn(t.scheme.defaults, name));
    if (hit.length === 0) {
      const known = [...new Set(terms.flatMap((t) => Object.keys(t.scheme.defaults)))];
      throw new InputError(`--option ${key}: no scheme in "${expression}" has that option`, known.length ? `options: ${known.join(', ')}` : 'these schemes take no options');
    }
    for (const t of hit) t.options[name] = value;
  }
  const single = terms.length === 1;
  const components = terms.flatMap((t) => t.scheme.components.map((c) => (single ? c : `${t.scheme.name}.${c}`)));
  return {
    expression,
    terms,
    components,
    async compute(ctx) {
      let total = 0;
      const out: Record<string, number> = {};
      for (const t of terms) {
        const r = await t.scheme.compute(ctx, t.options);
        total += t.weight * r.total;
        for (const [c, v] of Object.entries(r.components)) out[single ? c : `${t.scheme.name}.${c}`] = v;
      }
      return { total, components: out };
    },
  };
}
