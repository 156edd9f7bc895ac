/** serve-env driven over 127.0.0.1: OpenEnv HTTP and WebSocket episodes, verl-tool batches, auth and bad requests. */
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import type { Question } from '../../src/core/types.js';
import { loadDatasetAll } from '../../src/corpus/dataset.js';
import { generateWorld, writeWorld } from '../../src/corpus/world/index.js';
import { getProtocol } from '../../src/agents/registry.js';
import { RagEnv } from '../../src/env/env.js';
import { EnvService } from '../../src/learn/serve/env-service.js';
import { createEnvServer } from '../../src/learn/serve/serve-env.js';
import type { PRM } from '../../src/prm/types.js';
import { buildIndex, openRetriever } from '../../src/retrieval/index-dir.js';
import { episodeScorer } from '../../src/rewards/apply.js';
import { composeScheme } from '../../src/rewards/schemes.js';
import { tempDir } from '../helpers.js';

// Step rewards from a stand-in PRM: 0.25 for searches, 0.5 for answers; the outcome is EM.
const stubPrm: PRM = { name: 'stub', score: async (_s, cs) => cs.map((c) => (c.action.type === 'search' ? 0.25 : 0.5)) };

describe('serve-env', () => {
  const tmp = tempDir();
  let server: Server;
  let base: string;
  let questions: Question[];
  const TOKEN = 'sekret';

  const post = async (path: string, body: unknown, token: string | null = TOKEN) => {
    const r = await fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: typeof body === 'string' ? body : JSON.stringify(body) });
    return { status: r.status, body: (await r.json()) as Record<string, any> };
  };
  const get = async (path: string) => {
    const r = await fetch(base + path, { headers: { authorization: `Bearer ${TOKEN}` } });
    return { status: r.status, body: (await r.json()) as Record<string, any> };
  };

  before(async () => {
    await writeWorld(join(tmp.dir, 'world'), generateWorld({ seed: 5, entities: 600, questions: 30 }));
    await buildIndex(join(tmp.dir, 'world', 'corpus.jsonl'), join(tmp.dir, 'index'), { quiet: true });
    const retriever = await openRetriever(join(tmp.dir, 'index'));
    questions = (await loadDatasetAll(join(tmp.dir, 'world', 'questions.jsonl'))).questions;
    const protocol = getProtocol('search-r1');
    const env = new RagEnv({ retriever, topK: 3, maxTurns: 4, maxSearches: 3 });
    const service = new EnvService({ env, protocol, questions, outcome: episodeScorer(composeScheme('em')), prm: stubPrm });
    server = createEnvServer(service, { token: TOKEN });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    tmp.cleanup();
  });

  it('answers /health, /schema and /metadata', async () => {
    assert.deepEqual((await get('/health')).body, { status: 'healthy' });
    const schema = (await get('/schema')).body;
    assert.deepEqual(Object.keys(schema).sort(), ['action', 'observation', 'state']);
    assert.equal((await get('/metadata')).body['name'], 'ragtrail');
  });

  it('runs a full HTTP episode: step rewards from the PRM, the outcome on the done step', async () => {
    const q = questions.find((x) => x.type === 'compositional')!;
    const reset = await post('/reset', { question_id: q.id, episode_id: 'ep-1' });
    assert.equal(reset.status, 200);
    assert.equal(reset.body['done'], false);
    assert.equal(reset.body['reward'], null);
    assert.equal(reset.body['observation']['question'], q.question);
    assert.ok(Array.isArray(reset.body['observation']['prompt']));

    const decomposition = q.decomposition!;
    const s1 = await post('/step', { episode_id: 'ep-1', action: { tool: 'search', query: decomposition[0]!.question } });
    assert.equal(s1.status, 200);
    assert.equal(s1.body['done'], false);
    assert.equal(s1.body['reward'], 0.25);
    assert.match(s1.body['observation']['text'], /^Doc 1 \(Title: /);
    // The protocol's raw text works too: Search-R1's <search> tag.
    const s2 = await post('/step', { episode_id: 'ep-1', action: { raw: `<think>next</think>\n<search> ${decomposition[1]!.question} </search>` } });
    assert.equal(s2.body['reward'], 0.25);
    assert.equal(s2.body['observation']['valid'], true);
    const s3 = await post('/step', { episode_id: 'ep-1', action: { tool: 'answer', text: q.answers[0] } });
    assert.equal(s3.body['done'], true);
    assert.equal(s3.body['reward'], 1, 'EM of a gold answer');
    assert.deepEqual(Object.keys(s3.body).sort(), ['done', 'observation', 'reward'], "exactly OpenEnv's StepResponse fields");
    const meta = s3.body['observation']['metadata'];
    assert.equal(meta['outcome_reward'], 1);
    assert.equal(meta['step_reward'], 0.5);
    assert.equal(meta['retrieval_count'], 2);
    assert.equal(meta['em'], 1);
    assert.equal(meta['f1'], 1);
    assert.equal(meta['prediction'], q.answers[0]);

    const state = await get('/state?episode_id=ep-1');
    assert.equal(state.body['step_count'], 3);
    assert.deepEqual(state.body['rewards'], [0.25, 0.25, 1]);
    assert.equal(state.body['done'], true);
    // Stepping a finished episode is a conflict, not a crash.
    assert.equal((await post('/step', { episode_id: 'ep-1', action: { tool: 'answer', text: 'x' } })).status, 409);
  });

  it('treats a malformed raw action as a format failure (data), and forces the answer when the budget ends', async () => {
    await post('/reset', { index: 2 });
    const bad = await post('/step', { action: { raw: 'I think the answer might be obvious' } });
    assert.equal(bad.status, 200);
    assert.equal(bad.body['observation']['valid'], false);
    assert.match(bad.body['observation']['text'], /could not be used/);
    for (let i = 0; i < 3; i++) await post('/step', { action: { tool: 'search', query: `query ${i}` } });
    const state = await get('/state');
    assert.equal(state.body['step_count'], 4);
    assert.equal(state.body['done'], false);
  });

  it('rejects bad requests with 4xx and a message', async () => {
    assert.equal((await post('/reset', {}, null)).status, 401);
    assert.equal((await post('/reset', {}, 'wrong')).status, 401);
    const notJson = await post('/step', '{oops');
    assert.equal(notJson.status, 400);
    assert.match(notJson.body['error'], /not valid JSON/);
    const noAction = await post('/step', { episode_id: 'x' });
    assert.equal(noAction.status, 422);
    assert.equal((await post('/step', { episode_id: 'never-reset', action: { tool: 'search', query: 'a' } })).status, 404);
    await post('/reset', { episode_id: 'ep-bad' });
    const unknownTool = await post('/step', { episode_id: 'ep-bad', action: { tool: 'browse', url: 'x' } });
    assert.equal(unknownTool.status, 422, 'OpenEnv answers an invalid action with 422');
    assert.match(unknownTool.body['error'], /unknown tool "browse"/);
    assert.equal((await post('/reset', { question_id: 'nope' })).status, 422);
    assert.equal((await post('/nowhere', {})).status, 404);
  });

  const wsEpisode = (q: Question): Promise<{ messages: any[] }> =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(base.replace('http', 'ws') + '/ws', { headers: { authorization: `Bearer ${TOKEN}` } });
      const messages: any[] = [];
      const decomposition = q.decomposition!;
      const script: unknown[] = [
        { type: 'reset', data: { question_id: q.id } },
        ...decomposition.slice(0, 2).map((d) => ({ type: 'step', data: { tool: 'search', query: d.question } })),
        { type: 'step', data: { tool: 'answer', text: q.answers[0] } },
        { type: 'state' },
      ];
      ws.on('open', () => ws.send(JSON.stringify(script.shift())));
      ws.on('message', (raw) => {
        messages.push(JSON.parse(raw.toString()));
        const next = script.shift();
        if (next) ws.send(JSON.stringify(next));
        else ws.close();
      });
      ws.on('close', () => resolve({ messages }));
      ws.on('error', reject);
    });

  it('runs many concurrent WebSocket sessions, each its own episode', async () => {
    const qs = questions.slice(0, 16);
    const runs = await Promise.all(qs.map((q) => wsEpisode(q)));
    runs.forEach(({ messages }, i) => {
      assert.equal(messages[0].type, 'observation');
      assert.equal(messages[0].data.observation.question_id, qs[i]!.id);
      const last = messages[messages.length - 2];
      assert.equal(last.type, 'observation');
      assert.equal(last.data.done, true);
      assert.equal(last.data.reward, 1);
      const state = messages[messages.length - 1];
      assert.equal(state.type, 'state');
      assert.equal(state.data.question_id, qs[i]!.id);
      assert.equal(state.data.total_reward, state.data.rewards.reduce((a: number, b: number) => a + b, 0));
    });
  });

  it('answers WebSocket errors as {type: "error"} messages', async () => {
    const ws = new WebSocket(base.replace('http', 'ws') + '/ws', { headers: { authorization: `Bearer ${TOKEN}` } });
    const replies: any[] = [];
    await new Promise<void>((resolve, reject) => {
      ws.on('open', () => {
        ws.send('{not json');
        ws.send(JSON.stringify({ type: 'step', data: { tool: 'search', query: 'x' } }));
        ws.send(JSON.stringify({ type: 'dance' }));
      });
      ws.on('message', (raw) => {
        replies.push(JSON.parse(raw.toString()));
        if (replies.length === 3) ws.close();
      });
      ws.on('close', () => resolve());
      ws.on('error', reject);
    });
    assert.deepEqual(replies.map((r) => [r.type, r.data.code]), [['error', 'INVALID_JSON'], ['error', 'SESSION_ERROR'], ['error', 'UNKNOWN_TYPE']]);
    // Without the token the upgrade is refused.
    await assert.rejects(new Promise((resolve, reject) => {
      const anon = new WebSocket(base.replace('http', 'ws') + '/ws');
      anon.on('open', resolve);
      anon.on('error', reject);
    }));
  });

  it("speaks verl-tool's /get_observation: per-trajectory state until finish", async () => {
    const [a, b] = [questions[0]!, questions[1]!];
    const da = a.decomposition!;
    const first = await post('/get_observation', {
      trajectory_ids: ['t1', 't2'],
      actions: [`<think>x</think>\n<search> ${da[0]!.question} </search>`, 'no tags at all'],
      extra_fields: [{ question_id: a.id }, { question_id: b.id }],
      finish: [false, false],
    });
    assert.equal(first.status, 200);
    assert.deepEqual(first.body['dones'], [false, false]);
    assert.deepEqual(first.body['valids'], [true, false]);
    assert.match(first.body['observations'][0].obs, /<information>Doc 1/);
    assert.equal(first.body['observations'][0].reward, 0.25);
    const second = await post('/get_observation', {
      trajectory_ids: ['t1', 't2'],
      actions: [`<think>done</think>\n<answer> ${a.answers[0]} </answer>`, ''],
      finish: [false, true],
    });
    assert.deepEqual(second.body['dones'], [true, true]);
    assert.equal(second.body['observations'][0].reward, 1, 'the outcome reward on the final step');
    const bad = await post('/get_observation', { trajectory_ids: ['t3'], actions: [1] });
    assert.equal(bad.status, 400);
  });
});
