/**
 * A PRM served over HTTP. Request shapes:
 *   vllm-pooling   POST {url} {"model", "input": [text, …]}   → {"data": [{"data": [score] | score}, …]}
 *   vllm-classify  POST {url} {"model", "input": [text, …]}   → {"data": [{"probs": [p0, p1]}, …]} (last class)
 *   tei-rerank     POST {url} {"query": state, "texts": [action, …]} → [{"index", "score"}, …]
 * For the first two, each text is the state and the candidate joined by `separator`.
 */
import { RagtrailError } from '../core/errors.js';
import { fetchJson } from '../core/http.js';
import type { State } from '../env/env.js';
import { formatDocs } from '../agents/protocol.js';
import { describeProcess } from '../process/values.js';
import type { Candidate, PRM } from './types.js';

/** The request/reply format of a remote PRM server: vLLM's pooling or classification endpoints, or TEI's rerank. */
export type RemoteShape = 'vllm-pooling' | 'vllm-classify' | 'tei-rerank';
export const REMOTE_SHAPES: readonly RemoteShape[] = ['vllm-pooling', 'vllm-classify', 'tei-rerank'];

/**
 * Settings of a {@link RemotePRM}: the reply shape, the model name sent with vLLM requests, a bearer
 * key,
 * and the text between the state and the step (default "\n\nNext step:\n"; train the served model on
 * the same).
 */
export interface RemoteOptions {
  shape: RemoteShape;
  model?: string;
  apiKey?: string;
  separator?: string;
  /** What the text shows of the state (default `steps`); train the served model on the same. */
  input?: PrmInput;
}

export function stateText(state: State, input: PrmInput = 'steps'): string {
  return `Question: ${state.question.question}\n${input === 'evidence' ? evidenceProcess(state) : describeProcess(state)}`;
}

/**
 * What a text PRM reads of the state: `steps` summarises each step (its query and the titles found,
 * the evidence noted, the answer); `evidence` shows each step's own text and the documents each search
 * returned, so a PRM can check a quote or an answer against what was read (the LLM loop trains on it).
 */
export type PrmInput = 'steps' | 'evidence';
/** The accepted {@link PrmInput} values, for flag and config validation. */
export const PRM_INPUTS: readonly PrmInput[] = ['steps', 'evidence'];

function evidenceProcess(state: State): string {
  if (state.steps.length === 0) return '(no steps yet)';
  return state.steps
    .map((s, i) => {
      const docs = s.action.type === 'search' ? `\nDocuments found:\n${formatDocs(s.docs ?? [])}` : '';
      return `Step ${i + 1}: ${s.raw.trim()}${docs}`;
    })
    .join('\n');
}

const DEFAULT_SEPARATOR = '\n\nNext step:\n';

/** The text a pooling/classify PRM scores for one candidate: the state, a separator, the step (train PRMs on the same). */
export function prmInputText(state: State, raw: string, separator = DEFAULT_SEPARATOR, input: PrmInput = 'steps'): string {
  return `${stateText(state, input)}${separator}${raw}`;
}

/**
 * A PRM served over HTTP: one request per call scores every candidate (vLLM pooling or classify on
 * state + step text, or TEI rerank with the state as query). Transient failures are retried.
 */
export class RemotePRM implements PRM {
  readonly name: string;

  constructor(
    private readonly url: string,
    private readonly opts: RemoteOptions,
  ) {
    this.name = `remote(${opts.shape} ${url})`;
  }

  /**
   * The server's score per candidate: the last value of a pooling output, the last class probability of
   * a
   * classifier, or the rerank score (−Infinity for a candidate the reranker did not return).
   */
  async score(state: State, candidates: readonly Candidate[]): Promise<number[]> {
    if (candidates.length === 0) return [];
    const headers: Record<string, string> = this.opts.apiKey ? { authorization: `Bearer ${this.opts.apiKey}` } : {};
    if (this.opts.shape === 'tei-rerank') {
      const context = stateText(state, this.opts.input);
      const reply = await fetchJson<{ index: number; score: number }[]>(this.url, { body: { query: context, texts: candidates.map((c) => c.raw) }, headers });
      if (!Array.isArray(reply)) throw new RagtrailError(`${this.url}: expected a list of {index, score}`);
      const scores = new Array<number>(candidates.length).fill(-Infinity);
      for (const r of reply) if (typeof r.index === 'number' && r.index < scores.length) scores[r.index] = r.score;
      return scores;
    }
    const reply = await fetchJson<{ data?: { data?: number | number[]; probs?: number[] }[] }>(this.url, {
      body: { model: this.opts.model, input: candidates.map((c) => prmInputText(state, c.raw, this.opts.separator, this.opts.input)) },
      headers,
    });
    if (!Array.isArray(reply.data) || reply.data.length !== candidates.length) throw new RagtrailError(`${this.url}: expected "data" with ${candidates.length} items`);
    return reply.data.map((d) => {
      if (this.opts.shape === 'vllm-classify') return d.probs?.[d.probs.length - 1] ?? 0;
      const v = d.data;
      return Array.isArray(v) ? (v[v.length - 1] ?? 0) : (v ?? 0);
    });
  }
}
