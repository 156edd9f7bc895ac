/**
 * The environment in a hand-written loop, Gymnasium style: `reset(question)`, then `step(state, move)`
 * until the episode is done. The moves come from the oracle policy (non-LLM: it follows the question's
 * gold decomposition); put your own decision logic or model in its place.
 *
 *   node env-loop.js
 */
import { exactMatch } from 'ragtrail';
import { getProtocol, OraclePolicy } from 'ragtrail/agents';
import { RagEnv } from 'ragtrail/env';
import { smallWorld } from './world.js';

const { questions, retriever } = await smallWorld();
const protocol = getProtocol('search-r1');
const env = new RagEnv({ retriever, topK: 3, maxTurns: 6 });
const policy = new OraclePolicy(protocol);

let correct = 0;
for (const [i, question] of questions.slice(0, 10).entries()) {
  let state = env.reset(question);
  while (!state.done) {
    const [move] = await policy.propose(state, { seed: i });
    const result = await env.step(state, move!);
    state = result.state;
    const a = move!.action;
    if (i === 0) console.log(`  step ${state.steps.length}: ${a.type === 'search' ? `search "${a.query}" → ${state.steps.at(-1)!.docs!.map((d) => d.title).join(' | ')}` : a.type === 'answer' ? `answer "${a.answer}"` : a.type}`);
  }
  const last = state.steps.at(-1)!.action;
  const em = last.type === 'answer' ? exactMatch(last.answer, question.answers) : 0;
  correct += em;
  if (i === 0) console.log(`question: ${question.question}\ngold: ${question.answers.join(' / ')}; EM ${em}`);
}
console.log(`oracle [non-LLM] over 10 questions: EM ${(correct / 10).toFixed(2)}`);
