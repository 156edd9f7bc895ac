/**
 * The papers' tables (recipes/tables/*.yaml, `ragtrail table`): every shipped table loads against the
 * agents and downloads, rows split into what runs on the backbone, what needs a served checkpoint and
 * what is not implemented; and a small table runs end to end against a loopback OpenAI-compatible server.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { InputError } from '../../src/core/errors.js';
import { buildTableEval, loadPaperTable, paperTableNames } from '../../src/eval/paper-tables.js';
import { generateWorld, writeWorld } from '../../src/corpus/world/index.js';
import { buildIndex } from '../../src/retrieval/index-dir.js';
import { data, ROOT, tempDir } from '../helpers.js';

const tmp = tempDir();
let server: Server;
let url = '';
before(async () => {
  // A loopback model that always answers "Answer: Paris" (and counts its requests).
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'Answer: Paris' }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 3 } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
  await writeWorld(join(tmp.dir, 'world'), generateWorld({ seed: 2, entities: 400, questions: 20 }));
  await buildIndex(join(tmp.dir, 'world', 'corpus.jsonl'), join(tmp.dir, 'index'), { quiet: true });
});
after(() => {
  server.close();
  tmp.cleanup();
});

describe('shipped tables', () => {
  for (const name of paperTableNames()) {
    it(`${name}: loads; each row runs on the backbone, needs a checkpoint, or says what is missing`, () => {
      const { table } = loadPaperTable(name);
      assert.ok(table.systems.every((s) => s.agent !== undefined || s.missing !== undefined));
      assert.ok(table.systems.some((s) => s.agent && !s.checkpoint && !s.missing), 'at least one baseline runs on the backbone');
    });
  }
});

describe('buildTableEval', () => {
  it("ARENA's table: 500 random questions per benchmark, the backbone rows, checkpoint rows when served, the rest named", () => {
    const dataDir = join(tmp.dir, 'data');
    for (const f of ['hotpotqa/dev.jsonl', '2wikimultihopqa/dev.jsonl', 'musique/dev.jsonl']) {
      mkdirSync(join(dataDir, f, '..'), { recursive: true });
      writeFileSync(join(dataDir, f), '');
    }
    const { table } = loadPaperTable('arena');
    const { config, notRun } = buildTableEval(table, { llm: 'openai:http://h/v1#qwen', data: dataDir, index: 'idx', out: 'out', models: { 'Search-R1-7B': 'openai:http://h2/v1#sr1' } });
    assert.deepEqual(config.datasets.map((d) => [d.name, d.sample, d.seed]), [['HotpotQA', 500, 0], ['2Wiki', 500, 0], ['MuSiQue', 500, 0]]);
    assert.deepEqual(config.systems.map((s) => [s.name, s.agent, s.llm]), [
      ['Qwen2.5-7B-Instruct', 'arena', 'openai:http://h/v1#qwen'],
      ['SuRe-Qwen-7B', 'sure', 'openai:http://h/v1#qwen'],
      ['self-ask', 'self-ask', 'openai:http://h/v1#qwen'],
      ['Search-R1-7B', 'search-r1-released', 'openai:http://h2/v1#sr1'],
    ]);
    assert.equal(notRun.length, 7);
    assert.match(notRun.find((r) => r.name === 'ReSearch-7B')!.why, /needs its checkpoint \(ReSearch's released 7B checkpoint\): serve it and pass --model "ReSearch-7B=openai:URL#MODEL"/);
    assert.match(notRun.find((r) => r.name === 'Qwen-7B-SFT-direct')!.why, /^needs its checkpoint \(the backbone fine-tuned on `ragtrail arena-sft --mode direct` data/);
    assert.throws(() => buildTableEval(table, { llm: 'x', data: dataDir, index: 'i', out: 'o', models: { Nope: 's' } }), /--model Nope=…: the table has no row "Nope" that takes a checkpoint/);
    assert.throws(() => buildTableEval(table, { llm: 'x', data: dataDir, index: 'i', out: 'o', auxModels: { 'SuRe-Qwen-7B': 's' } }), /--aux SuRe-Qwen-7B=…: the table has no row "SuRe-Qwen-7B" with a second model/);
    assert.throws(() => buildTableEval(loadPaperTable('reasonrag').table, { llm: 'x', data: dataDir, index: 'i', out: 'o' }), (e: unknown) => e instanceof InputError && /popqa\/test\.jsonl is missing \(ReasonRAG's PopQA\) \(ragtrail download popqa --split test --out /.test(e.message));
  });
});

describe("ReasonRAG's table", () => {
  it('every baseline row runs; a second model given with --aux goes to its row only', () => {
    const dataDir = join(tmp.dir, 'data-rr');
    for (const f of ['popqa/test.jsonl', 'hotpotqa/dev.jsonl', '2wikimultihopqa/dev.jsonl', 'bamboogle/test.jsonl', 'musique/dev.jsonl']) {
      mkdirSync(join(dataDir, f, '..'), { recursive: true });
      writeFileSync(join(dataDir, f), '');
    }
    const { table } = loadPaperTable('reasonrag');
    assert.deepEqual(table.systems.filter((s) => s.missing).map((s) => s.name), []);
    const { config } = buildTableEval(table, { llm: 'openai:http://h/v1#qwen', data: dataDir, index: 'idx', out: 'out', auxModels: { 'Selective-Context': 'openai:http://h3/v1#gpt2 (completion)' } });
    assert.deepEqual(config.systems.filter((s) => s.auxLlm).map((s) => [s.name, s.agent, s.llm, s.auxLlm]), [['Selective-Context', 'selective-context', 'openai:http://h/v1#qwen', 'openai:http://h3/v1#gpt2 (completion)']]);
    assert.deepEqual(config.systems.map((s) => s.agent), ['direct', 'rag', 'flare', 'adaptive-rag', 'iter-retgen', 'ircot', 'recomp', 'longllmlingua', 'selective-context', 'search-o1']);
  });
});

describe('ragtrail table', () => {
  it('runs a table end to end against a served model, naming the rows it left out', async () => {
    const dataDir = join(tmp.dir, 'data2');
    mkdirSync(join(dataDir, 'bamboogle'), { recursive: true });
    copyFileSync(data('flashrag', 'bamboogle_test.jsonl'), join(dataDir, 'bamboogle', 'test.jsonl'));
    const yaml = join(tmp.dir, 'small.yaml');
    writeFileSync(yaml, `name: small
paper: Test
table: Table 0
backbone: tiny
datasets:
  - { name: Bamboogle, download: bamboogle, split: test }
systems:
  - { name: Direct, agent: direct }
  - { name: RAG, agent: rag }
  - { name: Later, missing: "a method for another day" }
  - { name: Released, agent: search-r1-released, checkpoint: "a released checkpoint" }
offline: nothing offline.
`);
    // Not spawnSync: the loopback server answers from this process's event loop.
    const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), join(ROOT, 'src', 'cli', 'main.ts'), 'table', '--recipe', yaml, '--llm', `openai:${url}#tiny`, '--data', dataDir, '--index', join(tmp.dir, 'index'), '--out', join(tmp.dir, 'out'), '--limit', '5']);
    const r = { stdout: '', stderr: '', status: null as number | null };
    child.stdout.on('data', (c) => (r.stdout += c));
    child.stderr.on('data', (c) => (r.stderr += c));
    r.status = await new Promise<number | null>((done) => child.on('close', done));
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /not run: Later — not in ragtrail yet: a method for another day/);
    assert.match(r.stderr, /not run: Released — needs its checkpoint/);
    assert.match(r.stdout, /2 cells of Test's Table 0/);
    const results = JSON.parse(readFileSync(join(tmp.dir, 'out', 'results.json'), 'utf8'));
    assert.deepEqual(results.cells.map((c: { system: string; n: number }) => [c.system, c.n]), [['Direct', 5], ['RAG', 5]]);
  });
});
