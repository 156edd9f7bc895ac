/**
 * serve-env --processes N (learn/serve/env-router.ts) as users run it: every episode's steps, spread
 * over many calls on fresh connections (each may land on either process), get exactly the answers of
 * one process — verl-tool's batched /get_observation and OpenEnv's /reset, /step, /state alike — and
 * a call naming no question is refused whole, as in one process.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateWorld, writeWorld } from '../../src/corpus/world/index.js';
import { buildIndex } from '../../src/retrieval/index-dir.js';
import { callOnNewConnection, startServerCli, tempDir } from '../helpers.js';

const call = callOnNewConnection;

describe('serve-env on several processes', () => {
  const tmp = tempDir();
  let args: string[];
  let questions: { id: string; question: string; golden_answers: string[] }[];
  before(async () => {
    await writeWorld(join(tmp.dir, 'world'), generateWorld({ seed: 5, entities: 300, questions: 16 }));
    await buildIndex(join(tmp.dir, 'world', 'corpus.jsonl'), join(tmp.dir, 'index'), { quiet: true });
    questions = readFileSync(join(tmp.dir, 'world', 'questions.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    args = ['serve-env', '--index', join(tmp.dir, 'index'), '--dataset', join(tmp.dir, 'world', 'questions.jsonl')];
  });
  after(() => tmp.cleanup());

  /** Starts one process and three, runs `f` on each in turn (the same calls), then stops both. */
  async function both(f: (base: string) => Promise<string[]>, extra: string[] = []): Promise<void> {
    const one = await startServerCli([...args, ...extra, '--processes', '1', '--workers', '0']);
    const many = await startServerCli([...args, ...extra, '--processes', '3']);
    try {
      assert.deepEqual(await f(many.base), await f(one.base));
    } finally {
      one.child.kill('SIGTERM');
      many.child.kill('SIGTERM');
      const [a, b] = await Promise.all([one.exited, many.exited]);
      assert.equal(b.code, 0);
      assert.equal(a.code, 0);
    }
  }

  it('verl-tool: 12 trajectories stepped over 4 batched calls (search, search over budget, answer, finish) answer as one process', async () => {
    await both(async (base) => {
      const replies: string[] = [];
      const ids = Array.from({ length: 12 }, (_, i) => `t${i}`);
      const extra = ids.map((_, i) => ({ index: i }));
      const turn = (act: (i: number) => string, finish = false) => ({ trajectory_ids: ids, actions: ids.map((_, i) => act(i)), finish: ids.map(() => finish), extra_fields: extra });
      const steps = [
        turn((i) => `<think>look</think> <search> ${questions[i]!.question} </search>`),
        turn((i) => `<think>more</think> <search> ${questions[(i + 3) % questions.length]!.question} born </search>`),
        // Half answer right, half wrong; a malformed one is invalid, not an error.
        turn((i) => (i === 5 ? 'no tags at all' : `<answer> ${i % 2 ? questions[i]!.golden_answers[0] : 'nobody'} </answer>`)),
        turn(() => '', true),
      ];
      for (const body of steps) {
        const r = await call(`${base}/get_observation`, body);
        assert.equal(r.status, 200, r.text);
        replies.push(r.text);
      }
      // The episodes are closed: a continuation with no question named is a new trajectory, refused whole.
      const late = await call(`${base}/get_observation`, { trajectory_ids: ['t0', 'fresh'], actions: ['<search> x </search>', '<search> y </search>'], extra_fields: [{ index: 0 }, {}] });
      replies.push(`${late.status} ${late.text}`);
      return replies;
    }, ['--max-searches', '1']); // the second search is refused only where the episode's first one is known
  });

  it('verl-tool: a continuing trajectory needs no question named; a new one naming none refuses the call and steps nothing', async () => {
    await both(async (base) => {
      const replies: string[] = [];
      const open = await call(`${base}/get_observation`, { trajectory_ids: ['a', 'b', 'c', 'd'], actions: Array(4).fill('<search> city </search>'), extra_fields: [0, 1, 2, 3].map((index) => ({ index })) });
      replies.push(open.text);
      // a-d continue without extra_fields (held somewhere); 'e' is new and names nothing: 422, a-d not stepped.
      const refused = await call(`${base}/get_observation`, { trajectory_ids: ['a', 'b', 'e', 'c', 'd'], actions: Array(5).fill('<search> river </search>') });
      replies.push(`${refused.status} ${refused.text}`);
      const again = await call(`${base}/get_observation`, { trajectory_ids: ['a', 'b', 'c', 'd'], actions: Array(4).fill('<search> river </search>') });
      replies.push(again.text); // the second search of each: the refused call changed nothing
      return replies;
    });
  });

  it('OpenEnv HTTP: /reset, /step and /state of named episodes and the default one, each call on a new connection', async () => {
    await both(async (base) => {
      const replies: string[] = [];
      const eps = ['e1', 'e2', 'e3', 'e4', 'e5'];
      for (const [i, id] of eps.entries()) replies.push((await call(`${base}/reset`, { episode_id: id, question_id: questions[i]!.id })).text);
      replies.push((await call(`${base}/reset`, { question_id: questions[9]!.id })).text); // the default episode
      for (const id of [...eps, undefined]) replies.push((await call(`${base}/step`, { episode_id: id, action: { type: 'search', query: 'city born' } })).text);
      for (const id of eps) replies.push((await call(`${base}/state?episode_id=${id}`)).text.replace(/"elapsed_ms":[\d.]+/g, ''));
      replies.push((await call(`${base}/state`)).text.replace(/"elapsed_ms":[\d.]+/g, ''));
      const missing = await call(`${base}/step`, { episode_id: 'never', action: { type: 'search', query: 'x' } });
      replies.push(`${missing.status} ${missing.text}`);
      // A fresh id (episode_id null) is drawn where the call lands and still names the process that holds it.
      const fresh = await call(`${base}/reset`, { episode_id: null, question_id: questions[2]!.id });
      const id = (JSON.parse(fresh.text) as { observation: { episode_id: string } }).observation.episode_id;
      const step = await call(`${base}/step`, { episode_id: id, action: { type: 'search', query: 'city' } });
      replies.push(`${step.status}`);
      return replies;
    });
  });
});
