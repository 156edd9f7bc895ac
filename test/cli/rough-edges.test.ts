/**
 * What a new user hits first (issue 20): splits, dataset layouts, scoring a FlashRAG run on its own,
 * a port in use, and runs whose numbers would mean nothing. Each error exits 2 with one line naming the
 * problem and a fix that exists for that command; each silent-nonsense case warns once on stderr.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { data, ROOT, tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);

function ragtrail(...args: string[]) {
  // A time limit: a server command that failed to listen must exit, not hang on its search threads.
  const r = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), join(ROOT, 'src', 'cli', 'main.ts'), ...args], { cwd: tmp.dir, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, signal: r.signal };
}

const bamboogle = data('flashrag', 'bamboogle_test.jsonl');
const searchR1Run = data('trajectories', 'search_r1_bamboogle_base', 'intermediate_data.json');
const world = join(tmp.dir, 'world');
const questions = join(world, 'questions.jsonl');
const index = join(tmp.dir, 'index');

before(() => {
  assert.equal(ragtrail('world', '--seed', '3', '--entities', '400', '--out', world).code, 0);
  assert.equal(ragtrail('index', 'build', '--corpus', join(world, 'corpus.jsonl'), '--out', index).code, 0);
});

/** The one stderr line of a failed command, after checking it exited 2. */
function oneLineError(r: ReturnType<typeof ragtrail>): string {
  assert.equal(r.code, 2, `${r.stdout}\n${r.stderr}`);
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  return lines[0]!;
}

describe('--split', () => {
  it('a split a plain dataset lacks names what the file has and the flag that works', () => {
    const line = oneLineError(ragtrail('run', '--policy', 'sim', '--index', index, '--dataset', bamboogle, '--split', 'train', '--out', join(tmp.dir, 'r-split')));
    assert.equal(line, `ragtrail: ${bamboogle}: no questions in split "train" (it has no metadata.split: leave --split out to use all 125 questions)`);
  });

  it('an unknown split lists the splits there are, and --split "" takes every question', () => {
    const line = oneLineError(ragtrail('annotate', '--policy', 'sim', '--index', index, '--dataset', questions, '--split', 'val', '--out', join(tmp.dir, 'a-split')));
    assert.match(line, /no questions in split "val" \(its splits: "train", "dev", "test"; pick one with --split NAME, or use all \d+ questions with --split ""\)$/);
    const all = ragtrail('run', '--policy', 'oracle', '--index', index, '--dataset', questions, '--split', '', '--limit', '500', '--out', join(tmp.dir, 'r-all'), '--quiet');
    assert.equal(all.code, 0, all.stderr);
    const total = Number(/use all (\d+) questions/.exec(line)![1]);
    assert.match(all.stdout, new RegExp(`: ${total} questions run`));
  });

  it('serve-env serves every question of a plain dataset without --split, and names the splits of a bad one', () => {
    const bad = oneLineError(ragtrail('serve-env', '--index', index, '--dataset', questions, '--split', 'val', '--port', '0'));
    assert.match(bad, /its splits: "train", "dev", "test"; pick one with --split NAME/);
    const plain = oneLineError(ragtrail('serve-env', '--index', index, '--dataset', bamboogle, '--split', 'train', '--port', '0'));
    assert.match(plain, /no questions in split "train" \(it has no metadata\.split: leave --split out to use all 125 questions\)/);
  });
});

describe('question selection flags', () => {
  it('run --sample draws the same questions as eval --sample for the seed, in file order; --tail takes the last; two counts are refused', async () => {
    const { loadDatasetAll } = await import('../../src/corpus/dataset.js');
    const { selectQuestions } = await import('../../src/corpus/select.js');
    const test = (await loadDatasetAll(questions)).questions.filter((q) => q.metadata?.['split'] === 'test');
    const idsOf = (dir: string) => readFileSync(join(dir, 'trajectories.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).id as string).sort();
    const run = ragtrail('run', '--policy', 'oracle', '--agent', 'rag', '--index', index, '--dataset', questions, '--split', 'test', '--sample', '6', '--sample-seed', '4', '--out', join(tmp.dir, 'r-sample'), '--quiet');
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(idsOf(join(tmp.dir, 'r-sample')), selectQuestions(test, { sample: 6, seed: 4 }).map((q) => q.id).sort());
    const tail = ragtrail('run', '--policy', 'oracle', '--agent', 'rag', '--index', index, '--dataset', questions, '--split', 'test', '--tail', '3', '--out', join(tmp.dir, 'r-tail'), '--quiet');
    assert.equal(tail.code, 0, tail.stderr);
    assert.deepEqual(idsOf(join(tmp.dir, 'r-tail')), test.slice(-3).map((q) => q.id).sort());
    assert.equal(oneLineError(ragtrail('eval', '--policy', 'oracle', '--index', index, '--dataset', questions, '--limit', '3', '--sample', '2', '--out', join(tmp.dir, 'e-two'))), 'ragtrail: --limit and --sample both choose how many questions (give one of --limit (first N), --tail (last N) or --sample (random N))');
    assert.match(oneLineError(ragtrail('run', '--policy', 'oracle', '--index', index, '--dataset', questions, '--val-fraction', '0.2', '--out', join(tmp.dir, 'r-val'))), /--val-fraction needs --val-part train or val \(say which part/);
  });
});

describe('an unknown dataset layout', () => {
  const odd = join(tmp.dir, 'odd.jsonl');
  before(() => writeFileSync(odd, '{"qid": "1", "q": "Who?", "a": "me"}\n'));

  it('run names its --dataset-format flag (not --format), and the flag then works', () => {
    const line = oneLineError(ragtrail('run', '--policy', 'sim', '--index', index, '--dataset', odd, '--out', join(tmp.dir, 'r-odd')));
    assert.match(line, /odd\.jsonl:1: cannot tell the dataset layout \(fields: qid, q, a\) \(pass --dataset-format flashrag\|hotpotqa\|2wiki\|musique\|medqa, or give the records/);
    assert.doesNotMatch(line, /--format /);
    // Forced, the flashrag reader says which field is missing instead.
    assert.match(oneLineError(ragtrail('run', '--policy', 'sim', '--index', index, '--dataset', odd, '--dataset-format', 'flashrag', '--out', join(tmp.dir, 'r-odd'))), /odd\.jsonl:1: field "id" is missing/);
  });

  it('commands without a layout flag name the fields instead of a flag', () => {
    const line = oneLineError(ragtrail('serve-env', '--index', index, '--dataset', odd, '--port', '0'));
    assert.match(line, /cannot tell the dataset layout .*\(give the records the fields a layout is recognised by: golden_answers \(flashrag\)/);
    assert.doesNotMatch(line, /--(dataset-)?format/);
  });

  it('corpus and score name --dataset-format; corpus keeps --format for its output', () => {
    const line = oneLineError(ragtrail('corpus', '--dataset', odd, '--out', join(tmp.dir, 'c.jsonl')));
    assert.match(line, /pass --dataset-format flashrag\|hotpotqa\|2wiki\|musique\|medqa/);
  });
});

describe('score', () => {
  it("scores FlashRAG's intermediate_data.json on its own gold answers, as with --dataset", () => {
    const r = ragtrail('score', '--predictions', searchR1Run, '--json');
    assert.equal(r.code, 0, r.stderr);
    // FlashRAG's metric_score.txt of that run: em 0.088, acc 0.096, f1 0.17242597402597404
    assert.deepEqual(JSON.parse(r.stdout), { n: 125, em: 0.088, f1: 0.17242597402597404, acc: 0.096 });
  });

  it('a predictions file without gold answers asks for --dataset; a bad predictions line does not offer --skip-invalid', () => {
    const plain = join(tmp.dir, 'preds.jsonl');
    writeFileSync(plain, '{"id": "test_0", "prediction": "x"}\n');
    assert.equal(oneLineError(ragtrail('score', '--predictions', plain)), `ragtrail: ${plain}:1: no gold answers ("answers" or "golden_answers") in this predictions file (pass --dataset FILE with the questions and their gold answers)`);
    const bad = join(tmp.dir, 'bad-preds.jsonl');
    writeFileSync(bad, '{"id": "test_0", "prediction": "x"}\n{"id": \n');
    // A bad predictions line is an error record (stderr) and the exit status 1; the other lines are scored.
    const scored = ragtrail('score', '--predictions', bad, '--dataset', bamboogle);
    assert.equal(scored.code, 1, scored.stderr);
    assert.match(scored.stderr, /^error record: \{"id":null,"error":".*bad-preds\.jsonl:2: invalid JSON .*\(fix or remove that line\)"\}$/m);
    assert.doesNotMatch(scored.stderr, /skip-invalid/);
    // A bad dataset line still offers it: there the flag applies.
    const badData = join(tmp.dir, 'bad-data.jsonl');
    writeFileSync(badData, '{"id": "q", "question": "Q?", "golden_answers": ["a"]}\n{"id":\n');
    assert.match(oneLineError(ragtrail('score', '--predictions', plain, '--dataset', badData)), /bad-data\.jsonl:2: invalid JSON .*\(fix or remove that line, or pass --skip-invalid\)$/);
  });
});

describe('a port in use', () => {
  let holder: Server;
  let port = 0;
  before(async () => {
    holder = createServer();
    await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
    port = (holder.address() as { port: number }).port;
  });
  after(() => holder.close());

  for (const cmd of ['serve-retriever', 'serve-env']) {
    it(`${cmd} exits 2 with the port and the fix, promptly (its search threads closed)`, () => {
      const args = cmd === 'serve-env' ? ['--dataset', questions] : [];
      const t0 = performance.now();
      const r = ragtrail(cmd, '--index', index, ...args, '--port', String(port), '--workers', '2', '--quiet');
      assert.equal(r.signal, null, 'the command hung after the failed listen');
      assert.equal(oneLineError(r), `ragtrail: cannot listen on 127.0.0.1:${port}: the port is in use (pass another --port, or --port 0 for a free one, or stop the process that holds it)`);
      assert.ok(performance.now() - t0 < 30_000);
    });
  }

  it('a host that is not this machine names --host', () => {
    assert.match(oneLineError(ragtrail('serve-retriever', '--index', index, '--port', '0', '--host', '192.0.2.1', '--workers', '0')), /cannot listen on 192\.0\.2\.1:0: 192\.0\.2\.1 is not an address of this machine \(pass a local --host/);
  });
});

describe('runs whose numbers would mean nothing warn once', () => {
  it('--policy sim on Bamboogle (no gold plans) warns; on the synthetic world it does not', () => {
    const r = ragtrail('run', '--policy', 'sim', '--index', index, '--dataset', bamboogle, '--limit', '30', '--out', join(tmp.dir, 'sim-bamboogle'), '--quiet');
    assert.equal(r.code, 0, r.stderr);
    const warnings = r.stderr.split('\n').filter((l) => l.startsWith('warning: '));
    assert.equal(warnings.length, 1, r.stderr);
    assert.match(warnings[0]!, /^warning: the sim policy has no gold plan for 30 of 30 questions \(no decomposition or supporting passages, e\.g\. test_0\): .*expect EM near 0\. Use questions with gold plans/);
    const ok = ragtrail('run', '--policy', 'sim', '--index', index, '--dataset', questions, '--limit', '30', '--out', join(tmp.dir, 'sim-world'), '--quiet');
    assert.equal(ok.code, 0, ok.stderr);
    assert.doesNotMatch(ok.stderr, /warning/);
    // What it warns about: EM near 0 on Bamboogle (a lucky yes/no at most), against the world's.
    const em = (stdout: string) => Number(/\n\s+30\s+(\d\.\d{4})\s/.exec(stdout)![1]);
    assert.ok(em(r.stdout) < 0.1 && em(ok.stdout) > 0.3, `EM ${em(r.stdout)} on Bamboogle, ${em(ok.stdout)} on the world`);
  });

  it('reward warns when a scheme checks another protocol\'s format, and not when it fits', () => {
    const rr = join(tmp.dir, 'rr');
    const sr = join(tmp.dir, 'sr');
    assert.equal(ragtrail('run', '--agent', 'reasonrag', '--policy', 'sim', '--index', index, '--dataset', questions, '--limit', '20', '--out', rr, '--quiet').code, 0);
    assert.equal(ragtrail('run', '--agent', 'search-r1', '--policy', 'sim', '--index', index, '--dataset', questions, '--limit', '20', '--out', sr, '--quiet').code, 0);
    const lws = ragtrail('reward', rr, '--scheme', 'lws-stage1');
    assert.equal(lws.code, 0, lws.stderr);
    assert.equal(lws.stderr.trim(), 'warning: lws-stage1 checks the search-r1 format (its "format" component) but 20 of 20 trajectories follow reasonrag: each of those scores as a format failure. To fix, score them with a scheme of their protocol (reasonrag-terminal) or a protocol-free scheme (em, f1, correct, discounted), or run the agent with --agent search-r1');
    // What it warns about: the format component is −1 on every trajectory.
    assert.match(lws.stdout, /mean\s+\S+\s+-1\.0000\s/);
    const arena = ragtrail('reward', sr, '--scheme', 'arena');
    assert.match(arena.stderr, /^warning: arena checks the arena format \(its "format" component\) but 20 of 20 trajectories follow search-r1: .*--agent arena\n$/);
    assert.match(arena.stdout, /mean\s+\S+\s+0\.0000\s/);
    for (const [run, scheme] of [[sr, 'lws-stage1'], [rr, 'reasonrag-terminal'], [rr, 'f1'], [sr, 'search-r1-format']] as const) {
      const r = ragtrail('reward', run, '--scheme', scheme);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, '', `${scheme} on ${run}`);
    }
  });
});
