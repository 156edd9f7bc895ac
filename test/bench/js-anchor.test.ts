/**
 * The Node anchors of bench:retrieval (bench/js_anchor.ts) speak the same protocol as the Python ones:
 * one row, then one timing per `time` line. Checked on a tiny synthetic corpus; no timings asserted.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeSyntheticCorpus } from '../../bench/synthetic-text.js';
import { resolveBenchPackage } from '../../bench/js_anchor.js';
import { buildIndex, openRetriever } from '../../src/retrieval/index-dir.js';

const SCRIPT = resolve(import.meta.dirname, '..', '..', 'bench', 'js_anchor.ts');
const N = 400;

/** Runs the anchor with `serve`, asks for one more timing, and returns both objects. */
async function runAnchor(engine: string, dir: string, extra: string[] = []): Promise<Record<string, unknown>[]> {
  const corpus = join(dir, 'corpus.jsonl');
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, engine, corpus, `${corpus}.queries.json`, `${corpus}.hits.json`, String(N), dir, '1', 'serve', ...extra], { stdio: ['pipe', 'pipe', 'ignore'] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const row = JSON.parse((await lines.next()).value as string) as Record<string, unknown>;
  child.stdin.write('time\n');
  const timing = JSON.parse((await lines.next()).value as string) as Record<string, unknown>;
  child.stdin.end();
  await new Promise((r) => child.on('close', r));
  return [row, timing];
}

describe('bench/js_anchor.ts', () => {
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'js-anchor-'));
    const corpus = join(dir, 'corpus.jsonl');
    const queries = await writeSyntheticCorpus(corpus, N, 30);
    writeFileSync(`${corpus}.queries.json`, JSON.stringify(queries));
    // ragtrail's hits, as bench:retrieval leaves them beside the corpus for the overlap.
    await buildIndex(corpus, join(dir, 'index'), { bm25: true, quiet: true });
    const r = await openRetriever(join(dir, 'index'), { method: 'bm25' });
    const hits = (await r.searchBatch(queries.map((q) => q.query), 10)).map((l) => l.map((h) => h.passageId));
    writeFileSync(`${corpus}.hits.json`, JSON.stringify(hits));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('minisearch: a row with recall and overlap on the queries asked for, then one timing per `time`', async () => {
    const [row, timing] = await runAnchor('minisearch', dir, ['20']);
    assert.equal(row!['engine'], 'minisearch');
    assert.equal(row!['queries'], 20);
    assert.equal(row!['qps_batched'], null);
    // Same analyzer and k1/b as ragtrail: on 400 passages the source passage is found and most hits agree.
    assert.ok(Number(row!['recall10']) >= 0.9, `recall ${row!['recall10']}`);
    assert.ok(Number(row!['overlap10']) >= 0.6 && Number(row!['overlap10']) <= 1, `overlap ${row!['overlap10']}`);
    assert.ok(Number(timing!['qps_single']) > 0);
  });

  it('resolves only installed packages (LanceDB is optional)', () => {
    assert.equal(resolveBenchPackage('no-such-package-ragtrail-bench'), undefined);
    assert.ok(resolveBenchPackage('minisearch'));
  });

  it('lancedb, where installed: its own analyzer still finds the source passages', { skip: resolveBenchPackage('@lancedb/lancedb') ? false : 'not installed (npm install --prefix .bench-node @lancedb/lancedb@0.31.0 apache-arrow@18.1.0)' }, async () => {
    const [row, timing] = await runAnchor('lancedb', dir);
    assert.equal(row!['engine'], 'lancedb');
    assert.equal(row!['queries'], 30);
    assert.ok(Number(row!['recall10']) >= 0.9, `recall ${row!['recall10']}`);
    assert.ok(Number(row!['disk_bytes']) > 0);
    assert.ok(Number(timing!['qps_single']) > 0);
  });
});
