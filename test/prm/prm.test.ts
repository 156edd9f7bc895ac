/** The trained PRM, PRM-guided selection, the judge and remote PRMs. */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Rng } from '../../src/core/rng.js';
import type { Policy, ProposeOptions } from '../../src/agents/policy.js';
import { PROTOCOLS } from '../../src/agents/registry.js';
import type { Move, State } from '../../src/env/env.js';
import { ScriptedLLM } from '../../src/llm/scripted.js';
import { JudgePRM } from '../../src/prm/judge.js';
import { evaluatePairs, type PairX, trainModel } from '../../src/prm/model.js';
import { RemotePRM } from '../../src/prm/remote.js';
import { argmax, createPrm, PrmGuidedPolicy } from '../../src/prm/select.js';
import { type PrmPairRecord, trainPrm } from '../../src/prm/trained.js';
import type { Candidate, PRM } from '../../src/prm/types.js';

const state: State = { question: { id: 'q', question: 'Who directed The Silent Harbor?', answers: ['Maren Tolvik'] }, steps: [], done: false, mustAnswer: false, turnsLeft: 5, searchesLeft: 5 };

/** Pairs from a hidden linear scorer plus label noise: the held-out accuracy a model can reach is known from the data. */
function syntheticPairs(n: number, dim: number, noise: number, seed: string): PairX[] {
  const hidden = new Rng('hidden scorer');
  const w = Array.from({ length: dim }, () => hidden.next() * 2 - 1);
  const rng = new Rng(seed);
  const score = (x: Float64Array) => x.reduce((s, v, i) => s + v * w[i]!, 0);
  return Array.from({ length: n }, () => {
    const a = Float64Array.from({ length: dim }, () => rng.next() * 2 - 1);
    const b = Float64Array.from({ length: dim }, () => rng.next() * 2 - 1);
    let better = score(a) > score(b);
    if (rng.chance(noise)) better = !better;
    return better ? { chosen: a, rejected: b } : { chosen: b, rejected: a };
  });
}

describe('the PRM head and its Bradley–Terry training', () => {
  const train = syntheticPairs(600, 12, 0.1, 'train');
  const test = syntheticPairs(400, 12, 0.1, 'test');
  for (const kind of ['linear', 'mlp'] as const) {
    it(`${kind}: the loss falls from ln 2 and held-out accuracy nears the data's ceiling`, () => {
      // With 10% of labels flipped, a perfect scorer gets 90% of fresh pairs right; chance is 50%.
      // The bar: at least 80% of the way from chance to that ceiling, i.e. 0.5 + 0.8 · (0.9 − 0.5) = 0.82.
      // The loss starts at ln 2 (all scores 0) and must end well below it.
      const losses: number[] = [];
      const model = trainModel(train, { kind, epochs: 40, seed: 1 }, (_e, l) => losses.push(l));
      assert.ok(losses.at(-1)! < Math.log(2) - 0.2 && losses.at(-1)! < losses[0]!, `losses ${losses[0]} → ${losses.at(-1)}`);
      const { accuracy } = evaluatePairs(model, test);
      assert.ok(accuracy >= 0.5 + 0.8 * (0.9 - 0.5), `held-out accuracy ${accuracy}`);
    });
  }
});

describe('the PRM trained on mined pairs', () => {
  it('learns what makes a step good on held-out questions and round-trips through its file', async () => {
    // Hand-made pairs: a query that names the question's subject beats an off-topic or repeated one;
    // answering with text found in the documents beats answering with what was not found.
    const rng = new Rng('pairs');
    const subjects = Array.from({ length: 60 }, (_, i) => `Harbor${i} Tolvik${i}`);
    const pairs: PrmPairRecord[] = subjects.flatMap((subject, i) => {
      const q = `Who directed ${subject}?`;
      const docs = [{ passageId: `p${i}`, title: subject, text: `${subject} was directed by Maren${i} Vask.`, score: 1 }];
      const searched = [{ action: { type: 'search' as const, query: subject }, raw: `<search>${subject}</search>`, docs }];
      const off = `weather report ${rng.int(1000)}`;
      return [
        { id: `q${i}:0:1:2`, state: { question: q, steps: [] }, chosen: { type: 'Q', action: { type: 'search', query: `${subject} director` }, raw: '' }, rejected: { type: 'Q', action: { type: 'search', query: off }, raw: '' } },
        { id: `q${i}:1:3:4`, state: { question: q, steps: searched }, chosen: { type: 'A', action: { type: 'answer', answer: `Maren${i} Vask` }, raw: '' }, rejected: { type: 'A', action: { type: 'answer', answer: `Kiska${i} Goxik` }, raw: '' } },
        { id: `q${i}:1:5:6`, state: { question: q, steps: searched }, chosen: { type: 'A', action: { type: 'answer', answer: `Maren${i} Vask` }, raw: '' }, rejected: { type: 'Q', action: { type: 'search', query: subject }, raw: '' } },
      ];
    });
    const { prm, heldOut } = await trainPrm(pairs, { holdout: 0.25, epochs: 40, seed: 2, embedder: 'hash:64' });
    assert.ok(heldOut.length >= 30);
    const e = await prm.evaluate(heldOut);
    assert.ok(e.accuracy >= 0.9, `held-out accuracy ${e.accuracy}`);
    assert.deepEqual(Object.keys(e.by_type).sort(), ['A', 'Q']);
    assert.ok(prm.saved.training.losses.at(-1)! < prm.saved.training.losses[0]!);
    const { writeFileSync, mkdtempSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const path = join(mkdtempSync(join(tmpdir(), 'prm-')), 'prm.json');
    prm.save(path);
    const { TrainedPRM } = await import('../../src/prm/trained.js');
    const loaded = await TrainedPRM.load(path);
    assert.deepEqual((await loaded.evaluate(heldOut)).accuracy, e.accuracy);
    writeFileSync(path, '{"format":"other"}');
    await assert.rejects(TrainedPRM.load(path), /not supported/);
  });
});

class FixedPolicy implements Policy {
  readonly kind = 'custom' as const;
  readonly name = 'fixed';
  readonly protocol = PROTOCOLS['search-r1'];
  seen: ProposeOptions[] = [];
  constructor(private readonly moves: Move[]) {}
  async propose(_s: State, opts: ProposeOptions = {}): Promise<Move[]> {
    this.seen.push(opts);
    return this.moves.slice(0, opts.n ?? 1);
  }
}

const mv = (q: string): Move => ({ action: { type: 'search', query: q }, raw: `<search>${q}</search>` });

describe('PRM-guided selection (RAG-Gym Alg. 1)', () => {
  it('samples n candidates at the temperature and executes the argmax of the PRM scores', async () => {
    const scores: Record<string, number> = { a: 0.1, b: 0.9, c: 0.5, d: 0.9 };
    const prm: PRM = { name: 'lookup', score: async (_s, cs: readonly Candidate[]) => cs.map((c) => scores[(c.action as { query: string }).query]!) };
    const inner = new FixedPolicy([mv('a'), mv('b'), mv('c'), mv('d'), mv('a')]);
    const guided = new PrmGuidedPolicy(inner, prm, 5, 1.0);
    const [best] = await guided.propose(state, { seed: 3 });
    assert.deepEqual(best!.action, { type: 'search', query: 'b' }); // b and d tie at 0.9: the first wins
    // The repeated "a" is scored once; each candidate's score is kept for reading the run (ragtrail view).
    assert.deepEqual(best!.selection, { candidates: 4, score: 0.9, scored: ['a', 'b', 'c', 'd'].map((q) => ({ action: { type: 'search', query: q }, score: scores[q] })) });
    assert.deepEqual(inner.seen[0], { n: 5, temperature: 1.0, seed: 3 });
    assert.equal(argmax([3, 7, 7, 1]), 1);
  });
  it('chooses among well-formed candidates; malformed ones only when nothing else was sampled', async () => {
    const bad: Move = { action: { type: 'invalid', reason: 'no tag' }, raw: 'hmm' };
    const recovered: Move = { ...mv('r'), formatError: 'unclosed tag' };
    const prm: PRM = { name: 'prefers-malformed', score: async (_s, cs: readonly Candidate[]) => cs.map((c) => (c.action.type === 'invalid' || 'formatError' in c ? 1 : c.raw.length / 100)) };
    const [best] = await new PrmGuidedPolicy(new FixedPolicy([bad, mv('a'), recovered, mv('bb')]), prm, 4).propose(state);
    assert.deepEqual(best!.action, { type: 'search', query: 'bb' });
    assert.equal(best!.selection!.candidates, 2);
    // Nothing well-formed: the PRM picks among what there is.
    const [fallback] = await new PrmGuidedPolicy(new FixedPolicy([bad, recovered]), prm, 2).propose(state);
    assert.equal(fallback!.raw, 'hmm');
    // Switched off, the PRM sees everything (RAG-Gym Alg. 1 as written).
    const [any] = await new PrmGuidedPolicy(new FixedPolicy([mv('a'), bad]), prm, 2, 1.0, 'all').propose(state);
    assert.equal(any!.raw, 'hmm');
  });
  it('a judge ranks the candidates: score 1/(1 + rank)', async () => {
    const judge = new JudgePRM(new ScriptedLLM(['{"ranked_indices": [2, 0, 1]}']));
    assert.deepEqual(await judge.score(state, [mv('a'), mv('b'), mv('c')]), [0.5, 1 / 3, 1]);
  });
  it('remote scorers: vLLM pooling and TEI rerank request shapes', async () => {
    const seen: unknown[] = [];
    const server = createServer(async (req, res) => {
      let raw = '';
      for await (const c of req) raw += c;
      const body = JSON.parse(raw) as { input?: string[]; texts?: string[] };
      seen.push(body);
      const out = req.url === '/rerank' ? body.texts!.map((t, index) => ({ index, score: t.length })).reverse() : { data: body.input!.map((t) => ({ data: [t.length % 7] })) };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const rerank = await new RemotePRM(`${base}/rerank`, { shape: 'tei-rerank' }).score(state, [mv('aa'), mv('a')]);
      assert.deepEqual(rerank, ['<search>aa</search>'.length, '<search>a</search>'.length]);
      assert.match((seen[0] as { query: string }).query, /^Question: Who directed The Silent Harbor\?/);
      const pooled = await new RemotePRM(`${base}/pooling`, { shape: 'vllm-pooling', model: 'prm' }).score(state, [mv('x')]);
      assert.equal(pooled.length, 1);
      assert.equal((seen[1] as { model: string }).model, 'prm');
      // The evidence input shows each step's text and the documents found; the default summarises.
      const searched: State = {
        ...state,
        steps: [{ action: { type: 'search', query: 'Silent Harbor director' }, raw: '<search>Silent Harbor director</search>', docs: [{ passageId: 'p1', title: 'The Silent Harbor', text: 'The Silent Harbor was directed by Mara Voss.', score: 1 }] }],
      };
      await new RemotePRM(`${base}/pooling`, { shape: 'vllm-pooling', input: 'evidence' }).score(searched, [mv('x')]);
      await createPrm(`remote:vllm-pooling:${base}/pooling`, {}, { input: 'evidence' }).then((p) => p.score(searched, [mv('x')]));
      await new RemotePRM(`${base}/pooling`, { shape: 'vllm-pooling' }).score(searched, [mv('x')]);
      const evidence = 'Question: Who directed The Silent Harbor?\nStep 1: <search>Silent Harbor director</search>\nDocuments found:\nDoc 1 (Title: The Silent Harbor) The Silent Harbor was directed by Mara Voss.\n\nNext step:\n<search>x</search>';
      assert.deepEqual((seen[2] as { input: string[] }).input, [evidence]);
      assert.deepEqual((seen[3] as { input: string[] }).input, [evidence]);
      assert.deepEqual((seen[4] as { input: string[] }).input, ['Question: Who directed The Silent Harbor?\nStep 1: searched for "Silent Harbor director" and found: The Silent Harbor\n\nNext step:\n<search>x</search>']);
    } finally {
      server.close();
    }
  });
});
