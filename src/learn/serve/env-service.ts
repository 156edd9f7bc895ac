/**
 * The environment as a session service, independent of transport: `reset` starts an episode on a
 * question, `step` applies an action and returns the observation with its reward, `state` describes
 * a session. Rewards follow the process/outcome split the trainers expect: each non-final step
 * carries its process reward (the PRM's score of the step, 0 without a PRM), the step that ends the
 * episode carries the outcome reward (a reward scheme over the finished trajectory).
 *
 * Actions come typed as tools — {tool: "search", query}, {tool: "answer", text}, {tool: "extract",
 * evidence}, OpenEnv's MCP actions {type: "call_tool", tool_name, arguments} and {type: "list_tools"}
 * — or as a protocol's raw text ({raw}), which the protocol parses (a malformed text is a format
 * failure, recorded in the step and answered with feedback, never an error). An action that is not
 * any of these is refused with 422, as OpenEnv's `step_handler` refuses what fails validation.
 *
 * Step payloads have exactly OpenEnv's `StepResponse` fields {observation, reward, done}; outcome
 * details (em, f1, prediction, the step's own process reward) travel in `observation.metadata`,
 * where OpenEnv's clients (`MCPToolClient._parse_result`, typed `EnvClient`s) read them.
 *
 * Memory is bounded by design: sessions at most `maxSessions` (the least recently used is closed
 * beyond it), each at most maxTurns + 2 steps of at most `maxActionChars` characters and topK
 * documents; sessions idle longer than `idleMs` are closed by a timer, not only at the next reset.
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { HttpError } from '../../core/http-server.js';
import { Rng } from '../../core/rng.js';
import type { Question } from '../../core/types.js';
import type { Action, Message, Trajectory } from '../../core/trajectory.js';
import { formatDocs } from '../../agents/protocol.js';
import type { Protocol } from '../../agents/protocol.js';
import type { RagEnv, State } from '../../env/env.js';
import { toTrajectory } from '../../env/trajectory.js';
import type { Policy } from '../../agents/policy.js';

/**
 * The outcome reward of a finished episode. The service takes any scorer rather than a reward scheme,
 * so that tests and users can pass their own: `episodeScorer` in rewards/apply.ts makes one from a scheme.
 */
export type EpisodeScorer = (trajectory: Trajectory) => Promise<{ total: number; components: Record<string, number> }>;

/** The process reward of a step: any PRM (prm/types.ts) has this shape. */
export interface StepScorer {
  /** One score per candidate action in `state`, in the candidates' order. */
  score(state: State, candidates: readonly { action: Action; raw: string }[]): Promise<number[]>;
}

/** What an {@link EnvService} serves: the environment, the protocol that parses raw actions, the questions, and the rewards. */
export interface EnvServiceOptions {
  env: RagEnv;
  protocol: Protocol;
  questions: readonly Question[];
  /** Outcome reward on the final step. */
  outcome: EpisodeScorer;
  /** Process reward of each step (absent: 0). */
  prm?: StepScorer;
  /** Open sessions at most (default 4096); the least recently used idle one is closed beyond it. */
  maxSessions?: number;
  /** Sessions idle longer than this are closed (default 30 min). */
  idleMs?: number;
  /** Appends each finished episode here as a trajectory line (with its rewards), for inspection and scoring. */
  trajectoriesPath?: string;
  /** Characters in one action's text (default 32,768): a longer one is refused with 413. */
  maxActionChars?: number;
  /**
   * Where the turn of a reset that names no question starts (default 0). `serve-env --processes N`
   * starts process k at k·Q/N, so that N processes handing out questions in turn spread them.
   */
  firstTurn?: number;
}

/** OpenEnv's `StepResponse`: exactly `{observation, reward, done}`; details in `observation.metadata`. */
export interface StepPayload {
  observation: Record<string, unknown> & { metadata: Record<string, unknown> };
  reward: number | null;
  done: boolean;
}

export const DEFAULT_MAX_ACTION_CHARS = 32_768;

/** An MCP tool as OpenEnv's `Tool` model has it (extra fields forbidden). */
export interface ToolSpec {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

const TOOL_SPECS: Record<'search' | 'answer' | 'extract', ToolSpec> = {
  search: { name: 'search', description: 'Search the corpus; returns the top passages for the query.', input_schema: { type: 'object', properties: { query: { type: 'string', description: 'keywords to search for' } }, required: ['query'] } },
  answer: { name: 'answer', description: 'Give the final answer and end the episode.', input_schema: { type: 'object', properties: { text: { type: 'string', description: 'the short final answer' } }, required: ['text'] } },
  extract: { name: 'extract', description: 'Note the evidence from the last search that bears on the question ("None" if nothing does).', input_schema: { type: 'object', properties: { evidence: { type: 'string' } }, required: ['evidence'] } },
};

interface Session {
  id: string;
  state: State;
  rewards: number[];
  lastUsed: number;
  outcome?: number;
  t0: number;
}

/** Names the service writes into trajectories: requests come from outside, not from a ragtrail policy. */
function remotePolicy(protocol: Protocol): Policy {
  return { name: 'remote (serve-env client)', kind: 'llm', protocol, propose: async () => [] };
}

/** Said once the budget is spent and only an answer is accepted. */
export const FORCED_NOTE = 'No searches or turns are left: give the final answer now.';

const ACTION_HELP = 'an action is {"tool": "search", "query": "..."}, {"tool": "answer", "text": "..."}, {"tool": "extract", "evidence": "..."} or {"raw": "<the protocol\'s text>"}';

/**
 * The environment as a session service, independent of transport ({@link createEnvServer} puts it on
 * HTTP and WebSocket): sessions by episode id, typed or raw-text actions, the PRM's process reward on
 * each step and the outcome reward on the last. Idle sessions are closed by an unref'd timer that
 * `dispose()` stops.
 */
export class EnvService {
  private readonly sessions = new Map<string, Session>();
  private readonly byId: Map<string, Question>;
  private readonly byText = new Map<string, Question | null>();
  private next = 0;
  private readonly policy: Policy;
  private readonly sweeper: NodeJS.Timeout;
  readonly tools: ToolSpec[];

  constructor(readonly opts: EnvServiceOptions) {
    if (opts.questions.length === 0) throw new Error('serve-env needs at least one question');
    this.next = opts.firstTurn ?? 0;
    this.byId = new Map(opts.questions.map((q) => [q.id, q]));
    // Two questions with the same text cannot be told apart by it (null marks them).
    for (const q of opts.questions) {
      const key = q.question.trim();
      this.byText.set(key, this.byText.has(key) ? null : q);
    }
    this.policy = remotePolicy(opts.protocol);
    const fresh = opts.env.reset(opts.questions[0]!);
    const kinds = new Set([...opts.protocol.allowed(fresh), 'answer']);
    this.tools = (['search', 'extract', 'answer'] as const).filter((k) => kinds.has(k)).map((k) => TOOL_SPECS[k]);
    // Idle sessions go even when no reset comes to sweep them; the timer does not keep the process alive.
    this.sweeper = setInterval(() => this.sweep(), Math.min(this.idleMs, 60_000)).unref();
  }

  private get idleMs(): number {
    return this.opts.idleMs ?? 30 * 60_000;
  }

  /** Stops the idle-session timer and drops every session. */
  dispose(): void {
    clearInterval(this.sweeper);
    this.sessions.clear();
  }

  /**
   * The question a client names, or undefined when it names none: question_id (or id), else the
   * question's exact text (verl-tool's Search-R1 preprocessing puts it in extra_info.question), else index.
   */
  identify(data: Record<string, unknown>): Question | undefined {
    const id = data['question_id'] ?? data['id'];
    if (id !== undefined && id !== null) {
      const q = typeof id === 'string' || typeof id === 'number' ? this.byId.get(String(id)) : undefined;
      if (!q) throw new HttpError(422, `unknown question_id ${JSON.stringify(id)}`);
      return q;
    }
    const text = data['question'];
    if (typeof text === 'string') {
      const q = this.byText.get(text.trim());
      if (q) return q;
      if (q === null) throw new HttpError(422, `the question text ${JSON.stringify(text.slice(0, 80))} belongs to several questions: send question_id`);
      // A text that names no question is refused even beside an index: serving the question at that index
      // would score the model's answer against another question's gold (a dataset served out of step).
      throw new HttpError(422, `no question has the text ${JSON.stringify(text.slice(0, 80))}: serve the dataset the client's questions come from, or send question_id`);
    }
    const index = data['index'];
    if (index !== undefined && index !== null) {
      const n = this.opts.questions.length;
      if (!Number.isInteger(index) || (index as number) < 0 || (index as number) >= n) throw new HttpError(422, `"index" must be a whole number from 0 to ${n - 1} (the served dataset has ${n} questions)`);
      return this.opts.questions[index as number]!;
    }
    return undefined;
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Which question a reset picks: the one the data names (identify), else by seed, else round robin (OpenEnv's reset chooses the task). */
  private pick(data: Record<string, unknown>): Question {
    const named = this.identify(data);
    if (named) return named;
    const qs = this.opts.questions;
    const seed = data['seed'];
    if (seed !== undefined && seed !== null) {
      if (!Number.isInteger(seed) || (seed as number) < 0) throw new HttpError(422, '"seed" must be a non-negative integer');
      return qs[new Rng(seed as number).int(qs.length)]!;
    }
    return qs[this.next++ % qs.length]!;
  }

  private sweep(): void {
    const now = Date.now();
    for (const [id, s] of this.sessions) if (now - s.lastUsed > this.idleMs) this.sessions.delete(id);
    const max = this.opts.maxSessions ?? 4096;
    if (this.sessions.size >= max) {
      const oldest = [...this.sessions.values()].sort((a, b) => a.lastUsed - b.lastUsed)[0];
      if (oldest) this.sessions.delete(oldest.id);
    }
  }

  /**
   * Opens a session (id: `data.episode_id`, else a fresh UUID) on the question `data` names (question_id
   * or id, the question's text, or index), else one drawn by `data.seed`, else the next in turn. First
   * closes idle sessions (and the least recently used one when at `maxSessions`). Throws an HTTP 422
   * error on a bad episode_id, seed or question reference.
   */
  reset(data: Record<string, unknown> = {}): { id: string; result: StepPayload } {
    const epId = data['episode_id'];
    if (epId !== undefined && epId !== null && (typeof epId !== 'string' || epId.length === 0 || epId.length > 255)) throw new HttpError(422, '"episode_id" must be a string of 1 to 255 characters');
    const question = this.pick(data);
    this.sweep();
    const id = (epId as string | null | undefined) ?? randomUUID();
    const state = this.opts.env.reset(question);
    this.sessions.set(id, { id, state, rewards: [], lastUsed: Date.now(), t0: performance.now() });
    return {
      id,
      result: {
        observation: { ...this.view(id, state), text: `Question: ${question.question}`, metadata: {} },
        reward: null,
        done: false,
      },
    };
  }

  private session(id: string): Session {
    const s = this.sessions.get(id);
    if (!s) throw new HttpError(404, `no episode ${JSON.stringify(id)}: call reset first (sessions close when finished or idle)`);
    s.lastUsed = Date.now();
    return s;
  }

  /** The observation fields every step shares. */
  private view(id: string, state: State): Record<string, unknown> {
    const prompt: Message[] = state.done ? [] : this.opts.protocol.render(state, { forced: state.mustAnswer });
    return {
      episode_id: id,
      question: state.question.question,
      question_id: state.question.id,
      step_count: state.steps.length,
      must_answer: state.mustAnswer,
      searches_left: state.searchesLeft,
      turns_left: state.turnsLeft,
      prompt,
      // What a trainer generating in the protocol's text needs (python/ragtrail_trl/rollout.py).
      protocol: this.opts.protocol.name,
      generation: { stop: this.opts.protocol.defaults.stop ?? [], max_tokens: this.opts.protocol.defaults.maxTokens },
    };
  }

  /**
   * Reads an action in any accepted form (`{tool, …}`, MCP `{tool_name, arguments}`, or `{raw}` parsed
   * by
   * the protocol or by `parseRaw`). Typed actions get the protocol's text for the trace; raw text that
   * does
   * not parse is an `invalid` action with its `formatError`. Throws an HTTP 422 error for an unknown
   * form
   * and 413 for text longer than `maxActionChars`.
   */
  parseAction(raw: unknown, state: State, parseRaw?: (text: string) => Action): { action: Action; raw: string; formatError?: string } {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new HttpError(422, ACTION_HELP);
    const a = raw as Record<string, unknown>;
    const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
    // OpenEnv's MCP form {type: "call_tool", tool_name, arguments} maps onto the same tools.
    const tool = str(a['tool']) ?? str(a['tool_name']) ?? str(a['name']);
    const args = (a['arguments'] && typeof a['arguments'] === 'object' ? a['arguments'] : a) as Record<string, unknown>;
    const limit = this.opts.maxActionChars ?? DEFAULT_MAX_ACTION_CHARS;
    for (const v of [a['raw'], args['query'], args['text'], args['answer'], args['evidence']]) {
      if (typeof v === 'string' && v.length > limit) throw new HttpError(413, `the action's text has ${v.length} characters; the limit is ${limit} (raise serve-env --max-action-chars)`);
    }
    if (typeof a['raw'] === 'string') {
      const action = (parseRaw ?? ((t: string) => this.opts.protocol.parse(t, state)))(a['raw']);
      return { action, raw: a['raw'], formatError: action.type === 'invalid' ? action.reason : undefined };
    }
    if (tool === 'search') {
      const query = str(args['query']);
      if (query === undefined) throw new HttpError(422, 'search needs "query" (a string)');
      return { action: { type: 'search', query }, raw: this.opts.protocol.format({ type: 'search', query }, state) };
    }
    if (tool === 'answer') {
      const text = str(args['text']) ?? str(args['answer']);
      if (text === undefined) throw new HttpError(422, 'answer needs "text" (a string)');
      return { action: { type: 'answer', answer: text }, raw: this.opts.protocol.format({ type: 'answer', answer: text }, state) };
    }
    if (tool === 'extract' || tool === 'evidence') {
      const evidence = str(args['evidence']) ?? str(args['text']);
      if (evidence === undefined) throw new HttpError(422, 'extract needs "evidence" (a string)');
      return { action: { type: 'extract', evidence }, raw: this.opts.protocol.format({ type: 'extract', evidence }, state) };
    }
    throw new HttpError(422, tool ? `unknown tool ${JSON.stringify(tool)}; ${ACTION_HELP}` : ACTION_HELP);
  }

  /** OpenEnv's `ListToolsObservation`: answered without a reset, as MCP tool discovery is. */
  listTools(): StepPayload {
    return { observation: { tools: this.tools, metadata: {} }, reward: null, done: false };
  }

  /**
   * A step from any action form. MCP `call_tool` steps answer as OpenEnv's `CallToolObservation`
   * ({tool_name, result, error}); a call MCPToolClient cannot make usable (unknown tool, bad
   * arguments) is an observation with `error` ({error_type, message}, OpenEnv's `ToolError`), not
   * an HTTP error, since `MCPToolClient.call_tool` reads errors there.
   */
  async step(id: string, rawAction: unknown, parseRaw?: (text: string) => Action): Promise<StepPayload> {
    const a = rawAction && typeof rawAction === 'object' && !Array.isArray(rawAction) ? (rawAction as Record<string, unknown>) : undefined;
    if (a?.['type'] === 'list_tools') return this.listTools();
    if (a?.['type'] === 'call_tool') {
      const toolName = typeof a['tool_name'] === 'string' ? a['tool_name'] : '';
      const s = this.session(id);
      const toolError = (error_type: string, message: string): StepPayload => ({
        observation: { ...this.view(id, s.state), tool_name: toolName, result: null, error: { error_type, message }, metadata: {} },
        reward: 0,
        done: s.state.done,
      });
      if (!this.tools.some((t) => t.name === toolName)) return toolError('tool_not_found', `no tool ${JSON.stringify(toolName)}; tools: ${this.tools.map((t) => t.name).join(', ')}`);
      if (a['arguments'] !== undefined && (typeof a['arguments'] !== 'object' || a['arguments'] === null || Array.isArray(a['arguments']))) return toolError('invalid_args', '"arguments" must be an object');
      if (s.state.done) return toolError('execution_error', `episode ${id} has ended: reset to start another`);
      let payload: StepPayload;
      try {
        payload = await this.stepAction(id, rawAction, parseRaw);
      } catch (e) {
        if (e instanceof HttpError && e.status === 422) return toolError('invalid_args', e.message);
        throw e;
      }
      return { ...payload, observation: { ...payload.observation, tool_name: toolName, result: payload.observation['text'], error: null } };
    }
    return this.stepAction(id, rawAction, parseRaw);
  }

  private async stepAction(id: string, rawAction: unknown, parseRaw?: (text: string) => Action): Promise<StepPayload> {
    const s = this.session(id);
    if (s.state.done) throw new HttpError(409, `episode ${id} has ended: reset to start another`);
    const before = s.state;
    const { action, raw, formatError } = this.parseAction(rawAction, before, parseRaw);
    const move = { action, raw, ...(formatError ? { formatError } : {}), ...(before.mustAnswer ? { forced: true } : {}) };
    const { state } = await this.opts.env.step(before, move);
    s.state = state;
    const step = state.steps[state.steps.length - 1]!;
    // Out of steps without an answer, or the client's last step ({"final": true}: a trainer whose
    // token budget ran out): the episode ends here, scored as it stands.
    const overLimit = !state.done && state.steps.length >= this.opts.env.config.maxTurns + 2;
    const final = (rawAction as Record<string, unknown>)['final'] === true;
    const done = state.done || overLimit || final;
    const stepReward = this.opts.prm && action.type !== 'invalid' ? (await this.opts.prm.score(before, [{ action, raw }]))[0]! : 0;
    const metadata: Record<string, unknown> = { step_reward: stepReward, action: step.action };
    let text: string;
    if (step.action.type === 'search') text = formatDocs(step.docs ?? []);
    else if (step.action.type === 'answer') text = 'Final answer recorded.';
    else if (step.action.type === 'extract') text = 'Evidence noted.';
    else text = `That step could not be used (${step.action.reason}).`;
    if (!done && state.mustAnswer) text += `\n${FORCED_NOTE}`;
    let reward = stepReward;
    if (done) {
      const trajectory = toTrajectory(state, this.policy, performance.now() - s.t0, 'serve-env');
      const r = await this.opts.outcome(trajectory);
      reward = r.total;
      s.outcome = r.total;
      Object.assign(metadata, { outcome_reward: r.total, components: r.components, prediction: trajectory.prediction, em: trajectory.metrics?.em ?? 0, f1: trajectory.metrics?.f1 ?? 0, retrieval_count: trajectory.retrievalCount });
      if (this.opts.trajectoriesPath) {
        const stepRewards = [...s.rewards, stepReward];
        appendFileSync(this.opts.trajectoriesPath, JSON.stringify({ ...trajectory, meta: { ...trajectory.meta, episodeId: id, stepRewards, outcomeReward: r.total, components: r.components } }) + '\n');
      }
      // A finished session stays readable (GET /state) until it idles out or is closed.
    }
    s.rewards.push(reward);
    const documents = step.docs?.map((d) => ({ id: d.passageId, title: d.title, text: d.text, score: d.score }));
    return { observation: { ...this.view(id, state), text, ...(documents ? { documents } : {}), valid: step.action.type !== 'invalid', metadata }, reward, done };
  }

  /**
   * A session's state; `orEmpty` answers a session that does not exist yet with OpenEnv's empty
   * `State` ({episode_id: null, step_count: 0}), as OpenEnv's `/state` answers before any reset.
   */
  state(id: string, orEmpty = false): Record<string, unknown> {
    if (orEmpty && !this.sessions.has(id)) return { episode_id: null, step_count: 0 };
    const s = this.session(id);
    const last = s.state.steps[s.state.steps.length - 1];
    return {
      episode_id: id,
      step_count: s.state.steps.length,
      question_id: s.state.question.id,
      done: s.state.done,
      must_answer: s.state.mustAnswer,
      searches_left: s.state.searchesLeft,
      turns_left: s.state.turnsLeft,
      rewards: s.rewards,
      total_reward: s.rewards.reduce((a, b) => a + b, 0),
      prediction: last?.action.type === 'answer' ? last.action.answer : null,
    };
  }

  /** Whether a session with this episode id is open. */
  has(id: string): boolean {
    return this.sessions.has(id);
  }

  /** Ends the session `id` without scoring it (a no-op when none is open). */
  close(id: string): void {
    this.sessions.delete(id);
  }
}

/** JSON schemas of the action, observation and state (GET /schema). */
export const ENV_SCHEMA = {
  action: {
    title: 'RagtrailAction',
    oneOf: [
      { type: 'object', properties: { tool: { const: 'search' }, query: { type: 'string' } }, required: ['tool', 'query'] },
      { type: 'object', properties: { tool: { const: 'answer' }, text: { type: 'string' } }, required: ['tool', 'text'] },
      { type: 'object', properties: { tool: { const: 'extract' }, evidence: { type: 'string' } }, required: ['tool', 'evidence'] },
      { type: 'object', properties: { raw: { type: 'string', description: "the agent protocol's text, parsed by the server" }, final: { type: 'boolean', description: 'end the episode after this step, scored as it stands (a trainer out of tokens)' } }, required: ['raw'] },
    ],
  },
  observation: {
    title: 'RagtrailObservation',
    type: 'object',
    properties: {
      text: { type: 'string', description: 'the question (reset), the retrieved documents (search) or feedback' },
      episode_id: { type: 'string' },
      question: { type: 'string' },
      question_id: { type: 'string' },
      step_count: { type: 'integer' },
      must_answer: { type: 'boolean' },
      searches_left: { type: 'integer' },
      turns_left: { type: 'integer' },
      prompt: { type: 'array', description: "the protocol's next prompt as chat messages", items: { type: 'object' } },
      protocol: { type: 'string', description: 'the agent protocol that renders the prompts and parses raw actions' },
      generation: { type: 'object', description: "the protocol's stop strings and token budget per turn", properties: { stop: { type: 'array', items: { type: 'string' } }, max_tokens: { type: 'integer' } } },
      valid: { type: 'boolean', description: 'false when the step was a format failure' },
    },
  },
  state: {
    title: 'RagtrailState',
    type: 'object',
    properties: {
      episode_id: { type: 'string' },
      step_count: { type: 'integer' },
      question_id: { type: 'string' },
      done: { type: 'boolean' },
      rewards: { type: 'array', items: { type: 'number' } },
      total_reward: { type: 'number' },
      prediction: { type: ['string', 'null'] },
    },
  },
} as const;
