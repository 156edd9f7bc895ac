/** The evaluation harness end to end on the synthetic world: runs, statistics, and the report files. */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateWorld, writeWorld } from '../../src/corpus/world/index.js';
import { citedAndGold, trajectoryCitationPrecision } from '../../src/eval/citations.js';
import { answerCategories, readEvalConfig, runDir, runEval } from '../../src/eval/harness.js';
import { readTrajectories } from '../../src/eval/trajectories.js';
import { buildIndex } from '../../src/retrieval/index-dir.js';
import { tempDir } from '../helpers.js';
// --policy gym registers itself from learn/ (as the CLI and the ragtrail/eval entry point load it).
import '../../src/learn/gym/policy.js';

const tmp = tempDir();
before(async () => {
  await writeWorld(join(tmp.dir, 'world'), generateWorld({ seed: 21, entities: 1200, questions: 80 }));
  await buildIndex(join(tmp.dir, 'world', 'corpus.jsonl'), join(tmp.dir, 'index'), { quiet: true });
});
after(tmp.cleanup);

describe('ragtrail eval', () => {
  it('runs the matrix, tests against the baseline, and writes results.json, results.md and report.html', async () => {
    const configPath = join(tmp.dir, 'eval.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        index: 'index',
        out: 'eval',
        datasets: [{ name: 'w', path: 'world/questions.jsonl', limit: 40 }],
        systems: [
          { name: 'greedy', agent: 'search-r1', policy: 'sim' },
          { name: 'vote', agent: 'search-r1', policy: 'sim', select: 'vote', n: 5 },
          { name: 'oracle', agent: 'search-r1', policy: 'oracle' },
        ],
        baseline: 'greedy',
      }),
    );
    const config = readEvalConfig(configPath);
    assert.equal(config.index, join(tmp.dir, 'index'));
    const r = await runEval(config);
    assert.equal(r.cells.length, 3);
    const oracle = r.cells.find((c) => c.system === 'oracle')!;
    assert.equal(oracle.em.mean, 1);
    assert.ok(oracle.vsBaseline!.em.diff > 0 && oracle.vsBaseline!.em.pT < 0.05);
    assert.equal(r.cells.find((c) => c.system === 'greedy')!.vsBaseline, undefined);
    // Latency per question: the episode, and within it the searches (the non-LLM policies call no model).
    for (const c of r.cells) {
      assert.ok(c.latency!.retrievalSeconds > 0 && c.latency!.seconds >= c.latency!.retrievalSeconds, JSON.stringify(c.latency));
      assert.equal(c.latency!.llmSeconds, 0);
    }
    const json = JSON.parse(readFileSync(join(config.out, 'results.json'), 'utf8'));
    assert.equal(json.cells.length, 3);
    const md = readFileSync(join(config.out, 'results.md'), 'utf8');
    assert.match(md, /\| system \| w EM \| w F1 \| Avg EM \| Avg F1 \|/);
    assert.match(md, /\| oracle \| 1\.000\* \| 1\.000\* \| 1\.000 \| 1\.000 \|/);
    assert.match(md, /## Paired tests against greedy/);
    // The world's questions carry their hop counts: EM by hops (ARENA Table 13), rows adding up to the cell.
    const hops = oracle.byHops!;
    assert.ok(hops.length > 1 && hops.reduce((a, h) => a + h.n, 0) === oracle.n, JSON.stringify(hops));
    assert.match(md, /## EM by hops \(w\)/);
    const html = readFileSync(join(config.out, 'report.html'), 'utf8');
    assert.match(html, /^<!doctype html>/);
    assert.ok(!/<script|src="http|href="http/.test(html), 'self-contained: no scripts, nothing fetched');
    for (const title of ['Main results', 'Accuracy against retrieval count', 'F1 by number of retrieval steps — w', 'Non-LLM policies']) assert.ok(html.includes(title), title);
    assert.equal((html.match(/<svg /g) ?? []).length, 2);
    // A second run reuses the runs: nothing is re-run, the numbers are the same.
    const again = await runEval(config);
    assert.deepEqual(again.cells.map((c) => c.em.mean), r.cells.map((c) => c.em.mean));
  });

  it('arena systems get relevance and citation precision (the mean over questions), other systems neither', async () => {
    const configPath = join(tmp.dir, 'eval-arena.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        index: 'index',
        out: 'eval-arena',
        datasets: [{ name: 'w', path: 'world/questions.jsonl', limit: 30 }],
        systems: [
          { name: 'oracle', agent: 'arena', policy: 'oracle' },
          { name: 'gym', agent: 'arena', policy: 'gym' },
          { name: 'r1', agent: 'search-r1', policy: 'oracle' },
        ],
      }),
    );
    const config = readEvalConfig(configPath);
    const r = await runEval(config);
    const cell = (s: string) => r.cells.find((c) => c.system === s)!;
    for (const s of ['oracle', 'gym']) {
      const ts = (await readTrajectories(runDir(config.out, s, 'w'))).slice(0, 30);
      const mean = ts.reduce((x, t) => x + trajectoryCitationPrecision(t), 0) / ts.length;
      assert.ok(Math.abs(cell(s).citationPrecision! - mean) < 1e-12, `${s}: ${cell(s).citationPrecision} vs ${mean}`);
    }
    // The oracle cites exactly the gold references: precision 1 wherever some gold reference was retrieved.
    const oracleTs = await readTrajectories(runDir(config.out, 'oracle', 'w'));
    const withGold = oracleTs.filter((t) => citedAndGold(t).gold.length > 0).length / oracleTs.length;
    assert.ok(withGold > 0.5, `${withGold}`);
    assert.ok(Math.abs(cell('oracle').citationPrecision! - withGold) < 1e-12);
    assert.equal(cell('oracle').relevance, 1);
    assert.ok(cell('gym').citationPrecision! < 1);
    assert.equal(cell('r1').citationPrecision, undefined);
    assert.equal(cell('r1').relevance, undefined);
    const md = readFileSync(join(config.out, 'results.md'), 'utf8');
    assert.match(md, /\| relevance \| citation precision \|/);
    assert.match(md, new RegExp(`\\| oracle \\| w \\| 30 \\|.*\\| 1\\.000 \\| ${withGold.toFixed(3).replace('.', '\\.')} \\|`));
  });

  it("LWS's answer categories: each question right with and without retrieval, only with, only without, or neither", async () => {
    // By hand: q1 right both, q2 only with, q3 only without, q4 neither, q5 only with; q6 answered by one system only (left out).
    const withR = new Map([['q1', 1], ['q2', 1], ['q3', 0], ['q4', 0], ['q5', 1], ['q6', 1]].map(([id, em]) => [id as string, { em: em as number }]));
    const without = new Map([['q1', 1], ['q2', 0], ['q3', 1], ['q4', 0], ['q5', 0]].map(([id, em]) => [id as string, { em: em as number }]));
    assert.deepEqual(answerCategories({ withRetrieval: 'rag', without: 'direct' }, 'w', withR, without), { withRetrieval: 'rag', without: 'direct', dataset: 'w', n: 5, both: 0.2, onlyWith: 0.4, onlyWithout: 0.2, neither: 0.2 });
    // End to end: the shares add up to 1 and appear in the report.
    const configPath = join(tmp.dir, 'categories.json');
    writeFileSync(configPath, JSON.stringify({
      index: 'index', out: 'categories', datasets: [{ name: 'w', path: 'world/questions.jsonl', limit: 20 }],
      systems: [{ name: 'rag', agent: 'rag', policy: 'sim', competence: 0.8 }, { name: 'direct', agent: 'direct', policy: 'sim', competence: 0.8 }],
      answerCategories: [{ withRetrieval: 'rag', without: 'direct' }],
    }));
    const r = await runEval(readEvalConfig(configPath));
    const c = r.answerCategories![0]!;
    assert.equal(c.n, 20);
    assert.ok(Math.abs(c.both + c.onlyWith + c.onlyWithout + c.neither - 1) < 1e-12);
    assert.match(readFileSync(join(tmp.dir, 'categories', 'results.md'), 'utf8'), /## Answer categories[\s\S]*\| rag \| direct \| w \| 20 \|/);
  });

  it('says which field of a config is wrong', () => {
    const bad = join(tmp.dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ index: 'i', out: 'o', datasets: [], systems: [] }));
    assert.throws(() => readEvalConfig(bad), /"datasets" must be a non-empty list/);
    writeFileSync(bad, JSON.stringify({ index: 'i', out: 'o', datasets: [{ name: 'a', path: 'p' }], systems: [{ name: 's', agent: 'rag', policy: 'sim' }], baseline: 'x' }));
    assert.throws(() => readEvalConfig(bad), /"baseline" must be one of the systems \(s\)/);
    writeFileSync(bad, JSON.stringify({ index: 'i', out: 'o', datasets: [{ name: 'a', path: 'p' }], systems: [{ name: 's', agent: 'rag', policy: 'sim' }], answerCategories: [{ withRetrieval: 's', without: 'none' }] }));
    assert.throws(() => readEvalConfig(bad), /"answerCategories\[0\]\.without" must be one of the systems \(s\)/);
  });
});
