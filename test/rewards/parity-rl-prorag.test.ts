/**
 * RL parity for ProRAG's RL stage and its RFT filters: ragtrail's compat=authors functions against the values the
 * authors' code (lilinwz/ProRAG at c7a64110) returned on seeded inputs (test/fixtures/parity-rl/prorag_*; each
 * SOURCE.md names the file, function and call; scripts/parity/prorag_rl.py regenerates them from a checkout).
 * Every case of every set must match. float32 values are compared as test/rewards/parity-helpers.ts says;
 * bfloat16 scores exactly.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agrees, cases, type Num, tally, toNum } from './parity-helpers.js';
import { dualGranularityAdvantages, type DualSample, proragAuthorsDualAdvantages } from '../../src/rewards/rl.js';
import { type PrmDtype, proragAuthorsRolloutHop, proragAuthorsStepScore, proragStepRewards } from '../../src/rewards/prorag.js';
import { pySplit } from '../../src/core/text.js';
import { type ProragAuthorsPrmItem, proragAuthorsEmEpisode, proragAuthorsPrmFilter, rftKeptSteps } from '../../src/learn/gym/rft.js';
import { sigmoid } from '../../src/rewards/prorag.js';
import { exactMatch } from '../../src/core/metrics.js';

describe("ProRAG's RL advantage (prorag/rl/trainer.py _generate_and_score_completions at c7a64110)", () => {
  interface C { id: string; num_generations: number; prm_beta: number; outcome: number[]; mask: number[][]; scores: Num[][]; expected: { advantages: Num[][] } | { error: string; message: string } }
  const set = cases<C>('prorag_rl_advantage');
  // Each row as a DualSample, one "step" per token (the rollout gives every token of a hop its hop's score), padded to the batch's width.
  const samples = (c: C): DualSample[] => {
    const width = Math.max(c.prm_beta > 0 ? 0 : 1, ...c.mask.map((m) => m.length));
    return c.mask.map((m, i) => ({
      outcome: c.outcome[i]!,
      stepRewards: c.scores[i]!.map(toNum),
      tokenSteps: Array.from({ length: width }, (_, j) => (m[j] ? j : -1)),
    }));
  };
  const groups = <T>(xs: T[], g: number) => xs.flatMap((_, i) => (i % g ? [] : [xs.slice(i, i + g)]));

  it('compat=authors (outcome (r − mean) / (std + 1e-4) on every token + β · population-normalised token scores): every case matches', () => {
    tally('prorag_rl_advantage', set.map((c) => {
      const run = () => groups(samples(c), c.num_generations).flatMap((g) => proragAuthorsDualAdvantages(g, c.prm_beta));
      if ('error' in c.expected) {
        let message = '';
        try {
          run();
        } catch (e) {
          message = (e as Error).message;
        }
        return { id: c.id, ok: message.includes('cannot reshape'), detail: `expected ${c.expected.error}, got "${message}"` };
      }
      const ours = run();
      const theirs = c.expected.advantages.map((r) => r.map(toNum));
      // float32: the normalisations lose the digits the values share, so the rounding grows by max |x| / spread.
      const cond = (xs: number[]) => {
        const f = xs.filter(Number.isFinite);
        const m = f.reduce((s, x) => s + x, 0) / Math.max(f.length, 1);
        const sd = Math.sqrt(f.reduce((s, x) => s + (x - m) ** 2, 0) / Math.max(f.length, 1));
        return Math.max(0, ...f.map(Math.abs)) / (sd + 1e-4);
      };
      const ok = theirs.length === ours.length && theirs.every((row, i) => {
        const g = Math.floor(i / c.num_generations) * c.num_generations;
        const k = 4 * (cond(c.outcome.slice(g, g + c.num_generations)) + c.prm_beta * cond(c.scores.slice(g, g + c.num_generations).flatMap((r, j) => r.map(toNum).filter((_, t) => c.mask[g + j]![t]))));
        // With β = 0 the code keeps one advantage per completion ([B, 1]); ours repeats it on every token.
        const mine = c.prm_beta === 0 ? ours[i]!.slice(0, 1) : ours[i]!;
        return row.length === mine.length && row.every((t, j) => agrees(mine[j]!, t, 'float32', 1, k));
      });
      return { id: c.id, ok, detail: JSON.stringify({ ours, theirs }) };
    }));
  });

  it("ragtrail's default differs on purpose (unbiased step std + 1e-4, 0 for a constant pool, 0 off the mask): counted", () => {
    // Compared on the tokens the loss sees (mask 1), with the case's β as w; a group of one, whose outcome
    // advantage the code makes NaN, counts as a difference.
    let same = 0;
    for (const c of set) {
      if ('error' in c.expected) continue;
      const theirs = c.expected.advantages.map((r) => r.map(toNum));
      const ours = groups(samples(c), c.num_generations).flatMap((g) => dualGranularityAdvantages(g, { w: c.prm_beta }).map((a) => a.advantages));
      const ok = c.mask.every((m, i) => m.every((on, j) => !on || agrees(ours[i]![j]!, theirs[i]![c.prm_beta === 0 ? 0 : j]!, 'float32', 1, 1e4)));
      if (ok) same++;
    }
    assert.equal(same, 66, `${same} of 239 agree`);
  });
});

describe("ProRAG's RL step scores (prorag/rl/rollout.py rag_rollout_with_prm with trainer.py get_prm_score at c7a64110)", () => {
  interface C {
    id: string; prm_dtype: PrmDtype | null; prompts: string[]; hops: { text: string; tokens: number }[][]; docs: Record<string, string>; logits: Num[][];
    expected: { scored: string[][] | null; prm_scores: Num[][]; rag_mask: number[][]; completion_tokens: number[] };
  }
  const set = cases<C>('prorag_prm_score');
  const MAX_INTERACTION_STEPS = 11;

  /** Walks one row's hops as the rollout does; returns the PRM's texts (each as what it adds) and the per-token layout. */
  function row(c: C, r: number, score: (logit: number | undefined, step: string) => number) {
    let context = c.prompts[r]!;
    let prev = context;
    const scored: string[] = [];
    const scores: number[] = [];
    const mask: number[] = [];
    for (let h = 0; h < MAX_INTERACTION_STEPS; h++) {
      const hop = c.hops[r]![h] ?? { text: '', tokens: 0 }; // the stand-in model writes nothing once its script is used up
      const out = proragAuthorsRolloutHop(context, hop.text, (q) => c.docs[q]!, pySplit);
      scored.push(out.scored.slice(prev.length));
      prev = out.scored;
      const logit = c.prm_dtype ? toNum(c.logits[r]![h]!) : undefined;
      const s = score(logit, hop.text + out.retrieval);
      for (let t = 0; t < hop.tokens; t++) { scores.push(s); mask.push(1); }
      for (const _ of out.tail) { scores.push(0); mask.push(0); }
      context = out.next;
      if (out.finished) break;
    }
    return { scored, scores, mask };
  }
  const same = (a: number, b: number, dtype: PrmDtype | null) => (dtype === 'float32' ? agrees(a, b, 'float32') : Object.is(a, b) || a === b);

  it('compat=authors (sigmoid in the PRM\'s dtype + format_reward_step, on the hop\'s generated tokens): every case matches', () => {
    tally('prorag_prm_score', set.map((c) => {
      const ok = c.prompts.every((_, r) => {
        const ours = row(c, r, (logit, step) => proragAuthorsStepScore(logit, step, c.prm_dtype ?? 'bfloat16'));
        const theirs = c.expected.prm_scores[r]!.map(toNum);
        return (c.expected.scored === null || JSON.stringify(ours.scored) === JSON.stringify(c.expected.scored[r]))
          && JSON.stringify(ours.mask) === JSON.stringify(c.expected.rag_mask[r]) && ours.mask.length === c.expected.completion_tokens[r]
          && theirs.length === ours.scores.length && theirs.every((t, j) => same(ours.scores[j]!, t, c.prm_dtype));
      });
      return { id: c.id, ok, detail: JSON.stringify({ ours: c.prompts.map((_, r) => row(c, r, (l, s) => proragAuthorsStepScore(l, s, c.prm_dtype ?? 'bfloat16'))), theirs: c.expected }) };
    }));
  });

  it("ragtrail's default step reward differs on purpose (float64 sigmoid; +1 for a step that follows the schema): counted", () => {
    let agree = 0;
    for (const c of set) {
      const ok = c.prompts.every((_, r) => {
        // proragStepRewards' format check reads a parsed step; here the hop's text after the "<step>\n" the context opened.
        const ours = row(c, r, (logit, step) => proragStepRewards({ steps: [{ raw: `<step>\n${step}`, action: { type: 'invalid' } } as never] }, logit === undefined ? undefined : [logit])[0]!);
        return c.expected.prm_scores[r]!.map(toNum).every((t, j) => same(ours.scores[j]!, t, c.prm_dtype));
      });
      if (ok) agree++;
    }
    assert.equal(agree, 12, `${agree} of ${set.length} agree`);
  });
});

describe("ProRAG's RFT filters (prorag/rft/filter_em.py and filter_prm.py at c7a64110)", () => {
  interface Em {
    id: string; max_iter: number; samples: Record<string, string>[]; hops: Record<string, string[]>; docs: Record<string, string>;
    expected: { kept: { id: string; input: string; output: string }[] };
  }
  const em = cases<Em>('prorag_rft_filter_em');
  const gold = (s: Record<string, string>) => s.answer ?? s.Answer!;
  // Inputs are recorded after the sample's first prompt (the authors' template), so the episodes start from "".
  const episode = (c: Em, s: Record<string, string>) => proragAuthorsEmEpisode('', c.hops[s.id!]!, (q) => c.docs[q]!, gold(s), c.max_iter);

  it('EM filter, compat=authors (final answer .lower() == gold .lower(); every step of a matching episode): every case matches, exactly', () => {
    tally('prorag_rft_filter_em', em.map((c) => {
      const ok = c.samples.every((s) => {
        const ours = episode(c, s).kept.map((st) => ({ id: s.id, ...st }));
        return JSON.stringify(ours) === JSON.stringify(c.expected.kept.filter((k) => k.id === s.id));
      });
      return { id: c.id, ok, detail: JSON.stringify({ ours: c.samples.map((s) => episode(c, s)), theirs: c.expected.kept }) };
    }));
  });

  it("ragtrail's default correctness differs on purpose (normalised EM): counted", () => {
    let same = 0;
    for (const c of em) {
      const ok = c.samples.every((s) => {
        const ep = episode(c, s);
        return (exactMatch(ep.finalAnswer, [gold(s)]) === 1) === c.expected.kept.some((k) => k.id === s.id);
      });
      if (ok) same++;
    }
    assert.equal(same, 229, `${same} of ${em.length} agree`);
  });

  interface Prm {
    id: string; eos_token: string; prm_dtype: 'bfloat16' | 'float32'; batch_size: number; items: ProragAuthorsPrmItem[]; existing: ProragAuthorsPrmItem[]; logits: Num[];
    expected: { written: ProragAuthorsPrmItem[] };
  }
  const prm = cases<Prm>('prorag_rft_filter_prm');
  const written = (c: Prm) => proragAuthorsPrmFilter(c.items, c.existing, c.batch_size, (i) => toNum(c.logits[i]!), c.prm_dtype);
  const decoded = (items: ProragAuthorsPrmItem[]) => items.map((it) => ({ ...it, prm_score: toNum(it.prm_score as Num) }));

  it('PRM filter, compat=authors (logit in the model\'s dtype >= 0; skips steps already in the output file): every case matches, exactly', () => {
    tally('prorag_rft_filter_prm', prm.map((c) => {
      const ours = written(c);
      let ok = true;
      try {
        assert.deepStrictEqual(ours, decoded(c.expected.written));
      } catch {
        ok = false;
      }
      return { id: c.id, ok, detail: JSON.stringify({ ours, theirs: c.expected.written }) };
    }));
  });

  it("ragtrail's default step test differs on purpose (sigmoid(score) >= 0.5 in float64, no skipping): counted", () => {
    let same = 0;
    for (const c of prm) {
      const kept = rftKeptSteps(true, c.logits.map((l) => sigmoid(toNum(l))), 0.5, 'step');
      if (JSON.stringify(kept.map((i) => c.items[i]!.id)) === JSON.stringify(c.expected.written.map((w) => w.id))) same++;
    }
    assert.equal(same, 84, `${same} of ${prm.length} agree`);
  });
});
