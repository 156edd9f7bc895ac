/**
 * serve-env's OpenEnv MCP surface and /openapi.json over 127.0.0.1: JSON-RPC on POST /mcp (what
 * `openenv validate --url` probes and `MCPToolClient` sends in production mode), the /mcp WebSocket,
 * and {type: "mcp"} messages on /ws. Rewards from a stand-in PRM (0.25 per search, 0.5 per answer)
 * and EM as the outcome, so a two-step episode's rewards are [0.25, 1].
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
import { RagEnv } from '../../src/env/env.js';
import { EnvService } from '../../src/learn/serve/env-service.js';
import { createEnvServer, type EnvServer } from '../../src/learn/serve/serve-env.js';
import type { PRM } from '../../src/prm/types.js';
import { buildIndex, openRetriever } from '../../src/retrieval/index-dir.js';
import { episodeScorer } from '../../src/rewards/apply.js';
import { composeScheme } from '../../src/rewards/schemes.js';
import { tempDir } from '../helpers.js';

const stubPrm: PRM = { name: 'stub', score: async (_s, cs) => cs.map((c) => (c.action.type === 'search' ? 0.25 : 0.5)) };
const TOKEN = 'mcp-sekret';

describe('serve-env: OpenEnv MCP (JSON-RPC on /mcp, the /mcp WebSocket, {type: "mcp"} on /ws) and /openapi.json', () => {
  const tmp = tempDir();
  let server: EnvServer;
  let service: EnvService;
  let base: string;
  let questions: Question[];

  const rpc = async (body: unknown, token: string | null = TOKEN) => {
    const r = await fetch(base + '/mcp', { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: typeof body === 'string' ? body : JSON.stringify(body) });
    const text = await r.text();
    return { status: r.status, text, body: text ? (JSON.parse(text) as Record<string, any>) : undefined };
  };
  const call = async (method: string, params?: Record<string, unknown>, id: string | number = 1) => (await rpc({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) })).body!;
  const restStep = async (episode: string, action: unknown) => {
    const r = await fetch(base + '/step', { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` }, body: JSON.stringify({ episode_id: episode, action }) });
    return (await r.json()) as Record<string, any>;
  };
  /** Opens a WebSocket on `path`, sends `messages` one after another as each reply arrives, and resolves with the replies. */
  const wsExchange = (path: string, messages: unknown[], expected: number, url = base): Promise<any[]> =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(url.replace('http', 'ws') + path, { headers: { authorization: `Bearer ${TOKEN}` } });
      const replies: any[] = [];
      ws.on('open', () => {
        for (const m of messages) ws.send(typeof m === 'string' ? m : JSON.stringify(m));
      });
      ws.on('message', (raw) => {
        replies.push(JSON.parse(raw.toString()));
        if (replies.length === expected) ws.close();
      });
      ws.on('close', () => resolve(replies));
      ws.on('error', reject);
    });

  before(async () => {
    await writeWorld(join(tmp.dir, 'world'), generateWorld({ seed: 5, entities: 600, questions: 30 }));
    await buildIndex(join(tmp.dir, 'world', 'corpus.jsonl'), join(tmp.dir, 'index'), { quiet: true });
    const retriever = await openRetriever(join(tmp.dir, 'index'));
    questions = (await loadDatasetAll(join(tmp.dir, 'world', 'questions.jsonl'))).questions;
    const env = new RagEnv({ retriever, topK: 3, maxTurns: 4, maxSearches: 3 });
    service = new EnvService({ env, protocol: getProtocol('search-r1'), questions, outcome: episodeScorer(composeScheme('em')), prm: stubPrm });
    server = createEnvServer(service, { token: TOKEN, maxWsSessions: 2 });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    service.dispose();
    tmp.cleanup();
  });

  it('GET /openapi.json: version 1.0.0 and the simulation-mode paths the validator reads (/reset, /step, /state), /mcp among them', async () => {
    const r = await fetch(base + '/openapi.json', { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(r.status, 200);
    const doc = (await r.json()) as Record<string, any>;
    assert.equal(doc['openapi'], '3.1.0');
    assert.equal(doc['info']['version'], '1.0.0');
    assert.deepEqual(Object.keys(doc['paths']).sort(), ['/get_observation', '/health', '/mcp', '/metadata', '/reset', '/schema', '/state', '/step']);
    assert.deepEqual(Object.keys(doc['paths']['/mcp']), ['post']);
    assert.deepEqual(Object.keys(doc['paths']['/state']), ['get']);
    // A token guards it: declared as a bearer scheme, and refused without one.
    assert.deepEqual(doc['components']['securitySchemes'], { bearer: { type: 'http', scheme: 'bearer' } });
    assert.equal((await fetch(base + '/openapi.json')).status, 401);
    // The /t/TOKEN/ prefix (how `openenv validate --url http://host/t/TOKEN` reaches it) works too.
    assert.equal((await fetch(`${base}/t/${TOKEN}/openapi.json`)).status, 200);
  });

  it("answers the validator's probe (POST /mcp {}) and malformed JSON-RPC with OpenEnv's codes, always HTTP 200", async () => {
    const probe = await rpc({});
    assert.equal(probe.status, 200);
    assert.equal(probe.body!['jsonrpc'], '2.0');
    assert.equal(probe.body!['id'], null);
    assert.equal(probe.body!['error']['code'], -32600);
    assert.equal('result' in probe.body!, false, 'a response carries result or error, never both');
    const notJson = await rpc('{oops');
    assert.deepEqual([notJson.status, notJson.body], [200, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }]);
    const batch = await rpc([{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
    assert.equal(batch.body!['error']['code'], -32600);
    const badParams = await rpc({ jsonrpc: '2.0', id: 4, method: 'tools/list', params: [1] });
    assert.deepEqual([badParams.body!['id'], badParams.body!['error']['code']], [4, -32600]);
    assert.deepEqual(await call('resources/list', {}, 'r1'), { jsonrpc: '2.0', id: 'r1', error: { code: -32601, message: 'Method not found: resources/list' } });
    assert.equal((await rpc({}, null)).status, 401);
    assert.equal((await fetch(base + '/mcp', { headers: { authorization: `Bearer ${TOKEN}` } })).status, 405);
  });

  it('initialize, ping and notifications: the MCP handshake a plain MCP client makes', async () => {
    const init = await call('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } }, 0);
    assert.deepEqual(Object.keys(init['result']).sort(), ['capabilities', 'instructions', 'protocolVersion', 'serverInfo']);
    assert.equal(init['result']['protocolVersion'], '2025-06-18');
    assert.deepEqual(init['result']['capabilities'], { tools: { listChanged: false } });
    assert.deepEqual(init['result']['serverInfo'], { name: 'ragtrail', version: '1.0.0' });
    // A revision the server does not know gets the newest it speaks.
    assert.equal((await call('initialize', { protocolVersion: '1999-01-01' }))['result']['protocolVersion'], '2025-11-25');
    const note = await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' });
    assert.deepEqual([note.status, note.text], [202, '']);
    assert.deepEqual(await call('ping', undefined, 9), { jsonrpc: '2.0', id: 9, result: {} });
  });

  it("tools/list: the protocol's tools in MCP's shape, no session needed", async () => {
    const r = await call('tools/list');
    const tools = r['result']['tools'] as { name: string; description: string; inputSchema: Record<string, unknown> }[];
    // search-r1 searches and answers (no evidence step).
    assert.deepEqual(tools.map((t) => t.name), ['search', 'answer']);
    assert.deepEqual(tools[0]!.inputSchema, { type: 'object', properties: { query: { type: 'string', description: 'keywords to search for' } }, required: ['query'] });
    assert.deepEqual(tools[1]!.inputSchema['required'], ['text']);
    assert.deepEqual(Object.keys(tools[0]!).sort(), ['description', 'inputSchema', 'name']);
  });

  it('an episode over HTTP /mcp: openenv/session/create, tools/call search then answer, rewards [0.25, 1], then session/close', async () => {
    const q = questions.find((x) => x.type === 'compositional')!;
    const created = (await call('openenv/session/create', { question_id: q.id }))['result'];
    const sid = created['session_id'] as string;
    assert.match(sid, /^mcp-/);
    assert.equal(created['observation']['question'], q.question);
    assert.equal(created['observation']['step_count'], 0);

    const query = q.decomposition![0]!.question;
    const s1 = (await call('tools/call', { name: 'search', arguments: { query }, session_id: sid }, 2))['result'];
    assert.deepEqual(Object.keys(s1).sort(), ['content', 'data', 'isError', 'structuredContent']);
    assert.equal(s1['isError'], false);
    const text = s1['content'][0]['text'] as string;
    assert.equal(s1['content'][0]['type'], 'text');
    assert.equal(s1['data'], text, 'MCPToolClient.call_tool returns result["data"]: the same text');
    assert.equal(text.match(/^Doc \d+ \(Title: /gm)?.length, 3, 'top 3 documents');
    assert.deepEqual([s1['structuredContent']['reward'], s1['structuredContent']['done']], [0.25, false]);
    // The same search through POST /step on another episode returns the same documents' text.
    await fetch(base + '/reset', { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: JSON.stringify({ episode_id: 'rest-twin', question_id: q.id }) });
    assert.equal((await restStep('rest-twin', { tool: 'search', query }))['observation']['text'], text);

    const s2 = (await call('tools/call', { name: 'answer', arguments: { text: q.answers[0] }, session_id: sid }, 3))['result'];
    assert.equal(s2['data'], 'Final answer recorded.');
    const step = s2['structuredContent'];
    assert.deepEqual([step['reward'], step['done']], [1, true]);
    assert.deepEqual([step['observation']['metadata']['em'], step['observation']['metadata']['step_reward'], step['observation']['metadata']['retrieval_count']], [1, 0.5, 1]);
    // The session is the service's episode: GET /state reads it.
    const state = (await (await fetch(`${base}/state?episode_id=${sid}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as Record<string, any>;
    assert.deepEqual([state['rewards'], state['total_reward'], state['step_count']], [[0.25, 1], 1.25, 2]);

    // A call on the ended episode is the tool failing (-32603), as OpenEnv turns a raising tool into one.
    const ended = await call('tools/call', { name: 'search', arguments: { query: 'x' }, session_id: sid }, 4);
    assert.deepEqual([ended['error']['code'], ended['error']['data']['error_type']], [-32603, 'execution_error']);
    assert.deepEqual((await call('openenv/session/close', { session_id: sid }, 5))['result'], { session_id: sid, closed: true });
    assert.deepEqual((await call('openenv/session/close', { session_id: sid }, 6))['error'], { code: -32602, message: `Unknown session_id: ${sid}` });
    assert.equal((await call('openenv/session/close', {}, 7))['error']['code'], -32602);
  });

  it('tools/call errors: unknown tool, missing name, bad arguments, unknown session, unknown question', async () => {
    const sid = (await call('openenv/session/create', { index: 3 }))['result']['session_id'];
    const unknown = await call('tools/call', { name: 'browse', arguments: {}, session_id: sid });
    assert.deepEqual(unknown['error'], { code: -32602, message: 'Tool not found: browse', data: { error_type: 'tool_not_found', tools: ['search', 'answer'] } });
    assert.deepEqual((await call('tools/call', { arguments: {}, session_id: sid }))['error'], { code: -32602, message: "Missing 'name' in params" });
    assert.equal((await call('tools/call', { name: 'search', arguments: 'q', session_id: sid }))['error']['code'], -32602);
    const noQuery = await call('tools/call', { name: 'search', arguments: {}, session_id: sid });
    assert.deepEqual([noQuery['error']['code'], noQuery['error']['message']], [-32602, 'search needs "query" (a string)']);
    assert.deepEqual((await call('tools/call', { name: 'search', arguments: { query: 'x' }, session_id: 'zzz' }))['error'], { code: -32602, message: 'Unknown session_id: zzz' });
    assert.equal((await call('openenv/session/create', { question_id: 'no-such-question' }))['error']['code'], -32602);
    // None of the refused calls stepped the episode.
    assert.equal(service.state(sid)['step_count'], 0);
    await call('openenv/session/close', { session_id: sid });
  });

  it('a tools/call without a session runs in an episode of its own, closed after the call', async () => {
    const before = service.size;
    const query = questions[0]!.decomposition?.[0]?.question ?? questions[0]!.question;
    const r = (await call('tools/call', { name: 'search', arguments: { query } }))['result'];
    assert.equal(r['structuredContent']['observation']['question_id'], questions[0]!.id, 'the first question when params name none');
    assert.equal(r['structuredContent']['reward'], 0.25);
    assert.equal(service.size, before, 'no session left open');
    const named = (await call('tools/call', { name: 'answer', arguments: { text: questions[5]!.answers[0] }, index: 5 }))['result'];
    assert.deepEqual([named['structuredContent']['observation']['question_id'], named['structuredContent']['reward']], [questions[5]!.id, 1]);
  });

  it('the /mcp WebSocket: JSON-RPC per frame in order, one episode per connection, closed with it', async () => {
    const before = service.size;
    const q = questions[7]!;
    const replies = await wsExchange(
      '/mcp',
      [
        { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26' } },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        { jsonrpc: '2.0', id: 3, method: 'openenv/session/create', params: { question_id: q.id } },
        { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'search', arguments: { query: q.question } } },
        { jsonrpc: '2.0', id: 5, method: 'openenv/session/create' },
        { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'answer', arguments: { text: q.answers[0] } } },
        '{bad',
      ],
      7,
    );
    assert.deepEqual(replies.map((r) => r.id), [1, 2, 3, 4, 5, 6, null], 'the notification gets no frame');
    assert.equal(replies[0].result.protocolVersion, '2025-03-26');
    assert.equal(replies[1].result.tools.length, 2);
    const sid = replies[2].result.session_id;
    assert.equal(replies[2].result.observation.question_id, q.id);
    assert.equal(replies[3].result.structuredContent.observation.episode_id, sid);
    assert.equal(replies[3].result.structuredContent.reward, 0.25);
    assert.deepEqual(replies[4].result, { session_id: sid }, "a live episode is the connection's session");
    assert.deepEqual([replies[5].result.structuredContent.reward, replies[5].result.structuredContent.done], [1, true]);
    assert.equal(replies[6].error.code, -32700);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(service.has(sid), false, 'closing the connection closes its episode');
    assert.equal(service.size, before);
  });

  it('{type: "mcp"} on /ws: JSON-RPC on the connection\'s reset episode, answered {type: "mcp", data}', async () => {
    const q = questions[9]!;
    const replies = await wsExchange(
      '/ws',
      [
        { type: 'reset', data: { question_id: q.id } },
        { type: 'mcp', data: { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'answer', arguments: { text: q.answers[0] } } } },
        { type: 'state' },
        { type: 'mcp', data: { jsonrpc: '2.0', id: 'b', method: 'openenv/session/close', params: { session_id: 'whatever' } } },
        { type: 'mcp', data: { id: 'c', method: 'tools/list' } },
      ],
      5,
    );
    assert.deepEqual(replies.map((r) => r.type), ['observation', 'mcp', 'state', 'mcp', 'mcp']);
    const episode = replies[0].data.observation.episode_id;
    assert.equal(replies[1].data.id, 'a');
    assert.equal(replies[1].data.result.structuredContent.observation.episode_id, episode);
    assert.deepEqual([replies[1].data.result.structuredContent.reward, replies[1].data.result.structuredContent.done], [1, true]);
    assert.deepEqual([replies[2].data.episode_id, replies[2].data.rewards], [episode, [1]]);
    assert.deepEqual(replies[3].data.error, { code: -32602, message: 'Unknown session_id: whatever' });
    assert.deepEqual([replies[4].data.id, replies[4].data.error.code], ['c', -32600], 'no "jsonrpc": "2.0"');
  });

  it("a full server answers a new /mcp WebSocket with OpenEnv's capacity error, then closes it (1000)", async () => {
    await new Promise((r) => setTimeout(r, 50)); // the earlier tests' connections finish closing on the server side
    const hold = [new WebSocket(base.replace('http', 'ws') + '/ws', { headers: { authorization: `Bearer ${TOKEN}` } }), new WebSocket(base.replace('http', 'ws') + '/mcp', { headers: { authorization: `Bearer ${TOKEN}` } })];
    await Promise.all(hold.map((w) => new Promise((r) => w.on('open', r))));
    const result = await new Promise<{ reply: any; code: number }>((resolve, reject) => {
      const ws = new WebSocket(base.replace('http', 'ws') + '/mcp', { headers: { authorization: `Bearer ${TOKEN}` } });
      let reply: any;
      ws.on('message', (raw) => (reply = JSON.parse(raw.toString())));
      ws.on('close', (code) => resolve({ reply, code }));
      ws.on('error', reject);
    });
    assert.equal(result.code, 1000);
    assert.deepEqual(result.reply, { jsonrpc: '2.0', id: null, error: { code: -32000, message: 'the server holds 2 sessions, its limit (raise serve-env --max-sessions)', data: { active_sessions: 2, max_sessions: 2 } } });
    await Promise.all(hold.map((w) => new Promise((r) => (w.on('close', r), w.close()))));
  });
});
