/**
 * The environment as a session service, independent of transport: `reset` starts an episode on a
 * question, `step` applies an action and returns the observation with its reward, `state` describes
 * a session. Rewards follow the process/outcome split the trainers expect: each non-final step
 * carries its process reward (the PRM's score of the step, 0 without a PRM), the step that ends the
 * episode carries the outcome reward (a reward scheme over the finished trajectory).
 *
 * Actions come typed as tools — {tool: "search", query}, {tool: "answer", text}, {tool: "extract",
 * evidence} — or as a protocol's raw text ({raw}), which the protocol parses (a malformed text is a
 * format failure, recorded in the step and answered with feedback, never an error).
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import { HttpError } from '../core/http-server.js';
import { Rng } from '../core/rng.js';
import type { Question } from '../core/types.js';
import type { Action, Message } from '../core/trajectory.js';
import { formatDocs } from '../agents/protocol.js';
import type { Protocol } from '../agents/protocol.js';
import type { RagEnv, State } from '../env/env.js';
import { toTrajectory } from '../env/trajectory.js';
import type { PRM } from '../prm/types.js';
import { contextFor } from '../rewards/apply.js';
import type { ComposedScheme } from '../rewards/schemes.js';
import type { Embedder } from '../retrieval/embedders/embedder.js';
import type { Policy } from '../agents/policy.js';

export interface EnvServiceOptions {
  env: RagEnv;
  protocol: Protocol;
  questions: readonly Question[];
  /** Outcome reward on the final step. */
  outcome: ComposedScheme;
  /** Process reward of each step (absent: 0). */
  prm?: PRM;
  embedder?: Embedder;
  /** Open sessions at most (default 4096); the least recently used idle one is closed beyond it. */
  maxSessions?: number;
  /** Sessions idle longer than this are closed (default 30 min). */
  idleMs?: number;
  /** Appends each finished episode here as a trajectory line (with its rewards), for inspection and scoring. */
  trajectoriesPath?: string;
}

/** OpenEnv's step result: `{observation, reward, done, metadata}`. */
export interface StepPayload {
  observation: Record<string, unknown>;
  reward: number | null;
  done: boolean;
  metadata?: Record<string, unknown>;
}

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

const ACTION_HELP = 'an action is {"tool": "search", "query": "..."}, {"tool": "answer", "text": "..."}, {"tool": "extract", "evidence": "..."} or {"raw": "<the protocol\'s text>"}';

export class EnvService {
  private readonly sessions = new Map<string, Session>();
  private readonly byId: Map<string, Question>;
  private next = 0;
  private readonly policy: Policy;

  constructor(readonly opts: EnvServiceOptions) {
    if (opts.questions.length === 0) throw new Error('serve-env needs at least one question');
    this.byId = new Map(opts.questions.map((q) => [q.id, q]));
    this.policy = remotePolicy(opts.protocol);
  }

  get size(): number {
    return this.sessions.size;
  }

  /** Which question a reset picks: question_id, else index (mod n), else seed, else round robin. */
  private pick(data: Record<string, unknown>): Question {
    const qs = this.opts.questions;
    const id = data['question_id'];
    if (id !== undefined) {
      const q = typeof id === 'string' ? this.byId.get(id) : undefined;
      if (!q) throw new HttpError(400, `unknown question_id ${JSON.stringify(id)}`);
      return q;
    }
    const index = data['index'];
    if (index !== undefined) {
      if (!Number.isInteger(index) || (index as number) < 0) throw new HttpError(400, '"index" must be a non-negative integer');
      return qs[(index as number) % qs.length]!;
    }
    const seed = data['seed'];
    if (seed !== undefined && seed !== null) {
      if (!Number.isInteger(seed) || (seed as number) < 0) throw new HttpError(400, '"seed" must be a non-negative integer');
      return qs[new Rng(seed as number).int(qs.length)]!;
    }
    return qs[this.next++ % qs.length]!;
  }

  private sweep(): void {
    const now = Date.now();
    const idle = this.opts.idleMs ?? 30 * 60_000;
    for (const [id, s] of this.sessions) if (now - s.lastUsed > idle) this.sessions.delete(id);
    const max = this.opts.maxSessions ?? 4096;
    if (this.sessions.size >= max) {
      const oldest = [...this.sessions.values()].sort((a, b) => a.lastUsed - b.lastUsed)[0];
      if (oldest) this.sessions.delete(oldest.id);
    }
  }

  reset(data: Record<string, unknown> = {}): { id: string; result: StepPayload } {
    const epId = data['episode_id'];
    if (epId !== undefined && (typeof epId !== 'string' || epId.length === 0 || epId.length > 255)) throw new HttpError(400, '"episode_id" must be a string of 1 to 255 characters');
    const question = this.pick(data);
    this.sweep();
    const id = (epId as string | undefined) ?? randomUUID();
    const state = this.opts.env.reset(question);
    this.sessions.set(id, { id, state, rewards: [], lastUsed: Date.now(), t0: performance.now() });
    return {
      id,
      result: {
        observation: { ...this.view(id, state), text: `Question: ${question.question}` },
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
    };
  }

  parseAction(raw: unknown, state: State): { action: Action; raw: string; formatError?: string } {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new HttpError(400, ACTION_HELP);
    const a = raw as Record<string, unknown>;
    const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
    // OpenEnv's MCP form {type: "call_tool", tool_name, arguments} maps onto the same tools.
    const tool = str(a['tool']) ?? str(a['tool_name']) ?? str(a['name']);
    const args = (a['arguments'] && typeof a['arguments'] === 'object' ? a['arguments'] : a) as Record<string, unknown>;
    if (typeof a['raw'] === 'string') {
      const action = this.opts.protocol.parse(a['raw'], state);
      return { action, raw: a['raw'], formatError: action.type === 'invalid' ? action.reason : undefined };
    }
    if (tool === 'search') {
      const query = str(args['query']);
      if (query === undefined) throw new HttpError(400, 'search needs "query" (a string)');
      return { action: { type: 'search', query }, raw: this.opts.protocol.format({ type: 'search', query }, state) };
    }
    if (tool === 'answer') {
      const text = str(args['text']) ?? str(args['answer']);
      if (text === undefined) throw new HttpError(400, 'answer needs "text" (a string)');
      return { action: { type: 'answer', answer: text }, raw: this.opts.protocol.format({ type: 'answer', answer: text }, state) };
    }
    if (tool === 'extract' || tool === 'evidence') {
      const evidence = str(args['evidence']) ?? str(args['text']);
      if (evidence === undefined) throw new HttpError(400, 'extract needs "evidence" (a string)');
      return { action: { type: 'extract', evidence }, raw: this.opts.protocol.format({ type: 'extract', evidence }, state) };
    }
    throw new HttpError(400, tool ? `unknown tool ${JSON.stringify(tool)}; ${ACTION_HELP}` : ACTION_HELP);
  }

  async step(id: string, rawAction: unknown): Promise<StepPayload> {
    const s = this.session(id);
    if (s.state.done) throw new HttpError(409, `episode ${id} has ended: reset to start another`);
    const before = s.state;
    const { action, raw, formatError } = this.parseAction(rawAction, before);
    const move = { action, raw, ...(formatError ? { formatError } : {}), ...(before.mustAnswer ? { forced: true } : {}) };
    const { state } = await this.opts.env.step(before, move);
    s.state = state;
    const step = state.steps[state.steps.length - 1]!;
    // Out of steps without an answer: the episode ends here, scored as it stands.
    const overLimit = !state.done && state.steps.length >= this.opts.env.config.maxTurns + 2;
    const done = state.done || overLimit;
    const stepReward = this.opts.prm && action.type !== 'invalid' ? (await this.opts.prm.score(before, [{ action, raw }]))[0]! : 0;
    const metadata: Record<string, unknown> = { step_reward: stepReward, action: step.action };
    let text: string;
    if (step.action.type === 'search') text = formatDocs(step.docs ?? []);
    else if (step.action.type === 'answer') text = 'Final answer recorded.';
    else if (step.action.type === 'extract') text = 'Evidence noted.';
    else text = `That step could not be used (${step.action.reason}).`;
    if (!done && state.mustAnswer) text += '\nNo searches or turns are left: give the final answer now.';
    let reward = stepReward;
    if (done) {
      const trajectory = toTrajectory(state, this.policy, performance.now() - s.t0, 'serve-env');
      const r = await this.opts.outcome.compute({ ...contextFor(trajectory, {}), embedder: this.opts.embedder });
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
    return { observation: { ...this.view(id, state), text, valid: step.action.type !== 'invalid' }, reward, done, metadata };
  }

  state(id: string): Record<string, unknown> {
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

  has(id: string): boolean {
    return this.sessions.has(id);
  }

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
      { type: 'object', properties: { raw: { type: 'string', description: "the agent protocol's text, parsed by the server" } }, required: ['raw'] },
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
