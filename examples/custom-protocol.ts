/**
 * A protocol of your own: how a state becomes a prompt, and how a reply becomes an action. Here a
 * plain "SEARCH: …" / "ANSWER: …" line format. Registered once, it is an `--agent` like the built-in
 * ones: runs, annotation, the harness and the recipes accept it. Parsers never throw: text that does
 * not fit is an `invalid` action, counted as a format failure.
 *
 *   node custom-protocol.js
 */
import { type Action, exactMatch } from 'ragtrail';
import { createPolicy, formatDocs, getProtocol, invalid, type Protocol, protocolNames, registerProtocol } from 'ragtrail/agents';
import { RagEnv } from 'ragtrail/env';
import { runEpisode } from 'ragtrail/eval';
import { smallWorld } from './world.js';

const lines: Protocol = {
  name: 'lines',
  description: 'one line per turn: "SEARCH: <query>" or "ANSWER: <answer>"',
  defaults: { maxTurns: 6, topK: 3, maxTokens: 64 },
  allowed: (state) => (state.mustAnswer ? ['answer'] : ['search', 'answer']),
  render(state, opts = {}) {
    const seen = state.steps.map((s) => (s.action.type === 'search' ? `SEARCH: ${s.action.query}\n${formatDocs(s.docs ?? [])}` : s.raw)).join('\n\n');
    const ask = opts.forced || state.mustAnswer ? 'Reply with ANSWER: <answer>.' : 'Reply with one line: SEARCH: <query> or ANSWER: <answer>.';
    return [{ role: 'user', content: `Question: ${state.question.question}\n\n${seen}\n\n${ask}` }];
  },
  parse(text): Action {
    const m = /^\s*(SEARCH|ANSWER)\s*:\s*(.+)$/im.exec(text);
    if (!m) return invalid('no SEARCH: or ANSWER: line');
    return m[1]!.toUpperCase() === 'SEARCH' ? { type: 'search', query: m[2]!.trim() } : { type: 'answer', answer: m[2]!.trim() };
  },
  format: (action) => (action.type === 'search' ? `SEARCH: ${action.query}` : action.type === 'answer' ? `ANSWER: ${action.answer}` : ''),
};

registerProtocol(lines);
console.log(`registered agents: ${protocolNames().join(', ')}`);

const { questions, retriever } = await smallWorld();
const protocol = getProtocol('lines');
console.log('parse("ANSWER: Paris") →', JSON.stringify(protocol.parse('ANSWER: Paris', undefined as never)));
console.log('parse("I think Paris") →', JSON.stringify(protocol.parse('I think Paris', undefined as never)));

// The non-LLM policies write their actions in any protocol's format (through `format`).
const env = new RagEnv({ retriever, topK: 3, maxTurns: 6 });
for (const spec of ['oracle', 'sim']) {
  const policy = createPolicy(spec, protocol, 0.7);
  let em = 0;
  for (const [i, q] of questions.entries()) {
    const t = await runEpisode(env, policy, q, { seed: i });
    em += exactMatch(t.prediction, q.answers);
  }
  console.log(`${policy.name} with --agent lines: EM ${(em / questions.length).toFixed(2)} over ${questions.length} questions`);
}
