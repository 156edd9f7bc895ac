/** index build / info, search (one query and batch), serve-retriever, as a user runs them. */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { data, ROOT, tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);
const CLI = ['--import', 'tsx', join(ROOT, 'src', 'cli', 'main.ts')];
const ragtrail = (...args: string[]) => spawnSync(process.execPath, [...CLI, ...args], { cwd: ROOT, encoding: 'utf8' });

describe('retrieval commands', () => {
  const corpus = join(tmp.dir, 'corpus.jsonl');
  const index = join(tmp.dir, 'index');

  it('index build (BM25 + lexical dense) and index info', () => {
    assert.equal(ragtrail('corpus', '--dataset', data('hotpotqa', 'distractor_dev_first53_official.json'), '--out', corpus).status, 0);
    const r = ragtrail('index', 'build', '--corpus', corpus, '--out', index, '--bm25', '--dense', '--embedder', 'hash:256');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /indexed 521 passages/);
    assert.match(r.stdout, /lexical hashed n-gram embedder/);
    const info = ragtrail('index', 'info', index);
    assert.match(info.stdout, /521 passages/);
    assert.match(info.stdout, /bm25: k1=0\.9 b=0\.4/);
    assert.match(info.stdout, /dense: hash:256 \(lexical\), dim 256, flat/);
  });

  it('search prints a readable ranking', () => {
    const r = ragtrail('search', '--index', index, '--k', '3', 'Scott Derrickson director nationality');
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^bm25\(k1=0\.9,b=0\.4\): 3 hits/);
    assert.match(r.stdout, /  1\. \d+\.\d{4}  Scott Derrickson  \[ctx-[0-9a-f]{16}\]/);
  });

  it('batch search writes one line per query, in order, and reads dataset files as query files', () => {
    const queries = join(tmp.dir, 'q.jsonl');
    writeFileSync(queries, ['{"id":"a","query":"Ed Wood film"}', '{"id":"b","query":"Woodson Arkansas census"}'].join('\n'));
    const out = join(tmp.dir, 'hits.jsonl');
    const r = ragtrail('search', '--index', index, '--k', '2', '--queries', queries, '--out', out, '--retrieval', 'hybrid');
    assert.equal(r.status, 0, r.stderr);
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => l.id), ['a', 'b']);
    assert.deepEqual(Object.keys(lines[0].hits[0]), ['id', 'title', 'score']);
    assert.equal(lines[1].hits[0].title, 'Woodson, Arkansas');
    const ds = ragtrail('search', '--index', index, '--queries', data('flashrag', 'bamboogle_test.jsonl'), '--out', join(tmp.dir, 'b.jsonl'));
    assert.equal(ds.status, 0, ds.stderr);
    assert.equal(readFileSync(join(tmp.dir, 'b.jsonl'), 'utf8').trim().split('\n').length, 125);
  });

  it('batch search on search threads (--workers) writes the same bytes as on one thread', () => {
    const run = (workers: string) => {
      const out = join(tmp.dir, `w${workers}.jsonl`);
      const r = ragtrail('search', '--index', index, '--k', '4', '--batch', '7', '--workers', workers, '--queries', data('flashrag', 'bamboogle_test.jsonl'), '--out', out);
      assert.equal(r.status, 0, r.stderr);
      return { hits: readFileSync(out, 'utf8'), said: r.stdout };
    };
    const one = run('0');
    const pooled = run('2');
    assert.match(pooled.said, /×2 threads/); // the pool did run
    assert.equal(pooled.hits, one.hits);
    assert.equal(one.hits.trim().split('\n').length, 125);
  });

  it('rejects bad usage with one line', () => {
    for (const args of [['search', '--index', index], ['search', '--index', join(tmp.dir, 'nope'), 'q'], ['index', 'build', '--corpus', join(tmp.dir, 'missing.jsonl'), '--out', join(tmp.dir, 'x')], ['search', '--index', index, '--retrieval', 'magic', 'q']]) {
      const r = ragtrail(...args);
      assert.equal(r.status, 2, args.join(' ') + r.stderr);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
  });

  it('serve-retriever answers /retrieve over 127.0.0.1 until stopped', async () => {
    const child = spawn(process.execPath, [...CLI, 'serve-retriever', '--index', index, '--port', '0', '--quiet'], { cwd: ROOT });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d) => {
          out += d;
          const m = /at (http:\/\/127\.0\.0\.1:\d+)\/retrieve/.exec(out);
          if (m) resolve(m[1]!);
        });
        child.on('exit', (code) => reject(new Error(`server exited ${code}`)));
      });
      const res = await fetch(`${url}/retrieve`, { method: 'POST', body: JSON.stringify({ queries: ['Ed Wood'], topk: 1, return_scores: true }) });
      const body = (await res.json()) as { result: { document: { contents: string } }[][] };
      assert.match(body.result[0]![0]!.document.contents, /^"Ed Wood/);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
