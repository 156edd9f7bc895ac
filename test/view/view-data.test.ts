/**
 * `ragtrail view`'s data, server and bundle over a real (small) demo output: what each answer holds is
 * checked against the files it comes from — rows against trajectories.jsonl, a tree's pairs against
 * pairs.jsonl, curves against the policy's training log — and the server's guards (read-only, loopback Host,
 * no paths, CSP) and the bundle's data scripts are checked as a browser would meet them.
 */
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { after, before, describe, it } from 'node:test';
import { runDemo } from '../../src/pipelines/demo.js';
import { writeBundle } from '../../src/view/bundle.js';
import { type RunRow, trainingSeries, type TreeRow, ViewData } from '../../src/view/data.js';
import { indexJsonl, readIndexedLine } from '../../src/view/line-index.js';
import { viewServer } from '../../src/view/server.js';
import { findSources } from '../../src/view/sources.js';
import { tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);
const out = join(tmp.dir, 'demo');
const lines = (path: string) => readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

before(async () => {
  // 10 simulations: enough for the gap diagnostic to mine pairs on more than one question (with 6 or 8 its PRM is skipped).
  await runDemo({ out, entities: 1000, trainQuestions: 30, testQuestions: 20, simulations: 10, grpoEpochs: 1, n: 4 });
});

describe('view: sources, rows, trees, results and curves from a demo output', () => {
  it('finds every output of the demo by the files ragtrail writes', () => {
    const sources = findSources([out]);
    const kinds = (k: string) => sources.filter((s) => s.kind === k).map((s) => s.rel).sort();
    assert.equal(kinds('run').length, 7);
    assert.ok(kinds('run').every((r) => r.startsWith('demo/seed-0/eval/runs/')));
    // The gap diagnostic's annotation mines annotate's trees: an annotation folder of its own.
    assert.deepEqual(kinds('annotation'), ['demo/seed-0/annotate', 'demo/seed-0/annotate-gap', 'demo/seed-0/annotate-judge']);
    assert.deepEqual(kinds('results'), ['demo', 'demo/seed-0/eval']);
    // The warm-started base (issue 43) is a trained policy too.
    assert.deepEqual(kinds('training'), ['demo/seed-0/base', 'demo/seed-0/grpo', 'demo/seed-0/prm', 'demo/seed-0/prm-gap', 'demo/seed-0/step-dpo', 'demo/seed-0/step-dpo-gap']);
    // Ids are stable for the same folders.
    assert.deepEqual(findSources([out]).map((s) => s.id), sources.map((s) => s.id));
  });

  it('a run: one row per line with the trajectory\'s own figures; a line opens in full by its offset', async () => {
    const data = new ViewData(findSources([out]));
    const src = data.sources.find((s) => s.kind === 'run' && s.rel.endsWith('/base__world-test'))!;
    const file = lines(src.files['trajectories']!);
    const run = await data.run(src.id);
    assert.equal(run.rows.length, file.length);
    run.rows.forEach((row, n) => {
      const t = file[n]!;
      const r = row as RunRow;
      assert.equal(r.id, t['id']);
      assert.equal(r.em, (t['metrics'] as { em: number }).em);
      assert.equal(r.f1, (t['metrics'] as { f1: number }).f1);
      assert.equal(r.steps, (t['steps'] as unknown[]).length);
      assert.equal(r.rc, t['retrievalCount']);
      assert.equal(r.type, (t['meta'] as { type: string }).type);
    });
    const last = file.length - 1;
    assert.deepEqual((await data.trajectory(src.id, last)).trajectory, file[last]);
    // The PRM-guided run records each candidate's score; the chosen one is the highest.
    const prmRun = data.sources.find((s) => s.kind === 'run' && s.rel.endsWith('/base_PRM_best-of-4__world-test'))!;
    const steps = ((await data.trajectory(prmRun.id, 0)).trajectory as { steps: { selection?: { score: number; scored: { score: number }[] } }[] }).steps;
    const sel = steps.find((s) => s.selection)?.selection;
    assert.ok(sel && sel.scored.length >= 2);
    assert.equal(sel.score, Math.max(...sel.scored.map((c) => c.score)));
  });

  it('a bad line of trajectories.jsonl is a row of its own with its error; the others are listed', async () => {
    const dir = join(tmp.dir, 'broken');
    const runs = join(out, 'seed-0', 'eval', 'runs');
    cpSync(join(runs, readdirSync(runs)[0]!), dir, { recursive: true });
    appendFileSync(join(dir, 'trajectories.jsonl'), '{"id": "cut off\n');
    const data = new ViewData(findSources([dir]));
    const run = await data.run(data.sources[0]!.id);
    assert.equal(run.rows.length, 21);
    assert.match((run.rows[20] as { error: string }).error, /^not valid JSON/);
    assert.deepEqual((await data.trajectory(data.sources[0]!.id, 20)).trajectory, { error: (run.rows[20] as { error: string }).error });
  });

  it('an annotation: a row per tree with its pair count; a tree comes with exactly the pairs mined from it', async () => {
    const data = new ViewData(findSources([out]));
    const src = data.sources.find((s) => s.kind === 'annotation')!;
    const pairs = lines(src.files['pairs']!);
    const trees = lines(src.files['trees']!);
    const ann = await data.annotation(src.id);
    assert.equal(ann.rows.length, trees.length);
    assert.equal(ann.rows.reduce((s, r) => s + ((r as TreeRow).pairs ?? 0), 0), pairs.length);
    const n = ann.rows.findIndex((r) => (r as TreeRow).pairs > 0);
    const tree = await data.tree(src.id, n);
    assert.deepEqual(tree.tree, trees[n]);
    assert.deepEqual(tree.pairs, pairs.filter((p) => p['questionId'] === (ann.rows[n] as TreeRow).id));
  });

  it('results link each system to its run; curves are the training log\'s, point for point', () => {
    const data = new ViewData(findSources([out]));
    const evalResults = data.sources.find((s) => s.kind === 'results' && s.rel === 'demo/seed-0/eval')!;
    const r = data.results(evalResults.id);
    const cells = (r.results as { cells: { system: string }[] }).cells;
    assert.deepEqual(r.runs.map((x) => x.system).sort(), cells.map((c) => c.system).sort());
    const grpo = data.sources.find((s) => s.kind === 'training' && s.rel.endsWith('/grpo'))!;
    const log = (JSON.parse(readFileSync(grpo.files['log']!, 'utf8')) as { training: { log: { step: number; reward: number }[] }[] }).training[0]!.log;
    const reward = data.training(grpo.id).series.find((x) => x.name === 'grpo reward')!;
    assert.deepEqual(reward.points, log.map((e) => [e.step, e.reward]));
    // A TRL trainer_state.json's log_history, and a PRM's losses by epoch.
    const trl = trainingSeries({ log_history: [{ step: 1, loss: 0.9, learning_rate: 1e-5 }, { step: 2, loss: 0.7, learning_rate: 1e-5 }, { step: 2, eval_loss: 0.8 }] });
    assert.deepEqual(trl.series.map((x) => [x.name, x.points]), [['loss', [[1, 0.9], [2, 0.7]]], ['learning_rate', [[1, 1e-5], [2, 1e-5]]]]);
    // ragtrail's TRL runs: log_history.jsonl, a line per entry (a bad line left out).
    const trlDir = join(tmp.dir, 'trl-run');
    mkdirSync(trlDir, { recursive: true });
    writeFileSync(join(trlDir, 'log_history.jsonl'), '{"step": 5, "loss": 1.5}\nnot json\n{"step": 10, "loss": 1.25}\n');
    const trlData = new ViewData(findSources([trlDir]));
    assert.deepEqual(trlData.training(trlData.sources[0]!.id).series, [{ name: 'loss', x: 'step', points: [[5, 1.5], [10, 1.25]] }]);
    assert.deepEqual(trainingSeries({ training: { losses: [0.69, 0.6], heldOutAccuracy: 0.55 } }), { series: [{ name: 'loss', x: 'epoch', points: [[1, 0.69], [2, 0.6]] }], scalars: { heldOutAccuracy: 0.55 } });
  });

  it('line index: offsets of lines split across read chunks, CRLF endings and blank lines', async () => {
    const path = join(tmp.dir, 'big.jsonl');
    const long = 'x'.repeat(700_000); // lines cross the 1 MiB chunk boundary
    const text = [JSON.stringify({ id: 'a', t: long }), '', JSON.stringify({ id: 'b', t: long }) + '\r', JSON.stringify({ id: 'c' })].join('\n');
    appendFileSync(path, text);
    const index = await indexJsonl(path, (v) => (v as { id: string }).id);
    assert.deepEqual(index.lines.map((l) => l.summary), ['a', 'b', 'c']);
    assert.equal((readIndexedLine(path, index.lines[1]!) as { t: string }).t.length, 700_000);
    assert.deepEqual(readIndexedLine(path, index.lines[2]!), { id: 'c' });
  });
});

describe('view: the server and the bundle', () => {
  const get = (port: number, path: string, opts: { method?: string; host?: string } = {}) =>
    new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path, method: opts.method ?? 'GET', headers: opts.host ? { host: opts.host } : {} }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      });
      req.on('error', reject);
      req.end();
    });

  it('answers the app and its data read-only, to loopback Host names only, with a policy that allows no other origin', async () => {
    const data = new ViewData(findSources([out]));
    const server = viewServer(data, '127.0.0.1');
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const page = await get(port, '/');
      assert.equal(page.status, 200);
      assert.match(String(page.headers['content-security-policy']), /default-src 'none'; script-src 'self'.*connect-src 'self'/);
      assert.match(page.body, /<script src="app.js"><\/script>/);
      const sources = JSON.parse((await get(port, '/api/sources')).body) as { sources: { id: string; kind: string }[] };
      assert.equal(sources.sources.length, data.sources.length);
      const run = sources.sources.find((s) => s.kind === 'run')!;
      assert.equal((JSON.parse((await get(port, `/api/traj/${run.id}/0`)).body) as { n: number }).n, 0);
      assert.equal((await get(port, '/api/sources', { host: 'rebound.example.com' })).status, 403);
      assert.equal((await get(port, '/api/sources', { method: 'POST' })).status, 405);
      assert.equal((await get(port, '/api/run/nope')).status, 404);
      assert.equal((await get(port, `/api/traj/${run.id}/-1`)).status, 400);
      for (const p of ['/../package.json', '/%2e%2e/package.json', '/api/run/..%2F..%2Fetc', '/app.js/../../package.json']) assert.equal((await get(port, p)).status, 404, p);
    } finally {
      server.close();
    }
  });

  it('the bundle: every answer as a data script the page loads, the same data as the server gives', async () => {
    const data = new ViewData(findSources([out]));
    const dir = join(tmp.dir, 'bundle');
    const { files, bytes } = await writeBundle(data, dir);
    assert.ok(files > 10 && bytes > 100_000);
    const html = readFileSync(join(dir, 'index.html'), 'utf8');
    assert.match(html, /<meta name="ragtrail-mode" content="bundle">/);
    assert.match(html, /http-equiv="Content-Security-Policy" content="default-src 'none'/);
    const load = (file: string) => {
      const window: { __RAGTRAIL__?: Record<string, unknown> } = {};
      runInNewContext(readFileSync(join(dir, 'data', file), 'utf8'), { window });
      // Objects made in another context have that context's prototypes: compare them as plain JSON.
      return JSON.parse(JSON.stringify(window.__RAGTRAIL__)) as Record<string, unknown>;
    };
    const run = data.sources.find((s) => s.kind === 'run')!;
    assert.deepEqual(load(`run_${run.id}.js`)[`run/${run.id}`], JSON.parse(JSON.stringify(await data.run(run.id))));
    const chunk = load(`traj_${run.id}_0.js`)[`traj/${run.id}/0`] as Record<string, unknown>;
    assert.equal(Object.keys(chunk).length, 20);
    assert.deepEqual(chunk['19'], JSON.parse(JSON.stringify(await data.trajectory(run.id, 19))));
  });
});
