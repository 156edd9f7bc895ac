/**
 * The world's profiles and its balance (issue 43): yes/no and either-or answers without a lean in
 * either profile, and the `deep` profile's declared properties measured on a generated world — chain
 * lengths, the first search (the question as asked) missing the first passage needed, the real title's
 * search finding it, a tempting wrong answer on the page the first search finds, a search budget
 * that wasted searches cost long chains, and a greedy policy trained on the outcome reward alone that
 * still searches after it holds every passage it needs (over-search: something for LWS to correct).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { normalizeAnswer } from '../../src/core/text.js';
import type { Question } from '../../src/core/types.js';
import { generateWorld, type World, writeWorld } from '../../src/corpus/world/index.js';
import { getProtocol } from '../../src/agents/registry.js';
import { exactMatch } from '../../src/core/metrics.js';
import { PROFILES } from '../../src/corpus/world/profiles.js';
import { RagEnv, type State } from '../../src/env/env.js';
import '../../src/learn/index.js';
import { options } from '../../src/learn/gym/candidates.js';
import { CandidateTeacher } from '../../src/learn/gym/teacher.js';
import { buildIndex, openRetriever } from '../../src/retrieval/index-dir.js';
import type { Retriever } from '../../src/retrieval/types.js';
import { episodeSearchUse } from '../../src/eval/search-use.js';
import type { Cell } from '../../src/eval/results.js';
import { runPipeline } from '../../src/pipelines/pipeline.js';
import { loadRecipe } from '../../src/pipelines/recipe.js';
import { readFileSync } from 'node:fs';
import { tempDir } from '../helpers.js';

const share = (xs: readonly boolean[]) => xs.filter(Boolean).length / xs.length;

/** Shares of "yes" among yes/no answers and of "the first option" among either-or answers. */
function lean(qs: readonly Question[]) {
  const yesNo = qs.filter((q) => q.answers[0] === 'yes' || q.answers[0] === 'no');
  const either = qs.filter((q) => options(q.question).length === 2);
  const first = either.map((q) => q.answers.some((a) => normalizeAnswer(a) === normalizeAnswer(options(q.question)[0]!)));
  return { yes: share(yesNo.map((q) => q.answers[0] === 'yes')), yesNo: yesNo.length, first: share(first), either: either.length };
}

describe('world balance: no answer a guess can lean on', () => {
  for (const profile of ['basic', 'deep'] as const) {
    it(`${profile}: yes/no answers and the position of the right option are balanced (two seeds)`, () => {
      for (const seed of [0, 1]) {
        const l = lean(generateWorld({ seed, entities: 10_000, profile }).questions);
        // Binomial sd at n ≈ 200 is 0.035: 0.40–0.60 is about three sd either side.
        assert.ok(l.yesNo >= 150 && l.yes > 0.4 && l.yes < 0.6, `${profile} seed ${seed}: yes ${l.yes.toFixed(3)} of ${l.yesNo}`);
        assert.ok(l.either >= 300 && l.first > 0.4 && l.first < 0.6, `${profile} seed ${seed}: first option ${l.first.toFixed(3)} of ${l.either}`);
      }
    });
  }
});

describe('the deep profile', () => {
  const tmp = tempDir();
  let basic: World;
  let deep: World;
  const retrievers: Record<string, Retriever> = {};
  before(async () => {
    basic = generateWorld({ seed: 5, entities: 3000, questions: 600, profile: 'basic' });
    deep = generateWorld({ seed: 5, entities: 3000, questions: 600, profile: 'deep' });
    for (const [name, w] of [['basic', basic], ['deep', deep]] as const) {
      await writeWorld(join(tmp.dir, name), w);
      await buildIndex(join(tmp.dir, name, 'corpus.jsonl'), join(tmp.dir, name, 'index'), { quiet: true });
      retrievers[name] = await openRetriever(join(tmp.dir, name, 'index'));
    }
  });
  after(async () => {
    for (const r of Object.values(retrievers)) await r.close?.();
    tmp.cleanup();
  });

  const isAlt = (id: string | undefined) => !!id?.endsWith('-alt');
  // The gold-plan teacher (competence 1) in the deep world's environment, within the profile's own
  // budget (8 searches, 16 turns): `finish` plays an episode from a state to its end.
  const goldTeacher = () => {
    const { maxTurns, maxSearches } = PROFILES.deep.env;
    const env = new RagEnv({ retriever: retrievers['deep']!, topK: 5, maxTurns: maxTurns!, maxSearches: maxSearches! });
    const teacher = new CandidateTeacher(getProtocol('search-r1'), retrievers['deep']!, 5, 1);
    const finish = async (s: State) => {
      while (!s.done) s = (await env.step(s, (await teacher.propose(s, { n: 1, temperature: 1, seed: 0 }))[0]!)).state;
      return s;
    };
    return { env, finish };
  };

  it('asks chains of 3–6 relation hops (one more lookup where a work goes by its alternative title)', () => {
    const comp = deep.questions.filter((q) => q.type === 'compositional');
    const relationHops = comp.map((q) => q.decomposition!.filter((d) => !isAlt(d.passageId)).length);
    assert.deepEqual([...new Set(relationHops)].sort(), [3, 4, 5, 6]);
    for (const q of deep.questions) assert.equal(q.metadata?.['hops'], q.decomposition!.length, q.id);
    assert.ok(share(comp.map((q) => isAlt(q.decomposition![0]!.passageId))) > 0.3, 'alternative titles in the chains');
    assert.equal(deep.stats.profile, 'deep');
    assert.ok(deep.stats.alternativeTitles > 0 && basic.stats.alternativeTitles === 0);
  });

  it('the question as asked misses the first passage it needs about half the time (basic: rarely); the real title finds it', async () => {
    const firstMiss = async (w: World, r: Retriever) => {
      const misses: boolean[] = [];
      const reformulated: boolean[] = [];
      for (const q of w.questions) {
        const first = q.decomposition!.find((d) => !isAlt(d.passageId))!;
        misses.push(!(await r.search(q.question, 3)).some((h) => h.passageId === first.passageId));
        if (isAlt(q.decomposition![0]!.passageId)) reformulated.push((await r.search(first.question, 3)).some((h) => h.passageId === first.passageId));
      }
      return { miss: share(misses), found: reformulated.length ? share(reformulated) : NaN };
    };
    const b = await firstMiss(basic, retrievers['basic']!);
    const d = await firstMiss(deep, retrievers['deep']!);
    assert.ok(b.miss < 0.15, `basic first-query miss ${b.miss}`);
    assert.ok(d.miss > 0.4, `deep first-query miss ${d.miss}`);
    assert.ok(d.found > 0.9, `deep: the sub-question with the real title finds the page ${d.found}`);
  });

  it('the search budget binds: a searcher that wastes searches leaves long chains unfinished', async () => {
    // The gold-plan teacher after 0, 2 or 4 searches for something unrelated: the chains of 5 or more
    // lookups are the ones the budget cuts.
    const { env, finish } = goldTeacher();
    const chains = deep.questions.filter((q) => q.type === 'compositional').slice(0, 150);
    const emOfLong = async (wasted: number) => {
      const right: boolean[] = [];
      for (const q of chains) {
        let s = env.reset(q);
        for (let k = 0; k < wasted; k++) s = (await env.step(s, { action: { type: 'search', query: 'annual rainfall statistics' }, raw: '<search>annual rainfall statistics</search>' })).state;
        s = await finish(s);
        const a = [...s.steps].reverse().find((x) => x.action.type === 'answer')?.action;
        if (q.decomposition!.length >= 5) right.push(a?.type === 'answer' && exactMatch(a.answer, q.answers) === 1);
      }
      return share(right);
    };
    const [none, two, four] = [await emOfLong(0), await emOfLong(2), await emOfLong(4)];
    // Measured: 0.823, 0.722, 0.190 on 79 long chains (0.608, 0.544, 0.139 before the teacher re-read pages).
    assert.ok(none > 0.5 && two < none && four < none / 2, `EM on long chains after 0, 2, 4 wasted searches: ${none}, ${two}, ${four}`);
  });

  it('over-search: a greedy policy trained on the outcome reward alone searches after it holds every passage it needs, far more than the gold-plan teacher', async () => {
    // The teacher (competence 1) answers once the chain's last page is in. It searches again only to
    // re-read a page that came in with a search for something else (its answer is then not among the
    // candidates, which favour the page searched for).
    const { env, finish } = goldTeacher();
    const taught: number[] = [];
    for (const q of deep.questions.slice(0, 200)) taught.push(episodeSearchUse(await finish(env.reset(q)), q)!.overSearch);
    const teacherOver = taught.reduce((a, b) => a + b, 0) / taught.length;
    // Measured: 0.105 searches a question.
    assert.ok(teacherOver <= 0.15, `gold-plan teacher over-search ${teacherOver}`);
    // The LWS recipe's outcome-only DAPO (its settings: 3 epochs, groups of 8, EM), at test size: this
    // world (seed 5, 3,000 entities), a warm start on 300 teacher questions, DAPO on 100.
    const { recipe } = loadRecipe('lws');
    const small = {
      ...recipe, world: { ...recipe.world, entities: 3000 }, base: { ...recipe.base!, questions: 300 }, seeds: [5], trainQuestions: 100,
      stages: recipe.stages.filter((x) => x.id === 'outcome-dapo'), claims: [],
      evaluate: { ...recipe.evaluate, systems: recipe.evaluate.systems.filter((x) => x.policy === 'base' || x.policy === 'outcome-dapo') },
    };
    const out = join(tmp.dir, 'lws-outcome');
    await runPipeline({ recipe: small, recipePath: 'lws', out, log: () => {} });
    const cells = (JSON.parse(readFileSync(join(out, 'seed-5', 'eval', 'results.json'), 'utf8')) as { cells: Cell[] }).cells;
    const dapo = cells.find((c) => c.system === 'DAPO (outcome only)')!.searchUse!;
    // Measured: 1.033 searches a question after the evidence was complete, on 0.267 of the 60 test
    // questions, ten times the teacher's. Seeds 6–9: 0.48–0.68 searches, on 0.13–0.32 of the questions.
    assert.equal(dapo.n, 60);
    assert.ok(dapo.overSearch >= 0.2 && dapo.overSearchShare >= 0.1 && dapo.overSearch > 3 * teacherOver, `${JSON.stringify(dapo)}, teacher ${teacherOver}`);
  });

  it('the alternative-title page names a different work with its maker: a tempting wrong answer', () => {
    const byId = new Map(deep.passages.map((p) => [p.id, p]));
    const makers = new Set(deep.graph.entities.filter((e) => e.type === 'person').map((e) => e.name));
    let tempting = 0;
    let n = 0;
    for (const q of deep.questions) {
      const [alt, next] = q.decomposition!;
      if (!isAlt(alt?.passageId) || !next) continue;
      n++;
      const text = byId.get(alt!.passageId!)!.text;
      // A person named on the page who is not the answer of the hop that follows.
      const named = [...makers].filter((m) => text.includes(m));
      if (named.some((m) => normalizeAnswer(m) !== normalizeAnswer(next.answer))) tempting++;
    }
    assert.ok(n > 50 && tempting / n > 0.95, `${tempting} of ${n}`);
  });
});
