/** Run folders and eval configs under damage and mistakes: each is one clear InputError naming the file, key or flag. */
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { PROTOCOLS } from '../../src/agents/registry.js';
import { SimPolicy } from '../../src/agents/sim.js';
import { InputError } from '../../src/core/errors.js';
import type { Question } from '../../src/core/types.js';
import { loadDatasetAll } from '../../src/corpus/dataset.js';
import { generateWorld, writeWorld } from '../../src/corpus/world/index.js';
import { RagEnv } from '../../src/env/env.js';
import { readEvalConfig, runEval } from '../../src/eval/harness.js';
import { runQuestions } from '../../src/eval/run.js';
import { buildIndex, openRetriever } from '../../src/retrieval/index-dir.js';
import { tempDir } from '../helpers.js';

const tmp = tempDir();
let questions: Question[] = [];
let env: RagEnv;
before(async () => {
  await writeWorld(join(tmp.dir, 'world'), generateWorld({ seed: 9, entities: 400, questions: 20 }));
  await buildIndex(join(tmp.dir, 'world', 'corpus.jsonl'), join(tmp.dir, 'index'), { quiet: true });
  questions = (await loadDatasetAll(join(tmp.dir, 'world', 'questions.jsonl'))).questions.slice(0, 5);
  env = new RagEnv({ retriever: await openRetriever(join(tmp.dir, 'index')), topK: 3, maxTurns: 4, maxSearches: 3 });
});
after(tmp.cleanup);

describe('run folders', () => {
  const policy = new SimPolicy(PROTOCOLS['search-r1'], 0.7);
  const run = (outDir: string) => runQuestions({ outDir, env, policy, questions, config: { agent: 'search-r1' }, quiet: true });

  it('a 0-byte or torn run.json (a crash mid-write) is named with the fix, not "Unexpected end of JSON input"', async () => {
    const out = join(tmp.dir, 'run');
    await run(out);
    assert.deepEqual(readdirSync(out).filter((f) => f.includes('.tmp')), [], 'run.json and summary.json were renamed into place');
    for (const [content, why] of [['', /the file is empty/], ['{"agent": "sea', /not valid JSON/]] as const) {
      writeFileSync(join(out, 'run.json'), content);
      await assert.rejects(run(out), (e: Error) => e instanceof InputError && e.message.startsWith(`${join(out, 'run.json')}: `) && why.test(e.message) && /delete it to resume with the current settings/.test(e.message));
    }
  });

  it('--out naming an existing file says so instead of EEXIST', async () => {
    const file = join(tmp.dir, 'a-file');
    writeFileSync(file, 'x');
    await assert.rejects(run(file), (e: Error) => e instanceof InputError && e.message === `--out ${file}: is a file, not a folder (name a folder (it is created if missing))`);
  });
});

describe('eval configs', () => {
  const write = (name: string, config: object) => {
    const p = join(tmp.dir, name);
    writeFileSync(p, JSON.stringify(config));
    return p;
  };
  const valid = { index: 'index', out: 'eval', datasets: [{ name: 'w', path: 'world/questions.jsonl', limit: 5 }], systems: [{ name: 'greedy', agent: 'search-r1', policy: 'sim' }] };

  it('refuses wrong types and unknown keys, naming the key and the expected type', () => {
    const cases: [object, RegExp][] = [
      [{ ...valid, datasets: [{ name: 'w', path: 'world/questions.jsonl', limit: 'five' }] }, /: "datasets\[0\]\.limit" expected number, received string/],
      [{ ...valid, systems: [{ name: 'vote', agent: 'search-r1', policy: 'sim', select: 'vote', n: 'ten' }] }, /: "systems\[0\]\.n" expected number, received string/],
      [{ ...valid, systems: [{ name: 's', agent: 'search-r1', policy: 'sim', temprature: 0.5 }] }, /: unknown key "temprature" in "systems\[0\]" \(did you mean "temperature"\?\)/],
      [{ ...valid, concurency: 4 }, /: unknown key "concurency" \(did you mean "concurrency"\?\)/],
      [{ ...valid, seed: -1 }, /: "seed" Too small: expected number to be >=0/],
      [{ ...valid, systems: [{ name: 's', agent: 'search-r2', policy: 'sim' }] }, /: "systems\[0\]\.agent" unknown agent; choose one of reasonrag, search-r1, /],
      [{ ...valid, systems: [{ name: 's', agent: 'search-r1' }] }, /: "systems\[0\]" \("s"\) needs exactly one of "llm" or "policy"/],
    ];
    for (const [config, expected] of cases) {
      const p = write('bad-eval.json', config);
      assert.throws(() => readEvalConfig(p), (e: Error) => e instanceof InputError && e.message.startsWith(p) && expected.test(e.message) && /see the eval config example in docs\/reference\/eval\.md/.test(e.message), JSON.stringify(config));
    }
    assert.equal(readEvalConfig(write('good-eval.json', valid)).datasets[0]!.limit, 5);
  });

  it('refuses systems "a b" and "a_b", which would share a run folder, before running anything', async () => {
    const config = readEvalConfig(write('clash.json', { ...valid, out: 'clash', systems: [{ name: 'a b', agent: 'search-r1', policy: 'sim' }, { name: 'a_b', agent: 'search-r1', policy: 'oracle' }] }));
    await assert.rejects(runEval(config), /system "a b" on dataset "w" and system "a_b" on dataset "w" would share the run folder .*runs\/a_b__w \(rename one of them/);
  });
});
