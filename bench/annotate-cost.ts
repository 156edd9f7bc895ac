/**
 * The cost model of a real LLM server for bench/annotate.ts: what a vLLM / SGLang / llama.cpp server
 * would spend on an annotation's requests — prompt tokens prefilled, with and without a prefix cache,
 * and tokens decoded — and how request order and `n` (samples per request) change it.
 *
 * Tokens are counted with a stated proxy, not a model's tokenizer: word pieces, i.e. each run of letters
 * or digits with the space before it, and each other non-space character, is one token; each chat
 * message adds two (a role marker and an end marker), as chat templates do. Real BPE tokenizers give
 * more tokens per word on rare words; the ratios between orders and cache settings are what carry over.
 *
 * Prefix caches modelled (prefill = the prompt tokens not served from the cache):
 *  - "LCP": a request prefills the tokens past its longest common prefix with any earlier prompt
 *    (unbounded, token-exact, every earlier request finished: the most any prefix cache can save; the
 *    total is the size of the prompts' trie, so it does not depend on order);
 *  - "blocks": vLLM's automatic prefix caching — only whole 16-token blocks are reused, and a request
 *    sees the blocks of requests at least `inFlight` places before it in the order sent (a server
 *    prefilling a batch of requests together computes their shared prefix once per request), optionally
 *    with an LRU bound on the cached tokens.
 */
import type { Message } from '../src/core/trajectory.js';
import type { Move, State } from '../src/env/env.js';
import { type Policy, PolicyWrapper, type ProposeOptions } from '../src/agents/policy.js';

/** The word-piece tokenizer proxy of this model (see the header). */
export function wordPieces(text: string): string[] {
  return text.match(/\s*[\p{L}\p{N}]+|\s*[^\s\p{L}\p{N}]/gu) ?? [];
}

/** One request as the server sees it: whose question, the prompt as token ids, samples, tokens decoded in all. */
export interface CostRequest {
  question: number;
  prompt: Uint32Array;
  n: number;
  decoded: number;
}

/** Token text → small integer, shared by every request of a model run. */
export class Vocabulary {
  private readonly ids = new Map<string, number>();
  id(token: string): number {
    let id = this.ids.get(token);
    if (id === undefined) this.ids.set(token, (id = this.ids.size));
    return id;
  }
  /** A chat prompt's token ids: role marker, content pieces, end marker per message. */
  encode(messages: readonly Message[]): Uint32Array {
    const out: number[] = [];
    for (const m of messages) {
      out.push(this.id(`<|${m.role}|>`));
      for (const t of wordPieces(m.content)) out.push(this.id(t));
      out.push(this.id('<|end|>'));
    }
    return Uint32Array.from(out);
  }
}

interface Recorded {
  question: number;
  messages: Message[];
  n: number;
  raws: string[];
}

/**
 * Wraps a policy and records, in the order they are asked for, the chat requests an LLM policy with the
 * same protocol would send (its rendered prompt, `n`, and the text of each sample). The inner promise is
 * returned as is — no extra await — so that the search runs exactly as it does unwrapped.
 */
export class RequestRecorder extends PolicyWrapper {
  readonly recorded: Recorded[] = [];
  constructor(
    inner: Policy,
    private readonly questionIndex: ReadonlyMap<string, number>,
  ) {
    super(inner);
  }
  override propose(state: State, opts?: ProposeOptions): Promise<Move[]> {
    const p = this.inner.protocol;
    const moves = this.inner.propose(state, opts);
    // An LLM policy makes no request for the protocol's fixed step (policy.ts).
    if (!(!state.mustAnswer && p.fixedAction?.(state))) {
      const r: Recorded = { question: this.questionIndex.get(state.question.id)!, messages: p.render(state, { forced: state.mustAnswer }), n: opts?.n ?? 1, raws: [] };
      this.recorded.push(r);
      void moves.then((ms) => (r.raws = ms.map((m) => m.raw)), () => {});
    }
    return moves;
  }

  /** The recorded requests as token ids. */
  requests(vocab: Vocabulary): CostRequest[] {
    return this.recorded.map((r) => ({ question: r.question, prompt: vocab.encode(r.messages), n: r.n, decoded: r.raws.reduce((s, t) => s + wordPieces(t).length, 0) }));
  }
}

/** The same requests, one question after another (each question's own order kept): the order of a loop over questions. */
export function questionByQuestion(reqs: readonly CostRequest[]): CostRequest[] {
  return reqs.map((r, i) => ({ r, i })).sort((a, b) => a.r.question - b.r.question || a.i - b.i).map((x) => x.r);
}

function samePrompt(a: Uint32Array, b: Uint32Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Identical prompts that one question asks for one after another (an MCTS node's SPRE rollouts start
 * from the same state) sent as one request with `n` = their count: prefilled once, decoded n times.
 */
export function mergeSiblings(reqs: readonly CostRequest[]): CostRequest[] {
  const out: CostRequest[] = [];
  const lastOf = new Map<number, CostRequest>();
  for (const r of reqs) {
    const last = lastOf.get(r.question);
    if (last && samePrompt(last.prompt, r.prompt)) {
      last.n += r.n;
      last.decoded += r.decoded;
      continue;
    }
    const copy = { ...r };
    out.push(copy);
    lastOf.set(r.question, copy);
  }
  return out;
}

/** Prompt tokens prefilled without a prefix cache: every request prefills its whole prompt once (n samples share it). */
export function prefillNoCache(reqs: readonly CostRequest[]): number {
  return reqs.reduce((s, r) => s + r.prompt.length, 0);
}

/** Prompt tokens past each prompt's longest common prefix with any earlier prompt (a token trie). */
export function prefillLcp(reqs: readonly CostRequest[]): number {
  type Node = Map<number, Node>;
  const root: Node = new Map();
  let total = 0;
  for (const r of reqs) {
    let node = root;
    let i = 0;
    for (; i < r.prompt.length; i++) {
      const next = node.get(r.prompt[i]!);
      if (!next) break;
      node = next;
    }
    total += r.prompt.length - i;
    for (; i < r.prompt.length; i++) {
      const next: Node = new Map();
      node.set(r.prompt[i]!, next);
      node = next;
    }
  }
  return total;
}

/**
 * Prompt tokens prefilled by a server with vLLM-style prefix caching: whole `block`-token blocks keyed by
 * their whole prefix, a request seeing the blocks of the requests at least `inFlight` places before it,
 * at most `capacity` tokens kept (least recently used evicted).
 */
export function prefillBlocks(reqs: readonly CostRequest[], opts: { block?: number; inFlight?: number; capacity?: number } = {}): number {
  const block = opts.block ?? 16;
  const inFlight = Math.max(1, opts.inFlight ?? 1);
  const capacityBlocks = opts.capacity === undefined ? Infinity : Math.floor(opts.capacity / block);
  const keyIds = new Map<string, number>();
  const chains = reqs.map((r) => {
    // Block i's id stands for the whole prefix up to its end.
    const ids: number[] = [];
    let parent = -1;
    for (let end = block; end <= r.prompt.length; end += block) {
      const key = `${parent}:${r.prompt.subarray(end - block, end).join(',')}`;
      let id = keyIds.get(key);
      if (id === undefined) keyIds.set(key, (id = keyIds.size));
      ids.push(id);
      parent = id;
    }
    return ids;
  });
  const cache = new Map<number, true>(); // insertion order = recency
  const touch = (id: number) => {
    cache.delete(id);
    cache.set(id, true);
    while (cache.size > capacityBlocks) cache.delete(cache.keys().next().value!);
  };
  let total = 0;
  for (let i = 0; i < reqs.length; i++) {
    // The request `inFlight` places back has finished: its blocks are now in the cache.
    if (i - inFlight >= 0) for (const id of chains[i - inFlight]!) touch(id);
    const chain = chains[i]!;
    let hit = 0;
    while (hit < chain.length && cache.has(chain[hit]!)) hit++;
    for (let b = 0; b < hit; b++) touch(chain[b]!);
    total += reqs[i]!.prompt.length - hit * block;
  }
  return total;
}

/** Tokens decoded over every sample. */
export function decodedTokens(reqs: readonly CostRequest[]): number {
  return reqs.reduce((s, r) => s + r.decoded, 0);
}
