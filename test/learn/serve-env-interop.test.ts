/**
 * serve-env as the upstream clients drive it, over 127.0.0.1. Each request is what that client's code
 * sends, and each reply is read the way that code reads it:
 * - OpenEnv `GenericEnvClient` / `MCPToolClient` (src/openenv/core: `_step_payload`, `_parse_result`,
 *   `EnvClient.reset/step/state`, the server's `websocket_endpoint`);
 * - verl-tool `verltool_agent_loop.py` `interact_with_tool_server` (one trajectory per call, extra_fields
 *   = the row's extra_info, built by examples/data_preprocess/search_r1.py);
 * - Search-R1 `generation.py` `batch_search` → `_passages2string` → `execute_predictions`, for the
 *   observation text expected byte for byte.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import type { Question } from '../../src/core/types.js';
import { loadDatasetAll } from '../../src/corpus/dataset.js';
import { generateWorld, writeWorld } from '../../src/corpus/world/index.js';
import { getProtocol } from '../../src/agents/registry.js';
import { selectQuestions } from '../../src/cli/serve-env.js';
import { RagEnv } from '../../src/env/env.js';
import { EnvService } from '../../src/learn/serve/env-service.js';
import { createEnvServer, type EnvServer, type EnvServerOptions } from '../../src/learn/serve/serve-env.js';
import { buildIndex, openRetriever } from '../../src/retrieval/index-dir.js';
import { BUDGET_FEEDBACK } from '../../src/learn/serve/search-r1-wire.js';
import { createRetrievalServer } from '../../src/retrieval/server.js';
import type { Retriever } from '../../src/retrieval/types.js';
import { episodeScorer } from '../../src/rewards/apply.js';
import { composeScheme } from '../../src/rewards/schemes.js';
import { data, tempDir } from '../helpers.js';

const TOKEN = 'tok-3f9a';
const TOPK = 3;

describe('serve-env, driven as OpenEnv, verl-tool and Search-R1 drive it', () => {
  const tmp = tempDir();
  let retriever: Retriever;
  let questions: Question[];
  const servers: EnvServer[] = [];
  const logged: string[] = [];

  const start = async (opts: EnvServerOptions = {}, protocol = 'search-r1') => {
    const env = new RagEnv({ retriever, topK: TOPK, maxTurns: 4, maxSearches: 3 });
    const service = new EnvService({ env, protocol: getProtocol(protocol), questions, outcome: episodeScorer(composeScheme('em')) });
    const server = createEnvServer(service, { token: TOKEN, onRequest: (i) => logged.push(`${i.method} ${i.path}`), ...opts });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    servers.push(server);
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  let base = '';
  const call = async (url: string, body?: unknown, headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }) => {
    const r = await fetch(url, body === undefined ? { headers } : { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    return { status: r.status, body: (await r.json()) as any };
  };

  before(async () => {
    await writeWorld(join(tmp.dir, 'world'), generateWorld({ seed: 11, entities: 500, questions: 24 }));
    await buildIndex(join(tmp.dir, 'world', 'corpus.jsonl'), join(tmp.dir, 'index'), { quiet: true });
    retriever = await openRetriever(join(tmp.dir, 'index'));
    questions = (await loadDatasetAll(join(tmp.dir, 'world', 'questions.jsonl'))).questions;
    base = await start();
  });
  after(async () => {
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
    tmp.cleanup();
  });

  describe('OpenEnv', () => {
    it('answers /state before any reset with the empty State, as OpenEnv does', async () => {
      const fresh = await start();
      assert.deepEqual((await call(`${fresh}/state`)).body, { episode_id: null, step_count: 0 });
    });

    it('step frames hold exactly observation/reward/done; outcome details in observation.metadata', async () => {
      const q = questions[0]!;
      const reset = await call(`${base}/reset`, { question_id: q.id, episode_id: 'oe-1' });
      assert.deepEqual(Object.keys(reset.body).sort(), ['done', 'observation', 'reward']);
      const s1 = await call(`${base}/step`, { episode_id: 'oe-1', action: { tool: 'search', query: q.question } });
      assert.deepEqual(Object.keys(s1.body).sort(), ['done', 'observation', 'reward']);
      assert.equal(s1.body.observation.metadata.step_reward, 0);
      assert.equal(s1.body.observation.documents.length, TOPK);
      const s2 = await call(`${base}/step`, { episode_id: 'oe-1', action: { tool: 'answer', text: `the ${q.answers[0]}` } });
      assert.deepEqual(Object.keys(s2.body).sort(), ['done', 'observation', 'reward']);
      // GenericEnvClient._parse_result: StepResult(observation=payload["observation"], reward, done).
      const { observation, reward, done } = s2.body;
      assert.equal(done, true);
      assert.equal(reward, 1);
      assert.deepEqual(
        { em: observation.metadata.em, f1: observation.metadata.f1, prediction: observation.metadata.prediction, step_reward: observation.metadata.step_reward, outcome: observation.metadata.outcome_reward },
        { em: 1, f1: 1, prediction: `the ${q.answers[0]}`, step_reward: 0, outcome: 1 },
      );
    });

    it('speaks MCP tool mode over HTTP /step: list_tools without a reset, call_tool with tool_name/result/error', async () => {
      const listed = await call(`${base}/step`, { action: { type: 'list_tools' } });
      assert.equal(listed.status, 200);
      // MCPToolClient._parse_result: "tools" in observation → ListToolsObservation(Tool(name, description, input_schema)).
      assert.deepEqual(listed.body.observation.tools.map((t: Record<string, unknown>) => Object.keys(t).sort()), [['description', 'input_schema', 'name'], ['description', 'input_schema', 'name']]);
      assert.deepEqual(listed.body.observation.tools.map((t: { name: string }) => t.name), ['search', 'answer']);
      const q = questions[1]!;
      await call(`${base}/reset`, { question_id: q.id, episode_id: 'mcp-1' });
      const searched = await call(`${base}/step`, { episode_id: 'mcp-1', action: { type: 'call_tool', tool_name: 'search', arguments: { query: q.question } } });
      // "tool_name" in observation → CallToolObservation(tool_name, result, error); call_tool returns result.
      const obs = searched.body.observation;
      assert.equal(obs.tool_name, 'search');
      assert.equal(obs.error, null);
      assert.match(obs.result, /^Doc 1 \(Title: /);
      const missing = await call(`${base}/step`, { episode_id: 'mcp-1', action: { type: 'call_tool', tool_name: 'browse', arguments: {} } });
      assert.equal(missing.status, 200);
      // ToolError(**error) must validate: exactly error_type (one of ToolErrorType) and message.
      assert.deepEqual(Object.keys(missing.body.observation.error).sort(), ['error_type', 'message']);
      assert.equal(missing.body.observation.error.error_type, 'tool_not_found');
      const badArgs = await call(`${base}/step`, { episode_id: 'mcp-1', action: { type: 'call_tool', tool_name: 'search', arguments: { q: 'x' } } });
      assert.equal(badArgs.body.observation.error.error_type, 'invalid_args');
      const answered = await call(`${base}/step`, { episode_id: 'mcp-1', action: { type: 'call_tool', tool_name: 'answer', arguments: { text: q.answers[0] } } });
      assert.equal(answered.body.done, true);
      assert.equal(answered.body.observation.tool_name, 'answer');
      assert.equal(answered.body.observation.metadata.em, 1);
    });

    it('answers an invalid action with 422, as OpenEnv does', async () => {
      await call(`${base}/reset`, { episode_id: 'bad-1' });
      for (const action of [{ code: 'print(1)' }, 'search', { tool: 'search' }, { type: 'call_tool_typo' }]) {
        const r = await call(`${base}/step`, { episode_id: 'bad-1', action });
        assert.equal(r.status, 422, JSON.stringify(action));
        assert.equal(typeof r.body.detail, 'string');
      }
    });

    const wsSession = (url: string, script: unknown[]) =>
      new Promise<{ replies: any[]; code: number }>((resolve, reject) => {
        const ws = new WebSocket(url);
        const replies: any[] = [];
        const next = () => {
          const m = script.shift();
          if (m) ws.send(JSON.stringify(m));
        };
        ws.on('open', next);
        ws.on('message', (raw) => {
          replies.push(JSON.parse(raw.toString()));
          next();
        });
        ws.on('close', (code) => resolve({ replies, code }));
        ws.on('error', reject);
      });

    it('runs MCP tool calls over /ws, reached through a base URL that carries the token (/t/<token>)', async () => {
      const q = questions[2]!;
      // EnvClient connects to f"{ws_url}/ws" for a base_url it is given; the token rides in that base URL.
      const url = `${base.replace('http', 'ws')}/t/${TOKEN}/ws`;
      const { replies, code } = await wsSession(url, [
        { type: 'step', data: { type: 'list_tools' } },
        { type: 'reset', data: { question_id: q.id } },
        { type: 'step', data: { type: 'call_tool', tool_name: 'search', arguments: { query: q.question } } },
        { type: 'step', data: { type: 'call_tool', tool_name: 'answer', arguments: { text: q.answers[0] } } },
        { type: 'state' },
        { type: 'close' },
      ]);
      assert.deepEqual(replies.map((r) => r.type), ['observation', 'observation', 'observation', 'observation', 'state']);
      assert.equal(replies[0].data.observation.tools.length, 2);
      for (const r of replies.slice(0, 4)) assert.deepEqual(Object.keys(r.data).sort(), ['done', 'observation', 'reward']);
      assert.equal(replies[2].data.observation.tool_name, 'search');
      assert.match(replies[2].data.observation.result, /Doc 1/);
      assert.equal(replies[3].data.done, true);
      assert.equal(replies[3].data.observation.metadata.em, 1);
      assert.equal(replies[4].data.step_count, 2);
      assert.equal(code, 1000, 'a close message ends the session with a normal closure');
      assert.ok(logged.every((l) => !l.includes(TOKEN)), 'the token never reaches the request log');
    });

    it('refuses a session beyond the limit with CAPACITY_REACHED {active_sessions, max_sessions} and close code 1000', async () => {
      const small = await start({ maxWsSessions: 1 });
      const headers = { authorization: `bearer ${TOKEN}` }; // the scheme is case-insensitive (RFC 7235)
      const first = new WebSocket(`${small.replace('http', 'ws')}/ws`, { headers });
      await new Promise((r, j) => (first.once('open', r), first.once('error', j)));
      const second = await new Promise<{ msg: any; code: number }>((resolve, reject) => {
        const ws = new WebSocket(`${small.replace('http', 'ws')}/ws`, { headers });
        let msg: any;
        ws.on('message', (raw) => (msg = JSON.parse(raw.toString())));
        ws.on('close', (code) => resolve({ msg, code }));
        ws.on('error', reject);
      });
      first.close();
      assert.equal(second.msg.type, 'error');
      assert.equal(second.msg.data.code, 'CAPACITY_REACHED');
      assert.equal(second.msg.data.active_sessions, 1);
      assert.equal(second.msg.data.max_sessions, 1);
      assert.equal(second.code, 1000);
    });
  });

  describe('verl-tool', () => {
    // interact_with_tool_server's body for one action: its trajectory, the action text cut after the stop
    // tag, finish = not do_action, is_last_step, and extra_fields = [the row's extra_info].
    const turn = (trajectory: string, action: string, extraInfo: Record<string, unknown> = {}) => ({
      trajectory_ids: [trajectory], actions: [action], finish: [false], is_last_step: [false], extra_fields: [extraInfo],
    });
    // examples/data_preprocess/search_r1.py's extra_info for a row.
    const extraInfo = (q: Question, index: number) => ({ index, need_tools_kwargs: true, question: q.question, split: 'train', tools_kwargs: { search: { create_kwargs: { ground_truth: { target: q.answers }, question: q.question, data_source: 'searchR1_nq' } } } });
    // How interact_with_tool_server reads the reply.
    const read = (reply: any) => {
      const obs = reply.observations[0];
      assert.equal(typeof obs.obs, 'string');
      assert.ok(obs.reward === null || typeof obs.reward === 'number');
      return { obs: obs.obs as string, reward: obs.reward as number, done: Number(reply.dones[0]), valid: Number(reply.valids[0]) };
    };

    it('refuses a trajectory whose question cannot be identified, naming the fields; --round-robin allows it', async () => {
      const r = await call(`${base}/get_observation`, turn('anon-1', '<search> anything </search>'));
      assert.equal(r.status, 422);
      assert.match(r.body.error, /"question_id", "question" \(its exact text\) or "index"/);
      assert.match(r.body.error, /--round-robin/);
      const rr = await start({ roundRobin: true });
      const ok = await call(`${rr}/get_observation`, turn('anon-1', '<search> anything </search>'));
      assert.equal(ok.status, 200);
      assert.equal(read(ok.body).valid, 1);
    });

    it("identifies the question from Search-R1's extra_info (its text wins over a wrong index) and rewards against it", async () => {
      const q = questions[5]!;
      // The row index of another split: the text still names the question in the prompt.
      const info = extraInfo(q, 17);
      const first = read((await call(`${base}/get_observation`, turn('vt-1', `<think> look it up </think> <search> ${q.question} </search>`, info))).body);
      assert.equal(first.done, 0);
      const last = read((await call(`${base}/get_observation`, turn('vt-1', `<think> found </think> <answer> ${q.answers[0]} </answer>`, info))).body);
      assert.deepEqual([last.obs, last.done, last.valid, last.reward], ['', 1, 1, 1]);
    });

    it('refuses a question text that names no question, even beside an index, and an index past the end (no wrap-around)', async () => {
      const q = questions[5]!;
      const wrongText = await call(`${base}/get_observation`, turn('vt-x1', '<search> a </search>', { ...extraInfo(q, 5), question: `${q.question} (reworded)` }));
      assert.equal(wrongText.status, 422);
      assert.match(wrongText.body.error, /no question has the text .*serve the dataset the client's questions come from, or send question_id/);
      const past = await call(`${base}/get_observation`, turn('vt-x2', '<search> a </search>', { index: questions.length }));
      assert.equal(past.status, 422);
      assert.match(past.body.error, new RegExp(`"index" must be a whole number from 0 to ${questions.length - 1}`));
      assert.equal((await call(`${base}/get_observation`, turn('vt-x3', '<search> a </search>', { index: questions.length - 1 }))).status, 200);
    });

    it('a complete search past the search budget is told the budget is spent, not that the turn had no complete pair', async () => {
      const q = questions[6]!;
      const info = extraInfo(q, 6);
      // maxSearches 3 (start()): the fourth search is refused by the environment.
      for (let i = 0; i < 3; i++) assert.match(read((await call(`${base}/get_observation`, turn('vt-b', `<search> ${q.question} ${i} </search>`, info))).body).obs, /^\n\n<information>/);
      const fourth = read((await call(`${base}/get_observation`, turn('vt-b', '<search> one more </search>', info))).body);
      assert.equal(fourth.obs, BUDGET_FEEDBACK);
      assert.doesNotMatch(fourth.obs, /no complete/);
      assert.equal(fourth.valid, 0);
    });

    it("answers searches with Search-R1's observation text, byte for byte, including no hits", async () => {
      // What Search-R1's generation.py would make of serve-retriever's reply over the same index.
      const rs = createRetrievalServer(retriever);
      await new Promise<void>((r) => rs.listen(0, '127.0.0.1', r));
      const searchUrl = `http://127.0.0.1:${(rs.address() as AddressInfo).port}/retrieve`;
      const expected = async (query: string) => {
        const reply = (await (await fetch(searchUrl, { method: 'POST', body: JSON.stringify({ queries: [query], topk: TOPK, return_scores: true }) })).json()) as any;
        let ref = '';
        reply.result[0].forEach((item: any, idx: number) => {
          const content: string = item.document.contents;
          const title = content.split('\n')[0];
          const text = content.split('\n').slice(1).join('\n');
          ref += `Doc ${idx + 1}(Title: ${title}) ${text}\n`;
        });
        return `\n\n<information>${ref.trim()}</information>\n\n`;
      };
      try {
        const q = questions[7]!;
        const info = extraInfo(q, 7);
        const query = q.decomposition?.[0]?.question ?? q.question;
        const got = read((await call(`${base}/get_observation`, turn('vt-2', `<think>x</think>\n<search>  ${query}\n</search>`, info))).body);
        assert.equal(got.obs, await expected(query));
        assert.match(got.obs, /^\n\n<information>Doc 1\(Title: "/);
        const none = read((await call(`${base}/get_observation`, turn('vt-2', '<search> zzqxv wvkjq </search>', info))).body);
        assert.equal(none.obs, await expected('zzqxv wvkjq'));
        assert.equal(none.obs, '\n\n<information></information>\n\n');
      } finally {
        rs.close();
      }
    });

    it("parses actions as Search-R1's postprocess_predictions does", async () => {
      const q = questions[8]!;
      const info = extraInfo(q, 8);
      // [action text, valid, done]: the first complete <search>/<answer> pair decides; an empty pair is
      // a valid action; an unclosed tag is no action.
      const cases: [string, number, number][] = [
        ['<think>hm</think> <search> x y', 0, 0],
        ['<search></search>', 1, 0],
        ['<search> a </search> <search> b </search>', 1, 0],
        ['<answer>nope</answer> then <search> late </search>', 1, 1],
      ];
      for (const [i, [action, valid, done]] of cases.entries()) {
        const got = read((await call(`${base}/get_observation`, turn(`vt-p${i}`, action, info))).body);
        assert.deepEqual([got.valid, got.done], [valid, done], action);
        if (!valid) assert.match(got.obs, /^\n.*<search> and <\/search>.*\n$/s);
      }
    });

    it('takes the token in the URL for clients that only take a URL (?token=)', async () => {
      const q = questions[9]!;
      // verl-tool's tool_server_url, Search-R1's search_url: a full URL, no headers.
      const r = await call(`${base}/get_observation?token=${TOKEN}`, turn('vt-3', '<search> a </search>', { question: q.question }), {});
      assert.equal(r.status, 200);
      assert.equal((await call(`${base}/get_observation?token=wrong`, turn('vt-3', '<search> a </search>'), {})).status, 401);
      assert.ok(logged.every((l) => !l.includes(TOKEN)));
    });
  });

  describe('limits (issue 21)', () => {
    it('refuses 180,000 trajectory ids with 413 naming the limit, and /health answers meanwhile', async () => {
      const ids = Array.from({ length: 180_000 }, (_, i) => `t${i}`);
      const big = call(`${base}/get_observation`, { trajectory_ids: ids, actions: ids.map(() => '') });
      const t0 = performance.now();
      const health = await call(`${base}/health`, undefined, {});
      assert.equal(health.body.status, 'healthy');
      assert.ok(performance.now() - t0 < 2000);
      const r = await big;
      assert.equal(r.status, 413);
      assert.match(r.body.error, /limit is 4096 per call.*--max-trajectories/);
    });

    it("refuses a 3.9 MB query with 413 naming --max-action-chars, and stores nothing of it", async () => {
      await call(`${base}/reset`, { episode_id: 'huge-1' });
      const r = await call(`${base}/step`, { episode_id: 'huge-1', action: { tool: 'search', query: 'w '.repeat(1_950_000) } });
      assert.equal(r.status, 413);
      assert.match(r.body.error, /--max-action-chars/);
      assert.equal((await call(`${base}/state?episode_id=huge-1`)).body.step_count, 0);
    });
  });

  it('closes idle sessions on a timer, without waiting for the next reset', async () => {
    const env = new RagEnv({ retriever, topK: TOPK, maxTurns: 4 });
    const service = new EnvService({ env, protocol: getProtocol('search-r1'), questions, outcome: episodeScorer(composeScheme('em')), idleMs: 40 });
    try {
      service.reset({ episode_id: 'idle-1' });
      assert.equal(service.has('idle-1'), true);
      await new Promise((r) => setTimeout(r, 150));
      assert.equal(service.has('idle-1'), false);
    } finally {
      service.dispose();
    }
  });

  it('serves a dataset without split metadata with default flags: all questions, and says so', async () => {
    const { questions: qs, note } = await selectQuestions(data('flashrag', 'bamboogle_test.jsonl'), undefined);
    assert.equal(qs.length, 125);
    assert.match(note, /all 125 questions .*no split metadata/);
    const world = await selectQuestions(join(tmp.dir, 'world', 'questions.jsonl'), undefined);
    assert.ok(world.questions.every((q) => q.metadata?.['split'] === 'train'));
    assert.match(world.note, /split "train"/);
    await assert.rejects(selectQuestions(data('flashrag', 'bamboogle_test.jsonl'), 'train'), /no questions in split "train".*leave --split out/);
  });
});
