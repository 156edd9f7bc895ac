/**
 * Every protocol by its --agent name: the built-ins, and any registered with `registerProtocol`
 * (from code or a `--plugin FILE`), which the CLI, the harness and the recipes then accept alike.
 */
import { type RegisterOptions, Registry } from '../core/registry.js';
import { arena, arenaDirect } from './arena.js';
import type { Protocol } from './protocol.js';
import { prorag } from './prorag.js';
import { ircot } from './ircot.js';
import { iterRetGen } from './iter-retgen.js';
import { cot, direct, rag, react } from './rag-gym.js';
import { reasonrag } from './reasonrag.js';
import { research } from './research.js';
import { searchO1 } from './search-o1.js';
import { searchR1 } from './search-r1.js';
import { selfAsk } from './self-ask.js';
import { autoRefine, searchR1Released, zeroSearch } from './search-r1-family.js';
import { r1Searcher } from './r1-searcher.js';
import { reSearch } from './re-search.js';
import { adaptiveRagProtocol } from './adaptive-rag.js';
import { skrProtocol } from './skr.js';
import { hiprag } from './hiprag.js';
import { sure } from './sure.js';
import { corag } from './corag.js';
import { simpleDeepSearcher } from './simple-deep-searcher.js';
import { autoRag } from './auto-rag.js';
import { o2Searcher } from './o2-searcher.js';
import { selfRag } from './self-rag.js';
import { flare } from './flare.js';
import { longLlmLinguaProtocol } from './longllmlingua.js';
import { recompExtractiveProtocol, recompProtocol } from './recomp.js';
import { selectiveContextProtocol } from './selective-context.js';

/** The built-in protocols, by name. */
export const PROTOCOLS = {
  reasonrag, 'search-r1': searchR1, direct, cot, rag, react, 'search-o1': searchO1, research, prorag, arena, ircot, 'iter-retgen': iterRetGen, 'self-ask': selfAsk,
  'search-r1-released': searchR1Released, zerosearch: zeroSearch, autorefine: autoRefine, 'r1-searcher': r1Searcher, 're-search': reSearch,
  'adaptive-rag': adaptiveRagProtocol, skr: skrProtocol, hiprag, sure, corag, 'simple-deep-searcher': simpleDeepSearcher, 'arena-direct': arenaDirect,
  'auto-rag': autoRag, 'o2-searcher': o2Searcher, 'self-rag': selfRag, flare,
  recomp: recompProtocol, 'recomp-extractive': recompExtractiveProtocol, longllmlingua: longLlmLinguaProtocol, 'selective-context': selectiveContextProtocol,
} as const;

/** The protocol table (built-ins and registered ones); `get` throws an InputError listing the names. */
export const protocols = new Registry<Protocol>('agent');
for (const [name, p] of Object.entries(PROTOCOLS)) protocols.register(name, p);

/** Makes `protocol` available as `--agent protocol.name` everywhere. */
export function registerProtocol(protocol: Protocol, opts?: RegisterOptions): void {
  protocols.register(protocol.name, protocol, opts);
}

/** The protocol called `name` (an InputError naming the known ones otherwise). */
export function getProtocol(name: string): Protocol {
  return protocols.get(name);
}

/** Names of every registered protocol, built-ins first. */
export function protocolNames(): string[] {
  return protocols.names();
}
