/**
 * ReasonRAG's labeller: the authors' `calculate_mcts_reward_bottom_up` and `process_node` reproduced on
 * every dev case of the parity dev sets (test/fixtures/data/parity, copies of ../shared/data/parity),
 * and hand-computed cases for each difference of the default mode.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { f1KeepingArticles } from '../../src/core/metrics.js';
import { actionOf, type AuthorsNode, type AuthorsTree, bottomUpValues, mineReasonRagPairs } from '../../src/process/reasonrag-tree.js';
import { cliRunner, data, tempDir } from '../helpers.js';

interface ParityLine {
  id: string;
  golden_answers: string[];
  tree: AuthorsTree;
  expected: { node_rewards?: Record<string, number | null>; pairs?: unknown[]; action_type_counts?: Record<string, number> };
}

const read = (set: string): ParityLine[] =>
  readFileSync(data('parity', set, 'dev.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as ParityLine);

/** Each node's own `reward` field, as the pairs set's trees carry it after the authors' re-scoring. */
const storedRewards = (tree: AuthorsTree) => Object.fromEntries(Object.entries(tree).map(([k, n]) => [k, n.reward ?? null]));

describe('ReasonRAG labeller, authors\' mode: parity dev sets', () => {
  it('calculate_mcts_reward_bottom_up: every node value of every tree, to floating-point equality', () => {
    const lines = read('reasonrag_tree_reward');
    let matched = 0;
    for (const line of lines) {
      const got = bottomUpValues(line.tree, line.golden_answers, { mode: 'authors' });
      assert.deepEqual(got, line.expected.node_rewards, line.id);
      matched++;
    }
    assert.equal(matched, lines.length);
    assert.equal(lines.length, 67);
  });
  it('the leaves\' F1 (no article removal) matches compute_f1_multiple_gt', () => {
    let leaves = 0;
    for (const line of read('reasonrag_tree_reward')) {
      for (const [k, f1] of Object.entries((line.expected as { leaf_f1?: Record<string, number> }).leaf_f1 ?? {})) {
        assert.equal(f1KeepingArticles(String(line.tree[k]!.answer), line.golden_answers), f1, `${line.id} ${k}`);
        leaves++;
      }
    }
    assert.equal(leaves, 158);
  });
  it('process_node: every tree\'s pairs, in order, and the action-type counts', () => {
    const lines = read('reasonrag_pairs');
    let pairs = 0;
    for (const line of lines) {
      const got = mineReasonRagPairs(line.tree, storedRewards(line.tree), { mode: 'authors' });
      assert.deepEqual(got.pairs, line.expected.pairs, line.id);
      assert.deepEqual(got.actionTypeCounts, line.expected.action_type_counts, line.id);
      pairs += got.pairs.length;
    }
    assert.equal(lines.length, 69);
    assert.equal(pairs, 51);
  });
  it('re-scoring the pairs set\'s trees first changes nothing (the authors\' two steps, end to end)', () => {
    for (const line of read('reasonrag_pairs')) {
      const values = bottomUpValues(line.tree, line.golden_answers, { mode: 'authors' });
      assert.deepEqual(values, storedRewards(line.tree), line.id);
      assert.deepEqual(mineReasonRagPairs(line.tree, values, { mode: 'authors' }).pairs, line.expected.pairs, line.id);
    }
  });
});

// A hand-built tree: root 0 → 1 (query) and 2 (answer leaf); 1 → 3, 4 (answer leaves).
const prompt = (user: string) => [{ role: 'system', content: 'sys' }, { role: 'user', content: user }];
function hand(extra: Record<string, Partial<AuthorsNode>> = {}): AuthorsTree {
  const t: AuthorsTree = {
    intermediate_node_0: { id: 0, parent_id: -1, children_ids: [1, 2], N: 4, step: 0 },
    intermediate_node_1: { id: 1, parent_id: 0, children_ids: [3, 4], N: 3, step: 1, input_prompt: prompt('Q'), response: 'So the next query is <query>Beatles</query>', next_query: 'Beatles', answer: null },
    intermediate_node_2: { id: 2, parent_id: 0, children_ids: [], N: 1, step: 1, input_prompt: prompt('Q'), response: 'So the answer is <answer>Stones</answer>', answer: 'Stones' },
    intermediate_node_3: { id: 3, parent_id: 1, children_ids: [], N: 2, step: 2, input_prompt: prompt('Q t1'), response: 'So the answer is <answer>The Beatles</answer>', answer: 'The Beatles' },
    intermediate_node_4: { id: 4, parent_id: 1, children_ids: [], N: 1, step: 2, input_prompt: prompt('Q t1'), response: 'So the answer is <answer>Wings</answer>', answer: 'Wings' },
  };
  for (const [k, v] of Object.entries(extra)) t[k] = { ...t[k], ...v };
  return t;
}
const golds = ['Beatles'];
const close = (a: number | null | undefined, b: number) => assert.ok(a !== null && a !== undefined && Math.abs(a - b) < 1e-12, `${a} ≠ ${b}`);

describe('ReasonRAG labeller: default mode vs the authors\' code (hand-computed)', () => {
  it('both modes: leaf F1 · 0.9^step, inner node = N-weighted mean of rewarded children', () => {
    const d = bottomUpValues(hand(), golds, { mode: 'default' });
    // Default F1 drops "the": node 3 = 1 · 0.81; node 1 = (0.81·2 + 0·1)/3 = 0.54; root = (0.54·3 + 0·1)/4 = 0.405.
    close(d['intermediate_node_3'], 0.81);
    close(d['intermediate_node_1'], 0.54);
    close(d['intermediate_node_0'], 0.405);
    const a = bottomUpValues(hand(), golds, { mode: 'authors' });
    // Authors keep "the": F1("the beatles", "beatles") = 2·(1/2·1)/(1/2+1) = 2/3; node 3 = 2/3 · 0.81 = 0.54.
    close(a['intermediate_node_3'], 0.54);
    close(a['intermediate_node_1'], 0.36);
    close(a['intermediate_node_0'], 0.27);
  });
  it('a node listing a missing child: default values it from the others; authors never process it or its ancestors (stale reward kept)', () => {
    const t = hand({ intermediate_node_1: { children_ids: [3, 4, 9], reward: 0.7 }, intermediate_node_0: { reward: 0.6 } });
    const d = bottomUpValues(t, golds, { mode: 'default' });
    close(d['intermediate_node_1'], 0.54);
    close(d['intermediate_node_0'], 0.405);
    const a = bottomUpValues(t, golds, { mode: 'authors' });
    assert.equal(a['intermediate_node_1'], 0.7);
    assert.equal(a['intermediate_node_0'], 0.6);
  });
  it('a forced answer-generation leaf (`pred`, no `answer`): default scores it, authors give it no reward', () => {
    const t = hand({ intermediate_node_4: { action_name: 'answer_generation', answer: undefined, pred: 'Beatles', response: 'So the answer is Beatles' } });
    delete t['intermediate_node_4']!.answer;
    const d = bottomUpValues(t, golds, { mode: 'default' });
    close(d['intermediate_node_4'], 0.81);
    close(d['intermediate_node_1'], 0.81); // (0.81·2 + 0.81·1)/3
    const a = bottomUpValues(t, golds, { mode: 'authors' });
    assert.equal(a['intermediate_node_4'], null);
    close(a['intermediate_node_1'], 0.54); // only node 3 (2/3 · 0.81) is rewarded
  });
  it('a leaf without `step`: default decays by its depth, authors by 0.9^0', () => {
    const t = hand();
    delete t['intermediate_node_3']!.step;
    close(bottomUpValues(t, golds, { mode: 'default' })['intermediate_node_3'], 0.81);
    close(bottomUpValues(t, golds, { mode: 'authors' })['intermediate_node_3'], 2 / 3);
  });
  it('both modes: empty response or null answer gives no reward; children with N summing to 0 give none', () => {
    for (const mode of ['default', 'authors'] as const) {
      const t = hand({ intermediate_node_2: { response: '' }, intermediate_node_3: { N: 0 }, intermediate_node_4: { N: 0 } });
      const v = bottomUpValues(t, golds, { mode });
      assert.equal(v['intermediate_node_2'], null);
      assert.equal(v['intermediate_node_1'], null);
      assert.equal(v['intermediate_node_0'], null);
    }
  });
  it('a single-child node: authors stop the descent there, default mines the pairs below it', () => {
    // Root → 5 → {1, 2}: the pairs under 5 are lost to the authors' code.
    const t = hand({ intermediate_node_1: { parent_id: 5 }, intermediate_node_2: { parent_id: 5 } });
    t['intermediate_node_0'] = { id: 0, parent_id: -1, children_ids: [5], N: 4, step: 0 };
    t['intermediate_node_5'] = { id: 5, parent_id: 0, children_ids: [1, 2], N: 4, step: 1, input_prompt: prompt('Q'), response: 'I will search.' };
    const values = bottomUpValues(t, golds, { mode: 'default' });
    assert.deepEqual(mineReasonRagPairs(t, values, { mode: 'authors' }).pairs, []);
    const d = mineReasonRagPairs(t, values, { mode: 'default' }).pairs;
    // Under 5: 1 (0.54) vs 2 (0); under 1: 3 (0.81) vs 4 (0).
    assert.deepEqual(d.map((p) => [p.chosen_content, p.rejected_content, p.layer]), [['Beatles', 'Stones', 1], ['The Beatles', 'Wings', 2]]);
  });
  it('a child without input_prompt: neither mode pairs it; default still descends into it', () => {
    const t = hand();
    delete t['intermediate_node_1']!.input_prompt;
    const values = bottomUpValues(t, golds, { mode: 'default' });
    assert.deepEqual(mineReasonRagPairs(t, values, { mode: 'authors' }).pairs, []);
    assert.deepEqual(mineReasonRagPairs(t, values, { mode: 'default' }).pairs.map((p) => p.chosen_content), ['The Beatles']);
  });
  it('equal contents of different types: authors drop the pair, default keeps it (different actions)', () => {
    const t = hand({ intermediate_node_2: { response: 'So the next query is <query>Beatles</query>', answer: null, children_ids: [4] }, intermediate_node_4: { parent_id: 2 } });
    t['intermediate_node_1']!.children_ids = [3];
    t['intermediate_node_1']!.response = 'So the answer is <answer>Beatles</answer>';
    // 1 → 3 (0.81 in default), 2 → 4 (0): root's children 1 and 2 have contents "Beatles" and "Beatles".
    const values = bottomUpValues(t, golds, { mode: 'default' });
    const d = mineReasonRagPairs(t, values, { mode: 'default' }).pairs;
    assert.deepEqual(d.map((p) => [p.chosen_action_type, p.rejected_action_type]), [['Answer Generation', 'Query Generation']]);
    assert.deepEqual(mineReasonRagPairs(t, values, { mode: 'authors' }).pairs, []);
  });
  it('action type: authors type by substring with query first, default by the tag the content came from', () => {
    const r = 'I considered <query>x</query> but So the answer is <answer>Paris</answer>';
    assert.deepEqual(actionOf(r, 'authors'), { type: 'Query Generation', content: 'Paris' });
    assert.deepEqual(actionOf(r, 'default'), { type: 'Answer Generation', content: 'Paris' });
    // An unclosed tag: the authors call it an answer with empty content, default "Other" (never chosen).
    assert.deepEqual(actionOf('So the answer is <answer>Paris', 'authors'), { type: 'Answer Generation', content: '' });
    assert.deepEqual(actionOf('So the answer is <answer>Paris', 'default'), { type: 'Other', content: '' });
  });
  it('both modes: |Δ| < 0.01 is no pair; chosen "Other" is dropped; instruction/input from the last valid sibling', () => {
    for (const mode of ['default', 'authors'] as const) {
      const t = hand({ intermediate_node_4: { input_prompt: prompt('Q t1 (last)') } });
      const values = { ...bottomUpValues(t, golds, { mode }), intermediate_node_2: 0.005, intermediate_node_1: 0 };
      const res = mineReasonRagPairs(t, values, { mode });
      assert.deepEqual(res.pairs.map((p) => [p.chosen_content, p.rejected_content, p.instruction, p.input, p.layer]), [['The Beatles', 'Wings', 'sys', 'Q t1 (last)', 1]]);
      assert.deepEqual(res.actionTypeCounts, { 'Answer Generation': 1 });
      t['intermediate_node_3']!.response = 'I think it is the Beatles.';
      assert.deepEqual(mineReasonRagPairs(t, values, { mode }).pairs, []);
    }
  });
});

describe('ragtrail annotate relabel (the CLI, end to end on the parity files)', () => {
  const jsonl = (path: string) => readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  it("compat=authors writes the authors' values and pairs for every tree, and the TRL preference file", () => {
    const { dir, cleanup } = tempDir();
    try {
      const { run } = cliRunner(dir);
      const trees = data('parity', 'reasonrag_tree_reward', 'dev.jsonl');
      const r1 = run('annotate', 'relabel', '--reasonrag-trees', trees, '--out', 'values', '--option', 'compat=authors');
      assert.equal(r1.status, 0, r1.stderr);
      const values = jsonl(join(dir, 'values', 'values.jsonl'));
      assert.deepEqual(values.map((v) => v['node_rewards']), read('reasonrag_tree_reward').map((l) => l.expected.node_rewards));
      const r2 = run('annotate', 'relabel', '--reasonrag-trees', data('parity', 'reasonrag_pairs', 'dev.jsonl'), '--out', 'pairs', '--option', 'compat=authors');
      assert.equal(r2.status, 0, r2.stderr);
      assert.match(r2.stdout, /51 pairs in 24 trees/);
      const expected = read('reasonrag_pairs');
      const pairs = jsonl(join(dir, 'pairs', 'pairs.jsonl'));
      assert.deepEqual(pairs.map((p) => p['id']), expected.map((l) => l.id));
      assert.deepEqual(pairs.map((p) => p['pairs']), expected.map((l) => l.expected.pairs));
      const prefs = jsonl(join(dir, 'pairs', 'trl_preference.jsonl'));
      const first = expected.flatMap((l) => l.expected.pairs as Record<string, string>[])[0]!;
      assert.equal(prefs.length, 51);
      assert.deepEqual(prefs[0], {
        prompt: [{ role: 'system', content: first['instruction'] }, { role: 'user', content: first['input'] }],
        chosen: [{ role: 'assistant', content: first['chosen'] }],
        rejected: [{ role: 'assistant', content: first['rejected'] }],
      });
      const stats = JSON.parse(readFileSync(join(dir, 'pairs', 'stats.json'), 'utf8')) as Record<string, unknown>;
      assert.deepEqual(stats['actionTypeCounts'], { 'Answer Generation': 34, 'Evidence Extraction': 10, 'Query Generation': 7 });
      for (const f of ['trl_sft.jsonl', 'trl_stepwise.jsonl']) assert.ok(jsonl(join(dir, 'pairs', f)).length > 0, f);
    } finally {
      cleanup();
    }
  });
  it('a bad tree is an error record of its own and the others are valued (exit 1); bad options exit 2', () => {
    const { dir, cleanup } = tempDir();
    try {
      const { run } = cliRunner(dir);
      const good = '{"id": "g", "question": "q", "golden_answers": ["x"], "tree": {"intermediate_node_0": {"id": 0, "children_ids": [1], "N": 1}, "intermediate_node_1": {"id": 1, "parent_id": 0, "children_ids": [], "answer": "x", "response": "<answer>x</answer>", "N": 1, "step": 1}}}';
      writeFileSync(join(dir, 'bad.jsonl'), `{"id": "a", "question": "q", "golden_answers": ["x"], "tree": {"intermediate_node_0": {"children_ids": [1, "2"]}}}\nnot json\n${good}\n`);
      const r = run('annotate', 'relabel', '--reasonrag-trees', 'bad.jsonl', '--out', 'o');
      assert.equal(r.status, 1);
      assert.match(r.stdout, /relabelled 1 trees .* \(and 2 error records\)/);
      assert.equal(r.stderr.trim(), `ragtrail: 2 of 3 trees could not be valued: each is an {"id", "error"} line in ${join('o', 'values.jsonl')} and pairs.jsonl (the error says what to fix in that tree; the other trees are valued)`);
      const values = jsonl(join(dir, 'o', 'values.jsonl'));
      assert.match(String(values[0]!['error']), /^bad\.jsonl:1: field "tree\.intermediate_node_0\.children_ids" must be a list of integer node ids \(.+\)$/);
      assert.equal(values[0]!['id'], 'a');
      assert.deepEqual(values[1], { id: null, error: `bad.jsonl:2: invalid JSON (Unexpected token 'o', "not json" is not valid JSON) (fix or remove that line)` });
      assert.deepEqual(values[2], { id: 'g', node_rewards: { intermediate_node_0: 0.9, intermediate_node_1: 0.9 } });
      // The authors' code takes a string child id as a key ("intermediate_node_2", absent here): no error.
      const a = run('annotate', 'relabel', '--reasonrag-trees', 'bad.jsonl', '--out', 'oa', '--option', 'compat=authors');
      assert.equal(a.status, 1);
      assert.deepEqual(jsonl(join(dir, 'oa', 'values.jsonl'))[0], { id: 'a', node_rewards: { intermediate_node_0: null } });
      const o = run('annotate', 'relabel', '--reasonrag-trees', 'bad.jsonl', '--out', 'o', '--option', 'compat=author');
      assert.equal(o.status, 2);
      assert.match(o.stderr, /--option compat: expected paper or authors/);
      const v = run('annotate', '--method', 'rank', '--rank-source', 'random', '--values', 'bottom-up', '--index', 'i', '--dataset', 'd.jsonl', '--out', 'o');
      assert.equal(v.status, 2);
      assert.match(v.stderr, /--values labels search-tree pairs/);
    } finally {
      cleanup();
    }
  });
});
