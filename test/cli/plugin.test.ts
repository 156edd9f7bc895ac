/**
 * `--plugin FILE`: names registered by a plugin are accepted by the CLI exactly like built-in ones
 * (flag validation, the harness, the backends), and a bad plugin is one clear error.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Registry } from '../../src/core/registry.js';
import { InputError } from '../../src/core/errors.js';
import { cliRunner, tempDir } from '../helpers.js';

const tmp = tempDir();
const { run: ragtrail } = cliRunner(tmp.dir);
const lines = (path: string) => readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
const world = join(tmp.dir, 'world');
const index = join(tmp.dir, 'index');
const plugin = join(tmp.dir, 'plugin.mjs');

// Uses only the API object it is given: no import of ragtrail, so it works from any folder.
const PLUGIN = `
export default function (api) {
  api.registerProtocol({
    name: 'lines',
    description: 'SEARCH: / ANSWER: lines',
    defaults: { maxTurns: 6, topK: 3, maxTokens: 32 },
    allowed: (s) => (s.mustAnswer ? ['answer'] : ['search', 'answer']),
    render: (s) => [{ role: 'user', content: 'Question: ' + s.question.question + '\\n' + s.steps.map((x) => x.raw + '\\n' + (x.docs ?? []).map((d) => d.title).join('; ')).join('\\n') }],
    parse(text) {
      const m = /^(SEARCH|ANSWER):\\s*(.+)$/m.exec(text);
      if (!m) return { type: 'invalid', reason: 'no SEARCH: or ANSWER: line' };
      return m[1] === 'SEARCH' ? { type: 'search', query: m[2].trim() } : { type: 'answer', answer: m[2].trim() };
    },
    format: (a) => (a.type === 'search' ? 'SEARCH: ' + a.query : a.type === 'answer' ? 'ANSWER: ' + a.answer : ''),
  });
  // echo:WORD answers WORD at once, in whatever protocol asked (here: search-r1 tags).
  api.registerLLMBackend('echo', (word) => ({
    spec: 'echo:' + word,
    async generate(req) {
      return { choices: Array.from({ length: req.n ?? 1 }, () => ({ text: '<answer> ' + word + ' </answer>', finishReason: 'stop' })), usage: { promptTokens: 1, completionTokens: 1 } };
    },
  }));
  // A PRM that prefers answers: the PRM-guided policy must pick them.
  api.registerPrm('prefer-answers', () => ({ name: 'prefer-answers', async score(_s, cands) { return cands.map((c) => (c.action.type === 'answer' ? 1 : 0)); } }));
}
`;

before(() => {
  assert.equal(ragtrail('world', '--seed', '3', '--entities', '400', '--out', world).status, 0);
  assert.equal(ragtrail('index', 'build', '--corpus', join(world, 'corpus.jsonl'), '--out', index).status, 0);
  writeFileSync(plugin, PLUGIN);
});
after(tmp.cleanup);

describe('Registry', () => {
  it('lists what exists when a name is unknown, and refuses a taken name unless replacing', () => {
    const r = new Registry<number>('widget');
    r.register('a', 1);
    r.register('b', 2);
    assert.throws(() => r.get('c'), (e: unknown) => e instanceof InputError && /unknown widget "c".*choose one of a, b/.test(e.message));
    assert.throws(() => r.register('a', 3), /widget "a" is already registered/);
    r.register('a', 3, { replace: true });
    assert.equal(r.get('a'), 3);
    assert.throws(() => r.register('bad name', 4), /not valid/);
  });
});

describe('ragtrail --plugin', () => {
  const base = ['--index', index, '--dataset', join(world, 'questions.jsonl'), '--split', 'train', '--limit', '12'];

  it('without the plugin, the unknown agent is a flag error naming the built-in ones', () => {
    const r = ragtrail('run', '--agent', 'lines', '--policy', 'oracle', ...base, '--out', join(tmp.dir, 'no-plugin'));
    assert.equal(r.status, 2);
    assert.match(r.stderr, /expected one of reasonrag, search-r1, .*arena, .*ircot, .*, got "lines"/);
  });

  it('a plugin protocol runs with the built-in non-LLM policies (the oracle answers all)', () => {
    const out = join(tmp.dir, 'lines-run');
    const r = ragtrail('--plugin', plugin, 'run', '--agent', 'lines', '--policy', 'oracle', ...base, '--out', out);
    assert.equal(r.status, 0, r.stderr);
    const ts = lines(join(out, 'trajectories.jsonl'));
    assert.equal(ts.length, 12);
    assert.ok(ts.every((t) => t.agent === 'lines' && t.metrics.em === 1), JSON.stringify(ts[0]));
    assert.match(ts[0].steps[0].raw, /^SEARCH: /);
  });

  it('a plugin LLM backend serves --llm KIND:…, and --plugin may come after the command', () => {
    const out = join(tmp.dir, 'echo-run');
    const r = ragtrail('run', '--agent', 'search-r1', '--llm', 'echo:1900', ...base, '--out', out, '--no-cache', '--plugin', plugin);
    assert.equal(r.status, 0, r.stderr);
    const ts = lines(join(out, 'trajectories.jsonl'));
    assert.ok(ts.every((t) => t.prediction === '1900' && t.policy === 'llm:echo:1900'));
  });

  it('a plugin PRM guides best-of-N (--select prm --prm KIND)', () => {
    const out = join(tmp.dir, 'prm-run');
    const r = ragtrail('--plugin', plugin, 'run', '--agent', 'search-r1', '--policy', 'sim', '--select', 'prm', '--prm', 'prefer-answers', '--n', '4', ...base, '--out', out);
    assert.equal(r.status, 0, r.stderr);
    const guided = lines(join(out, 'trajectories.jsonl'));
    const greedyOut = join(tmp.dir, 'greedy-run');
    assert.equal(ragtrail('--plugin', plugin, 'run', '--agent', 'search-r1', '--policy', 'sim', ...base, '--out', greedyOut).status, 0);
    const greedy = lines(join(greedyOut, 'trajectories.jsonl'));
    const searches = (ts: { retrievalCount: number }[]) => ts.reduce((s, t) => s + t.retrievalCount, 0);
    // The PRM chose among sampled candidates (recorded per step), and, preferring answers, searched less.
    assert.ok(guided.every((t) => t.steps.every((st: { selection?: { candidates: number } }) => st.selection === undefined || st.selection.candidates >= 1)));
    assert.ok(guided.some((t) => t.steps.some((st: { selection?: unknown }) => st.selection !== undefined)));
    assert.ok(searches(guided) < searches(greedy), `${searches(guided)} vs ${searches(greedy)}`);
  });

  it('a missing or broken plugin file is one line and exit 2', () => {
    const missing = ragtrail('--plugin', join(tmp.dir, 'nope.mjs'), 'run', '--help');
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /--plugin .*nope\.mjs: no such file/);
    const broken = join(tmp.dir, 'broken.mjs');
    writeFileSync(broken, 'export default function (api) { api.registerProtocol( }');
    const r = ragtrail('--plugin', broken, 'run', '--help');
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--plugin .*broken\.mjs: could not load it: /);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  });
});
