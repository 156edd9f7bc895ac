/**
 * ProRAG MCTS and PRM-label parity: ragtrail's compat functions (src/process/prorag-mcts.ts,
 * src/process/prorag-filter.ts) against what the authors' own code returned on seeded inputs
 * (test/fixtures/parity-rl/prorag_*; each SOURCE.md names the call; scripts/parity/prorag_mcts.py regenerates
 * them from a checkout of lilinwz/ProRAG at c7a6411). Every case must match, exactly: the compat functions
 * do the authors' float operations in the authors' order. Each set also counts how often ragtrail's default
 * (mcts.ts `puctScore` and `backup`, `f1Score`, `parseSiblingVerdict`) agrees, to keep the documented
 * differences honest.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cases, type Num, tally, toNum } from '../rewards/parity-helpers.js';
import { backup, puctScore } from '../../src/process/mcts.js';
import { proragAuthorsBackup, proragAuthorsIsTerminal, proragAuthorsSelect, proragAuthorsTerminalReward } from '../../src/process/prorag-mcts.js';
import {
  proragAuthorsCollectJobs, proragAuthorsFormatCheck, proragAuthorsLabel, proragAuthorsNormalizeQ, type ProragJob, type ProragTreeDict,
} from '../../src/process/prorag-filter.js';
import { parseSiblingVerdict } from '../../src/process/sibling-judge.js';
import { f1Score } from '../../src/core/metrics.js';
import { PyError } from '../../src/core/pyjson.js';
import { pyStrip } from '../../src/core/text.js';

/** Same number, NaN equal to NaN (the compat functions repeat the authors' operations, so no tolerance). */
const same = (a: number, b: number) => (Number.isNaN(b) ? Number.isNaN(a) : a === b);

/** A raised error as the fixture records it, or a mismatch. */
function raises(run: () => unknown, expected: { type: string; message: string }): boolean {
  try {
    run();
    return false;
  } catch (e) {
    return e instanceof PyError && e.pythonType === expected.type && e.message === expected.message;
  }
}

describe('ProRAG MCTS (prorag/prm/mcts.py at c7a6411)', () => {
  it('Node.select_best_child: PUCT with Q / (N + 1e-8), the first strictly best, none when no score beats −∞', () => {
    interface C { id: string; c_puct: Num; parent_n: number; children: { q: Num; n: number; prior: Num }[]; expected: { index: number | null } }
    const all = cases<C>('prorag_mcts_puct');
    let defaultAgrees = 0;
    tally('prorag_mcts_puct', all.map((c) => {
      const kids = c.children.map((k) => ({ W: toNum(k.q), N: k.n, prior: toNum(k.prior), pending: 0 }));
      const ours = proragAuthorsSelect(kids, c.parent_n, toNum(c.c_puct)) ?? null;
      // ragtrail's Mcts.select: the first child of the highest puctScore, whatever the scores.
      let best = -1;
      let bestScore = -Infinity;
      kids.forEach((k, i) => {
        const s = puctScore(k, c.parent_n, toNum(c.c_puct));
        if (best < 0 || s > bestScore) [best, bestScore] = [i, s];
      });
      if ((best < 0 ? null : best) === c.expected.index) defaultAgrees++;
      return { id: c.id, ok: ours === c.expected.index, detail: `ours ${ours}, theirs ${c.expected.index}` };
    }));
    console.log(`prorag_mcts_puct: ragtrail's default selection agrees on ${defaultAgrees} of ${all.length}`);
  });

  it('Node.backpropagate: N += 1, Q += r, r ← r · γ from the node up to the root', () => {
    interface C { id: string; gamma: Num; reward: Num; start: number; chain: { q: Num; n: number }[]; expected: { chain: { q: Num; n: number }[] } }
    const all = cases<C>('prorag_mcts_backprop');
    let defaultAgrees = 0;
    tally('prorag_mcts_backprop', all.map((c) => {
      const fresh = () => c.chain.map((k) => ({ W: toNum(k.q), N: k.n }));
      const ours = fresh();
      proragAuthorsBackup(ours.slice(0, c.start + 1), toNum(c.reward), toNum(c.gamma));
      const theirs = c.expected.chain.map((k) => ({ W: toNum(k.q), N: k.n }));
      const match = (xs: { W: number; N: number }[]) => xs.every((x, i) => x.N === theirs[i]!.N && same(x.W, theirs[i]!.W));
      const dflt = fresh();
      backup(dflt.slice(0, c.start + 1), toNum(c.reward), toNum(c.gamma));
      if (match(dflt)) defaultAgrees++;
      return { id: c.id, ok: match(ours), detail: JSON.stringify({ ours, theirs }) };
    }));
    console.log(`prorag_mcts_backprop: ragtrail's default backup (γ^d · value) agrees exactly on ${defaultAgrees} of ${all.length}`);
  });

  it('AsyncMCTS._compute_terminal_reward (F1 of the first <answer>) and _is_terminal', () => {
    type C = { id: string } & ({ kind: 'reward'; action: string; final_answer: string; expected: Num } | { kind: 'terminal'; state: string; expected: boolean });
    const all = cases<C>('prorag_mcts_terminal');
    let rewards = 0;
    let defaultAgrees = 0;
    tally('prorag_mcts_terminal', all.map((c) => {
      if (c.kind === 'terminal') {
        const ours = proragAuthorsIsTerminal(c.state);
        return { id: c.id, ok: ours === c.expected, detail: `ours ${ours}, theirs ${c.expected}` };
      }
      const ours = proragAuthorsTerminalReward(c.action, c.final_answer);
      // ragtrail's default scores an answer with the SQuAD-normalised F1 (here on the same extracted text).
      const m = /<answer>([\s\S]*?)<\/answer>/.exec(c.action);
      rewards++;
      if (same(m ? f1Score(pyStrip(m[1]!), c.final_answer).f1 : 0, toNum(c.expected))) defaultAgrees++;
      return { id: c.id, ok: same(ours, toNum(c.expected)), detail: `ours ${ours}, theirs ${c.expected}` };
    }));
    console.log(`prorag_mcts_terminal: the SQuAD-normalised F1 agrees on ${defaultAgrees} of ${rewards} reward cases`);
  });
});

describe('ProRAG PRM pair labels (prorag/prm/filter.py at c7a6411)', () => {
  type Reason = unknown;
  /** Non-finite floats in a reason are written {"py_float": "NaN"}. */
  const decode = (v: Reason): unknown => {
    if (Array.isArray(v)) return v.map(decode);
    if (v !== null && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (Object.keys(o).length === 1 && typeof o['py_float'] === 'string') return toNum(o['py_float'] as Num);
      return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, decode(x)]));
    }
    return v;
  };
  type C = { id: string } & (
    | { kind: 'normalize'; q: Num; n: Num; expected: Num }
    | { kind: 'format'; action: string; expected: boolean }
    | { kind: 'jobs'; tree: ProragTreeDict; question: string; expected: ProragJob[] | undefined; error?: { type: string; message: string } }
    | { kind: 'label'; job: ProragJob & { id: number }; reply: string; expected: unknown }
  );

  it('normalize_mcts_q, format_check, traverse_and_collect_jobs, and the pairs made from judge replies', () => {
    const all = cases<C>('prorag_prm_labels');
    const counts: Record<string, number> = {};
    let labels = 0;
    let defaultAgrees = 0;
    tally('prorag_prm_labels', all.map((c) => {
      counts[c.kind] = (counts[c.kind] ?? 0) + 1;
      if (c.kind === 'normalize') {
        const ours = proragAuthorsNormalizeQ(toNum(c.q), toNum(c.n));
        return { id: c.id, ok: same(ours, toNum(c.expected)), detail: `ours ${ours}, theirs ${c.expected}` };
      }
      if (c.kind === 'format') {
        const ours = proragAuthorsFormatCheck(c.action);
        return { id: c.id, ok: ours === c.expected, detail: `ours ${ours}, theirs ${c.expected}` };
      }
      if (c.kind === 'jobs') {
        if (c.error) return { id: c.id, ok: raises(() => proragAuthorsCollectJobs(c.tree, c.question), c.error), detail: JSON.stringify(c.error) };
        const ours = proragAuthorsCollectJobs(c.tree, c.question);
        let ok = true;
        try {
          assert.deepStrictEqual(ours, c.expected);
        } catch {
          ok = false;
        }
        return { id: c.id, ok, detail: JSON.stringify({ ours, theirs: c.expected }) };
      }
      const ours = proragAuthorsLabel(c.job, c.reply);
      const theirs = decode(c.expected) as ReturnType<typeof proragAuthorsLabel>;
      let ok = true;
      try {
        assert.deepStrictEqual(ours, theirs);
      } catch {
        ok = false;
      }
      // ragtrail's own reader of the judge's reply: the same pair, or no pair where the authors make none.
      labels++;
      const v = parseSiblingVerdict(c.reply, c.job.candidates.length);
      const mine = v.kind === 'pair' ? [c.job.candidates[v.chosen]!.action, c.job.candidates[v.rejected]!.action] : null;
      const theirPair = theirs ? [theirs.chosen.new_step, theirs.rejected.new_step] : null;
      if (JSON.stringify(mine) === JSON.stringify(theirPair)) defaultAgrees++;
      return { id: c.id, ok, detail: JSON.stringify({ ours, theirs }) };
    }));
    console.log(`prorag_prm_labels: ${JSON.stringify(counts)}; ragtrail's parseSiblingVerdict gives the same pair (or none) on ${defaultAgrees} of ${labels} replies`);
  });
});
