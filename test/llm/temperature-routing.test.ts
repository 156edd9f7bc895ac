/**
 * Servers whose sampling settings are fixed per process (transformers serve with continuous batching
 * keeps its first request's temperature for life): one backend per temperature keeps every request at
 * the temperature it asked for.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TemperatureRoutedLLM } from '../../src/llm/middleware.js';
import { OpenAICompatibleLLM } from '../../src/llm/openai.js';
import { RagtrailError } from '../../src/core/errors.js';
import { startFakeOpenAI } from '../fixtures/fake-openai.js';

/** A fake server that, like `transformers serve --continuous-batching`, samples at its first request's temperature. */
async function stickyServer() {
  let fixed: number | undefined;
  return startFakeOpenAI((r) => {
    fixed ??= r.body['temperature'] as number;
    return `sampled at ${fixed}`;
  });
}

const ask = (temperature: number) => ({ messages: [{ role: 'user' as const, content: 'q' }], temperature });

describe('TemperatureRoutedLLM', () => {
  it('one server: every request after the first is sampled at the first one\'s temperature (the quirk)', async () => {
    const s = await stickyServer();
    try {
      const llm = new OpenAICompatibleLLM(s.url, 'tiny');
      assert.equal((await llm.generate(ask(1))).choices[0]!.text, 'sampled at 1');
      assert.equal((await llm.generate(ask(0.3))).choices[0]!.text, 'sampled at 1');
    } finally {
      await s.close();
    }
  });

  it('a server per temperature: interleaved requests each get the temperature they asked for', async () => {
    const hot = await stickyServer();
    const cool = await stickyServer();
    try {
      const routed = new TemperatureRoutedLLM(new Map([[1, new OpenAICompatibleLLM(hot.url, 'tiny')], [0.3, new OpenAICompatibleLLM(cool.url, 'tiny')]]));
      const temps = [0.3, 1, 1, 0.3, 0.3, 1, 0.3];
      const texts = await Promise.all(temps.map(async (t) => (await routed.generate(ask(t))).choices[0]!.text));
      assert.deepEqual(texts, temps.map((t) => `sampled at ${t}`));
      assert.deepEqual([hot.served, cool.served], [3, 4]);
      await assert.rejects(routed.generate(ask(0.7)), (e: unknown) => e instanceof RagtrailError && /no backend serves temperature 0.7 \(served: 1, 0.3\)/.test(e.message));
      await assert.rejects(routed.generate({ messages: [{ role: 'user', content: 'q' }] }), (e: unknown) => e instanceof RagtrailError && /sets no temperature/.test(e.message));
    } finally {
      await hot.close();
      await cool.close();
    }
  });
});
