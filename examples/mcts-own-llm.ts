/**
 * MCTS annotation (ReasonRAG: UCT search valued by SPRE rollouts) driven from code, with an `LLM` of
 * your own. Any class with `spec` and `generate(request)` is a model to ragtrail; here a tiny rule-based
 * reader that writes the search-r1 protocol's tags (a stand-in, so the example runs offline: put an
 * OpenAI-compatible client or a local model in its place). The annotation writes step preference pairs
 * and TRL-ready datasets to a folder, and resumes if interrupted.
 *
 *   node mcts-own-llm.js
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Rng } from 'ragtrail';
import { getProtocol, LlmPolicy } from 'ragtrail/agents';
import { RagEnv } from 'ragtrail/env';
import type { GenerateRequest, GenerateResult, LLM } from 'ragtrail/llm';
import { annotate } from 'ragtrail/process';
import { smallWorld } from './world.js';

/** Searches the question first; then, at random (seeded), answers with a retrieved title or searches
 * one of them. Sampling with n > 1 and a temperature gives MCTS different children to compare. */
class TitleReader implements LLM {
  readonly spec = 'example:title-reader';

  async generate(req: GenerateRequest): Promise<GenerateResult> {
    const text = (req.messages ?? []).map((m) => m.content).join('\n');
    const question = /Question: (.*)/.exec(text)?.[1] ?? '';
    const titles = [...text.matchAll(/\(Title: (.+?)\) /g)].map((m) => m[1]!);
    const choices = Array.from({ length: req.n ?? 1 }, (_, i) => {
      const rng = new Rng(`${req.seed ?? 0}/${i}/${text.length}`);
      const greedy = (req.temperature ?? 0) === 0;
      let out: string;
      if (titles.length === 0) out = `<search> ${question} </search>`;
      else if (greedy || rng.chance(0.5)) out = `<answer> ${titles[greedy ? 0 : rng.int(titles.length)]} </answer>`;
      else out = `<search> ${titles[rng.int(titles.length)]} </search>`;
      return { text: `<think> reading the documents </think>\n${out}`, finishReason: 'stop' };
    });
    return { choices, usage: { promptTokens: text.length >> 2, completionTokens: 12 * choices.length } };
  }
}

const w = await smallWorld();
const protocol = getProtocol('search-r1');
const env = new RagEnv({ retriever: w.retriever, topK: 3, maxTurns: 4 });
const outDir = join(w.dir, 'annotation');
const result = await annotate({
  method: 'mcts-spre',
  outDir,
  env,
  policy: new LlmPolicy(protocol, new TitleReader()),
  questions: w.questions.slice(0, 12),
  mcts: { simulations: 7, maxChildren: 2, rollouts: 2 },
  config: { example: 'mcts-own-llm' },
  quiet: true,
});
console.log(`annotated ${result.annotated} questions: ${result.stats.pairs} step pairs; files in ${outDir}`);
const first = readFileSync(join(outDir, 'trl_preference.jsonl'), 'utf8').split('\n')[0];
if (first) {
  const ex = JSON.parse(first) as { chosen: unknown; rejected: unknown };
  console.log(`first TRL preference pair:\n  chosen:   ${JSON.stringify(ex.chosen).slice(0, 120)}\n  rejected: ${JSON.stringify(ex.rejected).slice(0, 120)}`);
}
