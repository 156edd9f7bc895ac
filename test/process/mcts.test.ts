/** MCTS pieces with hand-computed numbers, and whole searches on a toy environment. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Question } from '../../src/core/types.js';
import type { Policy, ProposeOptions } from '../../src/agents/policy.js';
import { PROTOCOLS } from '../../src/agents/registry.js';
import { type Move, RagEnv, type State } from '../../src/env/env.js';
import { backup, Mcts, priorsOf, puctScore, PUCT_DEFAULTS, uctScore, UCT_DEFAULTS } from '../../src/process/mcts.js';
import { minePairs } from '../../src/process/mine.js';
import { parseRanking } from '../../src/process/rank.js';
import { saveTree, q } from '../../src/process/tree.js';
import { parseJudgeValue, spre } from '../../src/process/values.js';
import type { Hit, Retriever } from '../../src/retrieval/types.js';

const close = (a: number, b: number, tol = 1e-9) => assert.ok(Math.abs(a - b) <= tol, `${a} vs ${b}`);

describe('selection scores', () => {
  it('UCT (ReasonRAG eq. 5): Q + c·√(Σ N siblings)/(1 + N); unvisited = ∞', () => {
    // siblings N = 3 and 1 (Σ = 4); child A: W 1.5, N 3 → Q 0.5 + 1.414·2/4 = 1.207
    close(uctScore({ N: 3, W: 1.5, pending: 0 }, 4, 1.414), 0.5 + (1.414 * 2) / 4);
    // child B: W 0.9, N 1 → 0.9 + 1.414·2/2 = 2.314: the less visited child wins despite its lower… Q? no, higher
    close(uctScore({ N: 1, W: 0.9, pending: 0 }, 4, 1.414), 0.9 + 1.414);
    assert.equal(uctScore({ N: 0, W: 0, pending: 0 }, 4, 1.414), Infinity);
    // a pending (virtual) visit counts as a visit with value 0: W 0.9 over N 2 → 0.45 + 1.414·2/3
    close(uctScore({ N: 1, W: 0.9, pending: 1 }, 4, 1.414), 0.45 + (1.414 * 2) / 3);
  });
  it('PUCT (ProRAG): Q + c·P·√N(s)/(1 + N(s,a)); unvisited Q = 0', () => {
    // parent N = 9 (√ = 3), c 2.5: child N 2, W 1.2, P 0.3 → 0.6 + 2.5·0.3·3/3 = 1.35
    close(puctScore({ N: 2, W: 1.2, pending: 0, prior: 0.3 }, 9, 2.5), 1.35);
    // unvisited, P 0.5 → 0 + 2.5·0.5·3/1 = 3.75
    close(puctScore({ N: 0, W: 0, pending: 0, prior: 0.5 }, 9, 2.5), 3.75);
  });
  it('priors per mode: length-normalised (mean token log-prob), summed, uniform', () => {
    // a: log-prob −2 over 4 tokens (mean −0.5); b: −1 over 1 token (mean −1).
    const moves: Move[] = [
      { action: { type: 'answer', answer: 'a' }, raw: 'a', logprob: -2, logprobTokens: 4 },
      { action: { type: 'answer', answer: 'b' }, raw: 'b', logprob: -1, logprobTokens: 1 },
    ];
    close(priorsOf(moves, 'length-normalised')[0]!, 1 / (1 + Math.exp(-0.5))); // 0.6225: the long step is not penalised
    close(priorsOf(moves, 'sequence')[0]!, 1 / (1 + Math.E)); // 0.2689
    assert.deepEqual(priorsOf(moves, 'uniform'), [0.5, 0.5]); // ProRAG's code
  });
  it('priors: softmax of sequence log-probabilities, uniform without them', () => {
    const p = priorsOf([{ action: { type: 'answer', answer: 'a' }, raw: 'a', logprob: Math.log(3) }, { action: { type: 'answer', answer: 'b' }, raw: 'b', logprob: Math.log(1) }]);
    close(p[0]!, 0.75);
    close(p[1]!, 0.25);
    assert.deepEqual(priorsOf([{ action: { type: 'answer', answer: 'a' }, raw: 'a' }, { action: { type: 'answer', answer: 'b' }, raw: 'b' }]), [0.5, 0.5]);
  });
});

describe('backpropagation', () => {
  it('UCT: N += 1 along the path, Q the running mean of the values', () => {
    const path = [{ N: 0, W: 0 }, { N: 0, W: 0 }, { N: 0, W: 0 }];
    backup(path, 0.6);
    backup(path.slice(0, 2), 0.2);
    // root: values 0.6 and 0.2 → N 2, Q 0.4; middle: same; leaf: N 1, Q 0.6
    assert.deepEqual(path.map((n) => n.N), [2, 2, 1]);
    close(q(path[0]!), 0.4);
    close(q(path[2]!), 0.6);
  });
  it('PUCT: the value decays by γ per step of distance from the leaf', () => {
    const path = [{ N: 0, W: 0 }, { N: 0, W: 0 }, { N: 0, W: 0 }];
    backup(path, 1, 0.99);
    // leaf 1, parent 0.99, root 0.9801
    assert.deepEqual(path.map((n) => +n.W.toFixed(6)), [0.9801, 0.99, 1]);
  });
});

// ------------------------------------------------------------------------ a toy world to search in

/** Two searchable facts; "bridge" finds the passage naming the answer. */
class ToyRetriever implements Retriever {
  readonly name = 'toy';
  async search(query: string): Promise<Hit[]> {
    return query.includes('bridge') ? [{ passageId: 'p1', title: 'Bridge', text: 'The answer is Paris.', score: 1 }] : [{ passageId: 'p0', title: 'Noise', text: 'Nothing here.', score: 1 }];
  }
  async searchBatch(qs: readonly string[]) {
    return Promise.all(qs.map((x) => this.search(x)));
  }
}

/**
 * A deterministic toy policy: first step searches "bridge" or "noise" (by the seed's parity), then
 * answers "Paris" if the bridge passage was found, else "Lyon".
 */
class ToyPolicy implements Policy {
  readonly kind = 'custom' as const;
  readonly name = 'toy';
  readonly protocol = PROTOCOLS['search-r1'];
  calls = 0;
  async propose(state: State, opts: ProposeOptions = {}): Promise<Move[]> {
    this.calls++;
    return Array.from({ length: opts.n ?? 1 }, (_, k) => {
      const seed = (opts.seed ?? 0) + k;
      if (state.steps.length === 0 && !state.mustAnswer) {
        const query = seed % 2 === 0 ? 'bridge fact' : 'noise fact';
        return { action: { type: 'search', query }, raw: `<think>x</think><search> ${query} </search>` };
      }
      const found = state.steps.some((s) => s.docs?.some((d) => d.passageId === 'p1'));
      const answer = found ? 'Paris' : 'Lyon';
      return { action: { type: 'answer', answer }, raw: `<think>x</think><reflect>y</reflect><answer> ${answer} </answer>` };
    });
  }
}

const question: Question = { id: 'toy', question: 'What is the answer?', answers: ['Paris'] };
const env = () => new RagEnv({ retriever: new ToyRetriever(), topK: 1, maxTurns: 3 });

describe('SPRE node values', () => {
  it('Q = mean over k rollouts of F1 · α^steps', async () => {
    const e = env();
    const root = e.reset(question);
    const afterBridge = (await e.step(root, { action: { type: 'search', query: 'bridge' }, raw: '' })).state;
    // every rollout from here answers Paris in one more step: total 2 steps → 1 · 0.9² = 0.81
    const r = await spre(e, new ToyPolicy(), afterBridge, { k: 3, alpha: 0.9, temperature: 1, seed: 0 });
    close(r.value, 0.81);
    const afterNoise = (await e.step(root, { action: { type: 'search', query: 'noise' }, raw: '' })).state;
    close((await spre(e, new ToyPolicy(), afterNoise, { k: 3, alpha: 0.9, temperature: 1, seed: 0 })).value, 0);
  });
  it('judge values are read from "So the score is X"', () => {
    assert.equal(parseJudgeValue('Flaws: none. So the score is 85'), 0.85);
    assert.equal(parseJudgeValue('score is 40 … actually, so the score is 30.'), 0.3);
    assert.equal(parseJudgeValue('So the score is 150'), 1);
    assert.equal(parseJudgeValue('no grade'), undefined);
  });
});

describe('whole searches', () => {
  it('UCT with SPRE separates the good first step from the bad one', async () => {
    const m = new Mcts(env(), new ToyPolicy(), env().reset(question), { ...UCT_DEFAULTS, simulations: 8, rollouts: 2, batch: 2, seed: 0 });
    const tree = await m.run();
    const first = tree.children(tree.root);
    const bridge = first.find((c) => c.step!.action.type === 'search' && c.step!.action.query.startsWith('bridge'));
    const noise = first.find((c) => c.step!.action.type === 'search' && c.step!.action.query.startsWith('noise'));
    assert.ok(bridge && noise, 'both first steps were explored');
    assert.ok(q(bridge) > q(noise) + 0.5, `${q(bridge)} vs ${q(noise)}`);
    // N of the root is the number of iterations that passed through it.
    assert.equal(tree.root.N, m.stats.iterations);
    const saved = saveTree(tree, { id: 'toy', question, method: 'mcts-spre', agent: 'search-r1', policy: 'toy', seed: 0, iterations: m.stats.iterations, kept: true });
    const pairs = minePairs(saved);
    const top = pairs.find((p) => p.parent === 0)!;
    assert.equal(top.chosen.type, 'Q');
    assert.match(top.chosen.raw, /bridge/);
    assert.ok(top.gap >= 0.5);
  });

  it('PUCT expands a leaf into several children and backs up decayed rewards', async () => {
    const m = new Mcts(env(), new ToyPolicy(), env().reset(question), { ...PUCT_DEFAULTS, simulations: 6, maxChildren: 2, batch: 1, seed: 0 });
    const tree = await m.run();
    const first = tree.children(tree.root);
    assert.equal(first.length, 2);
    close(first.reduce((s, c) => s + c.prior, 0), 1);
    const bridge = first.find((c) => c.step!.raw.includes('bridge'))!;
    // Every simulation through "bridge" ends in Paris (F1 1); at distance 0 the child gets 1, then 0.99 upward.
    assert.ok(q(bridge) > 0.9);
    assert.equal(tree.root.N, 6);
  });

  it('PUCT selection weighs children by their prior: a 0.9-prior child is revisited before a 0.1-prior one is tried', async () => {
    // The root expands into "noise" (P 0.9) and "bridge" (P 0.1); the first simulation runs the higher prior.
    // Second selection, root N = 1: noise (N 1, Q 0) scores 0 + 2.5·0.9·√1/2 = 1.125, bridge (N 0) 2.5·0.1·1/1 = 0.25.
    // With uniform priors: noise 2.5·0.5/2 = 0.625 < bridge 2.5·0.5 = 1.25, so bridge is tried second.
    class PriorPolicy extends ToyPolicy {
      override async propose(state: State, opts: ProposeOptions = {}): Promise<Move[]> {
        if (state.steps.length > 0 || state.mustAnswer) return super.propose(state, opts);
        return [
          { action: { type: 'search', query: 'noise fact' }, raw: '<search> noise fact </search>', logprob: Math.log(0.9), logprobTokens: 1 },
          { action: { type: 'search', query: 'bridge fact' }, raw: '<search> bridge fact </search>', logprob: Math.log(0.1), logprobTokens: 1 },
        ];
      }
    }
    const visits = async (prior: 'length-normalised' | 'uniform') => {
      const m = new Mcts(env(), new PriorPolicy(), env().reset(question), { ...PUCT_DEFAULTS, simulations: 2, maxChildren: 2, batch: 1, seed: 0, prior });
      const tree = await m.run();
      const [noise, bridge] = ['noise', 'bridge'].map((w) => tree.children(tree.root).find((c) => c.step!.raw.includes(w))!);
      return { noise: noise!.N, bridge: bridge!.N, priors: [noise!.prior, bridge!.prior] };
    };
    const weighted = await visits('length-normalised');
    close(weighted.priors[0]!, 0.9);
    assert.deepEqual({ noise: weighted.noise, bridge: weighted.bridge }, { noise: 2, bridge: 0 });
    const uniform = await visits('uniform');
    assert.deepEqual(uniform.priors, [0.5, 0.5]);
    assert.deepEqual({ noise: uniform.noise, bridge: uniform.bridge }, { noise: 1, bridge: 1 });
  });

  it('is deterministic for a seed, whatever the batch timing', async () => {
    const run = async () => {
      const m = new Mcts(env(), new ToyPolicy(), env().reset(question), { ...UCT_DEFAULTS, simulations: 9, batch: 3, seed: 5 });
      const t = await m.run();
      return JSON.stringify(saveTree(t, { id: 'toy', question, method: 'mcts-spre', agent: 'search-r1', policy: 'toy', seed: 5, iterations: 9, kept: true }));
    };
    assert.equal(await run(), await run());
  });
});

describe('ranking replies', () => {
  it('reads ranked_indices, falls back to numbers, fills in what is missing', () => {
    assert.deepEqual(parseRanking('{"ranked_indices": [2, 0, 1]}', 3), { order: [2, 0, 1], malformed: false });
    assert.deepEqual(parseRanking('```json\n{"ranked_indices": [1]}\n```', 3), { order: [1, 0, 2], malformed: false });
    assert.deepEqual(parseRanking('I prefer 2 then 2 then 7 then 0', 3), { order: [2, 0, 1], malformed: false });
    assert.deepEqual(parseRanking('no idea', 3), { order: [0, 1, 2], malformed: true });
  });
});
