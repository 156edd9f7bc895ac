/** Every protocol by its --agent name. */
import { InputError } from '../core/errors.js';
import { arena } from './arena.js';
import { AGENT_NAMES, type AgentName, type Protocol } from './protocol.js';
import { prorag } from './prorag.js';
import { cot, direct, rag, react } from './rag-gym.js';
import { reasonrag } from './reasonrag.js';
import { research } from './research.js';
import { searchO1 } from './search-o1.js';
import { searchR1 } from './search-r1.js';

export const PROTOCOLS: Record<AgentName, Protocol> = {
  reasonrag,
  'search-r1': searchR1,
  direct,
  cot,
  rag,
  react,
  'search-o1': searchO1,
  research,
  prorag,
  arena,
};

export function getProtocol(name: string): Protocol {
  if (!(AGENT_NAMES as readonly string[]).includes(name)) throw new InputError(`unknown agent "${name}"`, `choose one of ${AGENT_NAMES.join(', ')}`);
  return PROTOCOLS[name as AgentName];
}
