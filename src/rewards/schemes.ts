/**
 * Named reward schemes (`ragtrail reward --scheme S`), and their composition by weighted sums:
 * "lws-stage1", "0.5*f1+arena", … Options (`--option k=v`) reach every term that has that option;
 * `term.k=v` reaches one.
 */
import { InputError } from '../core/errors.js';
import { createEmbedder } from '../retrieval/embedders/embedder.js';
import { arenaRewards, goldReferenceNumbers, referenceIds } from './arena.js';
import { lwsAnswerReward, lwsFormat, lwsSearchReward } from './lws.js';
import { type CorrectnessRule, discountedReturn, isCorrect, metricOf } from './outcome.js';
import { proragOutcome, type ProragForm } from './prorag.js';
import type { OptionValue, RewardContext, RewardResult, RewardScheme } from './types.js';

const num = (o: Record<string, OptionValue>, k: string) => Number(o[k]);
const bool = (o: Record<string, OptionValue>, k: string) => o[k] === true || o[k] === 'true' || o[k] === 1;

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

function lwsScheme(stage: 1 | 2): RewardScheme {
  return {
    name: `lws-stage${stage}`,
    description: `LWS stage ${stage}: format (±1) + search (conciseness / −avg query similarity) + answer (${stage === 1 ? 'wrong: −1 + β·RC' : 'correct: 1 − β·RC'})`,
    components: ['format', 'search', 'answer'],
    defaults: { beta: 0.3, correct: 'em', threshold: 0.5, strict: false, embedder: 'hash:512', similarity: 'mean', maxWords: 8, maxFunctionWords: 2 },
    async compute(ctx, o) {
      const t = ctx.trajectory;
      const embedder = ctx.embedder ?? (await createEmbedder(String(o['embedder'])));
      const format = lwsFormat(t, bool(o, 'strict'));
      const search = await lwsSearchReward(t, embedder, {
        rules: { maxWords: num(o, 'maxWords'), maxFunctionWords: num(o, 'maxFunctionWords') },
        variant: o['similarity'] === 'paper' ? 'paper' : 'mean',
      });
      const answer = lwsAnswerReward(await isCorrect(ctx, String(o['correct']) as CorrectnessRule, num(o, 'threshold')), t.retrievalCount, stage, num(o, 'beta'));
      return { total: format + search + answer, components: { format, search, answer } };
    },
  };
}

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
  arena: {
    name: 'arena',
    description: 'ARENA: format (1/0) + accuracy (normalised EM) + relevance (cited refs vs gold: 1 / 0.5 / 0) + bonus (10 when all three are 1)',
    components: ['format', 'accuracy', 'relevance', 'bonus'],
    defaults: { bonus: 10, underscore: true },
    compute(ctx, o) {
      const t = ctx.trajectory;
      const gold = goldReferenceNumbers(referenceIds(t, ctx.contextIds), ctx.supporting ?? []);
      const r = arenaRewards(t, gold, { bonus: num(o, 'bonus'), underscoreToSpace: bool(o, 'underscore') });
      return { total: r.format + r.accuracy + r.relevance + r.bonus, components: { ...r } };
    },
  },
  'prorag-outcome': {
    name: 'prorag-outcome',
    description: 'ProRAG outcome: code form (0 if F1 < 0.2 else 2·F1) + (±1 workflow); spec form F1 + λ_o·1[workflow]',
    components: ['answer', 'workflow'],
    defaults: { form: 'code', lambdaO: 1 },
    compute({ trajectory }, o) {
      const form = String(o['form']);
      if (form !== 'code' && form !== 'spec') throw new InputError(`prorag-outcome: form must be code or spec, got "${form}"`);
      const r = proragOutcome(trajectory, form as ProragForm, num(o, 'lambdaO'));
      return { total: r.total, components: { answer: r.answer, workflow: r.workflow } };
    },
  },
  'reasonrag-terminal': {
    name: 'reasonrag-terminal',
    description: "ReasonRAG code's terminal value: F1 · β^steps (β 0.95)",
    components: ['f1', 'decay'],
    defaults: { beta: 0.95 },
    compute({ trajectory: t }, o) {
      const f1 = metricOf(t, 'f1');
      const decay = num(o, 'beta') ** t.steps.length;
      return { total: f1 * decay, components: { f1, decay } };
    },
  },
};

export interface ComposedScheme {
  expression: string;
  terms: { weight: number; scheme: RewardScheme; options: Record<string, OptionValue> }[];
  components: string[];
  compute(ctx: RewardContext): Promise<RewardResult>;
}

function parseValue(v: string): OptionValue {
  if (v === 'true' || v === 'false') return v === 'true';
  const n = Number(v);
  return v.trim() !== '' && Number.isFinite(n) ? n : v;
}

/** Parses "w1*scheme1+scheme2" and `k=v` / `scheme.k=v` options into a weighted sum of schemes. */
export function composeScheme(expression: string, optionArgs: readonly string[] = []): ComposedScheme {
  const terms = expression.split('+').map((raw) => {
    const m = /^\s*(?:([0-9.eE+-]+)\s*\*\s*)?([a-z0-9-]+)\s*$/.exec(raw);
    const scheme = m ? SCHEMES[m[2]!] : undefined;
    if (!m || !scheme) throw new InputError(`unknown reward scheme "${raw.trim()}"`, `use one of ${Object.keys(SCHEMES).join(', ')}, or a weighted sum like 0.5*f1+lws-stage1`);
    return { weight: m[1] === undefined ? 1 : Number(m[1]), scheme, options: { ...scheme.defaults } };
  });
  for (const arg of optionArgs) {
    const eq = arg.indexOf('=');
    if (eq < 1) throw new InputError(`--option "${arg}": expected key=value`, 'e.g. --option beta=0.3');
    const key = arg.slice(0, eq);
    const value = parseValue(arg.slice(eq + 1));
    const dot = key.indexOf('.');
    const [target, name] = dot > 0 ? [key.slice(0, dot), key.slice(dot + 1)] : [undefined, key];
    const hit = terms.filter((t) => (!target || t.scheme.name === target) && name in t.scheme.defaults);
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
