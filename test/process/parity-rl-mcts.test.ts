/**
 * RL parity for the search-tree statistics and pair rules: ReasonRAG's MCTS node updates and UCT selection
 * (pipeline/reasonrag_pipeline.py @225e249) and RAG-Gym's PRM pair rule (reward.py `reward_training`
 * @2abbdd48), against what the authors' code returned on seeded inputs (test/fixtures/parity-rl/<set>/;
 * scripts/parity/reasonrag_mcts.py and raggym_pairs.py regenerate them). Every case must match.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agrees, cases, type Num, tally, toNum } from '../rewards/parity-helpers.js';
import {
  reasonragAuthorsBackpropagate, reasonragAuthorsSelectChild, reasonragAuthorsStats, reasonragAuthorsUct, reasonragAuthorsUpdateReward,
  type ReasonRagAuthorsStats,
} from '../../src/process/reasonrag-mcts.js';
import { uctScore } from '../../src/process/mcts.js';
import { ragGymAuthorsPrmPairs, type RagGymPrmPair } from '../../src/process/rag-gym-pairs.js';
import { PyError } from '../../src/core/pyjson.js';
import { numpyMean } from '../../src/core/numpy.js';

const same = (ours: number, theirs: Num) => agrees(ours, toNum(theirs), 'float64');

describe('ReasonRAG MCTS statistics (reasonrag_pipeline.py at 225e249)', () => {
  it('update_reward: the running mean of the terminal rewards (np.mean) after every update', () => {
    interface C { id: string; rewards: Num[]; expected: { means: Num[] } }
    tally('reasonrag_running_mean', cases<C>('reasonrag_running_mean').map((c) => {
      const node = reasonragAuthorsStats();
      const ours = c.rewards.map((r) => {
        reasonragAuthorsUpdateReward(node, toNum(r));
        return node.reward!;
      });
      // NumPy's pairwise order, to the last bit where values cancel.
      const ok = ours.length === c.expected.means.length && ours.every((x, i) => same(x, c.expected.means[i]!));
      return { id: c.id, ok, detail: JSON.stringify({ ours: ours.slice(-3), theirs: c.expected.means.slice(-3) }) };
    }));
  });

  it('backpropagate: N, Q and the reward mean of every node after the seeded updates', () => {
    interface C { id: string; parents: number[]; events: { node: number; Q: Num; reward: Num | null }[]; expected: { nodes: { N: number; Q: Num; reward: Num | null }[] } }
    tally('reasonrag_q_update', cases<C>('reasonrag_q_update').map((c) => {
      const nodes = c.parents.map(() => reasonragAuthorsStats());
      const pathTo = (i: number): ReasonRagAuthorsStats[] => (i < 0 ? [] : [...pathTo(c.parents[i]!), nodes[i]!]);
      for (const e of c.events) reasonragAuthorsBackpropagate(pathTo(e.node), toNum(e.Q), e.reward === null ? null : toNum(e.reward));
      const ok = nodes.every((n, i) => {
        const t = c.expected.nodes[i]!;
        return n.N === t.N && same(n.Q, t.Q) && (t.reward === null ? n.reward === undefined : n.reward !== undefined && same(n.reward, t.reward));
      });
      return { id: c.id, ok, detail: JSON.stringify({ ours: nodes.map((n) => [n.N, n.Q, n.reward]), theirs: c.expected.nodes }) };
    }));
  });

  interface U {
    id: string; c: Num; default_uct_score: Num; parent_N: number; children: { N: number; Q: Num }[];
    expected: { chosen?: number; scores: (Num | { error: { type: string; message: string } })[] }; error?: { type: string; message: string };
  }
  const pyErr = (run: () => unknown): { type: string; message: string } | undefined => {
    try {
      run();
      return undefined;
    } catch (e) {
      if (!(e instanceof PyError)) throw e;
      return { type: e.pythonType, message: e.message };
    }
  };

  it('_uct / _select_child: every child score and the child chosen (ties, unvisited children, c, default score, errors)', () => {
    tally('reasonrag_uct', cases<U>('reasonrag_uct').map((c) => {
      const children = c.children.map((ch) => ({ N: ch.N, Q: toNum(ch.Q) }));
      const [cc, dflt] = [toNum(c.c), toNum(c.default_uct_score)];
      const scoresOk = children.every((ch, i) => {
        const t = c.expected.scores[i]!;
        if (typeof t === 'object') return JSON.stringify(pyErr(() => reasonragAuthorsUct(ch, c.parent_N, cc, dflt))) === JSON.stringify(t.error);
        return same(reasonragAuthorsUct(ch, c.parent_N, cc, dflt), t);
      });
      const err = pyErr(() => reasonragAuthorsSelectChild(children, c.parent_N, cc, dflt));
      const chosenOk = c.error ? JSON.stringify(err) === JSON.stringify(c.error) : !err && reasonragAuthorsSelectChild(children, c.parent_N, cc, dflt) === c.expected.chosen;
      return { id: c.id, ok: scoresOk && chosenOk, detail: JSON.stringify({ c, err }) };
    }));
  });

  it("ragtrail's default UCT (the paper's eq. 5) differs on purpose: the table's example, and how often the pick agrees", () => {
    // Children (Q 0.92, N 2) and (Q 0.5, N 1) under a parent with 3 visits, c = 1.414: the authors'
    // Q + c·√(ln 3 / N) gives 1.968 and 1.982 (the second); eq. 5's Q + c·√3 / (1 + N) gives 1.736 and 1.725 (the first).
    const kids = [{ N: 2, Q: 0.92 }, { N: 1, Q: 0.5 }];
    assert.equal(reasonragAuthorsSelectChild(kids, 3), 1);
    const ours = kids.map((k) => uctScore({ N: k.N, W: k.Q * k.N, pending: 0 }, 3, 1.414));
    assert.ok(ours[0]! > ours[1]!, JSON.stringify(ours));
    // Over the set's cases that do not raise, with each case's c (unvisited children are +∞ in both).
    const all = cases<U>('reasonrag_uct').filter((c) => !c.error && toNum(c.default_uct_score) === Infinity);
    let agree = 0;
    for (const c of all) {
      const visits = c.children.reduce((s, k) => s + k.N, 0);
      const scores = c.children.map((k) => uctScore({ N: k.N, W: toNum(k.Q) * k.N, pending: 0 }, visits, toNum(c.c)));
      let best = 0;
      scores.forEach((x, i) => {
        if (x > scores[best]!) best = i;
      });
      if (best === c.expected.chosen) agree++;
    }
    assert.deepEqual([agree, all.length], [110, 112]);
  });

  it('np.mean rounds as NumPy does where a left-to-right sum would not', () => {
    const xs = [1e16, 1, -1e16, 1, 1, 1, 1, 1, 1, 1];
    // NumPy: eight running sums, ((1e16 + 1) + (−1e16 + 1)) loses both 1s, then 4 + 1 + 1: 0.6. Left to right: 0.7.
    assert.equal(numpyMean(xs), 0.6);
    assert.equal(xs.reduce((s, x) => s + x, 0) / xs.length, 0.7);
  });
});

describe("RAG-Gym's PRM pair rule (reward_training at 2abbdd48)", () => {
  interface P { question: string; pairs: Omit<RagGymPrmPair, 'question'>[] }
  interface C {
    id: string; agent_type: string; outcome_reward: string; eval_ratio: number;
    files: ({ name: string; text: string } | { name: string; json: unknown; ascii: boolean })[];
    expected?: { train: P[]; eval: P[] | null }; error?: { type: string; message: string };
  }
  const key = (p: Omit<RagGymPrmPair, 'question'>) => JSON.stringify([p.history, p.chosen, p.rejected]);

  const grouped = (pairs: readonly RagGymPrmPair[] | null): P[] | null => {
    if (pairs === null) return null;
    const out: P[] = [];
    for (const { question, ...rest } of pairs) {
      if (out.at(-1)?.question !== question) out.push({ question, pairs: [] });
      out.at(-1)!.pairs.push(rest);
    }
    return out;
  };
  // Within a question the authors' order is Python's set order (string hashes): compared as multisets.
  const sameSets = (ours: P[] | null, theirs: P[] | null) =>
    ours === null || theirs === null ? ours === theirs
      : ours.length === theirs.length && ours.every((g, i) => g.question === theirs[i]!.question && JSON.stringify(g.pairs.map(key).sort()) === JSON.stringify(theirs[i]!.pairs.map(key).sort()));

  it('positives > 0.75 against negatives < 0.5 in trajectories whose outcome is > 0.75, and the seeded split: every case matches', () => {
    tally('raggym_prm_pairs', cases<C>('raggym_prm_pairs').map((c) => {
      const files = c.files.map((f) => ({ name: f.name, text: 'text' in f ? f.text : JSON.stringify(f.json) }));
      let ours: { train: P[] | null; eval: P[] | null } | { type: string; message: string };
      try {
        const r = ragGymAuthorsPrmPairs(files, { agentType: c.agent_type, outcomeReward: c.outcome_reward, evalRatio: c.eval_ratio });
        ours = { train: grouped(r.train), eval: grouped(r.eval) };
      } catch (e) {
        if (!(e instanceof PyError)) throw e;
        ours = { type: e.pythonType, message: e.message };
      }
      const ok = c.error ? JSON.stringify(ours) === JSON.stringify(c.error)
        : 'train' in ours && sameSets(ours.train, c.expected!.train) && sameSets(ours.eval, c.expected!.eval);
      return { id: c.id, ok, detail: JSON.stringify({ ours, theirs: c.error ?? c.expected }).slice(0, 600) };
    }));
  });
});
