/**
 * Issue 45, item 1: every reader of a user's file gives a record it cannot use an `{id, error}` record of its
 * own, uses the others, counts the failures, and exits 1 — `import`, `reward RUN`, `score`, `search
 * --queries`, `prm train` and `prm eval` (`reward --texts` and `annotate relabel` are in
 * test/rewards/line-errors.test.ts). Real samples: the Search-R1 Bamboogle run (test/fixtures/data).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { cliRunner, data, tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);
const { run: ragtrail } = cliRunner(tmp.dir);
const lines = (path: string) => readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
const errorLines = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('error record: ')).map((l) => JSON.parse(l.slice('error record: '.length)) as { id: string | null; error: string });

describe('error records for the records of a user file that cannot be used', () => {
  const records = JSON.parse(readFileSync(data('trajectories', 'search_r1_bamboogle_base', 'intermediate_data.json'), 'utf8')) as Record<string, unknown>[];
  const runDir = join(tmp.dir, 'run');

  it('import: an element that is not JSON and one without golden_answers are error records; the other 3 are imported; exit 1', () => {
    const file = join(tmp.dir, 'intermediate_data.json');
    const { golden_answers: _, ...noGold } = records[1]!;
    // The second element is broken JSON inside a well-formed bracket structure: the scanner still finds its end.
    writeFileSync(file, `[\n${JSON.stringify(records[0])},\n{"id": "broken", "question": tru},\n${JSON.stringify(noGold)},\n${JSON.stringify(records[2])},\n${JSON.stringify(records[3])}\n]\n`);
    const r = ragtrail('import', '--format', 'search-r1', file, '--out', runDir);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stdout, /imported 3 trajectories \(0 already there\) .*; 2 records could not be imported/);
    assert.match(r.stderr, /2 of 5 records could not be used: each is an \{"id", "error"\} line in .*import-errors\.jsonl/);
    const errors = lines(join(runDir, 'import-errors.jsonl'));
    assert.deepEqual(errors.map((e) => e['id']), [null, records[1]!['id']]);
    assert.match(String(errors[0]!['error']), /intermediate_data\.json:3 \(record 2\): invalid JSON/);
    assert.match(String(errors[1]!['error']), /intermediate_data\.json:4 \(record 3\): field "golden_answers" is missing/);
    assert.equal(lines(join(runDir, 'trajectories.jsonl')).length, 3);
    // Importing a clean file again removes the stale error file.
    writeFileSync(file, JSON.stringify(records.slice(0, 4)));
    const again = ragtrail('import', '--format', 'search-r1', file, '--out', runDir);
    assert.equal(again.status, 0, again.stderr);
    assert.match(again.stdout, /imported 1 trajectories \(3 already there\)/);
    assert.equal(existsSync(join(runDir, 'import-errors.jsonl')), false);
  });

  it('reward RUN: a line that is not JSON and one that is not a trajectory are {id, error} lines in their place; exit 1', () => {
    const traj = join(runDir, 'trajectories.jsonl');
    const good = readFileSync(traj, 'utf8').trim().split('\n');
    writeFileSync(traj, [good[0], '{"id": "q-x", "steps": ', good[1], '{"id": "q-y", "prediction": "yes"}', good[2], good[3]].join('\n') + '\n');
    const out = join(tmp.dir, 'rewards.jsonl');
    const r = ragtrail('reward', '--scheme', 'em', runDir, '--out', out);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stdout, /em over 4 trajectories .* \(and 2 error records\)/);
    assert.match(r.stderr, /2 of 6 records could not be used/);
    const rows = lines(out);
    const id = (line: string) => String((JSON.parse(line) as { id: unknown }).id);
    assert.deepEqual(rows.map((x) => ('error' in x ? `error:${x['id']}` : x['id'])), [id(good[0]!), 'error:null', id(good[1]!), 'error:q-y', id(good[2]!), id(good[3]!)]);
    assert.match(String(rows[1]!['error']), /trajectories\.jsonl:2: invalid JSON/);
    assert.match(String(rows[3]!['error']), /trajectories\.jsonl:4: field "steps" must be a list of steps/);
    writeFileSync(traj, good.join('\n') + '\n');
  });

  it('score: prediction lines that cannot be read are error records on stderr; the rest are scored; stdout stays one JSON object; exit 1', () => {
    const preds = join(tmp.dir, 'preds.jsonl');
    const dataset = data('flashrag', 'bamboogle_test.jsonl');
    const ids = readFileSync(dataset, 'utf8').trim().split('\n').slice(0, 3).map((l) => (JSON.parse(l) as { id: string }).id);
    writeFileSync(preds, [`{"id": "${ids[0]}", "prediction": "x"}`, 'not json', `{"id": "${ids[1]}"}`, `{"id": "${ids[2]}", "prediction": "y"}`].join('\n') + '\n');
    const r = ragtrail('score', '--dataset', dataset, '--predictions', preds, '--json');
    assert.equal(r.status, 1, r.stderr);
    assert.deepEqual(Object.keys(JSON.parse(r.stdout)), ['n', 'em', 'f1', 'acc']);
    const errors = errorLines(r.stderr);
    assert.deepEqual(errors.map((e) => e.id), [null, ids[1]]);
    assert.match(errors[0]!.error, /preds\.jsonl:2: invalid JSON/);
    assert.match(errors[1]!.error, /preds\.jsonl:3: field "prediction" is missing/);
    assert.match(r.stderr, /2 records could not be used/);
  });

  it('search --queries: a bad line is an {id, error} line in its place; the others are searched; exit 1', () => {
    const corpus = join(tmp.dir, 'corpus.jsonl');
    writeFileSync(corpus, ['{"id": "p1", "title": "Ed Wood", "text": "Ed Wood was an American filmmaker."}', '{"id": "p2", "title": "Woodson", "text": "Woodson is a town in Arkansas."}'].join('\n') + '\n');
    const index = join(tmp.dir, 'index');
    assert.equal(ragtrail('index', 'build', '--corpus', corpus, '--out', index, '--bm25').status, 0);
    const queries = join(tmp.dir, 'q.jsonl');
    writeFileSync(queries, ['{"id": "a", "query": "Ed Wood"}', '{"id": "b"}', '{broken', '{"id": "c", "query": "Arkansas town"}'].join('\n') + '\n');
    const out = join(tmp.dir, 'hits.jsonl');
    const r = ragtrail('search', '--index', index, '--k', '1', '--queries', queries, '--out', out, '--batch', '2');
    assert.equal(r.status, 1, r.stderr);
    const rows = lines(out);
    assert.deepEqual(rows.map((x) => x['id']), ['a', 'b', null, 'c']);
    assert.equal((rows[0]!['hits'] as { id: string }[])[0]!.id, 'p1');
    assert.equal((rows[3]!['hits'] as { id: string }[])[0]!.id, 'p2');
    assert.match(String(rows[1]!['error']), /q\.jsonl:2: field "query" is missing/);
    assert.match(String(rows[2]!['error']), /q\.jsonl:3: invalid JSON/);
    assert.match(r.stderr, /2 of 4 records could not be used/);
  });

  it('prm train and prm eval: lines that are not pairs are error records on stderr; the others are used; exit 1', () => {
    const action = (type: string, text: string) => ({ type, action: type === 'search' ? { type, query: text } : { type, answer: text }, raw: text });
    const pairs = Array.from({ length: 8 }, (_, i) => JSON.stringify({
      id: `q${i}:0`,
      state: { question: `question ${i} about Ed Wood`, steps: [] },
      chosen: action('search', `Ed Wood ${i}`),
      rejected: action('answer', 'no'),
    }));
    const file = join(tmp.dir, 'prm_pairs.jsonl');
    writeFileSync(file, [...pairs.slice(0, 4), '{"id": "bad", "state": {"question": "q"}}', '[1, 2', ...pairs.slice(4)].join('\n') + '\n');
    const model = join(tmp.dir, 'prm.json');
    const tr = ragtrail('prm', 'train', '--pairs', file, '--out', model, '--holdout', '0', '--epochs', '3');
    assert.equal(tr.status, 1, tr.stderr);
    assert.match(tr.stdout, /trained a linear PRM on 8 pairs/);
    assert.deepEqual(errorLines(tr.stderr).map((e) => e.id), ['bad', null]);
    assert.match(tr.stderr, /2 of 10 records could not be used/);
    const ev = ragtrail('prm', 'eval', '--model', model, '--pairs', file, '--json');
    assert.equal(ev.status, 1, ev.stderr);
    assert.equal((JSON.parse(ev.stdout) as { n: number }).n, 8);
    assert.match(errorLines(ev.stderr)[0]!.error, /prm_pairs\.jsonl:5: field "steps"|prm_pairs\.jsonl:5: field "state"/);
  });
});
