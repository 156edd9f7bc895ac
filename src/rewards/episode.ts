/**
 * Rewards on any text. An episode text is one line of `ragtrail reward --texts FILE`: the model's
 * whole text for the episode (environment insertions included, as verl, TRL and the authors' result
 * files keep it) with the question's gold data. Default-mode schemes read it through ragtrail's
 * parser of the scheme's protocol; compat=authors schemes read the text itself, as the authors' code
 * does. Native trajectories go the other way: their text is rebuilt from the protocol's rendering.
 *
 *   {id, question, golden_answers, response, prompt?, references?, gold_reference_ids?, step?, answer?}
 */
import { RecordError } from '../core/errors.js';
import type { SourceLocation } from '../core/errors.js';
import type { Message, Step, Trajectory } from '../core/trajectory.js';
import type { Question } from '../core/types.js';
import { getProtocol } from '../agents/registry.js';
import type { AgentName } from '../agents/protocol.js';
import { proragSteps, searchR1Steps } from '../agents/transcript.js';
import { toTrajectory } from '../env/trajectory.js';

/**
 * An episode as text, as text-based rewards read it: the question, the gold answers, the model's whole
 * response and, for ARENA, its numbered references and citations.
 */
export interface EpisodeText {
  id: string;
  question: string;
  golden_answers: string[];
  /** The model's whole text for the episode, environment insertions included. */
  response: string;
  /** The prompt the response continues (Search-R1's reward reads prompt + response). */
  prompt?: string;
  /** References as numbered for the model (ARENA). */
  references?: { id: number | string; title?: string; text?: string }[];
  /** Numbers of the references that support the answer (ARENA). */
  gold_reference_ids?: unknown[];
  /** The step count a depth-decayed reward uses (ReasonRAG); default: the number of model turns. */
  step?: number;
  /** One gold string, for code that takes one (ProRAG); default: the first of golden_answers. */
  answer?: string;
}

/** Checks one input line; errors name the line and field. */
export function episodeFromJson(value: unknown, loc: SourceLocation): EpisodeText {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw new RecordError(loc, 'line', 'is not a JSON object');
  const v = value as Record<string, unknown>;
  if (typeof v['id'] !== 'string' && typeof v['id'] !== 'number') throw new RecordError(loc, 'id', 'is missing (a string or number)');
  if (typeof v['response'] !== 'string') throw new RecordError(loc, 'response', "is missing (the model's whole text for the episode)");
  const golds = v['golden_answers'];
  if (!Array.isArray(golds) || !golds.every((g) => typeof g === 'string')) throw new RecordError(loc, 'golden_answers', 'must be a list of strings');
  for (const k of ['prompt', 'question', 'answer'] as const)
    if (v[k] !== undefined && v[k] !== null && typeof v[k] !== 'string') throw new RecordError(loc, k, 'must be a string');
  if (v['step'] !== undefined && v['step'] !== null && !(typeof v['step'] === 'number' && Number.isInteger(v['step']) && v['step'] >= 0))
    throw new RecordError(loc, 'step', 'must be a whole number ≥ 0');
  if (v['references'] !== undefined && v['references'] !== null && !Array.isArray(v['references'])) throw new RecordError(loc, 'references', 'must be a list of {id, title, text}');
  if (v['gold_reference_ids'] !== undefined && v['gold_reference_ids'] !== null && !Array.isArray(v['gold_reference_ids'])) throw new RecordError(loc, 'gold_reference_ids', 'must be a list');
  const opt = <T>(k: string) => (v[k] === null ? undefined : (v[k] as T | undefined));
  return {
    id: String(v['id']),
    question: typeof v['question'] === 'string' ? v['question'] : '',
    golden_answers: golds as string[],
    response: v['response'],
    prompt: opt<string>('prompt'),
    references: opt<EpisodeText['references']>('references'),
    gold_reference_ids: opt<unknown[]>('gold_reference_ids'),
    step: opt<number>('step'),
    answer: opt<string>('answer'),
  };
}

/** An episode text read as a trajectory of `agent`'s protocol (what default-mode rewards score). */
export function episodeTrajectory(ep: EpisodeText, agent: AgentName): Trajectory {
  const question: Question = { id: ep.id, question: ep.question, answers: ep.golden_answers };
  const state = { question, steps: [] as Step[], done: false, mustAnswer: false, turnsLeft: Infinity, searchesLeft: Infinity };
  let steps: Step[];
  if (agent === 'search-r1') steps = searchR1Steps(ep.response, question);
  else if (agent === 'prorag') steps = proragSteps(ep.response, question);
  else if (agent === 'reasonrag') {
    // The terminal reward reads the episode's answer: parse from the last <answer> on, in reasoning mode.
    const at = ep.response.lastIndexOf('<answer>');
    steps = [{ action: getProtocol(agent).parse(at < 0 ? ep.response : ep.response.slice(at), state), raw: ep.response }];
  } else steps = [{ action: getProtocol(agent).parse(ep.response, state), raw: ep.response }];
  return toTrajectory({ ...state, steps, done: true }, { protocol: getProtocol(agent), name: 'text' }, 0, 'text');
}

/** Qwen's ChatML, the template the authors' Search-R1 runs decode prompts with. */
function chatml(messages: readonly Message[]): string {
  return messages.map((m) => `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`).join('') + '<|im_start|>assistant\n';
}

/**
 * A native trajectory's episode text: for multi-turn protocols the model turns with the environment's
 * insertions as the protocol renders them (prompt = the first messages in ChatML), otherwise the final
 * model text.
 */
export function trajectoryEpisode(t: Trajectory, extra: { goldReferenceIds?: number[] } = {}): EpisodeText {
  const base = { id: t.id, question: t.question, golden_answers: t.answers, step: t.steps.length, gold_reference_ids: extra.goldReferenceIds };
  if ((t.agent === 'search-r1' || t.agent === 'prorag') && t.steps.length > 0) {
    const protocol = getProtocol(t.agent);
    const question: Question = { id: t.id, question: t.question, answers: t.answers };
    const messages = protocol.render({ question, steps: t.steps, done: true, mustAnswer: false, turnsLeft: 0, searchesLeft: 0 });
    const first = messages.findIndex((m) => m.role === 'assistant');
    const head = first < 0 ? messages : messages.slice(0, first);
    const tail = first < 0 ? [] : messages.slice(first);
    let response = tail.map((m) => m.content).join('');
    // ProRAG's prompt opens the first <step> itself, so its rollouts' text starts inside it.
    if (t.agent === 'prorag') response = response.replace(/^<step>\n?/, '');
    return { ...base, prompt: chatml(head), response };
  }
  const last = t.steps[t.steps.length - 1];
  return { ...base, response: last?.raw ?? '' };
}
