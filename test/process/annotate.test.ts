/** Pair filters, exports in TRL's field names, and the pipeline's resume equality. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Question } from '../../src/core/types.js';
import type { Step } from '../../src/core/trajectory.js';
import { loadDatasetAll } from '../../src/corpus/dataset.js';
import { generateWorld, writeWorld } from '../../src/corpus/world/index.js';
import { PROTOCOLS } from '../../src/agents/registry.js';
import { SimPolicy } from '../../src/agents/sim.js';
import { RagEnv } from '../../src/env/env.js';
import { annotationPairs } from '../../src/learn/gym/data.js';
import { annotate, deriveOutputs, OUTPUT_FILES } from '../../src/process/annotate.js';
import { preferenceExample, prmPair, sftExamples, stepwiseExamples } from '../../src/process/export.js';
import { minePairs } from '../../src/process/mine.js';
import { bottomUpTreeValues } from '../../src/process/values.js';
import type { SavedNode, SavedTree } from '../../src/process/tree.js';
import { buildIndex, openRetriever } from '../../src/retrieval/index-dir.js';
import type { Retriever } from '../../src/retrieval/types.js';
import { tempDir } from '../helpers.js';

const step = (raw: string, action: Step['action']): Step => ({ action, raw, ...(action.type === 'search' ? { docs: [{ passageId: 'd', title: 'D', text: 'doc text', score: 1 }] } : {}) });
const node = (id: number, parent: number, Q: number, s: Step, extra: Partial<SavedNode> = {}): SavedNode => ({ id, parent, depth: parent < 0 ? 0 : 1, step: s, N: 2, Q, value: Q, prior: 1, terminal: s.action.type === 'answer', answered: true, mustAnswer: false, ...extra });
const question: Question = { id: 'h', question: 'Who directed X?', answers: ['Maren'] };

function handTree(method = 'mcts-spre'): SavedTree {
  const root: SavedNode = { id: 0, parent: -1, depth: 0, N: 8, Q: 0.5, value: 0, prior: 1, terminal: false, answered: true, mustAnswer: false };
  return {
    id: 'h', question, method, agent: 'search-r1', policy: 'test', seed: 0, iterations: 8, kept: true,
    nodes: [
      root,
      node(1, 0, 0.8, step('<think>a</think><search> X director </search>', { type: 'search', query: 'X director' })),
      node(2, 0, 0.3, step('<think>b</think><search> X film </search>', { type: 'search', query: 'X film' })),
      node(3, 0, 0.795, step('<think>c</think><search> X  director </search>', { type: 'search', query: 'X  Director' })), // same action as 1
      node(4, 0, 0.2, step('garbage', { type: 'invalid', reason: 'no tags' })),
      node(5, 0, 0.9, step('<think>d</think><search> other </search>', { type: 'search', query: 'other' }), { answered: false }), // pruned
      node(6, 1, 1, step('<think>e</think><reflect>f</reflect><answer> Maren </answer>', { type: 'answer', answer: 'Maren' }), { score: 1 }),
      node(7, 1, 0.995, step('<think>e</think><reflect>f</reflect><answer> Maren Tolvik </answer>', { type: 'answer', answer: 'Maren Tolvik' }), { score: 0.67 }),
    ],
  };
}

describe('preference mining', () => {
  it('keeps sibling pairs with |ΔQ| ≥ 0.01 and different text, drops pruned branches and same actions', () => {
    const pairs = minePairs(handTree());
    const ids = pairs.map((p) => `${p.chosen.node}>${p.rejected.node}`);
    // Root children live: 1 (0.8), 2 (0.3), 3 (0.795, same action as 1), 4 (0.2, invalid); 5 is pruned.
    // 1>2, 1>4, 3>2, 3>4, 2>4 (ΔQ 0.1); 1 vs 3 is the same action; children of 1: 6 vs 7 differ by 0.005 < 0.01.
    assert.deepEqual(ids.sort(), ['1>2', '1>4', '2>4', '3>2', '3>4']);
    const p = pairs.find((x) => x.chosen.node === 1 && x.rejected.node === 2)!;
    assert.deepEqual([p.chosen.type, p.rejected.type, p.depth], ['Q', 'Q', 0]);
    assert.ok(Math.abs(p.gap - 0.5) < 1e-12);
    assert.equal(pairs.find((x) => x.rejected.node === 4)!.rejected.type, 'X');
  });
  it('bottom-up labels: answer leaves F1 · α^depth, unexpanded leaves their SPRE value, inner nodes N-weighted, unanswered branches pruned', () => {
    const t = handTree();
    t.nodes[6]!.depth = 2;
    t.nodes[7]!.depth = 2;
    t.nodes[7]!.N = 1;
    t.nodes[2]!.answered = false;
    const v = bottomUpTreeValues(t, 0.9);
    // 6: 1 · 0.81; 7: 0.67 · 0.81 = 0.5427; 1: (0.81·2 + 0.5427·1) / 3 = 0.7209; 3 and 4: their own values
    // (0.795, 0.2); 2 and 5 never reached an answer; root: (0.7209·2 + 0.795·2 + 0.2·2) / 6 = 0.5719666….
    const near = (a: number | null | undefined, b: number) => assert.ok(a !== null && a !== undefined && Math.abs(a - b) < 1e-12, `${a} vs ${b}`);
    near(v.get(6), 0.81);
    near(v.get(7), 0.5427);
    near(v.get(1), 0.7209);
    near(v.get(3), 0.795);
    near(v.get(0), 3.4318 / 6);
    assert.equal(v.get(2), null);
    assert.equal(v.get(5), null);
    // Running-mean Q: 6 vs 7 differ by 0.005 (no pair); bottom-up by 0.2673. 1 and 3 are the same action.
    const pairs = minePairs(t, { minGap: 0.01, values: v });
    assert.deepEqual(pairs.map((p) => `${p.chosen.node}>${p.rejected.node}`), ['1>4', '3>4', '6>7']);
    near(pairs[2]!.gap, 0.81 - 0.5427);
    near(pairs[2]!.chosen.value, 0.81);
    assert.equal(pairs[2]!.chosen.q, 1);
  });
  it('ranking trees: best against candidates ranked 2 and below, kept trajectories only', () => {
    const t = handTree('rank');
    t.nodes[1]!.rank = 0;
    t.nodes[2]!.rank = 1;
    t.nodes[3]!.rank = 3;
    t.nodes[4]!.rank = 2;
    const pairs = minePairs(t);
    // node 3 is the same action as the best: dropped; rank 1 (reward 0.5) is never a negative
    assert.deepEqual(pairs.map((p) => `${p.chosen.node}>${p.rejected.node}`), ['1>4']);
    assert.deepEqual(minePairs({ ...t, kept: false }), []);
  });
});

describe('exports', () => {
  const t = handTree();
  const pair = minePairs(t).find((p) => p.chosen.node === 1 && p.rejected.node === 2)!;
  it('TRL conversational preference: prompt / chosen / rejected as message lists', () => {
    const ex = JSON.parse(JSON.stringify(preferenceExample(t, pair)));
    assert.deepEqual(Object.keys(ex), ['prompt', 'chosen', 'rejected']);
    assert.equal(ex.prompt[0].role, 'user');
    assert.match(ex.prompt[0].content, /Question: Who directed X\?/);
    assert.deepEqual(ex.chosen, [{ role: 'assistant', content: '<think>a</think><search> X director </search>' }]);
    assert.deepEqual(ex.rejected, [{ role: 'assistant', content: '<think>b</think><search> X film </search>' }]);
  });
  it('TRL SFT: messages ending in the assistant step; the prompt holds the prior steps', () => {
    const ex = sftExamples(t);
    assert.equal(ex.length, 2); // root → 1 (Q 0.8) → 6 (Q 1)
    assert.equal(ex[1]!.messages.at(-1)!.content, '<think>e</think><reflect>f</reflect><answer> Maren </answer>');
    assert.ok(ex[1]!.messages.some((m) => m.role === 'assistant' && m.content.includes('X director')));
    assert.ok(ex[1]!.messages.some((m) => m.role === 'user' && m.content.includes('<information>Doc 1 (Title: D) doc text')));
  });
  it('TRL stepwise: prompt, completions and labels of equal length, per root-to-answer path', () => {
    const ex = stepwiseExamples(t, 0.5);
    assert.deepEqual(ex.map((e) => Object.keys(e)), [['prompt', 'completions', 'labels'], ['prompt', 'completions', 'labels']]);
    assert.deepEqual(ex.map((e) => e.labels), [[true, true], [true, true]]);
    assert.match(ex[0]!.completions[0]!, /X director <\/search>\n\[documents\]\nDoc 1 \(Title: D\) doc text/);
  });
  it('pairwise PRM set: state with the prior steps, chosen and rejected actions', () => {
    const ex = prmPair(t, pair) as { state: { question: string; steps: unknown[] }; chosen: { type: string }; rejected: { type: string } };
    assert.deepEqual(Object.keys(ex), ['id', 'state', 'chosen', 'rejected', 'gap']);
    assert.deepEqual([ex.state.question, ex.state.steps.length, ex.chosen.type, ex.rejected.type], ['Who directed X?', 0, 'Q', 'Q']);
  });
});

describe('annotate pipeline', () => {
  const tmp = tempDir();
  let questions: Question[] = [];
  let retriever: Retriever;
  before(async () => {
    await writeWorld(join(tmp.dir, 'world'), generateWorld({ seed: 8, entities: 1200, questions: 60 }));
    await buildIndex(join(tmp.dir, 'world', 'corpus.jsonl'), join(tmp.dir, 'index'), { quiet: true });
    retriever = await openRetriever(join(tmp.dir, 'index'));
    questions = (await loadDatasetAll(join(tmp.dir, 'world', 'questions.jsonl'))).questions.slice(0, 24);
  });
  after(tmp.cleanup);

  const run = (outDir: string, qs: Question[], method: 'mcts-spre' | 'mcts-puct' = 'mcts-spre') =>
    annotate({
      method,
      outDir,
      env: new RagEnv({ retriever, topK: 3, maxTurns: 10, maxSearches: 5 }),
      policy: new SimPolicy(PROTOCOLS.reasonrag, 0.6),
      questions: qs,
      mcts: { simulations: method === 'mcts-puct' ? 12 : 7, rollouts: 3 },
      concurrency: 5,
      config: { method, seed: 3 },
      quiet: true,
    });

  it('writes every output file, and a resumed annotation equals an uninterrupted one', async () => {
    const whole = join(tmp.dir, 'whole');
    const r = await run(whole, questions);
    assert.equal(r.annotated, 24);
    assert.ok(r.stats.pairs > 10, `pairs ${r.stats.pairs}`);
    // Interrupted after a third of the questions (the log keeps what finished), then the same command again.
    const resumed = join(tmp.dir, 'resumed');
    await run(resumed, questions.slice(0, 8));
    const again = await run(resumed, questions);
    assert.deepEqual([again.annotated, again.skipped], [16, 8]);
    for (const f of OUTPUT_FILES) {
      const [a, b] = [readFileSync(join(whole, f), 'utf8'), readFileSync(join(resumed, f), 'utf8')];
      if (f === 'trees.jsonl') assert.deepEqual(a.trim().split('\n').sort(), b.trim().split('\n').sort(), f);
      else assert.equal(a, b, f);
    }
    const pref = readFileSync(join(whole, 'trl_preference.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.ok(pref.every((p) => Array.isArray(p.prompt) && p.chosen[0].role === 'assistant' && p.rejected[0].role === 'assistant'));
    assert.ok(r.stats.goldPreferred && r.stats.goldPreferred.share > 0.6, JSON.stringify(r.stats.goldPreferred));
    // SPRE trees are labelled bottom-up by default; --values running-mean re-derives the same trees by Q.
    assert.equal(r.stats.values, 'bottom-up');
    const byQ = await deriveOutputs(whole, questions, { minGap: 0.01, labelThreshold: 0.5, values: 'running-mean' });
    assert.equal(byQ.values, 'running-mean');
    assert.ok(byQ.pairs > 10, `pairs ${byQ.pairs}`);
    // A trainer re-mining the trees (step-level DPO) keeps the annotation's own pairs: its labels and its
    // smallest gap, both read from stats.json.
    const wide = await deriveOutputs(whole, questions, { minGap: 0.3, labelThreshold: 0.5, values: 'running-mean' });
    assert.equal(wide.minGap, 0.3);
    assert.ok(wide.pairs > 0 && wide.pairs < byQ.pairs, `${wide.pairs} of ${byQ.pairs}`);
    const written = readFileSync(join(whole, 'pairs.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { gap: number });
    assert.ok(written.every((p) => p.gap >= 0.3));
    const dpo = await annotationPairs(whole);
    assert.ok(dpo.length > 0 && dpo.length <= wide.pairs && dpo.every((p) => p.gap >= 0.3), `${dpo.length} DPO pairs of ${wide.pairs}`);
  });

  it('PUCT annotates too', async () => {
    const r = await run(join(tmp.dir, 'puct'), questions.slice(0, 6), 'mcts-puct');
    assert.equal(r.stats.questions, 6);
    assert.ok(r.stats.pairs > 0);
  });
});
