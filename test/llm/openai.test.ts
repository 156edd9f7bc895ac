/** The OpenAI-compatible backend and the shared machinery, against a fake server on 127.0.0.1. */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { jsonObjectArg } from '../../src/cli/options.js';
import { InputError } from '../../src/core/errors.js';
import { KvStore } from '../../src/core/kvstore.js';
import { createBackend, createLLM } from '../../src/llm/create.js';
import { CachedLLM, requestKey } from '../../src/llm/middleware.js';
import { cutAtStop, OpenAICompatibleLLM } from '../../src/llm/openai.js';
import { ScriptedLLM } from '../../src/llm/scripted.js';
import { sequenceLogprob } from '../../src/llm/types.js';
import { startFakeOpenAI } from '../fixtures/fake-openai.js';
import { tempDir } from '../helpers.js';

const tmp = tempDir();
after(tmp.cleanup);
const fastRetry = { baseDelayMs: 1, maxDelayMs: 5 };

describe('OpenAI-compatible backend', () => {
  it('survives 429, 500 and a timeout, then succeeds; the cache makes a second run issue zero requests', async () => {
    const fake = await startFakeOpenAI((r) => `echo: ${(r.body['messages'] as { content: string }[]).at(-1)?.content}`, { failures: [429, 500, 'hang'] });
    try {
      const cacheDir = join(tmp.dir, 'cache1');
      const questions = ['one', 'two', 'three'];
      const run = async () => {
        const llm = await createLLM(`openai:${fake.url}#tiny`, { cacheDir, timeoutMs: 300, ...fastRetry });
        const out = [];
        for (const q of questions) out.push((await llm.generate({ messages: [{ role: 'user', content: q }], temperature: 0 })).choices[0]!.text);
        return { out, totals: llm.totals };
      };
      const first = await run();
      assert.deepEqual(first.out, ['echo: one', 'echo: two', 'echo: three']);
      // 3 failed attempts (429, 500, timeout) + 3 successes.
      assert.equal(fake.requests.length, 6);
      assert.equal(first.totals.requests, 3);
      assert.equal(first.totals.promptTokens, 30);
      const before = fake.requests.length;
      const second = await run();
      assert.deepEqual(second.out, first.out);
      assert.equal(fake.requests.length - before, 0);
      assert.equal(second.totals.cachedRequests, 3);
      assert.equal(second.totals.promptTokens, 0);
    } finally {
      await fake.close();
    }
  });

  it('sends the chat request fields, reads n samples and logprobs', async () => {
    const fake = await startFakeOpenAI((_r, i) => `sample ${i} text`);
    try {
      const llm = new OpenAICompatibleLLM(fake.url, 'm', { apiKey: 'secret', ...fastRetry });
      const res = await llm.generate({ messages: [{ role: 'user', content: 'hi' }], n: 3, temperature: 0.7, topP: 0.9, maxTokens: 20, stop: ['</search>'], seed: 5, logprobs: true });
      assert.deepEqual(res.choices.map((c) => c.text), ['sample 0 text', 'sample 1 text', 'sample 2 text']);
      assert.equal(sequenceLogprob(res.choices[0]!), -1.5);
      const body = fake.requests[0]!.body;
      assert.deepEqual(
        { model: body['model'], n: body['n'], temperature: body['temperature'], top_p: body['top_p'], max_tokens: body['max_tokens'], stop: body['stop'], seed: body['seed'], logprobs: body['logprobs'] },
        { model: 'm', n: 3, temperature: 0.7, top_p: 0.9, max_tokens: 20, stop: ['</search>'], seed: 5, logprobs: true },
      );
      assert.equal(fake.requests[0]!.path, '/v1/chat/completions');
    } finally {
      await fake.close();
    }
  });

  it('asks again when a server ignores n (llama.cpp, Ollama, transformers serve), at once and with distinct seeds', async () => {
    const fake = await startFakeOpenAI((r) => `seed ${r.body['seed']}`, { maxN: 1, delayMs: 20 });
    try {
      const res = await new OpenAICompatibleLLM(fake.url, 'm', fastRetry).generate({ prompt: 'x', n: 4, seed: 1 });
      assert.equal(res.choices.length, 4);
      assert.equal(new Set(res.choices.map((c) => c.text)).size, 4);
      assert.deepEqual(fake.requests.map((r) => r.body['n']), [4, 1, 1, 1]);
      // The three missing samples were in service together (a batching server decodes them as one batch).
      const stats = (await (await fetch(fake.url.replace(/\/v1$/, '') + '/stats')).json()) as { maxInService: number };
      assert.equal(stats.maxInService, 3);
    } finally {
      await fake.close();
    }
  });

  it('completion mode posts a prompt to /completions and reads token logprobs', async () => {
    const fake = await startFakeOpenAI(() => ' <search> q </search>');
    try {
      const llm = new OpenAICompatibleLLM(fake.url, 'base', { mode: 'completion', ...fastRetry });
      const res = await llm.generate({ messages: [{ role: 'user', content: 'Question: q\n' }, { role: 'assistant', content: '<think>x</think>' }], logprobs: true });
      assert.equal(fake.requests[0]!.path, '/v1/completions');
      assert.equal(fake.requests[0]!.body['prompt'], 'Question: q\n\n<think>x</think>');
      assert.equal(res.choices[0]!.logprobs?.tokens.length, 3); // ' <search>', ' q', ' </search>'
    } finally {
      await fake.close();
    }
  });

  it('reads the top alternatives of each token (chat and completions) and scores an echoed prompt', async () => {
    const fake = await startFakeOpenAI(() => 'yes it is');
    try {
      const chat = await new OpenAICompatibleLLM(fake.url, 'm', fastRetry).generate({ messages: [{ role: 'user', content: 'hi' }], topLogprobs: 5 });
      assert.deepEqual([fake.requests[0]!.body['logprobs'], fake.requests[0]!.body['top_logprobs']], [true, 5]);
      assert.deepEqual(chat.choices[0]!.logprobs?.top, [{ yes: -0.5, ' alt': -2 }, { ' it': -0.5, ' alt': -2 }, { ' is': -0.5, ' alt': -2 }]);
      const base = new OpenAICompatibleLLM(fake.url, 'base', { mode: 'completion', ...fastRetry });
      const comp = await base.generate({ prompt: 'Q: a b', topLogprobs: 3 });
      assert.equal(fake.requests[1]!.body['logprobs'], 3);
      assert.deepEqual(comp.choices[0]!.logprobs?.top?.[2], { ' is': -0.5, ' alt': -2 });
      // echo: /completions even for a chat-mode model; the prompt's tokens split off by text_offset.
      const scored = await new OpenAICompatibleLLM(fake.url, 'm', fastRetry).generate({ prompt: 'Q: a b', echo: true, maxTokens: 1 });
      assert.equal(fake.requests[2]!.path, '/v1/completions');
      assert.deepEqual([fake.requests[2]!.body['echo'], fake.requests[2]!.body['logprobs']], [true, 1]);
      assert.deepEqual(scored.choices[0]!.promptLogprobs, { tokens: ['Q:', ' a', ' b'], logprobs: [null, -1, -1], offsets: [0, 2, 4] });
      assert.deepEqual(scored.choices[0]!.logprobs?.tokens, ['yes', ' it', ' is']);
      assert.equal(scored.choices[0]!.text, 'yes it is');
      // A character outside the BMP: the server counts it as one, JavaScript as two; offsets come back in UTF-16.
      const shark = await new OpenAICompatibleLLM(fake.url, 'm', fastRetry).generate({ prompt: 'Jaws 🦈 was', echo: true, maxTokens: 1 });
      assert.deepEqual(shark.choices[0]!.promptLogprobs, { tokens: ['Jaws', ' 🦈', ' was'], logprobs: [null, -1, -1], offsets: [0, 4, 7] });
      assert.deepEqual(shark.choices[0]!.logprobs?.tokens, ['yes', ' it', ' is']);
    } finally {
      await fake.close();
    }
  });

  it('cuts the text at the first stop string when a server keeps it or goes past it (transformers serve)', async () => {
    const fake = await startFakeOpenAI(() => '<think>a</think> <search> q </search> more text </answer>', { maxN: 1 });
    try {
      const llm = new OpenAICompatibleLLM(fake.url, 'm', fastRetry);
      const res = await llm.generate({ messages: [{ role: 'user', content: 'hi' }], stop: ['</answer>', '</search>'], logprobs: true });
      assert.equal(res.choices[0]!.text, '<think>a</think> <search> q ');
      assert.equal(res.choices[0]!.finishReason, 'stop');
      const plain = await llm.generate({ messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(plain.choices[0]!.text, '<think>a</think> <search> q </search> more text </answer>');
    } finally {
      await fake.close();
    }
    assert.deepEqual(cutAtStop({ text: 'ab</s>cd', finishReason: 'stop', logprobs: { tokens: ['ab', '</s>', 'cd'], logprobs: [-1, -2, -3] } }, ['</s>']).logprobs, { tokens: ['ab'], logprobs: [-1] });
  });

  it('sends --llm-body fields with every request, and keys the cache by them', async () => {
    const fake = await startFakeOpenAI((r) => `skip=${String(r.body['skip_special_tokens'])}`);
    try {
      const cacheDir = join(tmp.dir, 'cache-body');
      const ask = async (extraBody?: Record<string, unknown>) => (await (await createLLM(`openai:${fake.url}#m`, { cacheDir, ...(extraBody && { extraBody }), ...fastRetry })).generate({ prompt: 'x', temperature: 0 })).choices[0]!.text;
      assert.equal(await ask({ skip_special_tokens: false }), 'skip=false');
      // The same request without the field is another cache entry, not the reply above.
      assert.equal(await ask(), 'skip=undefined');
      assert.equal(await ask({ skip_special_tokens: false }), 'skip=false');
      assert.equal(fake.requests.length, 2);
    } finally {
      await fake.close();
    }
    assert.deepEqual(jsonObjectArg('{"top_k": 20}'), { top_k: 20 });
    assert.throws(() => jsonObjectArg('top_k=20'), /not JSON: top_k=20/);
    assert.throws(() => jsonObjectArg('[1]'), /expected a JSON object/);
  });

  it('parses specs and says what is wrong', async () => {
    assert.equal((await createBackend('openai:http://127.0.0.1:8000/v1#Qwen2.5-7B-Instruct')).spec, 'openai:http://127.0.0.1:8000/v1#Qwen2.5-7B-Instruct');
    // A completion-mode backend's spec re-creates it.
    const base = await createBackend('openai:http://127.0.0.1:8000/v1#selfrag/selfrag_llama2_7b (completion)');
    assert.equal(base.spec, 'openai:http://127.0.0.1:8000/v1#selfrag/selfrag_llama2_7b (completion)');
    assert.equal((base as OpenAICompatibleLLM).model, 'selfrag/selfrag_llama2_7b');
    await assert.rejects(createBackend('openai:127.0.0.1:8000#m'), /expected openai:<baseURL>#<model>/);
    await assert.rejects(createBackend('openai:http://x/v1#'), /expected openai:<baseURL>#<model>/);
    await assert.rejects(createBackend('gpt4'), (e: Error) => e instanceof InputError && /unknown llm "gpt4"/.test(e.message));
    await assert.rejects(createBackend('llama:/no/such/model.gguf'), /no such model file/);
    // A model file that exists: without the optional package, say how to add it; with it, that the file is no model.
    const gguf = join(tmp.dir, 'model.gguf');
    writeFileSync(gguf, 'GGUF');
    const saved = process.env['RAGTRAIL_NODE_LLAMA_CPP'];
    process.env['RAGTRAIL_NODE_LLAMA_CPP'] = join(tmp.dir, 'no-such-folder');
    try {
      await assert.rejects(createBackend(`llama:${gguf}`), (e: Error) => e instanceof InputError &&
        (/needs the optional package node-llama-cpp.*\(run `npm install node-llama-cpp`.*npm install --prefix .*no-such-folder --omit=optional node-llama-cpp@/.test(e.message) ||
          /cannot load this file/.test(e.message)));
    } finally {
      if (saved === undefined) delete process.env['RAGTRAIL_NODE_LLAMA_CPP'];
      else process.env['RAGTRAIL_NODE_LLAMA_CPP'] = saved;
    }
  });
});

describe('response cache', () => {
  it('keys by the full request regardless of key order, caches only deterministic requests by default', async () => {
    assert.equal(requestKey('s', { prompt: 'a', temperature: 0, maxTokens: 5 }), requestKey('s', { maxTokens: 5, temperature: 0, prompt: 'a' }));
    assert.notEqual(requestKey('s', { prompt: 'a', temperature: 0 }), requestKey('s', { prompt: 'a', temperature: 0, stop: ['x'] }));
    const scripted = new ScriptedLLM((_r, call) => `call ${call}`);
    const cached = new CachedLLM(scripted, KvStore.open(join(tmp.dir, 'c2', 'cache.jsonl')));
    const ask = (req: object) => cached.generate({ prompt: 'p', ...req }).then((r) => r.choices[0]!.text);
    assert.equal(await ask({ temperature: 0 }), 'call 0');
    assert.equal(await ask({ temperature: 0 }), 'call 0');
    assert.equal(await ask({ temperature: 1, seed: 3 }), 'call 1');
    assert.equal(await ask({ temperature: 1, seed: 3 }), 'call 1');
    assert.equal(await ask({ temperature: 1 }), 'call 2'); // unseeded sampling is never replayed
    assert.equal(await ask({ temperature: 1 }), 'call 3');
    assert.equal(scripted.requests.length, 4);
  });
});
