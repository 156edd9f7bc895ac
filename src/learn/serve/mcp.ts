/**
 * OpenEnv's production MCP surface over an {@link EnvService}: JSON-RPC 2.0 on `POST /mcp`, on the `/mcp`
 * WebSocket (one JSON-RPC message per frame) and inside `{type: "mcp", data}` messages on `/ws` — as
 * `openenv.core.env_server.http_server.HTTPEnvServer.mcp_handler` answers them and as `MCPClientBase`
 * (`openenv.core.mcp_client`, production mode) and `openenv validate --url` send them.
 *
 * Methods: `tools/list` and `tools/call` (OpenEnv's two), OpenEnv's session extensions
 * `openenv/session/create` and `openenv/session/close`, and MCP's own `initialize`, `ping` and
 * `notifications/*` (answered with nothing), so a plain MCP client can connect too. Errors use
 * OpenEnv's codes and words: -32700 (not JSON), -32600 (not a request), -32601 (`Method not found: X`),
 * -32602 (`Tool not found: X`, `Unknown session_id: X`, bad arguments), -32603 (the tool failed).
 *
 * Sessions are the service's episodes. `openenv/session/create` resets one (on the question its params
 * name, as `POST /reset` picks) and returns `{session_id, observation}`; `tools/call` with
 * `params.session_id` steps it; a call without one, over HTTP, runs in an episode of its own that ends
 * with the call (OpenEnv runs it on a fresh environment). Over a WebSocket the connection's episode is
 * used, opened at the first call that needs one, as OpenEnv gives each connection its environment.
 */
import { randomUUID } from 'node:crypto';
import type { WebSocket } from 'ws';
import { HttpError } from '../../core/http-server.js';
import type { EnvService, StepPayload } from './env-service.js';

/** JSON-RPC 2.0 error codes, as OpenEnv's `JsonRpcErrorCode`. */
export const JSONRPC_ERRORS = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  SERVER_ERROR: -32000,
} as const;

/** A JSON-RPC 2.0 response: `result` or `error`, never both (OpenEnv's `JsonRpcResponse.model_dump`). */
export type JsonRpcResponse = { jsonrpc: '2.0'; id: string | number | null } & ({ result: unknown } | { error: { code: number; message: string; data?: unknown } });

/** The MCP protocol revisions `initialize` agrees to; a client asking for another gets the newest. */
export const MCP_PROTOCOL_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'] as const;

/** Where a JSON-RPC request arrived: a WebSocket connection owns one episode; plain HTTP owns none. */
export interface McpContext {
  /** The connection's episode id (undefined until one is opened); absent for plain HTTP. */
  connection?: { session?: string; setSession(id: string): void };
  /** Name in `initialize`'s serverInfo (serve-env's --name, default "ragtrail"). */
  name?: string;
}

const success = (id: string | number | null, result: unknown): JsonRpcResponse => ({ jsonrpc: '2.0', id, result });
const failure = (id: string | number | null, code: number, message: string, data?: unknown): JsonRpcResponse => ({ jsonrpc: '2.0', id, error: { code, message, ...(data === undefined ? {} : { data }) } });

/** A JSON-RPC failure raised inside a method, answered as its error object. */
class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

/** The reset fields (question_id or id, question, index, seed) a params object carries, as `POST /reset` reads them. */
function questionFields(params: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ['question_id', 'id', 'question', 'index', 'seed']) if (params[k] !== undefined) out[k] = params[k];
  return out;
}

/** An HttpError from the service as a JSON-RPC error: the client's mistakes are invalid params, the rest internal. */
function rpcFromHttp(e: unknown): RpcError {
  if (e instanceof RpcError) return e;
  if (e instanceof HttpError) return new RpcError(e.status === 422 || e.status === 404 ? JSONRPC_ERRORS.INVALID_PARAMS : JSONRPC_ERRORS.INTERNAL_ERROR, e.message, { status: e.status });
  return new RpcError(JSONRPC_ERRORS.INTERNAL_ERROR, e instanceof Error ? e.message : String(e));
}

/** Opens an episode for `openenv/session/create` (or a connection's first call): the reset payload's observation comes back with its id. */
function createSession(service: EnvService, params: Record<string, unknown>): { session_id: string; observation: StepPayload['observation'] } {
  try {
    const { id, result } = service.reset({ ...questionFields(params), episode_id: `mcp-${randomUUID()}` });
    return { session_id: id, observation: result.observation };
  } catch (e) {
    throw rpcFromHttp(e);
  }
}

/**
 * `tools/call` on episode `id`: the step's text is the MCP content (and `data`, which `MCPToolClient.call_tool`
 * returns); the whole step — observation, reward, done — is `structuredContent`. The service's tool errors
 * (OpenEnv's `ToolError`) become JSON-RPC errors, as OpenEnv's handler turns a failing tool into one.
 */
async function callTool(service: EnvService, id: string, name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  let payload: StepPayload;
  try {
    payload = await service.step(id, { type: 'call_tool', tool_name: name, arguments: args });
  } catch (e) {
    if (e instanceof HttpError && e.status === 404) throw new RpcError(JSONRPC_ERRORS.INVALID_PARAMS, `Unknown session_id: ${id}`);
    throw rpcFromHttp(e);
  }
  const error = payload.observation['error'] as { error_type: string; message: string } | null | undefined;
  if (error) {
    if (error.error_type === 'tool_not_found') throw new RpcError(JSONRPC_ERRORS.INVALID_PARAMS, `Tool not found: ${name}`, { error_type: error.error_type, tools: service.tools.map((t) => t.name) });
    throw new RpcError(error.error_type === 'invalid_args' ? JSONRPC_ERRORS.INVALID_PARAMS : JSONRPC_ERRORS.INTERNAL_ERROR, error.message, { error_type: error.error_type });
  }
  const text = String(payload.observation['result'] ?? '');
  return { content: [{ type: 'text', text }], structuredContent: payload, isError: false, data: text };
}

async function dispatch(service: EnvService, method: string, params: Record<string, unknown>, ctx: McpContext): Promise<unknown> {
  const conn = ctx.connection;
  switch (method) {
    case 'initialize': {
      const asked = params['protocolVersion'];
      const version = (MCP_PROTOCOL_VERSIONS as readonly unknown[]).includes(asked) ? (asked as string) : MCP_PROTOCOL_VERSIONS[MCP_PROTOCOL_VERSIONS.length - 1];
      return {
        protocolVersion: version,
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: ctx.name ?? 'ragtrail', version: '1.0.0' },
        instructions: 'Agentic retrieval-augmented QA: call openenv/session/create to get a question, search as the budget allows, then answer; each tools/call result carries the step (reward, done, metadata) in structuredContent.',
      };
    }
    case 'ping':
      return {};
    case 'tools/list':
      // MCP's Tool shape (inputSchema); OpenEnv's client reads inputSchema or input_schema.
      return { tools: service.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.input_schema })) };
    case 'openenv/session/create': {
      // A connection's live episode is its session (OpenEnv returns the connection's session_id); once it has ended, a new one starts.
      if (conn?.session && service.has(conn.session) && service.state(conn.session)['done'] !== true) return { session_id: conn.session };
      const created = createSession(service, params);
      conn?.setSession(created.session_id);
      return created;
    }
    case 'openenv/session/close': {
      const target = params['session_id'];
      if (typeof target !== 'string' || target === '') throw new RpcError(JSONRPC_ERRORS.INVALID_PARAMS, "Invalid params - 'session_id' is required");
      if (conn?.session === target) throw new RpcError(JSONRPC_ERRORS.INVALID_REQUEST, 'Cannot close active WebSocket-managed session via MCP method');
      if (!service.has(target)) throw new RpcError(JSONRPC_ERRORS.INVALID_PARAMS, `Unknown session_id: ${target}`);
      service.close(target);
      return { session_id: target, closed: true };
    }
    case 'tools/call': {
      const name = params['name'];
      if (typeof name !== 'string' || name === '') throw new RpcError(JSONRPC_ERRORS.INVALID_PARAMS, "Missing 'name' in params");
      const args = params['arguments'] ?? {};
      if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new RpcError(JSONRPC_ERRORS.INVALID_PARAMS, '"arguments" must be an object');
      const requested = params['session_id'];
      if (conn) {
        // The connection's episode takes precedence over params.session_id, as in OpenEnv's handler.
        if (!conn.session || !service.has(conn.session)) conn.setSession(createSession(service, params).session_id);
        return callTool(service, conn.session!, name, args as Record<string, unknown>);
      }
      if (typeof requested === 'string' && requested !== '') {
        if (!service.has(requested)) throw new RpcError(JSONRPC_ERRORS.INVALID_PARAMS, `Unknown session_id: ${requested}`);
        return callTool(service, requested, name, args as Record<string, unknown>);
      }
      // Stateless: an episode of its own on the question params name (else the first), closed after the call.
      const temp = createSession(service, Object.keys(questionFields(params)).length > 0 ? params : { index: 0 }).session_id;
      try {
        return await callTool(service, temp, name, args as Record<string, unknown>);
      } finally {
        service.close(temp);
      }
    }
    default:
      throw new RpcError(JSONRPC_ERRORS.METHOD_NOT_FOUND, `Method not found: ${method}`);
  }
}

/**
 * Answers one JSON-RPC message (already parsed). Returns null for a notification (an id-less
 * `notifications/…` method), which gets no reply; every other message gets a response object, errors
 * included — OpenEnv answers an invalid request (e.g. `{}`) with -32600 and HTTP 200.
 */
export async function handleMcpMessage(service: EnvService, message: unknown, ctx: McpContext = {}): Promise<JsonRpcResponse | null> {
  if (!message || typeof message !== 'object' || Array.isArray(message)) return failure(null, JSONRPC_ERRORS.INVALID_REQUEST, 'Invalid request: a JSON-RPC 2.0 request is an object {"jsonrpc": "2.0", "method", "params"?, "id"?} (batches are not supported)');
  const m = message as Record<string, unknown>;
  const rawId = m['id'];
  const idOk = rawId === undefined || rawId === null || typeof rawId === 'string' || (typeof rawId === 'number' && Number.isInteger(rawId));
  const id = idOk ? ((rawId ?? null) as string | number | null) : null;
  const problems: string[] = [];
  if (m['jsonrpc'] !== '2.0') problems.push('"jsonrpc" must be "2.0"');
  if (typeof m['method'] !== 'string') problems.push('"method" must be a string');
  if (m['params'] !== undefined && (typeof m['params'] !== 'object' || m['params'] === null || Array.isArray(m['params']))) problems.push('"params" must be an object');
  if (!idOk) problems.push('"id" must be a string, an integer or null');
  if (problems.length > 0) return failure(id, JSONRPC_ERRORS.INVALID_REQUEST, `Invalid request: ${problems.join('; ')}`);
  const method = m['method'] as string;
  if (rawId === undefined && method.startsWith('notifications/')) return null;
  try {
    return success(id, await dispatch(service, method, (m['params'] ?? {}) as Record<string, unknown>, ctx));
  } catch (e) {
    const err = rpcFromHttp(e);
    return failure(id, err.code, err.message, err.data);
  }
}

/** Answers a `POST /mcp` body: text that is not JSON is a -32700 response (HTTP 200, as OpenEnv). */
export async function handleMcpBody(service: EnvService, body: string, ctx: McpContext = {}): Promise<JsonRpcResponse | null> {
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    return failure(null, JSONRPC_ERRORS.PARSE_ERROR, 'Parse error');
  }
  return handleMcpMessage(service, message, ctx);
}

/**
 * Serves one `/mcp` WebSocket connection: each text frame a JSON-RPC request, each answer a frame, in
 * order. The connection owns one episode, closed with the connection.
 */
export function serveMcpSocket(ws: WebSocket, service: EnvService, name?: string): void {
  const connection: { session?: string; setSession(id: string): void } = {
    setSession(id) {
      if (connection.session && connection.session !== id) service.close(connection.session);
      connection.session = id;
    },
  };
  let queue = Promise.resolve();
  ws.on('message', (raw) => {
    queue = queue.then(async () => {
      const reply = await handleMcpBody(service, raw.toString(), { connection, name });
      if (reply && ws.readyState === ws.OPEN) ws.send(JSON.stringify(reply));
    });
  });
  ws.on('close', () => {
    if (connection.session) service.close(connection.session);
  });
}

/** The JSON-RPC error a full server sends on a new `/mcp` WebSocket before closing it (OpenEnv's SessionCapacityError answer). */
export function mcpCapacityError(active: number, max: number): JsonRpcResponse {
  return failure(null, JSONRPC_ERRORS.SERVER_ERROR, `the server holds ${active} sessions, its limit (raise serve-env --max-sessions)`, { active_sessions: active, max_sessions: max });
}
