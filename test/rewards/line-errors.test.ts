/**
 * Issue 45: every line is scored on its own (a line that cannot be scored is an {id, error} record, counted,
 * and the exit status says so), parsing that nests without recursion, and the Python edges compat mode
 * reproduces beyond the dev quarter: 2^53 + 1, 4,300-digit ints, Python's recursion limit, Unicode 14
 * lower-casing, JavaScript's built-in names as text.
 */
import { strict as assert } from 'node:assert';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { errorRecordText } from '../../src/core/errors.js';
import { PY_MAX_JSON_DEPTH, pyEquals, PyError, pyFromJs, pyJsonLoads, type PyValue } from '../../src/core/pyjson.js';
import { normalizeAnswer, pyLower } from '../../src/core/text.js';
import { arenaAuthorsRelevance, arenaNormalize } from '../../src/rewards/arena.js';
import { searchR1AuthorsValid } from '../../src/rewards/search-r1.js';
import { bottomUpValues, mineReasonRagPairs } from '../../src/process/reasonrag-tree.js';
import { cliRunner, tempDir } from '../helpers.js';

const raises = (f: () => unknown, type: string, message: RegExp) =>
  assert.throws(f, (e: unknown) => e instanceof PyError && e.pythonType === type && message.test(e.message));

test('pyJsonLoads: nesting of any depth is read without recursion; past Python\'s limit it is RecursionError', () => {
  const nest = (d: number) => '['.repeat(d) + '1' + ']'.repeat(d);
  let v = pyJsonLoads(nest(PY_MAX_JSON_DEPTH));
  for (let d = 1; d < PY_MAX_JSON_DEPTH; d++) v = (v as { items: PyValue[] }).items[0]!;
  assert.deepEqual(v, { kind: 'list', items: [{ kind: 'num', value: 1 }] });
  for (const d of [1500, 100_000]) raises(() => pyJsonLoads(nest(d)), 'RecursionError', /maximum recursion depth exceeded while decoding a JSON array/);
  raises(() => pyJsonLoads('{"a": '.repeat(2000) + '1' + '}'.repeat(2000)), 'RecursionError', /JSON object/);
  assert.deepEqual(pyJsonLoads('{"a": [1, {"b": []}], "a": 2}'), { kind: 'dict', keys: ['a'], values: [{ kind: 'num', value: 2 }] });
  raises(() => pyJsonLoads('[1, 2,]'), 'ValueError', /^Expecting value: line 1 column 7 \(char 6\)$/);
  raises(() => pyJsonLoads('[1] x'), 'ValueError', /^Extra data/);
  // A gold list nested 100,000 deep (JSON.parse reads it iteratively) converts without overflowing either.
  const deep = JSON.parse(nest(100_000)) as unknown;
  assert.equal(pyFromJs(deep).kind, 'list');
});

test('pyJsonLoads: Python\'s ints are exact (2^53 + 1 is not 2^53) and over 4,300 digits json.loads raises ValueError', () => {
  const big = (s: string) => pyJsonLoads(s);
  assert.equal(pyEquals(big('9007199254740993'), big('9007199254740992')), false);
  assert.equal(pyEquals(big('9007199254740992'), big('9007199254740992.0')), true);
  assert.equal(pyEquals(big('9007199254740993'), pyFromJs(9007199254740992)), false);
  assert.equal(pyEquals(big('1' + '0'.repeat(400)), big('1e400')), false); // int 10^400 against float inf
  assert.equal(pyJsonLoads('9'.repeat(4300)).kind, 'num');
  raises(() => pyJsonLoads('9'.repeat(4301)), 'ValueError', /^Exceeds the limit \(4300 digits\) for integer string conversion: value has 4301 digits/);
  assert.equal(pyJsonLoads('1' + '0'.repeat(5000) + '.5').kind, 'num'); // floats have no digit limit
});

test('ARENA relevance, authors\' code: 2^53 + 1 against gold 2^53 is 0; 5,000 digits and 100,000-deep nesting are 0 (its bare except)', () => {
  assert.equal(arenaAuthorsRelevance('<relevance>[9007199254740993]</relevance>', [9007199254740992]), 0);
  assert.equal(arenaAuthorsRelevance('<relevance>[9007199254740992]</relevance>', [9007199254740992]), 1);
  assert.equal(arenaAuthorsRelevance(`<relevance>[1, ${'7'.repeat(5000)}]</relevance>`, [1]), 0);
  assert.equal(arenaAuthorsRelevance(`<relevance>[1, ${'7'.repeat(400)}]</relevance>`, [1]), 0.5);
  assert.equal(arenaAuthorsRelevance(`<relevance>${'['.repeat(100_000)}1${']'.repeat(100_000)}</relevance>`, [1]), 0);
});

test('Python 3.11 lower-casing: letters newer than Unicode 14 stay upper case, in compat and default scoring alike', () => {
  assert.equal(pyLower('20 July 1981 \uA7CB'), '20 july 1981 \uA7CB');
  assert.equal(pyLower('\u{10D50}Σ ΟΔΟΣ'), '\u{10D50}σ οδος');
  assert.equal(pyLower('ÀÉ ǅ İ'), 'àé ǆ i̇');
  assert.notEqual(arenaNormalize('x \uA7CB'), arenaNormalize('x \u0264'));
  assert.notEqual(normalizeAnswer('\uA7CB'), normalizeAnswer('\u0264'));
});

test('Search-R1 format: blocks reading constructor, toString, __proto__, valueOf are text, not tags', () => {
  for (const name of ['constructor', 'toString', '__proto__', 'valueOf', 'hasOwnProperty']) {
    assert.deepEqual(searchR1AuthorsValid(`<|im_start|>assistant\n<think>${name}</think>\n<answer>${name}</answer>`), { valid: true, reason: 'Valid sequence format' }, name);
  }
  assert.deepEqual(searchR1AuthorsValid('<|im_start|>assistant\nconstructor<think>x</think><answer>y</answer>'), { valid: false, reason: "Unexpected content 'constructor' between tags (state: start)" });
});

test('ReasonRAG trees: a cycle is an error for that tree (default), RecursionError in the authors\' pair descent; a null step raises TypeError', () => {
  const node = (id: number, kids: number[], extra: Record<string, unknown> = {}) => ({ id, parent_id: id === 0 ? -1 : 0, children_ids: kids, N: 1, step: 1, input_prompt: [{ role: 'system', content: 's' }, { role: 'user', content: 'u' }], response: `<answer>a${id}</answer>`, answer: `a${id}`, reward: 0.5 + id / 10, ...extra });
  const cycle = { intermediate_node_0: node(0, [1, 2]), intermediate_node_1: node(1, [2, 3]), intermediate_node_2: node(2, [1, 3]), intermediate_node_3: node(3, []) };
  assert.throws(() => bottomUpValues(cycle, ['a1'], { mode: 'default' }), /the tree has a cycle: intermediate_node_1 is listed among its own descendants' children_ids/);
  // Authors: nodes on the loop never have all their children processed, so they keep their stored rewards.
  const values = bottomUpValues(cycle, ['a1'], { mode: 'authors' });
  assert.deepEqual(values, { intermediate_node_0: 0.5, intermediate_node_1: 0.6, intermediate_node_2: 0.7, intermediate_node_3: 0.9 ** 1 * 0 });
  assert.throws(() => mineReasonRagPairs(cycle, values, { mode: 'authors' }), (e: unknown) => errorRecordText(e) === 'RecursionError: maximum recursion depth exceeded');
  const stepNull = { intermediate_node_0: node(0, [1]), intermediate_node_1: node(1, [], { step: null }) };
  assert.throws(() => bottomUpValues(stepNull, ['a1'], { mode: 'authors' }), (e: unknown) => errorRecordText(e) === "TypeError: unsupported operand type(s) for ** or pow(): 'float' and 'NoneType'");
  // A tree keyed "__proto__" keeps that key as data; it does not become the result's prototype.
  const proto = JSON.parse('{"intermediate_node_0": {"id": 0, "children_ids": []}, "__proto__": {"reward": 3}}') as Record<string, never>;
  const v = bottomUpValues(proto, ['x'], { mode: 'authors' });
  assert.deepEqual(Object.keys(v), ['intermediate_node_0', '__proto__']);
  assert.equal(Object.getPrototypeOf(v), Object.prototype);
  assert.equal(JSON.stringify(v), '{"intermediate_node_0":null,"__proto__":3}');
});

test('reward --texts: each bad line is an {id, error} record, the others are scored, and the exit status is 1', () => {
  const { dir, cleanup } = tempDir();
  try {
    const { run } = cliRunner(dir);
    const ok = (id: string, relevance: string) =>
      JSON.stringify({ id, question: 'Q?', golden_answers: ['Paris'], gold_reference_ids: [1], response: `<relevance>${relevance}</relevance>\n<analysis>Reference 1.</analysis>\n<answer>Paris</answer>` });
    const deep = '['.repeat(100_000) + '1' + ']'.repeat(100_000);
    writeFileSync(join(dir, 't.jsonl'), [ok('a', '[1]'), ok('deep', deep), '{"id": "b", "question": "Q?"}', 'not json', ok('c', '[1, 2]')].join('\n') + '\n');
    const r = run('reward', '--texts', 't.jsonl', '--scheme', 'arena', '--option', 'compat=authors', '--out', 'out.jsonl');
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stderr.trim(), 'ragtrail: 2 of 5 lines could not be scored: each is an {"id", "error"} line in out.jsonl (the error says what to fix in that line; the other lines are scored)');
    assert.match(r.stdout, /arena over 3 texts of t\.jsonl → out\.jsonl \(and 2 error records\)/);
    const rows = readFileSync(join(dir, 'out.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(rows.map((x) => x['id']), ['a', 'deep', 'b', null, 'c']);
    assert.deepEqual(rows.map((x) => x['total']), [13, 2, undefined, undefined, 2.5]);
    assert.equal(rows[2]!['error'], `t.jsonl:3: field "response" is missing (the model's whole text for the episode)`);
    assert.match(String(rows[3]!['error']), /^t\.jsonl:4: invalid JSON \(.+\) \(fix or remove that line\)$/);
    // The same file in the default mode: the deep line is scored too (ragtrail's own parser reads no JSON there).
    const d = run('reward', '--texts', 't.jsonl', '--scheme', 'arena', '--out', 'out2.jsonl');
    assert.equal(d.status, 1, d.stderr);
    const rows2 = readFileSync(join(dir, 'out2.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(rows2.map((x) => 'error' in x), [false, false, true, true, false]);
    const clean = run('reward', '--texts', 't.jsonl', '--scheme', 'arena', '--out', 'out3.jsonl', '--option', 'compat=authors');
    assert.equal(clean.status, 1);
    writeFileSync(join(dir, 'good.jsonl'), ok('a', '[1]') + '\n');
    assert.equal(run('reward', '--texts', 'good.jsonl', '--scheme', 'arena', '--out', 'g.jsonl').status, 0);
  } finally {
    cleanup();
  }
});

test('annotate relabel: ids written 1.0 or "1", a null step, a leaf without response — default and authors\' mode', async () => {
  const { relabel } = await import('../../src/process/relabel.js');
  const { dir, cleanup } = tempDir();
  try {
    const prompt = [{ role: 'system', content: 's' }, { role: 'user', content: 'u' }];
    const leaf = (id: number, answer: string, extra = '') => `"intermediate_node_${id}": {"id": ${id}, "parent_id": 0, "children_ids": [], "N": 1, "step": 1, "input_prompt": ${JSON.stringify(prompt)}, "response": "<answer>${answer}</answer>", "answer": "${answer}"${extra}}`;
    const tree = (kids: string, extra = '') => `{"id": "t", "question": "q", "golden_answers": ["Paris"], "tree": {"intermediate_node_0": {"id": 0, "parent_id": -1, "children_ids": ${kids}, "N": 2, "step": 0}, ${leaf(1, 'Paris', extra)}, ${leaf(2, 'Lyon')}}}`;
    const lines = [tree('[1.0, 2]'), tree('["1", 2]'), tree('[1, 2]', ', "step": null'), tree('[1, 2]').replace('"response": "<answer>Paris</answer>", ', '')];
    writeFileSync(join(dir, 'trees.jsonl'), lines.join('\n') + '\n');
    const run = async (mode: 'default' | 'authors') => {
      const s = await relabel(join(dir, 'trees.jsonl'), join(dir, mode), { mode, beta: 0.9, minGap: 0.01, labelThreshold: 0.5 });
      const read = (f: string) => readFileSync(join(dir, mode, f), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, any>);
      return { s, values: read('values.jsonl'), pairs: read('pairs.jsonl') };
    };
    const d = await run('default');
    const a = await run('authors');
    // 1.0: the default reads the number 1; Python's f"intermediate_node_{1.0}" names no node, so only Lyon counts.
    assert.equal(d.values[0]!['node_rewards'].intermediate_node_0, 0.45);
    assert.equal(a.values[0]!['node_rewards'].intermediate_node_0, 0);
    // "1": an error record by default (ids are integers); the authors' f-string makes it the key of node 1.
    assert.match(d.values[1]!['error'], /children_ids" must be a list of integer node ids/);
    assert.equal(a.values[1]!['node_rewards'].intermediate_node_0, 0.45);
    // step null: decayed by depth by default; TypeError in the authors' `BETA ** step`.
    assert.equal(d.values[2]!['node_rewards'].intermediate_node_1, 0.9);
    assert.deepEqual(a.values[2], { id: 't', error: "TypeError: unsupported operand type(s) for ** or pow(): 'float' and 'NoneType'" });
    // A leaf without `response` has no value in either mode (so it is never paired).
    assert.equal(d.values[3]!['node_rewards'].intermediate_node_1, null);
    assert.equal(a.values[3]!['node_rewards'].intermediate_node_1, null);
    assert.deepEqual([d.s.errors, a.s.errors], [1, 1]);
  } finally {
    cleanup();
  }
});

test('reward --texts, ARENA compat: a gold reference number past 2^53 is read exactly (JSON.parse would round it)', async () => {
  const { scoreTexts } = await import('../../src/rewards/apply.js');
  const { composeScheme } = await import('../../src/rewards/schemes.js');
  const { dir, cleanup } = tempDir();
  try {
    const line = (id: string, pred: string, gold: string) =>
      `{"id": "${id}", "question": "Q?", "golden_answers": ["Paris"], "gold_reference_ids": [${gold}], "response": "<relevance>[${pred}]</relevance>\\n<analysis>a</analysis>\\n<answer>Paris</answer>"}`;
    writeFileSync(join(dir, 'g.jsonl'), [line('same', '9007199254740993', '9007199254740993'), line('rounded', '9007199254740992', '9007199254740993'), line('small', '1', '1, 2')].join('\n') + '\n');
    const r = await scoreTexts(join(dir, 'g.jsonl'), join(dir, 'o.jsonl'), composeScheme('arena', ['compat=authors']));
    assert.deepEqual([r.count, r.errors], [3, 0]);
    const rows = readFileSync(join(dir, 'o.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { components: Record<string, number> });
    assert.deepEqual(rows.map((x) => x.components['relevance']), [1, 0, 0.5]);
  } finally {
    cleanup();
  }
});

test("RAG-Gym rerank reply, authors' reader: nesting is bounded as CPython's eval bounds it, never a stack overflow", async () => {
  const { ragGymRerankRewards } = await import('../../src/process/rag-gym-rerank.js');
  const reply = (x: string) => '```json {"ranked_indices": [1, 0, 2], "x": ' + x + '}```';
  const nest = (n: number) => '['.repeat(n) + ']'.repeat(n);
  const read = [0.5, 1, 1 / 3];
  // 200 brackets open at once (the dict's and 199 more) is Python's tokenizer limit; 201 is a SyntaxError.
  assert.deepEqual(ragGymRerankRewards(reply(nest(199)), 3), read);
  assert.deepEqual(ragGymRerankRewards(reply(nest(200)), 3), [0, 0, 0]);
  assert.deepEqual(ragGymRerankRewards(reply(nest(100_000)), 3), [0, 0, 0]);
  // 2,992 unary signs compile under the dict; 2,993 raise RecursionError (CPython 3.11, measured).
  assert.deepEqual(ragGymRerankRewards(reply('-'.repeat(2992) + '1'), 3), read);
  assert.deepEqual(ragGymRerankRewards(reply('-'.repeat(2993) + '1'), 3), [0, 0, 0]);
  assert.deepEqual(ragGymRerankRewards(reply('-'.repeat(100_000) + '1'), 3), [0, 0, 0]);
});
