/**
 * `GET /openapi.json` of `ragtrail serve-env`: an OpenAPI 3.1 description of its HTTP routes. OpenEnv's
 * FastAPI servers publish one, and `openenv validate --url` reads two things from it: `info.version` (a
 * "1." version is the `openenv-http/1.x` profile) and `paths`, whose /reset, /step and /state mark a
 * simulation-mode server (all three present) — serve-env is one, and its MCP surface (/mcp) is there too.
 */
import { ENV_SCHEMA } from './env-service.js';

const json = (schema: Record<string, unknown>) => ({ 'application/json': { schema } });
const ok = (description: string, schema: Record<string, unknown> = { type: 'object' }) => ({ '200': { description, content: json(schema) } });
const errors = {
  '401': { description: 'missing or wrong token (serve-env --token)', content: json({ $ref: '#/components/schemas/Error' }) },
  '413': { description: 'over a size limit (the message names the flag)', content: json({ $ref: '#/components/schemas/Error' }) },
  '422': { description: 'a request the environment cannot take (bad action, unknown question)', content: json({ $ref: '#/components/schemas/Error' }) },
};

/** OpenEnv's `StepResponse`: exactly observation, reward, done. */
const STEP_RESPONSE = {
  type: 'object',
  required: ['observation', 'reward', 'done'],
  properties: {
    observation: { $ref: '#/components/schemas/Observation' },
    reward: { type: ['number', 'null'] },
    done: { type: 'boolean' },
  },
};

/**
 * The OpenAPI document; `name` is the server's (GET /metadata), `token` whether a token guards every
 * route but /health (then declared as a bearer scheme; `?token=` and the `/t/TOKEN/` prefix work too).
 */
export function openApiDocument(opts: { name?: string; token?: boolean } = {}): Record<string, unknown> {
  const security = opts.token ? [{ bearer: [] }] : undefined;
  const op = (o: Record<string, unknown>) => ({ ...o, ...(security ? { security } : {}) });
  return {
    openapi: '3.1.0',
    info: {
      title: `${opts.name ?? 'ragtrail'} environment (ragtrail serve-env)`,
      version: '1.0.0',
      description: "Agentic retrieval-augmented QA as an OpenEnv environment (simulation mode: /reset, /step, /state), with OpenEnv's MCP JSON-RPC surface on /mcp and verl-tool's /get_observation. WebSockets (not described by OpenAPI): /ws (OpenEnv's reset/step/state/close/mcp messages) and /mcp (JSON-RPC, one message per frame).",
    },
    paths: {
      '/reset': { post: op({ tags: ['Environment Control'], summary: 'Start an episode', requestBody: { required: false, content: json({ $ref: '#/components/schemas/ResetRequest' }) }, responses: { ...ok('the first observation', STEP_RESPONSE), ...errors } }) },
      '/step': { post: op({ tags: ['Environment Control'], summary: 'Apply an action', requestBody: { required: true, content: json({ $ref: '#/components/schemas/StepRequest' }) }, responses: { ...ok('the observation, its reward, whether the episode ended', STEP_RESPONSE), ...errors, '404': { description: 'no such episode', content: json({ $ref: '#/components/schemas/Error' }) } } }) },
      '/state': { get: op({ tags: ['State Management'], summary: "An episode's state", parameters: [{ name: 'episode_id', in: 'query', required: false, schema: { type: 'string' } }], responses: ok('the state', { $ref: '#/components/schemas/State' }) }) },
      '/schema': { get: op({ tags: ['Schema'], summary: 'JSON schemas of action, observation and state', responses: ok('the schemas', { type: 'object', required: ['action', 'observation', 'state'], properties: { action: { type: 'object' }, observation: { type: 'object' }, state: { type: 'object' } } }) }) },
      '/metadata': { get: op({ tags: ['Environment Info'], summary: "The environment's name and description", responses: ok('name, description, version', { type: 'object', required: ['name', 'description'], properties: { name: { type: 'string' }, description: { type: 'string' }, version: { type: 'string' } } }) }) },
      '/health': { get: { tags: ['Health'], summary: 'Liveness (no token needed)', responses: ok('healthy', { type: 'object', properties: { status: { const: 'healthy' } } }) } },
      '/mcp': { post: op({ tags: ['MCP'], summary: 'MCP JSON-RPC 2.0: initialize, ping, tools/list, tools/call, openenv/session/create, openenv/session/close', requestBody: { required: true, content: json({ $ref: '#/components/schemas/JsonRpcRequest' }) }, responses: { ...ok('a JSON-RPC response (errors included)', { $ref: '#/components/schemas/JsonRpcResponse' }), '202': { description: 'a notification, accepted without a reply' } } }) },
      '/get_observation': { post: op({ tags: ['verl-tool'], summary: "verl-tool's tool server: one batch of trajectories' actions", requestBody: { required: true, content: json({ type: 'object', required: ['trajectory_ids', 'actions'], properties: { trajectory_ids: { type: 'array', items: { type: ['string', 'integer'] } }, actions: { type: 'array', items: { type: 'string' } }, finish: { type: 'array', items: { type: 'boolean' } }, is_last_step: { type: 'array', items: { type: 'boolean' } }, extra_fields: { type: 'array', items: { type: 'object' } } } }) }, responses: { ...ok('observations, dones, valids', { type: 'object', properties: { observations: { type: 'array', items: { type: 'object', properties: { obs: { type: 'string' }, reward: { type: 'number' } } } }, dones: { type: 'array', items: { type: 'boolean' } }, valids: { type: 'array', items: { type: 'boolean' } } } }), ...errors } }) },
    },
    components: {
      schemas: {
        ResetRequest: { type: 'object', properties: { seed: { type: 'integer', minimum: 0 }, episode_id: { type: 'string' }, question_id: { type: 'string' }, question: { type: 'string' }, index: { type: 'integer', minimum: 0 } } },
        StepRequest: { type: 'object', required: ['action'], properties: { action: ENV_SCHEMA.action, episode_id: { type: 'string' } } },
        Observation: { ...ENV_SCHEMA.observation, properties: { ...ENV_SCHEMA.observation.properties, metadata: { type: 'object', description: 'step_reward; on the last step outcome_reward, components, em, f1, prediction, retrieval_count' } } },
        State: ENV_SCHEMA.state,
        JsonRpcRequest: { type: 'object', required: ['jsonrpc', 'method'], properties: { jsonrpc: { const: '2.0' }, method: { type: 'string' }, params: { type: 'object' }, id: { type: ['string', 'integer', 'null'] } } },
        JsonRpcResponse: { type: 'object', required: ['jsonrpc', 'id'], properties: { jsonrpc: { const: '2.0' }, id: { type: ['string', 'integer', 'null'] }, result: {}, error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} } } } },
        Error: { type: 'object', properties: { error: { type: 'string' }, detail: { type: 'string' } } },
      },
      ...(opts.token ? { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } } : {}),
    },
  };
}
