/** ProRAG's PRM pairs from a judge comparing MCTS siblings: jobs, the rule, the LLM judge's replies, the annotation files. */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Step } from '../../src/core/trajectory.js';
import type { Question } from '../../src/core/types.js';
import { statePairs } from '../../src/learn/gym/data.js';
import { ScriptedLLM } from '../../src/llm/scripted.js';
import { deriveOutputs, JUDGE_LOG_FILE } from '../../src/process/annotate.js';
import { judgePairs, LlmSiblingJudge, parseSiblingVerdict, PlanJudge, QRuleJudge, siblingJobs, siblingPrompt } from '../../src/process/sibling-judge.js';
import type { SavedNode, SavedTree } from '../../src/process/tree.js';
import { tempDir } from '../helpers.js';

const step = (raw: string, action: Step['action']): Step => ({ action, raw, ...(action.type === 'search' ? { docs: [{ passageId: 'd', title: `About ${action.query}`, text: 'text', score: 1 }] } : {}) });
const search = (q: string) => step(`<think>t</think><search> ${q} </search>`, { type: 'search', query: q });
const answer = (a: string) => step(`<think>t</think><answer> ${a} </answer>`, { type: 'answer', answer: a });
const node = (id: number, parent: number, depth: number, Q: number, N: number, s?: Step): SavedNode => ({ id, parent, depth, ...(s && { step: s }), N, Q, value: Q, prior: 1, terminal: s?.action.type === 'answer', answered: true, mustAnswer: false });
const question: Question = { id: 'h', question: 'Who directed X?', answers: ['Maren'] };

/**
 * root (N 10): 1 search "X director" (Q 0.8, N 4), 2 search "X film" (0.3, N 3), 3 answer "Maren" (0.5, N 1),
 *   4 malformed (N 2), 5 unvisited; node 1 (N 4): 6 "Maren" (1, N 2), 7 "Maren Tolvik" (0.995, N 2);
 *   node 2 (N 3): 8 search "X director" (0.6, N 1), 9 "Olaf" (0, N 1); node 3 (N 1 < 3): 10, 11 not compared.
 */
function handTree(): SavedTree {
  return {
    id: 'h', question, method: 'mcts-puct', agent: 'search-r1', policy: 'test', seed: 0, iterations: 10, kept: true,
    nodes: [
      node(0, -1, 0, 0.5, 10),
      node(1, 0, 1, 0.8, 4, search('X director')),
      node(2, 0, 1, 0.3, 3, search('X film')),
      node(3, 0, 1, 0.5, 1, answer('Maren')),
      node(4, 0, 1, 0.9, 2, step('garbage', { type: 'invalid', reason: 'no tags' })),
      node(5, 0, 1, 0, 0, search('Y')),
      node(6, 1, 2, 1, 2, answer('Maren')),
      node(7, 1, 2, 0.995, 2, answer('Maren Tolvik')),
      node(8, 2, 2, 0.6, 1, search('X director')),
      node(9, 2, 2, 0, 1, answer('Olaf')),
      node(10, 3, 2, 1, 1, answer('Maren')),
      node(11, 3, 2, 0, 1, answer('Olaf')),
    ],
  };
}

describe('sibling jobs', () => {
  it('the root and nodes with N ≥ 3; visited, well-formed children only; at least two of them', () => {
    const jobs = siblingJobs(handTree());
    assert.deepEqual(jobs.map((j) => [j.parent, j.candidates.map((c) => c.node)]), [[0, [1, 2, 3]], [1, [6, 7]], [2, [8, 9]]]);
    assert.deepEqual(jobs[1]!.state.steps.map((s) => s.action), [{ type: 'search', query: 'X director' }]);
    assert.deepEqual(siblingJobs(handTree(), { minVisits: 2, minParentVisits: 1 }).map((j) => j.parent), [0, 1]);
    assert.deepEqual(siblingJobs({ ...handTree(), method: 'rank' }), []);
  });
});

describe('the rule judge (offline, no model)', () => {
  it('N ≥ 2: the unique highest Q against the lowest; a tie for the highest or too few candidates give no pair', async () => {
    const r = await judgePairs([handTree()], new QRuleJudge());
    // root: 1 (0.8) and 2 (0.3) qualify, 3 has N 1 → 1 > 2; node 1: 1 vs 0.995 is a tie; node 2: no child with N ≥ 2.
    assert.deepEqual(r.pairs.map((p) => `${p.chosen.node}>${p.rejected.node}`), ['1>2']);
    const p = r.pairs[0]!;
    assert.deepEqual([p.id, p.parent, p.depth, p.chosen.value, p.rejected.value, p.chosen.type], ['h:0:1:2', 0, 0, 1, 0, 'Q']);
    assert.ok(Math.abs(p.gap - 0.5) < 1e-12);
    assert.deepEqual(r.counts, { judge: 'q-rule(N ≥ 2)', nodes: 3, pairs: 1, declined: 2, malformed: 0, duplicates: 0 });
    assert.deepEqual(r.records.map((x) => x.verdict), ['pair', 'none', 'none']);
    assert.match(r.records[1]!.reason!, /tie for the highest Q/);
  });
  it('N ≥ 1: 1 > 2 at the root (0.8 over the lowest 0.3, not the middle 0.5), 8 > 9 under node 2', async () => {
    const r = await judgePairs([handTree()], new QRuleJudge({ minVisits: 1 }));
    assert.deepEqual(r.pairs.map((p) => `${p.chosen.node}>${p.rejected.node}`), ['1>2', '8>9']);
  });
});

describe('the plan judge (offline, reads the gold plan)', () => {
  it('the best sibling by the plan against the worst: searches by what they fetched, a guessed right answer as a wrong one; within the margin, no pair', async () => {
    // One hop, "Who directed X?" → Maren. Node 1's search fetches the page that says so; the others fetch page d only.
    const planned: Question = { ...question, decomposition: [{ question: 'Who directed X?', answer: 'Maren', passageId: 'x' }] };
    const tree = handTree();
    tree.question = planned;
    tree.nodes[1] = { ...tree.nodes[1]!, step: { ...search('X director'), docs: [{ passageId: 'x', title: 'X', text: 'X was directed by Maren.', score: 1 }] } };
    const r = await judgePairs([tree], new PlanJudge());
    // Root: search 1 fetched the open hop's page, +3; search 2 nothing the plan needs, −1; the answer "Maren"
    // before any page is a guess, −2 → 1 > 3. Node 1 (the page is in): "Maren" +2 against "Maren Tolvik" −2.
    // Node 2: the search (−1, fetched nothing) against "Olaf" (−2): 1 apart, more than the margin.
    assert.deepEqual(r.pairs.map((p) => `${p.chosen.node}>${p.rejected.node}`), ['1>3', '6>7', '8>9']);
    assert.match(r.records[0]!.reason!, /plan score 3\.00 against -2\.00/);
    // Without the page, node 1's two answers are both guesses: −2 and −2, no pair.
    const unfound = await judgePairs([{ ...handTree(), question: planned }], new PlanJudge());
    assert.deepEqual(unfound.pairs.map((p) => `${p.chosen.node}>${p.rejected.node}`), ['1>3', '8>9']);
    assert.match(unfound.records[1]!.reason!, /within 0\.5/);
    // A margin of 3: the root's 5 and node 1's 4 are beyond it, node 2's 1 is not.
    assert.deepEqual((await judgePairs([tree], new PlanJudge({ margin: 3 }))).pairs.map((p) => `${p.chosen.node}>${p.rejected.node}`), ['1>3', '6>7']);
  });
});

describe('the LLM judge', () => {
  it('sees the question, prior steps, each step with its Q and N; its verdicts become pairs, declines and counted parse failures', async () => {
    const replies: Record<number, string> = {
      // The root: the judge overrules the search and prefers answering at once (candidate 2, node 3) to node 1.
      0: 'Sure. {"has_valid_pair": true, "positive_id": 2, "negative_id": 0, "reason": "the answer is already known"}',
      1: '```json\n{"has_valid_pair": false, "reason": "the two answers are rewordings"}\n```',
      2: 'Step 0 is better.',
    };
    const llm = new ScriptedLLM((req) => {
      const text = req.messages![0]!.content;
      return replies[text.includes('Olaf') ? 2 : text.includes('Maren Tolvik') ? 1 : 0]!;
    });
    const r = await judgePairs([handTree()], new LlmSiblingJudge(llm), { concurrency: 2 });
    assert.equal(llm.requests.length, 3);
    assert.ok(llm.requests.every((q) => q.temperature === 0));
    const rootPrompt = llm.requests.map((q) => q.messages![0]!.content).find((t) => t.includes('X film'))!;
    assert.match(rootPrompt, /Question: Who directed X\?/);
    assert.match(rootPrompt, /Steps so far:\n\(no steps yet\)/);
    assert.match(rootPrompt, /ID 0\nStep: <think>t<\/think><search> X director <\/search>\n\(this search returned: About X director\)\nTree search: Q = 0\.80, N = 4/);
    assert.match(rootPrompt, /ID 2\nStep: <think>t<\/think><answer> Maren <\/answer>\nTree search: Q = 0\.50, N = 1/);
    assert.deepEqual(r.pairs.map((p) => `${p.chosen.node}>${p.rejected.node}`), ['3>1']);
    assert.ok(Math.abs(r.pairs[0]!.gap - (0.5 - 0.8)) < 1e-12, 'gap = Q(chosen) − Q(rejected), negative when the judge overrules Q');
    assert.deepEqual(r.pairs[0]!.judge, { name: 'llm(scripted:scripted)', reason: 'the answer is already known' });
    assert.deepEqual(r.counts, { judge: 'llm(scripted:scripted)', nodes: 3, pairs: 1, declined: 1, malformed: 1, duplicates: 0 });
    const bad = r.records.find((x) => x.verdict === 'malformed')!;
    assert.deepEqual([bad.parent, bad.raw, bad.error], [2, 'Step 0 is better.', 'no JSON object in the reply']);
  });

  it('reads replies without throwing: ids in range and distinct, a boolean flag; the same action on both sides is dropped', async () => {
    assert.deepEqual(parseSiblingVerdict('{"has_valid_pair": true, "positive_id": "1", "negative_id": 0}', 2), { kind: 'pair', chosen: 1, rejected: 0 });
    assert.equal(parseSiblingVerdict('{"has_valid_pair": true, "positive_id": 1, "negative_id": 5}', 2).kind, 'malformed');
    assert.equal(parseSiblingVerdict('{"has_valid_pair": true, "positive_id": 1, "negative_id": 1}', 2).kind, 'malformed');
    assert.equal(parseSiblingVerdict('{"has_valid_pair": "maybe"}', 2).kind, 'malformed');
    assert.equal(parseSiblingVerdict('{"has_valid_pair": true, positive_id: 1}', 2).kind, 'malformed');
    assert.deepEqual(parseSiblingVerdict('{"has_valid_pair": false}', 2), { kind: 'none' });
    // Under node 2, make the two siblings the same search (case and spacing aside): a pick of them is dropped as a duplicate.
    const t = handTree();
    t.nodes[9] = node(9, 2, 2, 0, 1, search('X  Director'));
    const r = await judgePairs([t], new LlmSiblingJudge(new ScriptedLLM(['{"has_valid_pair": true, "positive_id": 0, "negative_id": 1}'])), { concurrency: 1 });
    assert.deepEqual([r.counts.pairs, r.counts.duplicates], [2, 1]);
    assert.match(siblingPrompt(siblingJobs(t)[2]!), /Steps so far:\nStep 1: searched for "X film" and found: About X film/);
  });
});

describe('annotation files from judged pairs', () => {
  it('pairs.jsonl, prm_pairs.jsonl, stats.json and judge_log.jsonl; a q-gap re-derivation removes the log; gym DPO reads the pairs back', async () => {
    const tmp = tempDir();
    try {
      mkdirSync(tmp.dir, { recursive: true });
      writeFileSync(join(tmp.dir, 'trees.jsonl'), JSON.stringify(handTree()) + '\n');
      const stats = await deriveOutputs(tmp.dir, [question], { minGap: 0.01, labelThreshold: 0.5, pairs: 'judge', judge: new QRuleJudge({ minVisits: 1 }) });
      assert.deepEqual([stats.pairs, stats.pairSource, stats.values, stats.judge?.nodes, stats.judge?.pairs], [2, 'judge', undefined, 3, 2]);
      const read = (f: string) => readFileSync(join(tmp.dir, f), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      const prm = read('prm_pairs.jsonl');
      assert.deepEqual(prm.map((p) => [p.id, p.chosen.action, p.rejected.action]), [
        ['h:0:1:2', { type: 'search', query: 'X director' }, { type: 'search', query: 'X film' }],
        ['h:2:8:9', { type: 'search', query: 'X director' }, { type: 'answer', answer: 'Olaf' }],
      ]);
      assert.deepEqual(prm[1].state.steps.map((s: Step) => s.action), [{ type: 'search', query: 'X film' }]);
      assert.equal(read('trl_preference.jsonl').length, 2);
      assert.deepEqual(read(JUDGE_LOG_FILE).map((r) => r.verdict), ['pair', 'none', 'pair']);
      const pairs = statePairs([handTree()], read('pairs.jsonl'));
      assert.deepEqual(pairs.map((p) => [p.state.steps.length, p.chosen, p.rejected]), [
        [0, { type: 'search', query: 'X director' }, { type: 'search', query: 'X film' }],
        [1, { type: 'search', query: 'X director' }, { type: 'answer', answer: 'Olaf' }],
      ]);
      const byQ = await deriveOutputs(tmp.dir, [question], { minGap: 0.01, labelThreshold: 0.5, values: 'running-mean' });
      assert.equal(byQ.pairSource, undefined);
      assert.ok(!existsSync(join(tmp.dir, JUDGE_LOG_FILE)));
    } finally {
      tmp.cleanup();
    }
  });
});
