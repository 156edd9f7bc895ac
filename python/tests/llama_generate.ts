/**
 * The node side of test_gguf.py: loads a GGUF file with ragtrail's llama backend and, for each request
 * on stdin (a JSON array of {messages}), prints the prompt's token ids and the greedy text.
 * Exits 3 when node-llama-cpp is not installed, so the test can say so and skip.
 */
import { readFileSync } from 'node:fs';
import { InputError } from '../../src/core/errors.js';
import { LlamaCppLLM } from '../../src/llm/llama.js';
import { loadNodeLlamaCpp } from '../../src/core/node-llama-cpp.js';
import type { Message } from '../../src/llm/types.js';

try {
  await loadNodeLlamaCpp('test');
} catch (e) {
  if (e instanceof InputError) {
    console.error(e.message);
    process.exit(3);
  }
  throw e;
}
const llm = await LlamaCppLLM.load(process.argv[2]!);
const requests = JSON.parse(readFileSync(0, 'utf8')) as { messages: Message[]; maxTokens?: number }[];
const out = [];
for (const r of requests) {
  const res = await llm.generate({ messages: r.messages, temperature: 0, maxTokens: r.maxTokens ?? 48 });
  out.push({ ids: llm.promptTokens({ messages: r.messages }), text: res.choices[0]!.text, finish: res.choices[0]!.finishReason });
}
await llm.close();
console.log(JSON.stringify(out));
