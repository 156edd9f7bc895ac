/**
 * `ragtrail serve-env`: the environment service over the two protocols Python RL trainers speak.
 *
 * OpenEnv (TRL, SkyRL, ART): POST /reset {seed?, episode_id?, question_id?, index?} → {observation,
 * reward, done}; POST /step {action, episode_id?} → {observation, reward, done, metadata}; GET /state
 * [?episode_id=]; GET /schema; GET /health; GET /metadata; and the WebSocket /ws, one session per
 * connection: {type: "reset"|"step"|"state"|"close", data} → {type: "observation"|"state"|"error", data}.
 * HTTP calls without an episode_id share one default session, as OpenEnv's simple servers do.
 *
 * verl-tool (LWS's stack): POST /get_observation {trajectory_ids, actions, finish?, is_last_step?,
 * extra_fields?} → {observations: [{obs, reward}], dones, valids}. Actions are the model's raw text in
 * the agent protocol; a trajectory's session opens at its first action (its question from
 * extra_fields[i].question_id or .index) and closes at `finish` or the end of the episode.
 *
 * Loopback by default; an optional bearer token (all routes but /health); bad requests get 4xx with a message.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import { HttpError, parseJsonObject, readBody, sendJson } from '../core/http-server.js';
import { ENV_SCHEMA, type EnvService, type StepPayload } from './env-service.js';

export interface EnvServerOptions {
  token?: string;
  maxBodyBytes?: number;
  /** WebSocket sessions at once (OpenEnv's max_concurrent_envs; default 256). */
  maxWsSessions?: number;
  name?: string;
  onRequest?: (info: { method: string; path: string; status: number; ms: number }) => void;
}

const DEFAULT_SESSION = 'default';

function authorised(req: IncomingMessage, token?: string): boolean {
  return !token || req.headers.authorization === `Bearer ${token}`;
}

/** verl-tool: one batch of actions from many trajectories. */
async function getObservation(service: EnvService, body: Record<string, unknown>): Promise<{ observations: unknown[]; dones: boolean[]; valids: boolean[] }> {
  const ids = body['trajectory_ids'];
  const actions = body['actions'];
  if (!Array.isArray(ids) || !ids.every((x) => typeof x === 'string' || typeof x === 'number')) throw new HttpError(400, '"trajectory_ids" must be a list of strings');
  if (!Array.isArray(actions) || actions.length !== ids.length || !actions.every((x) => typeof x === 'string')) throw new HttpError(400, '"actions" must be a list of strings, one per trajectory id');
  const list = (key: string): unknown[] | undefined => {
    const v = body[key];
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || v.length !== ids.length) throw new HttpError(400, `"${key}" must be a list with one entry per trajectory id`);
    return v;
  };
  const finish = list('finish');
  const extra = list('extra_fields');
  const results = await Promise.all(
    ids.map(async (rawId, i) => {
      const id = `verl:${String(rawId)}`;
      if (finish?.[i] === true) {
        service.close(id);
        return { obs: { obs: '', reward: 0 }, done: true, valid: true };
      }
      if (!service.has(id)) {
        const fields = (extra?.[i] && typeof extra[i] === 'object' ? extra[i] : {}) as Record<string, unknown>;
        service.reset({ ...pickQuestion(fields), episode_id: id });
      }
      const r: StepPayload = await service.step(id, { raw: actions[i] as string });
      if (r.done) service.close(id);
      const obs = r.observation as { text: string; valid: boolean };
      // The observation text goes back into the model's context, so wrap it the way Search-R1-style prompts expect.
      const text = r.done ? '' : `\n<information>${obs.text}</information>\n`;
      return { obs: { obs: text, reward: r.reward ?? 0 }, done: r.done, valid: obs.valid };
    }),
  );
  return { observations: results.map((r) => r.obs), dones: results.map((r) => r.done), valids: results.map((r) => r.valid) };
}

function pickQuestion(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ['question_id', 'index', 'seed']) if (fields[k] !== undefined) out[k] = fields[k];
  return out;
}

function wsError(ws: WebSocket, message: string, code: string): void {
  ws.send(JSON.stringify({ type: 'error', data: { message, code } }));
}

function attachWebSocket(server: Server, service: EnvService, opts: EnvServerOptions): WebSocketServer {
  const wss = new WebSocketServer({ noServer: true, maxPayload: opts.maxBodyBytes ?? 4 << 20 });
  let active = 0;
  server.on('upgrade', (req, socket, head) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/ws' || !authorised(req, opts.token)) {
      socket.write(`HTTP/1.1 ${path !== '/ws' ? '404 Not Found' : '401 Unauthorized'}\r\nConnection: close\r\n\r\n`);
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  });
  wss.on('connection', (ws: WebSocket) => {
    if (active >= (opts.maxWsSessions ?? 256)) {
      wsError(ws, `the server holds ${active} sessions, its limit`, 'CAPACITY_REACHED');
      ws.close();
      return;
    }
    active++;
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
            if (!session) return wsError(ws, 'send a reset before the first step', 'SESSION_ERROR');
            // OpenEnv's step message carries the action itself as data; {action: …} is accepted too.
            const action = data['action'] !== undefined ? data['action'] : data;
            ws.send(JSON.stringify({ type: 'observation', data: await service.step(session, action) }));
          } else if (msg.type === 'state') {
            if (!session) return wsError(ws, 'no episode yet: send a reset', 'SESSION_ERROR');
            ws.send(JSON.stringify({ type: 'state', data: service.state(session) }));
          } else if (msg.type === 'close') {
            ws.close();
          } else {
            wsError(ws, `unknown message type ${JSON.stringify(msg.type)}; use reset, step, state or close`, 'UNKNOWN_TYPE');
          }
        } catch (e) {
          const code = e instanceof HttpError && e.status < 500 ? 'VALIDATION_ERROR' : 'EXECUTION_ERROR';
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

export function createEnvServer(service: EnvService, opts: EnvServerOptions = {}): Server {
  const maxBody = opts.maxBodyBytes ?? 4 << 20;
  const server = createServer(async (req, res) => {
    const t0 = performance.now();
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname;
    try {
      const get = req.method === 'GET';
      const post = req.method === 'POST';
      // Health stays open for load balancers and readiness probes; everything else needs the token.
      if (path === '/health' && get) return sendJson(res, 200, { status: 'healthy' });
      if (!authorised(req, opts.token)) throw new HttpError(401, 'missing or wrong bearer token');
      if (path === '/metadata' && get) return sendJson(res, 200, { name: opts.name ?? 'ragtrail', description: 'agentic retrieval-augmented QA: search, then answer; process rewards per step, the outcome reward at the end', version: '1' });
      if (path === '/schema' && get) return sendJson(res, 200, ENV_SCHEMA);
      if (path === '/state' && get) return sendJson(res, 200, service.state(url.searchParams.get('episode_id') ?? DEFAULT_SESSION));
      if (!post) throw new HttpError(path === '/reset' || path === '/step' || path === '/get_observation' ? 405 : 404, `no route ${req.method} ${path}; routes: POST /reset, POST /step, GET /state, GET /schema, GET /health, GET /metadata, POST /get_observation, WebSocket /ws`);
      const body = parseJsonObject(await readBody(req, maxBody), path === '/step' ? '{"action": {...}, "episode_id"?: "..."}' : '');
      if (path === '/reset') {
        const { result } = service.reset({ episode_id: DEFAULT_SESSION, ...body });
        return sendJson(res, 200, result);
      }
      if (path === '/step') {
        if (body['action'] === undefined) throw new HttpError(422, 'the body needs "action"');
        const id = typeof body['episode_id'] === 'string' ? body['episode_id'] : DEFAULT_SESSION;
        return sendJson(res, 200, await service.step(id, body['action']));
      }
      if (path === '/get_observation') return sendJson(res, 200, await getObservation(service, body));
      throw new HttpError(404, `no route POST ${path}`);
    } catch (e) {
      const status = e instanceof HttpError ? e.status : 500;
      sendJson(res, status, { error: e instanceof Error ? e.message : String(e) });
    } finally {
      opts.onRequest?.({ method: req.method ?? '', path, status: res.statusCode, ms: performance.now() - t0 });
    }
  });
  const wss = attachWebSocket(server, service, opts);
  server.on('close', () => wss.close());
  return server;
}
