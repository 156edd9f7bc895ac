/**
 * `ragtrail serve-env`: the environment service over the two protocols Python RL trainers speak.
 *
 * OpenEnv (TRL, SkyRL, ART; server side as `openenv.core.env_server.http_server.HTTPEnvServer`):
 * POST /reset {seed?, episode_id?, question_id?, index?} and POST /step {action, episode_id?} →
 * exactly {observation, reward, done} (details in observation.metadata); GET /state [?episode_id=]
 * ({episode_id: null, step_count: 0} before any reset); GET /schema; GET /health; GET /metadata; and
 * the WebSocket /ws, one session per connection: {type: "reset"|"step"|"state"|"close", data} →
 * {type: "observation"|"state"|"mcp"|"error", data}. MCP tool actions ({type: "list_tools"},
 * {type: "call_tool", tool_name, arguments}) work over both, as `MCPToolClient` sends them. OpenEnv's
 * production MCP surface (mcp.ts) — JSON-RPC on POST /mcp, the /mcp WebSocket and {type: "mcp"}
 * messages on /ws — and GET /openapi.json (openapi.ts) make `openenv validate --url` pass. Invalid
 * actions get 422; a full server answers CAPACITY_REACHED with active_sessions / max_sessions and
 * closes with 1000. HTTP calls without an episode_id share one default session.
 *
 * verl-tool (LWS's stack; client `verltool_agent_loop.py` `interact_with_tool_server`): POST
 * /get_observation {trajectory_ids, actions, finish?, is_last_step?, extra_fields?} → {observations:
 * [{obs, reward}], dones, valids}. Actions are the model's raw text in the agent protocol; a
 * trajectory's session opens at its first action on the question its extra_fields name (question_id,
 * the question's text, or index) — one that names none is refused with 422 unless the server runs
 * with round-robin assignment — and closes at `finish` or the end of the episode. With the search-r1
 * protocol, parsing and observation text are Search-R1's own (search-r1-wire.ts).
 *
 * Bounded work: trajectories per call, characters per action and body bytes have limits (413 naming
 * them); a batch is processed in slices that yield to the event loop, and searches run on the
 * retriever's worker threads, so one large call never stalls other clients. Auth: see core/http-server.ts.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import { randomBytes, randomUUID } from 'node:crypto';
import { AUTH_HELP, authorise, HttpError, listen, parseJsonObject, readBody, sendJson, yieldToLoop } from '../../core/http-server.js';
import { ENV_SCHEMA, type EnvService, FORCED_NOTE, type StepPayload } from './env-service.js';
import { BUDGET_FEEDBACK, INVALID_FEEDBACK, informationBlock, parsePrediction } from './search-r1-wire.js';
import { SEARCH_OVER_BUDGET } from '../../env/env.js';
import { answerHas, type EnvPeers, forwardEpisode, HAS_ROUTE, routedObservation } from './env-router.js';
import { handleMcpBody, handleMcpMessage, mcpCapacityError, serveMcpSocket } from './mcp.js';
import { openApiDocument } from './openapi.js';

/** Whether a step was a complete search the environment refused because the budget was spent (env/env.ts). */
function refusedSearch(r: StepPayload): boolean {
  const action = (r.observation as { metadata?: { action?: { type?: string; reason?: string } } }).metadata?.action;
  return action?.type === 'invalid' && action.reason === SEARCH_OVER_BUDGET;
}

/** Options of {@link createEnvServer}. */
export interface EnvServerOptions {
  /** Token every request except GET /health must carry (header, `?token=` or `/t/TOKEN/` prefix); unset: no authentication. */
  token?: string;
  /** Largest request body and WebSocket message, in bytes (default 4 MiB); a larger HTTP body gets 413. */
  maxBodyBytes?: number;
  /** WebSocket sessions at once (OpenEnv's max_concurrent_envs; default 256). */
  maxWsSessions?: number;
  /** Trajectories in one /get_observation call (default 4,096). */
  maxTrajectories?: number;
  /** verl-tool trajectories whose extra_fields name no question get the next question in turn (off: refused with 422). */
  roundRobin?: boolean;
  /** Name reported by GET /metadata (default "ragtrail"). */
  name?: string;
  /** Called after each HTTP request with its method, path (token stripped), status and duration in ms, e.g. for an access log. */
  onRequest?: (info: { method: string; path: string; status: number; ms: number }) => void;
  /** The other processes of `serve-env --processes N` (env-router.ts): HTTP calls go to the process holding their episodes. */
  peers?: EnvPeers;
  /** A process's private server for its peers: answers the route that says which episodes it holds. */
  internal?: boolean;
}

/** The HTTP server of {@link createEnvServer}, with access to its open WebSocket connections. */
export type EnvServer = Server & {
  /** The open `/ws` connections (e.g. to close them on shutdown). */
  websockets(): Iterable<WebSocket>;
};

const DEFAULT_SESSION = 'default';
const DEFAULT_MAX_TRAJECTORIES = 4096;
/** Trajectories stepped together before the event loop gets a turn. */
const SLICE = 64;

const IDENTIFY_HELP = 'each trajectory\'s extra_fields must name its question: "question_id", "question" (its exact text) or "index" (verl-tool sends the dataset row\'s extra_info there; add one of these to it), or start serve-env with --round-robin to hand out questions in turn';

/** verl-tool: one batch of actions from many trajectories. */
async function getObservation(service: EnvService, body: Record<string, unknown>, opts: EnvServerOptions): Promise<{ observations: unknown[]; dones: boolean[]; valids: boolean[] }> {
  const ids = body['trajectory_ids'];
  const actions = body['actions'];
  if (!Array.isArray(ids)) throw new HttpError(400, '"trajectory_ids" must be a list of strings');
  const max = opts.maxTrajectories ?? DEFAULT_MAX_TRAJECTORIES;
  if (ids.length > max) throw new HttpError(413, `"trajectory_ids" holds ${ids.length} trajectories; the limit is ${max} per call (send smaller batches, or raise serve-env --max-trajectories)`);
  if (!ids.every((x) => typeof x === 'string' || typeof x === 'number')) throw new HttpError(400, '"trajectory_ids" must be a list of strings');
  if (!Array.isArray(actions) || actions.length !== ids.length || !actions.every((x) => typeof x === 'string')) throw new HttpError(400, '"actions" must be a list of strings, one per trajectory id');
  const list = (key: string): unknown[] | undefined => {
    const v = body[key];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || v.length !== ids.length) throw new HttpError(400, `"${key}" must be a list with one entry per trajectory id`);
    return v;
  };
  const finish = list('finish');
  const extra = list('extra_fields');
  const searchR1 = service.opts.protocol.name === 'search-r1';
  const identify = (i: number) => {
    const fields = (extra?.[i] && typeof extra[i] === 'object' ? extra[i] : {}) as Record<string, unknown>;
    const q = service.identify(fields);
    if (!q && !opts.roundRobin) throw new HttpError(422, `trajectory ${JSON.stringify(ids[i])} names no question: ${IDENTIFY_HELP}`);
    return q ? { question_id: q.id } : {};
  };
  // Several processes: each part of the call goes to the process holding its trajectories.
  if (opts.peers && opts.peers.count > 1) return routedObservation(service, opts.peers, body, identify, (part) => getObservation(service, part, { ...opts, peers: undefined }));
  // Identify every new trajectory's question before stepping any, so a refused call changes nothing.
  const questions = ids.map((rawId, i) => (finish?.[i] === true || service.has(`verl:${String(rawId)}`) ? undefined : identify(i)));
  const one = async (rawId: string | number, i: number) => {
    const id = `verl:${String(rawId)}`;
    if (finish?.[i] === true) {
      service.close(id);
      return { obs: { obs: '', reward: 0 }, done: true, valid: true };
    }
    if (!service.has(id)) service.reset({ ...questions[i], episode_id: id });
    const r: StepPayload = await service.step(id, { raw: actions[i] as string }, searchR1 ? parsePrediction : undefined);
    if (r.done) service.close(id);
    const obs = r.observation as unknown as { text: string; valid: boolean; documents?: { id: string; title: string; text: string }[]; must_answer?: boolean };
    let text: string;
    if (r.done) text = '';
    else if (!searchR1) text = `\n<information>${obs.text}</information>\n`;
    else if (obs.documents) text = informationBlock(obs.documents.map((d) => ({ passageId: d.id, title: d.title, text: d.text })));
    else if (refusedSearch(r)) text = BUDGET_FEEDBACK;
    else text = obs.must_answer ? `${INVALID_FEEDBACK}${FORCED_NOTE}\n` : INVALID_FEEDBACK;
    return { obs: { obs: text, reward: r.reward ?? 0 }, done: r.done, valid: obs.valid };
  };
  const results: Awaited<ReturnType<typeof one>>[] = [];
  for (let start = 0; start < ids.length; start += SLICE) {
    if (start > 0) await yieldToLoop();
    results.push(...(await Promise.all(ids.slice(start, start + SLICE).map((rawId, j) => one(rawId as string | number, start + j)))));
  }
  return { observations: results.map((r) => r.obs), dones: results.map((r) => r.done), valids: results.map((r) => r.valid) };
}

function wsError(ws: WebSocket, message: string, code: string, extra: Record<string, unknown> = {}): void {
  ws.send(JSON.stringify({ type: 'error', data: { message, code, ...extra } }));
}

function attachWebSocket(server: Server, service: EnvService, opts: EnvServerOptions): WebSocketServer {
  const wss = new WebSocketServer({ noServer: true, maxPayload: opts.maxBodyBytes ?? 4 << 20 });
  const max = opts.maxWsSessions ?? 256;
  let active = 0;
  server.on('upgrade', (req, socket, head) => {
    const auth = authorise(req, opts.token);
    const known = auth.path === '/ws' || auth.path === '/mcp';
    if (!known || !auth.ok) {
      socket.write(`HTTP/1.1 ${!known ? '404 Not Found' : '401 Unauthorized'}\r\nConnection: close\r\n\r\n`);
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });
  wss.on('connection', (ws: WebSocket, req: IncomingMessage) => {
    // /mcp: OpenEnv's MCP WebSocket (JSON-RPC frames, mcp.ts); it holds a session as /ws does.
    const mcp = authorise(req, opts.token).path === '/mcp';
    if (active >= max) {
      // OpenEnv's websocket_endpoint: the SessionCapacityError fields, then a normal close.
      if (mcp) ws.send(JSON.stringify(mcpCapacityError(active, max)));
      else wsError(ws, `the server holds ${active} sessions, its limit (raise serve-env --max-sessions)`, 'CAPACITY_REACHED', { active_sessions: active, max_sessions: max });
      ws.close(1000);
      return;
    }
    active++;
    if (mcp) {
      ws.on('close', () => active--);
      return serveMcpSocket(ws, service, opts.name);
    }
    let session: string | undefined;
    // Messages of one connection run in order: a step must not overtake the reset before it.
    let queue = Promise.resolve();
    ws.on('message', (raw) => {
      queue = queue.then(async () => {
        let msg: { type?: unknown; data?: unknown };
        try {
          msg = JSON.parse(raw.toString());
        } catch {
          return wsError(ws, 'the message is not valid JSON', 'INVALID_JSON');
        }
        const data = (msg.data && typeof msg.data === 'object' ? msg.data : {}) as Record<string, unknown>;
        try {
          if (msg.type === 'reset') {
            if (session) service.close(session);
            const { id, result } = service.reset(data);
            session = id;
            ws.send(JSON.stringify({ type: 'observation', data: result }));
          } else if (msg.type === 'step') {
            // OpenEnv's step message carries the action itself as data; {action: …} is accepted too.
            const action = data['action'] !== undefined ? data['action'] : data;
            // MCP tool discovery needs no episode.
            if ((action as Record<string, unknown>)?.['type'] === 'list_tools') return ws.send(JSON.stringify({ type: 'observation', data: service.listTools() }));
            if (!session) return wsError(ws, 'send a reset before the first step', 'SESSION_ERROR');
            ws.send(JSON.stringify({ type: 'observation', data: await service.step(session, action) }));
          } else if (msg.type === 'state') {
            ws.send(JSON.stringify({ type: 'state', data: session ? service.state(session) : { episode_id: null, step_count: 0 } }));
          } else if (msg.type === 'mcp') {
            // OpenEnv's WSMCPMessage: a JSON-RPC request as data, answered {type: "mcp", data: response} on this connection's episode.
            const connection = {
              session,
              setSession(id: string) {
                if (session && session !== id) service.close(session);
                session = connection.session = id;
              },
            };
            const reply = await handleMcpMessage(service, msg.data, { connection, name: opts.name });
            if (reply) ws.send(JSON.stringify({ type: 'mcp', data: reply }));
          } else if (msg.type === 'close') {
            ws.close(1000);
          } else {
            wsError(ws, `unknown message type ${JSON.stringify(msg.type)}; use reset, step, state, mcp or close`, 'UNKNOWN_TYPE');
          }
        } catch (e) {
          const status = e instanceof HttpError ? e.status : 500;
          const code = status === 404 ? 'SESSION_ERROR' : status < 500 ? 'VALIDATION_ERROR' : 'EXECUTION_ERROR';
          wsError(ws, e instanceof Error ? e.message : String(e), code);
        }
      });
    });
    ws.on('close', () => {
      active--;
      if (session) service.close(session);
    });
  });
  return wss;
}

/**
 * An HTTP server (not yet listening) speaking OpenEnv (HTTP, the `/ws` WebSocket, MCP JSON-RPC on
 * `POST /mcp` and the `/mcp` WebSocket, `GET /openapi.json`) and verl-tool's
 * `/get_observation` over `service`. Closing it closes the WebSocket server too.
 */
export function createEnvServer(service: EnvService, opts: EnvServerOptions = {}): EnvServer {
  const maxBody = opts.maxBodyBytes ?? 4 << 20;
  const server = createServer(async (req, res) => {
    const t0 = performance.now();
    const auth = authorise(req, opts.token);
    const path = auth.path;
    try {
      const get = req.method === 'GET';
      const post = req.method === 'POST';
      // Health stays open for load balancers and readiness probes; everything else needs the token.
      if (path === '/health' && get) return sendJson(res, 200, { status: 'healthy' });
      if (!auth.ok) throw new HttpError(401, `missing or wrong token: ${AUTH_HELP}`);
      if (path === '/metadata' && get) return sendJson(res, 200, { name: opts.name ?? 'ragtrail', description: 'agentic retrieval-augmented QA: search, then answer; process rewards per step, the outcome reward at the end', version: '1', protocol: service.opts.protocol.name });
      if (path === '/schema' && get) return sendJson(res, 200, ENV_SCHEMA);
      if (path === '/openapi.json' && get) return sendJson(res, 200, openApiDocument({ name: opts.name, token: Boolean(opts.token) }));
      if (path === '/state' && get) {
        const id = auth.query.get('episode_id');
        const moved = opts.peers && (await forwardEpisode(opts.peers, id ?? DEFAULT_SESSION, 'GET', id ? `/state?episode_id=${encodeURIComponent(id)}` : '/state'));
        if (moved) return sendJson(res, moved.status, moved.body);
        return sendJson(res, 200, id ? service.state(id) : service.state(DEFAULT_SESSION, true));
      }
      if (!post) throw new HttpError(path === '/reset' || path === '/step' || path === '/get_observation' || path === '/mcp' ? 405 : 404, `no route ${req.method} ${path}; routes: POST /reset, POST /step, GET /state, GET /schema, GET /health, GET /metadata, GET /openapi.json, POST /mcp, POST /get_observation, WebSocket /ws and /mcp`);
      if (path === '/mcp') {
        // OpenEnv's production MCP endpoint: every JSON-RPC answer is HTTP 200, a notification 202 with no body.
        const reply = await handleMcpBody(service, await readBody(req, maxBody), { name: opts.name });
        if (!reply) {
          res.writeHead(202);
          return res.end();
        }
        return sendJson(res, 200, reply);
      }
      const body = parseJsonObject(await readBody(req, maxBody), path === '/step' ? '{"action": {...}, "episode_id"?: "..."}' : '');
      if (opts.internal && path === HAS_ROUTE) return sendJson(res, 200, answerHas(service, body));
      if (opts.peers && (path === '/reset' || path === '/step')) {
        // An episode_id of null asks for a fresh one: drawn here, so that it names its process.
        if (path === '/reset' && body['episode_id'] === null) body['episode_id'] = randomUUID();
        const id = typeof body['episode_id'] === 'string' ? body['episode_id'] : DEFAULT_SESSION;
        const moved = await forwardEpisode(opts.peers, id, 'POST', path, body);
        if (moved) {
          if (moved.status === 413) res.setHeader('connection', 'close');
          return sendJson(res, moved.status, moved.body);
        }
      }
      if (path === '/reset') {
        const { result } = service.reset({ episode_id: DEFAULT_SESSION, ...body });
        return sendJson(res, 200, result);
      }
      if (path === '/step') {
        if (body['action'] === undefined) throw new HttpError(422, 'the body needs "action"');
        const id = typeof body['episode_id'] === 'string' ? body['episode_id'] : DEFAULT_SESSION;
        return sendJson(res, 200, await service.step(id, body['action']));
      }
      if (path === '/get_observation') return sendJson(res, 200, await getObservation(service, body, opts));
      throw new HttpError(404, `no route POST ${path}`);
    } catch (e) {
      const status = e instanceof HttpError ? e.status : 500;
      if (status === 413) res.setHeader('connection', 'close');
      // OpenEnv answers FastAPI's {"detail": …}; ragtrail's clients read "error". Both are sent.
      const message = e instanceof Error ? e.message : String(e);
      sendJson(res, status, { error: message, detail: message });
    } finally {
      opts.onRequest?.({ method: req.method ?? '', path, status: res.statusCode, ms: performance.now() - t0 });
    }
  });
  const wss = attachWebSocket(server, service, opts);
  server.on('close', () => wss.close());
  return Object.assign(server, { websockets: () => wss.clients });
}

/**
 * Serves `service` on a free loopback port behind a fresh token while `f` runs (a trainer's rollouts
 * against it), then closes the server.
 */
export async function withLoopbackEnvServer<T>(service: EnvService, f: (env: { url: string; token: string }) => Promise<T>): Promise<T> {
  const token = randomBytes(12).toString('hex');
  const server = createEnvServer(service, { token });
  const port = await listen(server, 0, '127.0.0.1');
  try {
    return await f({ url: `http://127.0.0.1:${port}`, token });
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
}
