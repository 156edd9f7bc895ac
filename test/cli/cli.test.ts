/** The CLI end to end, as a user runs it: exit codes, one-line errors, and the numbers it prints. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { data, ROOT, tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);

function ragtrail(...args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts'), ...args], { cwd: ROOT, encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const bamboogle = data('flashrag', 'bamboogle_test.jsonl');
const searchR1 = data('trajectories', 'search_r1_bamboogle_base', 'intermediate_data.json');

describe('ragtrail CLI', () => {
  it('exits 2 with one line on a bad flag or a bad value', () => {
    for (const args of [['world', '--out', tmp.dir, '--entities', 'ten'], ['score', '--dataset', bamboogle], ['frobnicate'], ['score', '--dataset', bamboogle, '--predictions', searchR1, '--nope']]) {
      const r = ragtrail(...args);
      assert.equal(r.code, 2, args.join(' '));
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, /^ragtrail: /);
    }
  });

  it('exits 2 with file:line on bad input files', () => {
    const bad = join(tmp.dir, 'bad.jsonl');
    writeFileSync(bad, '{"id":"1","question":"Q?","golden_answers":["a"]}\n{"id":"2","golden_answers":["b"]}\n');
    const r = ragtrail('score', '--dataset', bad, '--predictions', searchR1);
    assert.equal(r.code, 2);
    assert.equal(r.stderr.trim(), `ragtrail: ${bad}:2: field "question" is missing`);
    const missing = ragtrail('score', '--dataset', join(tmp.dir, 'absent.jsonl'), '--predictions', searchR1);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /absent\.jsonl: no such file/);
  });

  it('--help works on every command', () => {
    for (const cmd of ['world', 'corpus', 'score']) {
      const r = ragtrail(cmd, '--help');
      assert.equal(r.code, 0);
      assert.match(r.stdout, new RegExp(`Usage: ragtrail ${cmd}`));
    }
  });

  it("score reproduces FlashRAG's numbers for the Search-R1 Bamboogle run (em 0.088, f1 0.172426, acc 0.096)", () => {
    const r = ragtrail('score', '--dataset', bamboogle, '--predictions', searchR1, '--json');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim().split('\n').length, 1);
    const got = JSON.parse(r.stdout) as Record<string, number>;
    // metric_score.txt of that run: em 0.088, acc 0.096, f1 0.17242597402597404
    assert.deepEqual(Object.keys(got), ['n', 'em', 'f1', 'acc']);
    assert.equal(got['n'], 125);
    assert.equal(got['em'], 0.088);
    assert.equal(got['acc'], 0.096);
    assert.ok(Math.abs((got['f1'] as number) - 0.17242597402597404) < 1e-12);
  });

  it('score agrees with every per-question FlashRAG score and reads jsonl predictions', () => {
    const run = JSON.parse(readFileSync(searchR1, 'utf8')) as { id: string; output: { pred: string; metric_score: { em: number; f1: number; acc: number } } }[];
    const preds = join(tmp.dir, 'preds.jsonl');
    writeFileSync(preds, run.map((r) => JSON.stringify({ id: r.id, prediction: r.output.pred })).join('\n'));
    const r = ragtrail('score', '--dataset', bamboogle, '--predictions', preds, '--json');
    assert.deepEqual(JSON.parse(r.stdout), { n: 125, em: 0.088, f1: 0.17242597402597404, acc: 0.096 });
  });

  it('score counts missing predictions as 0 and reports unknown ids', () => {
    const preds = join(tmp.dir, 'partial.jsonl');
    writeFileSync(preds, [{ id: 'test_4', prediction: '20 June 1837' }, { id: 'nope', prediction: 'x' }].map((x) => JSON.stringify(x)).join('\n'));
    const r = ragtrail('score', '--dataset', bamboogle, '--predictions', preds, '--json');
    assert.equal(r.code, 0);
    assert.deepEqual(JSON.parse(r.stdout), { n: 125, em: 1 / 125, f1: 1 / 125, acc: 1 / 125 });
    assert.match(r.stderr, /124 question\(s\) of the dataset have no prediction/);
    assert.match(r.stderr, /1 prediction id\(s\) are not in the dataset/);
  });

  it('score reads the official HotpotQA prediction file and prints a table with paired tests', () => {
    const gold = JSON.parse(readFileSync(data('hotpotqa', 'distractor_dev_first53_official.json'), 'utf8')) as { _id: string; answer: string }[];
    const perfect = join(tmp.dir, 'hotpot_pred.json');
    writeFileSync(perfect, JSON.stringify({ answer: Object.fromEntries(gold.map((g) => [g._id, g.answer])), sp: {} }, null, 2));
    const yes = join(tmp.dir, 'yes.jsonl');
    writeFileSync(yes, gold.map((g) => JSON.stringify({ id: g._id, prediction: 'yes' })).join('\n'));
    const r = ragtrail('score', '--dataset', data('hotpotqa', 'distractor_dev_first53_official.json'), '--predictions', perfect, '--baseline', yes);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /EM\s+1\.0000\s+1\.0000\s+1\.0000/);
    // Five of the 53 gold answers are "yes": the baseline's EM is 5/53 = 0.0943.
    assert.match(r.stdout, /EM\s+0\.0943\s+0\.9057/);
  });

  it('corpus builds the deduplicated HotpotQA corpus (521 passages) in either layout', () => {
    const out = join(tmp.dir, 'corpus.jsonl');
    const r = ragtrail('corpus', '--dataset', data('hotpotqa', 'distractor_dev_first53_official.json'), '--out', out, '--format', 'flashrag');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /53 questions, 522 context passages, 521 distinct/);
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    assert.equal(lines.length, 521);
    assert.match(lines[0] as string, /^\{"id":"ctx-[0-9a-f]{16}","contents":"\\"Ed Wood \(film\)\\"\\nEd Wood is a 1994/);
  });

  it('corpus --skip-invalid reports what it skipped', () => {
    const bad = join(tmp.dir, 'hp_bad.jsonl');
    const good = readFileSync(data('hotpotqa', 'distractor_hard_train300.jsonl'), 'utf8').split('\n').slice(0, 3);
    writeFileSync(bad, [good[0], '{"id": "broken",', good[1], '{"id":"x","context":{"title":[],"sentences":[]}}', good[2]].join('\n'));
    assert.equal(ragtrail('corpus', '--dataset', bad, '--out', join(tmp.dir, 'c2.jsonl')).code, 2);
    const r = ragtrail('corpus', '--dataset', bad, '--out', join(tmp.dir, 'c2.jsonl'), '--skip-invalid');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^3 questions, 30 context passages/);
    assert.match(r.stderr, /skipped 2 invalid record\(s\); first: .*hp_bad\.jsonl:2/);
  });

  it('world prints question-type counts and writes the four files', () => {
    const out = join(tmp.dir, 'world');
    const r = ragtrail('world', '--seed', '3', '--entities', '2000', '--out', out);
    assert.equal(r.code, 0, r.stderr);
    for (const t of ['single-hop', 'compositional', 'comparison', 'bridge-comparison']) assert.match(r.stdout, new RegExp(`${t}\\s+\\d+`));
    assert.equal(readFileSync(join(out, 'questions.jsonl'), 'utf8').trim().split('\n').length, 400);
    assert.equal(JSON.parse(readFileSync(join(out, 'world.json'), 'utf8')).seed, 3);
  });
});
