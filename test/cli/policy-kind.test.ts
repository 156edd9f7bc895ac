/** The non-LLM note is given to built-in stand-ins only: a user's own policy (`kind: 'custom'`) may call a model. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PROTOCOLS } from '../../src/agents/registry.js';
import type { Policy, PolicyKind } from '../../src/agents/policy.js';
import { nonLlmNote } from '../../src/cli/setup.js';

const policy = (kind: PolicyKind): Policy => ({ name: `mine-${kind}`, kind, protocol: PROTOCOLS['search-r1'], propose: async () => [] });

describe('nonLlmNote', () => {
  it('notes the built-in non-LLM policies', () => {
    for (const kind of ['sim', 'oracle', 'gym'] as const) assert.match(nonLlmNote(policy(kind)) ?? '', /non-LLM stand-in/);
  });
  it('says nothing for a language model or a custom policy', () => {
    assert.equal(nonLlmNote(policy('llm')), undefined);
    assert.equal(nonLlmNote(policy('custom')), undefined);
  });
});
