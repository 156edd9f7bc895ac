/** `ragtrail run` and `ragtrail import` as users run them, against real files and a loopback model server. */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cliRunner, data, tempDir } from '../helpers.js';
import { type FakeOpenAI, startFakeOpenAI } from '../fixtures/fake-openai.js';
import { judgedPlanScores } from '../../src/agents/gold.js';
import { type SavedTree, stateAt } from '../../src/process/tree.js';

const tmp = tempDir();
const { run: ragtrail, runAsync: ragtrailAsync } = cliRunner(tmp.dir);
const lines = (path: string) => readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l));

const world = join(tmp.dir, 'world');
const index = join(tmp.dir, 'index');
before(() => {
  assert.equal(ragtrail('world', '--seed', '2', '--entities', '1500', '--out', world).status, 0);
  assert.equal(ragtrail('index', 'build', '--corpus', join(world, 'corpus.jsonl'), '--out', index).status, 0);
});
after(tmp.cleanup);

describe('ragtrail run', () => {
  it('runs the sim policy end to end on the synthetic world, labelled, with a summary', () => {
    const out = join(tmp.dir, 'sim-run');
    const r = ragtrail('run', '--agent', 'reasonrag', '--policy', 'sim', '--index', index, '--dataset', join(world, 'questions.jsonl'), '--out', out, '--limit', '80', '--split', 'train');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /sim\(competence=0\.7\) \[non-LLM\] is a non-LLM stand-in/);
    assert.match(r.stdout, /80 questions run, 0 already done/);
    const ts = lines(join(out, 'trajectories.jsonl'));
    assert.equal(ts.length, 80);
    assert.ok(ts.every((t) => t.policy === 'sim(competence=0.7) [non-LLM]' && t.agent === 'reasonrag'));
    const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'));
    assert.equal(s.questions, 80);
    for (const k of ['em', 'f1', 'acc', 'retrievalCount', 'formatFailureRate', 'tokens', 'latencyMs']) assert.ok(k in s, k);
    // Scoring the run needs no dataset: the gold answers travel in the trajectories.
    const score = ragtrail('score', '--predictions', out, '--json');
    assert.equal(score.status, 0, score.stderr);
    assert.equal(JSON.parse(score.stdout).em, s.em);
    const again = ragtrail('run', '--agent', 'reasonrag', '--policy', 'sim', '--index', index, '--dataset', join(world, 'questions.jsonl'), '--out', out, '--limit', '80', '--split', 'train');
    assert.match(again.stdout, /0 questions run, 80 already done/);
  });

  it('drives an OpenAI-compatible server; the second run is served from the cache', async () => {
    const fake: FakeOpenAI = await startFakeOpenAI((r) => {
      const msgs = r.body['messages'] as { content: string }[];
      return msgs.length > 2 ? '<think>found it</think><answer> 1900 </answer>' : '<think>look it up</think><search> first hop';
    });
    try {
      const args = ['run', '--agent', 'search-r1', '--llm', `openai:${fake.url}#tiny`, '--index', index, '--dataset', join(world, 'questions.jsonl'), '--limit', '10', '--cache-dir', join(tmp.dir, 'cache')];
      const first = await ragtrailAsync(...args, '--out', join(tmp.dir, 'llm-run-1'));
      assert.equal(first.status, 0, first.stderr);
      assert.match(first.stdout, /llm: 20 requests \(0 from cache\)/);
      assert.equal(fake.served, 20);
      const ts = lines(join(tmp.dir, 'llm-run-1', 'trajectories.jsonl'));
      assert.ok(ts.every((t) => t.prediction === '1900' && t.retrievalCount === 1 && t.policy === `llm:openai:${fake.url}#tiny`));
      const second = await ragtrailAsync(...args, '--out', join(tmp.dir, 'llm-run-2'));
      assert.match(second.stdout, /llm: 20 requests \(20 from cache\)/);
      assert.equal(fake.served, 20);
    } finally {
      await fake.close();
    }
  });

  it('--aux-llm gives a compressor its own scoring model: the echo requests go there, the answers to --llm', async () => {
    const model = await startFakeOpenAI(() => 'The documents say so.\nAnswer: 1900');
    const scorer = await startFakeOpenAI(() => 'x');
    try {
      const out = join(tmp.dir, 'aux-run');
      const r = await ragtrailAsync('run', '--agent', 'selective-context', '--llm', `openai:${model.url}#reader`, '--aux-llm', `openai:${scorer.url}#gpt2`, '--index', index, '--dataset', join(world, 'questions.jsonl'), '--limit', '3', '--no-cache', '--out', out);
      assert.equal(r.status, 0, r.stderr);
      // The scorer saw only echo requests (one per sentence of the documents), on /completions; the reader only the answers.
      assert.ok(scorer.requests.length >= 3 && scorer.requests.every((q) => q.path === '/v1/completions' && q.body['echo'] === true), JSON.stringify(scorer.requests.map((q) => q.path)));
      assert.equal(model.requests.length, 3);
      assert.ok(model.requests.every((q) => q.body['echo'] === undefined));
      const ts = lines(join(out, 'trajectories.jsonl'));
      assert.ok(ts.every((t) => t.prediction === '1900' && t.retrievalCount === 1));
      // The scorer's calls are the answering step's cost too: each fake request reports 10 prompt tokens.
      const prompt = ts.reduce((a, t) => a + (t.usage as { promptTokens: number }).promptTokens, 0);
      assert.equal(prompt, 10 * (model.requests.length + scorer.requests.length));
      assert.equal(JSON.parse(readFileSync(join(out, 'run.json'), 'utf8')).auxLlm, `openai:${scorer.url}#gpt2`);
    } finally {
      await model.close();
      await scorer.close();
    }
    const bad = ragtrail('run', '--agent', 'rag', '--llm', 'openai:http://127.0.0.1:1/v1#m', '--aux-llm', 'openai:http://127.0.0.1:1/v1#m', '--index', index, '--dataset', join(world, 'questions.jsonl'), '--out', join(tmp.dir, 'aux-bad'));
    assert.equal(bad.status, 2, bad.stderr);
    assert.match(bad.stderr.trim(), /^ragtrail: agent rag uses no second model: drop --aux-llm \(agents that take one: [^\n]*selective-context[^\n]*\)$/);
  });

  it('takes settings from --config, and rejects bad combinations with one line', () => {
    const cfg = join(tmp.dir, 'cfg.json');
    writeFileSync(cfg, JSON.stringify({ policy: 'oracle', index, dataset: join(world, 'questions.jsonl'), 'max-turns': 6, limit: 5 }));
    const r = ragtrail('run', '--config', cfg, '--out', join(tmp.dir, 'cfg-run'));
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /oracle \[non-LLM\].*5 questions run/);
    assert.equal(JSON.parse(readFileSync(join(tmp.dir, 'cfg-run', 'run.json'), 'utf8')).maxTurns, 6);
    for (const args of [
      ['run', '--policy', 'sim', '--index', index, '--dataset', join(world, 'questions.jsonl')],
      ['run', '--policy', 'sim', '--llm', 'openai:http://127.0.0.1:1/v1#m', '--index', index, '--dataset', join(world, 'questions.jsonl'), '--out', join(tmp.dir, 'x')],
      ['run', '--agent', 'gpt', '--policy', 'sim', '--index', index, '--dataset', join(world, 'questions.jsonl'), '--out', join(tmp.dir, 'x')],
      ['run', '--config', join(tmp.dir, 'missing.json')],
    ]) {
      const bad = ragtrail(...args);
      assert.equal(bad.status, 2, args.join(' ') + bad.stderr);
      assert.equal(bad.stderr.trim().split('\n').length, 1, bad.stderr);
    }
  });
});

describe('ragtrail import', () => {
  it('imports the Search-R1 Bamboogle run and scores it as FlashRAG did', () => {
    const out = join(tmp.dir, 'imported');
    const r = ragtrail('import', '--format', 'search-r1', data('trajectories', 'search_r1_bamboogle_base', 'intermediate_data.json'), '--out', out);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /imported 125 trajectories/);
    const score = ragtrail('score', '--predictions', join(out, 'trajectories.jsonl'), '--json');
    assert.deepEqual(JSON.parse(score.stdout), { n: 125, em: 0.088, f1: 0.17242597402597404, acc: 0.096 });
    const withDataset = ragtrail('score', '--dataset', data('flashrag', 'bamboogle_test.jsonl'), '--predictions', out, '--json');
    assert.deepEqual(JSON.parse(withDataset.stdout), { n: 125, em: 0.088, f1: 0.17242597402597404, acc: 0.096 });
  });
});

describe('ragtrail reward', () => {
  it('scores a sim run and an imported run; --help lists every scheme with its components', () => {
    const out = join(tmp.dir, 'reward-run');
    assert.equal(ragtrail('run', '--agent', 'search-r1', '--policy', 'sim', '--index', index, '--dataset', join(world, 'questions.jsonl'), '--out', out, '--limit', '40', '--quiet').status, 0);
    const r = ragtrail('reward', '--scheme', 'lws-stage1', out);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /lws-stage1 over 40 trajectories/);
    assert.match(r.stdout, /total\s+format\s+search\s+answer/);
    const rows = lines(join(out, 'rewards.lws-stage1.jsonl'));
    assert.equal(rows.length, 40);
    for (const row of rows) {
      assert.deepEqual(Object.keys(row), ['id', 'total', 'components']);
      assert.ok(Math.abs(row.total - (row.components.format + row.components.search + row.components.answer)) < 1e-9);
    }
    const imported = join(tmp.dir, 'imported');
    const arena = ragtrail('reward', '--scheme', 'em', '--out', join(tmp.dir, 'em.jsonl'), imported);
    assert.equal(arena.status, 0, arena.stderr);
    assert.match(arena.stdout, /mean\s+0\.0880\s+0\.0880/);
    const help = ragtrail('reward', '--help').stdout;
    for (const s of ['lws-stage1: format, search, answer', 'arena: format, accuracy, relevance, bonus', 'prorag-outcome: answer, workflow', 'judge: judge']) assert.ok(help.includes(s), s);
    const bad = ragtrail('reward', '--scheme', 'lws', out);
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /unknown reward scheme "lws"/);
  });
});

describe('ragtrail annotate', () => {
  it('annotates offline with the sim policy, writes the fixed files, prints and re-prints the stats', () => {
    const out = join(tmp.dir, 'annotation');
    const r = ragtrail('annotate', '--method', 'mcts-spre', '--agent', 'reasonrag', '--policy', 'sim', '--index', index, '--dataset', join(world, 'questions.jsonl'), '--out', out, '--limit', '20', '--quiet');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /mcts-spre with sim\(competence=0\.7\) \[non-LLM\] \(reasonrag\): 20 questions annotated/);
    for (const row of ['questions (with pairs)', 'pairs', 'preferred side: actions by type', 'iterations avg / min / median / max', 'tokens per action', 'reward gap']) assert.ok(r.stdout.includes(row), row);
    for (const f of ['trees.jsonl', 'pairs.jsonl', 'trl_preference.jsonl', 'trl_sft.jsonl', 'trl_stepwise.jsonl', 'prm_pairs.jsonl', 'stats.json']) assert.ok(readFileSync(join(out, f), 'utf8').length >= 0, f);
    assert.equal(lines(join(out, 'trees.jsonl')).length, 20);
    const stats = ragtrail('annotate', 'stats', out);
    assert.equal(stats.status, 0, stats.stderr);
    assert.match(stats.stdout, /method\s+mcts-spre/);
    const rank = ragtrail('annotate', '--method', 'rank', '--agent', 'react', '--policy', 'sim', '--index', index, '--dataset', join(world, 'questions.jsonl'), '--out', join(tmp.dir, 'rank'), '--limit', '5');
    assert.equal(rank.status, 2);
    assert.match(rank.stderr, /--method rank needs --judge SPEC, or --rank-source rollout\|plan\|random/);
  });
});

describe('ragtrail annotate: RAG-Gym ranking and judge-valued MCTS, end to end', () => {
  it('--method rank by rollouts: candidates valued by their share of correct rollouts, only correct trajectories kept', () => {
    const out = join(tmp.dir, 'rank-rollout');
    const r = ragtrail('annotate', '--method', 'rank', '--rank-source', 'rollout', '--rollouts', '3', '--candidates', '4', '--agent', 'react', '--policy', 'sim', '--index', index, '--dataset', join(world, 'questions.jsonl'), '--split', 'train', '--out', out, '--limit', '12', '--quiet');
    assert.equal(r.status, 0, r.stderr);
    const trees = lines(join(out, 'trees.jsonl'));
    assert.equal(trees.length, 12);
    const config = JSON.parse(readFileSync(join(out, 'annotate.json'), 'utf8'));
    assert.equal(config.rolloutValue, 'correct');
    for (const t of trees) {
      assert.equal(t.method, 'rank');
      // A kept trajectory ended in a correct answer; a candidate's value is a share of 3 rollouts: 0, 1/3, 2/3 or 1.
      if (t.kept) {
        const answer = t.nodes.filter((n: { terminal: boolean; rank?: number }) => n.terminal && n.rank === 0).at(-1);
        assert.ok(answer, t.id);
      }
      for (const n of t.nodes) if (n.parent >= 0) assert.ok([0, 1 / 3, 2 / 3, 1].some((v) => Math.abs(n.value - v) < 1e-12), `${t.id}: value ${n.value}`);
    }
    assert.ok(trees.some((t) => t.kept) && trees.some((t) => !t.kept), 'some trajectories kept, some dropped');
    const pairs = lines(join(out, 'pairs.jsonl'));
    assert.ok(pairs.length > 0);
    const keptIds = new Set(trees.filter((t) => t.kept).map((t) => t.id));
    assert.ok(pairs.every((p: { questionId: string }) => keptIds.has(p.questionId)), 'pairs only from kept trajectories');
  });

  it('--method rank by the gold plan: the executed step scores highest by the plan; every pair is won by more than 0.5', () => {
    const out = join(tmp.dir, 'rank-plan');
    const r = ragtrail('annotate', '--method', 'rank', '--rank-source', 'plan', '--candidates', '6', '--agent', 'react', '--policy', 'sim', '--index', index, '--dataset', join(world, 'questions.jsonl'), '--split', 'train', '--out', out, '--limit', '12', '--quiet');
    assert.equal(r.status, 0, r.stderr);
    const trees: SavedTree[] = lines(join(out, 'trees.jsonl'));
    const score = (t: SavedTree, id: number) => {
      const n = t.nodes.find((x) => x.id === id)!;
      return judgedPlanScores(stateAt(t, n.parent), [n.step!])[0]!;
    };
    for (const t of trees) {
      for (const best of t.nodes.filter((n) => n.rank === 0)) {
        for (const sib of t.nodes.filter((n) => n.parent === best.parent)) assert.ok(score(t, sib.id) <= score(t, best.id), `${t.id}: ${sib.id} over the executed ${best.id}`);
      }
    }
    const pairs: { questionId: string; chosen: { node: number }; rejected: { node: number } }[] = lines(join(out, 'pairs.jsonl'));
    assert.ok(pairs.length > 0);
    const byId = new Map(trees.map((t) => [t.id, t]));
    for (const p of pairs) {
      const t = byId.get(p.questionId)!;
      assert.ok(t.kept);
      assert.ok(score(t, p.chosen.node) - score(t, p.rejected.node) > 0.5, `${p.questionId}: ${p.chosen.node} > ${p.rejected.node}`);
    }
  });

  it('--method rank with a judge model: one ranking request per step, its order decides the executed step', async () => {
    let calls = 0;
    const judge = await startFakeOpenAI((req) => {
      calls++;
      const prompt = JSON.stringify(req.body['messages']);
      const n = (prompt.match(/\\n\d+\. /g) ?? []).length || 2;
      return JSON.stringify({ ranked_indices: Array.from({ length: n }, (_, i) => i + 1).reverse() });
    });
    try {
      const out = join(tmp.dir, 'rank-judge');
      const r = await ragtrailAsync('annotate', '--method', 'rank', '--judge', `openai:${judge.url}#judge`, '--candidates', '3', '--agent', 'react', '--policy', 'sim', '--index', index, '--dataset', join(world, 'questions.jsonl'), '--split', 'train', '--out', out, '--limit', '6', '--quiet');
      assert.equal(r.status, 0, r.stderr);
      assert.ok(calls > 0, 'the judge was asked');
      const trees = lines(join(out, 'trees.jsonl'));
      assert.equal(trees.length, 6);
      // Each candidate's reward is 1/(1 + rank), and only the judge's first choice (rank 0) is executed further.
      for (const t of trees) {
        const parents = new Set(t.nodes.map((n: { parent: number }) => n.parent));
        for (const n of t.nodes) {
          if (n.rank !== undefined) assert.ok(Math.abs(n.value - 1 / (1 + n.rank)) < 1e-12);
          if (n.parent >= 0 && parents.has(n.id)) assert.equal(n.rank, 0, `${t.id}/${n.id} was executed`);
        }
      }
    } finally {
      await judge.close();
    }
  });

  it('--method mcts-judge: every new node is valued by the judge\'s grade (So the score is 70 → 0.7)', async () => {
    const judge = await startFakeOpenAI(() => 'The process has a flaw: it is not finished. So the score is 70');
    try {
      const out = join(tmp.dir, 'mcts-judge');
      const r = await ragtrailAsync('annotate', '--method', 'mcts-judge', '--judge', `openai:${judge.url}#judge`, '--values', 'running-mean', '--agent', 'reasonrag', '--policy', 'sim', '--index', index, '--dataset', join(world, 'questions.jsonl'), '--split', 'train', '--out', out, '--limit', '4', '--quiet');
      assert.equal(r.status, 0, r.stderr);
      assert.ok(judge.served > 0);
      const trees = lines(join(out, 'trees.jsonl'));
      assert.equal(trees.length, 4);
      for (const t of trees) for (const n of t.nodes) if (n.parent >= 0 && n.N > 0) assert.ok(Math.abs(n.value - 0.7) < 1e-12 || n.terminal, `${t.id}/${n.id}: ${n.value}`);
    } finally {
      await judge.close();
    }
  });
});

describe('ragtrail prm, run --select, eval', () => {
  it('trains a PRM on mined pairs, evaluates it as JSON, and guides a run with it', () => {
    const ann = join(tmp.dir, 'puct');
    assert.equal(ragtrail('annotate', '--method', 'mcts-puct', '--agent', 'search-r1', '--policy', 'sim', '--simulations', '20', '--index', index, '--dataset', join(world, 'questions.jsonl'), '--split', 'train', '--limit', '60', '--out', ann, '--quiet').status, 0);
    const model = join(tmp.dir, 'prm.json');
    const tr = ragtrail('prm', 'train', '--pairs', join(ann, 'prm_pairs.jsonl'), '--out', model);
    assert.equal(tr.status, 0, tr.stderr);
    assert.match(tr.stdout, /Bradley–Terry loss: 0\.6931 at start \(ln 2\) → \d\.\d{4} after 30 epochs/);
    const ev = ragtrail('prm', 'eval', '--model', model, '--pairs', join(ann, 'prm_pairs.jsonl'), '--json');
    assert.equal(ev.status, 0, ev.stderr);
    const e = JSON.parse(ev.stdout);
    assert.deepEqual(Object.keys(e), ['n', 'accuracy', 'by_type']);
    assert.ok(e.accuracy > 0.5);
    const run = ragtrail('run', '--agent', 'search-r1', '--policy', 'sim', '--select', 'prm', '--prm', model, '--n', '5', '--index', index, '--dataset', join(world, 'questions.jsonl'), '--limit', '10', '--out', join(tmp.dir, 'prm-run'), '--quiet');
    assert.equal(run.status, 0, run.stderr);
    const ts = lines(join(tmp.dir, 'prm-run', 'trajectories.jsonl'));
    assert.ok(ts.every((t) => t.policy.includes('best-of-5 by prm(linear')));
    assert.ok(ts.some((t) => t.steps.some((s: { selection?: unknown }) => s.selection)));
    assert.equal(ragtrail('run', '--agent', 'search-r1', '--policy', 'sim', '--select', 'prm', '--index', index, '--dataset', join(world, 'questions.jsonl'), '--out', join(tmp.dir, 'x2')).status, 2);
  });

  it('eval from flags: agents × selection methods, tables printed', () => {
    const r = ragtrail('eval', '--index', index, '--dataset', `world=${join(world, 'questions.jsonl')}`, '--limit', '20', '--policy', 'sim', '--agent', 'search-r1', '--select', 'greedy,vote', '--n', '3', '--out', join(tmp.dir, 'eval'));
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /\| search-r1-greedy \|/);
    assert.match(r.stdout, /\| search-r1-vote \|/);
    assert.match(r.stdout, /report\.html/);
  });
});
