/**
 * Property-based tests of the reward schemes on arbitrary episode texts (`ragtrail reward --texts`),
 * in the default and the compat=authors modes: no throw, a finite total, every component present
 * and finite. fast-check with a fixed seed and run counts, so CI runs the same cases.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { episodeFromJson, episodeTrajectory } from '../../src/rewards/episode.js';
import { scoreTexts, textProtocol } from '../../src/rewards/apply.js';
import { composeScheme, SCHEMES } from '../../src/rewards/schemes.js';

const SEED = 49;
const FRAGMENTS = [
  '<think>', '</think>', '<search>', '</search>', '<information>', '</information>', '<reflect>', '</reflect>', '<answer>', '</answer>',
  '<query>', '</query>', '<evidence>', '</evidence>', '<step>', '</step>', '<subquery>', '</subquery>', '<subanswer>', '</subanswer>',
  '<retrieval>', '</retrieval>', '<relevance>', '</relevance>', '<analysis>', '</analysis>', '<|im_start|>assistant\n', '<|im_end|>',
  'Doc 1 (Title: "Paris") Paris is the capital.', '\nDoc 2(Title: x)', '[1, 2]', '[', ']', '1e308', 'NaN', '-0', 'Paris', 'paris ', 'the', '\n', ' ', '😀', '\u0000', '\ud800',
];
const text = fc.oneof(
  fc.array(fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ maxLength: 6 })), { maxLength: 40 }).map((p) => p.join('')),
  fc.string({ unit: 'binary', maxLength: 200 }),
);
// An episode line as `reward --texts` reads it: the fields it requires, with arbitrary contents, and
// the optional ones present, null or absent.
const episode = fc.record(
  {
    id: fc.oneof(fc.string({ maxLength: 5 }), fc.integer()),
    question: fc.string({ maxLength: 30 }),
    golden_answers: fc.array(fc.oneof(fc.constantFrom('Paris', 'the Paris', '', ' ', '1971'), fc.string({ maxLength: 10 })), { maxLength: 3 }),
    response: text,
    prompt: fc.option(text, { nil: null }),
    references: fc.option(fc.array(fc.record({ id: fc.oneof(fc.integer({ min: -2, max: 30 }), fc.string({ maxLength: 3 })), title: fc.string({ maxLength: 8 }), text: fc.string({ maxLength: 20 }) }, { requiredKeys: ['id'] }), { maxLength: 5 }), { nil: null }),
    gold_reference_ids: fc.option(fc.array(fc.oneof(fc.integer({ min: -2, max: 30 }), fc.string({ maxLength: 3 }), fc.constant(null), fc.double()), { maxLength: 4 }), { nil: null }),
    step: fc.option(fc.nat(50), { nil: null }),
    answer: fc.option(fc.string({ maxLength: 10 }), { nil: null }),
  },
  { requiredKeys: ['id', 'golden_answers', 'response'] },
);

// Every built-in scheme but the LLM judge (it needs a server), in both modes where it has them.
const EXPRESSIONS = Object.values(SCHEMES)
  .filter((s) => s.name !== 'judge')
  .flatMap((s) => ('compat' in s.defaults ? [[s.name, ['compat=paper']], [s.name, ['compat=authors']]] : [[s.name, []]]) as [string, string[]][]);

describe('every reward scheme on arbitrary episode texts: finite totals, every component', () => {
  for (const [expression, options] of EXPRESSIONS) {
    it(`${expression} ${options.join(' ')}`.trim(), async () => {
      const scheme = composeScheme(expression, options);
      // A protocol-free scheme reads the answer as Search-R1 would (what `--agent search-r1` does).
      const agent = textProtocol(scheme, scheme.terms[0]!.scheme.protocol ? undefined : 'search-r1');
      await fc.assert(
        fc.asyncProperty(episode, async (value) => {
          const ep = episodeFromJson(value, { file: 'fuzz.jsonl', line: 1 });
          const trajectory = episodeTrajectory(ep, agent);
          // An invalid step keeps its text: the whole response for one-turn protocols; a turn of the
          // transcript (end markers dropped, ProRAG's opening <step> restored) for multi-turn ones.
          for (const step of trajectory.steps)
            if (step.action.type === 'invalid') assert.ok(agent === 'search-r1' || agent === 'prorag' ? typeof step.raw === 'string' : step.raw === ep.response, JSON.stringify(step));
          const r = await scheme.compute({ trajectory, episode: ep });
          assert.ok(Number.isFinite(r.total), `total ${r.total}`);
          assert.deepEqual(Object.keys(r.components).sort(), [...scheme.components].sort());
          for (const [c, v] of Object.entries(r.components)) assert.ok(Number.isFinite(v), `${c} = ${v}`);
        }),
        { seed: SEED, numRuns: 150 },
      );
    });
  }
});

describe('reward --texts over a file of arbitrary episodes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ragtrail-reward-fuzz-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  it('scores every line, in order, with the sums of what it wrote', async () => {
    const scheme = composeScheme('0.5*f1+lws-stage1+search-r1-format', ['compat=authors']);
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(episode, { minLength: 1, maxLength: 8 }), async (eps) => {
        const file = join(dir, `in${++n}.jsonl`);
        const out = join(dir, `out${n}.jsonl`);
        writeFileSync(file, eps.map((e) => JSON.stringify(e)).join('\n') + '\n');
        const { count, sums } = await scoreTexts(file, out, scheme);
        assert.equal(count, eps.length);
        const rows = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; total: number });
        assert.deepEqual(rows.map((r) => r.id), eps.map((e) => String(e.id)));
        const total = rows.reduce((a, r) => a + r.total, 0);
        assert.ok(Number.isFinite(sums['total']!) && Math.abs(sums['total']! - total) < 1e-9 * Math.max(1, Math.abs(total)));
      }),
      { seed: SEED, numRuns: 25 },
    );
  });
});
