/**
 * Sharded jobs: `run`, `annotate` and `eval` with --shard i/n, joined by `ragtrail merge`, give the
 * records one process writes (timings aside), and the merge refuses shards that are not one job.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseShard, selectShard, shardOf } from '../../src/core/shard.js';
import { cliRunner, tempDir } from '../helpers.js';

const tmp = tempDir();
const { run: ragtrail } = cliRunner(tmp.dir);
const world = join(tmp.dir, 'world');
const index = join(tmp.dir, 'index');
const p = (...parts: string[]) => join(tmp.dir, ...parts);
const jsonl = (path: string) => readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const json = (path: string) => JSON.parse(readFileSync(path, 'utf8'));
/** A record without its timings (wall times differ from one process to another). */
const untimed = (v: unknown): unknown =>
  Array.isArray(v) ? v.map(untimed) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).filter(([k]) => !/Ms$|Seconds$|^session$|^createdAt$|^latency/.test(k)).map(([k, x]) => [k, untimed(x)])) : v;
/** Records by id: one process writes them in completion order (concurrency), the merge in dataset order. */
const byId = (rs: { id: string }[]) => [...rs].sort((a, b) => a.id.localeCompare(b.id));
const ok = (r: { status: number | null; stderr: string }) => assert.equal(r.status, 0, r.stderr);

before(() => {
  ok(ragtrail('world', '--seed', '4', '--entities', '600', '--out', world));
  ok(ragtrail('index', 'build', '--corpus', join(world, 'corpus.jsonl'), '--out', index));
});
after(tmp.cleanup);

describe('shards', () => {
  it('split questions by a hash of the id: a partition, the same whatever the order', () => {
    const items = Array.from({ length: 300 }, (_, i) => ({ id: `q${i}` }));
    const parts = [0, 1, 2].map((i) => selectShard(items, { index: i, count: 3 }));
    assert.equal(parts.reduce((s, x) => s + x.length, 0), 300);
    assert.equal(new Set(parts.flat().map((x) => x.id)).size, 300);
    assert.ok(parts.every((x) => x.length > 70), parts.map((x) => x.length).join(','));
    assert.deepEqual(selectShard([...items].reverse(), { index: 1, count: 3 }).map((x) => x.id).sort(), parts[1]!.map((x) => x.id).sort());
    assert.equal(shardOf('q7', 3), shardOf('q7', 3));
    assert.deepEqual(parseShard('2/4'), { index: 2, count: 4 });
    assert.throws(() => parseShard('4/4'), /expected i\/n with 0 ≤ i < n/);
  });
});

describe('ragtrail merge', () => {
  const data = ['--index', index, '--dataset', join(world, 'questions.jsonl'), '--split', 'train', '--limit', '45'];

  it('run: three shards merged equal the unsharded run', () => {
    const args = ['run', '--agent', 'search-r1', '--policy', 'sim', ...data, '--seed', '3'];
    ok(ragtrail(...args, '--out', p('run-full')));
    for (const i of [0, 1, 2]) ok(ragtrail(...args, '--shard', `${i}/3`, '--out', p(`run-${i}`)));
    const r = ragtrail('merge', p('run-2'), p('run-0'), p('run-1'), '--out', p('run-merged'));
    ok(r);
    assert.match(r.stdout, /merged 3 run shards: 45 trajectories/);
    assert.deepEqual(json(p('run-merged', 'run.json')), json(p('run-full', 'run.json')));
    const full = jsonl(p('run-full', 'trajectories.jsonl'));
    const merged = jsonl(p('run-merged', 'trajectories.jsonl'));
    assert.deepEqual(untimed(byId(merged)), untimed(byId(full)));
    assert.deepEqual(merged.map((t) => t.id), byId(merged).map((t) => t.id), 'dataset order');
    assert.deepEqual(untimed(json(p('run-merged', 'summary.json'))), untimed(json(p('run-full', 'summary.json'))));
    // The merged folder is an ordinary run folder: the unsharded command resumes on it with nothing to do.
    assert.match(ragtrail(...args, '--out', p('run-merged')).stdout, /0 questions run, 45 already done/);
  });

  it('annotate: two shards merged give the trees, pairs and trainer files of one process', () => {
    const args = ['annotate', '--agent', 'reasonrag', '--policy', 'sim', ...data.map((a) => (a === '45' ? '16' : a)), '--method', 'mcts-spre', '--quiet'];
    ok(ragtrail(...args, '--out', p('ann-full')));
    for (const i of [0, 1]) ok(ragtrail(...args, '--shard', `${i}/2`, '--out', p(`ann-${i}`)));
    const r = ragtrail('merge', p('ann-0'), p('ann-1'), '--out', p('ann-merged'));
    ok(r);
    assert.match(r.stdout, /merged 2 annotation shards: 16 trees/);
    assert.deepEqual(untimed(byId(jsonl(p('ann-merged', 'trees.jsonl')))), untimed(byId(jsonl(p('ann-full', 'trees.jsonl')))));
    for (const f of ['pairs.jsonl', 'trl_preference.jsonl', 'trl_sft.jsonl', 'prm_pairs.jsonl']) assert.deepEqual(untimed(jsonl(p('ann-merged', f))), untimed(jsonl(p('ann-full', f))), f); // deriveOutputs writes dataset order
    assert.deepEqual(json(p('ann-merged', 'stats.json')), json(p('ann-full', 'stats.json')));
  });

  it('eval: two shards merged give the cells of the unsharded evaluation', () => {
    const args = ['eval', ...data.map((a) => (a === '45' ? '30' : a)), '--agent', 'search-r1', '--agent', 'reasonrag', '--policy', 'sim'];
    ok(ragtrail(...args, '--out', p('eval-full')));
    for (const i of [0, 1]) ok(ragtrail(...args, '--shard', `${i}/2`, '--out', p(`eval-${i}`)));
    const r = ragtrail('merge', p('eval-0'), p('eval-1'), '--out', p('eval-merged'));
    ok(r);
    assert.match(r.stdout, /merged 2 eval shards: 60 trajectories/);
    const cells = (dir: string) => untimed(json(join(dir, 'results.json')).cells);
    assert.deepEqual(cells(p('eval-merged')), cells(p('eval-full')));
    assert.ok(readFileSync(p('eval-merged', 'report.html'), 'utf8').includes('<svg'));
  });

  it('refuses what is not one job: a missing or repeated shard, an unsharded folder, mixed kinds', () => {
    const bad = (args: string[], re: RegExp) => {
      const r = ragtrail('merge', ...args);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, re);
    };
    bad([p('run-0'), p('run-1'), '--out', p('m1')], /shard 2\/3 missing/);
    bad([p('run-0'), p('run-0'), p('run-1'), '--out', p('m2')], /are both shard 0\/3/);
    bad([p('run-full'), '--out', p('m3')], /not a shard/);
    bad([p('run-0'), p('ann-0'), '--out', p('m4')], /is a run folder, .* an annotation folder/);
    bad([p('run-0'), p('run-1'), p('run-2'), '--out', p('run-merged')], /not empty/);
  });
});
