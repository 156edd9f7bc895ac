/**
 * The gym policy on a citing protocol (ARENA): answer candidates with citation sets, the citation
 * features on a hand-built state, and GRPO with the arena reward (with and without its relevance
 * term) on hand-made questions with their own references.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { Question } from '../../src/core/types.js';
import type { Action } from '../../src/core/trajectory.js';
import { getProtocol } from '../../src/agents/registry.js';
import { RagEnv, type State } from '../../src/env/env.js';
import { citationPrecision } from '../../src/eval/citations.js';
import { CITATION_RULES, generateCandidates, sameGymAction } from '../../src/learn/gym/candidates.js';
import { CITATION_FEATURES, GYM_FEATURES, gymFeatureNames, gymFeatures } from '../../src/learn/gym/features.js';
import { choicesFor, GymPolicy, indexOf } from '../../src/learn/gym/policy.js';
import { sampleEpisode } from '../../src/learn/gym/rollout.js';
import { arenaGrpoConfig, trainRl } from '../../src/learn/gym/train.js';
import type { Retriever } from '../../src/retrieval/types.js';
import { goldReferenceNumbers } from '../../src/rewards/arena.js';
import { tempDir } from '../helpers.js';

const arena = getProtocol('arena');
/** Questions with their own references never search; a search would fail the test. */
const noRetriever: Retriever = {
  name: 'none',
  search: async () => assert.fail('no search expected'),
  searchBatch: async () => assert.fail('no search expected'),
};
const env = new RagEnv({ retriever: noRetriever, topK: 5, maxTurns: 2, maxSearches: 1 });

const q: Question = {
  id: 'q1',
  question: 'Who directed Gardens of Crown?',
  answers: ['Pyvo Preastaford'],
  supporting: ['p1'],
  context: [
    { id: 'p1', title: 'Gardens of Crown', text: 'Gardens of Crown is a 2024 thriller film directed by Pyvo Preastaford.' },
    { id: 'p2', title: 'Pyvo Preastaford', text: 'Pyvo Preastaford is a film director born in Shyndport.' },
    { id: 'p3', title: 'The Midnight Crown', text: 'The Midnight Crown is a 2001 comedy film directed by Elumoon Nosivford.' },
  ],
};

const citationsOf = (state: State, answer: string) =>
  generateCandidates(state, arena).flatMap((c) => (c.action.type === 'answer' && c.action.answer === answer ? [{ citations: c.action.citations, rule: c.citationRule }] : []));

/** The CITATION_FEATURES block of a candidate's vector, rounded. */
function citeBlock(state: State, action: Action): number[] {
  const choice = choicesFor(state, arena, [action]);
  const x = choice.features[indexOf(choice, action)]!;
  return [...x.slice(GYM_FEATURES.length)].map((v) => Number(v.toFixed(4)));
}

describe('gym candidates of a citing protocol (arena)', () => {
  const state = env.reset(q);

  it('every candidate is an answer with a citation list; (answer, citations) pairs are distinct', () => {
    const cands = generateCandidates(state, arena);
    assert.ok(cands.length > 0);
    const keys = cands.map((c) => {
      assert.equal(c.action.type, 'answer');
      const a = c.action as Extract<Action, { type: 'answer' }>;
      assert.ok(Array.isArray(a.citations), JSON.stringify(a));
      assert.deepEqual(a.citations, [...a.citations!].sort((x, y) => x - y));
      assert.ok(CITATION_RULES.includes(c.citationRule!));
      return `${a.answer}|${a.citations!.join(',')}`;
    });
    assert.equal(new Set(keys).size, keys.length);
    // The answers are the spans of the references (here the question's own context), in the usual order;
    // "film" is what "… is a film …" says a thing is (the lower-case spans of occupations and genres).
    assert.deepEqual([...new Set(cands.map((c) => (c.action as { answer: string }).answer))], ['Gardens of Crown', 'Pyvo Preastaford', '2024', 'Shyndport', 'film', 'The Midnight Crown', 'Elumoon Nosivford', '2001']);
  });

  it('the citation sets of one answer, rule by rule, without repeats', () => {
    // References holding "Pyvo Preastaford": 1 and 2; naming the question entity "Gardens of Crown": 1.
    // By overlap with the question (entity, then "directed"): 1, 2, 3 — top1 = [1] and top2 = [1, 2] repeat earlier sets.
    assert.deepEqual(citationsOf(state, 'Pyvo Preastaford'), [
      { citations: [1, 2], rule: 'answer' },
      { citations: [1], rule: 'entity' },
      { citations: [1, 2, 3], rule: 'all' },
      { citations: [], rule: 'none' },
    ]);
    assert.deepEqual(citationsOf(state, 'Shyndport'), [
      { citations: [2], rule: 'answer' },
      { citations: [1], rule: 'entity' },
      { citations: [1, 2], rule: 'answer+entity' },
      { citations: [1, 2, 3], rule: 'all' },
      { citations: [], rule: 'none' },
    ]);
  });

  it('a limit on citation sets per answer keeps the first rules', () => {
    const cands = generateCandidates(state, arena, { citationSets: 2 });
    const pyvo = cands.filter((c) => c.action.type === 'answer' && c.action.answer === 'Pyvo Preastaford');
    assert.deepEqual(pyvo.map((c) => c.citationRule), ['answer', 'entity']);
  });

  it('citation features by hand: none, share cited, shares holding the answer / naming a question entity / neither, left-out answer and entity references', () => {
    const cite = (citations: number[]): Action => ({ type: 'answer', answer: 'Pyvo Preastaford', citations });
    assert.deepEqual(CITATION_FEATURES, ['cite:none', 'cite:share_of_references', 'cite:share_holding_answer', 'cite:share_naming_question_entity', 'cite:share_holding_neither', 'cite:leaves_out_answer_reference', 'cite:leaves_out_entity_reference', 'answer:in_entity_reference']);
    // The last feature is the answer's own: reference 1 names the question entity and holds "Pyvo Preastaford".
    assert.deepEqual(citeBlock(state, cite([1])), [0, 0.3333, 1, 1, 0, 1, 0, 1]);
    assert.deepEqual(citeBlock(state, cite([1, 2])), [0, 0.6667, 1, 0.5, 0, 0, 0, 1]);
    assert.deepEqual(citeBlock(state, cite([1, 2, 3])), [0, 1, 0.6667, 0.3333, 0.3333, 0, 0, 1]);
    assert.deepEqual(citeBlock(state, cite([3])), [0, 0.3333, 0, 0, 1, 1, 1, 1]);
    assert.deepEqual(citeBlock(state, cite([])), [1, 0, 0, 0, 0, 1, 1, 1]);
    // A demonstrated answer the generator would not propose is described the same way.
    assert.deepEqual(citeBlock(state, { type: 'answer', answer: 'Pyvo Preastaford', citations: [2, 3] }), [0, 0.6667, 0.5, 0, 0.5, 1, 1, 1]);
    // An answer without a relevance list cites nothing.
    assert.deepEqual(citeBlock(state, { type: 'answer', answer: 'Pyvo Preastaford' }), [1, 0, 0, 0, 0, 1, 1, 1]);
    // "Shyndport" is only in reference 2, which does not name the question entity.
    assert.deepEqual(citeBlock(state, { type: 'answer', answer: 'Shyndport', citations: [2] }), [0, 0.3333, 1, 0, 0, 0, 1, 0]);
  });

  it('actions differing only in their citations are different candidates', () => {
    const a: Action = { type: 'answer', answer: 'Pyvo Preastaford', citations: [1] };
    const b: Action = { type: 'answer', answer: 'pyvo preastaford', citations: [1, 1] };
    assert.ok(sameGymAction(a, b));
    assert.ok(!sameGymAction(a, { ...a, citations: [1, 2] }));
    assert.ok(!sameGymAction(a, { type: 'answer', answer: 'Pyvo Preastaford' }));
    const given: Action = { type: 'answer', answer: 'Pyvo Preastaford', citations: [2, 3] };
    const choice = choicesFor(state, arena, [given, a]);
    assert.equal(choice.candidates[indexOf(choice, given)]!.source, 'given');
    assert.deepEqual(choice.candidates[indexOf(choice, a)]!.action, a);
    assert.equal(choice.candidates.length, generateCandidates(state, arena).length + 1);
  });

  it('without references of its own, the one search candidate is the fixed retrieval of the question', () => {
    const bare = env.reset({ id: 'q2', question: 'Who directed Gardens of Crown?', answers: ['x'] });
    assert.deepEqual(generateCandidates(bare, arena), [{ action: { type: 'search', query: 'Who directed Gardens of Crown?' }, source: 'question', sentenceOverlap: 0 }]);
  });

  it('the feature set and saved policies: arena adds the citation block; other protocols keep theirs', () => {
    assert.deepEqual(gymFeatureNames(arena), [...GYM_FEATURES, ...CITATION_FEATURES]);
    for (const name of ['reasonrag', 'search-r1', 'rag', 'prorag'] as const) {
      const p = getProtocol(name);
      assert.deepEqual(gymFeatureNames(p), GYM_FEATURES);
      assert.equal(GymPolicy.fresh(p).model.dim, GYM_FEATURES.length);
      const s = env.reset(q);
      for (const c of generateCandidates(s, p)) {
        assert.equal(gymFeatures(s, c, p).length, GYM_FEATURES.length);
        if (c.action.type === 'answer') assert.equal(c.action.citations, undefined);
      }
    }
    const tmp = tempDir();
    after(tmp.cleanup);
    const policy = GymPolicy.fresh(arena);
    assert.equal(policy.model.dim, GYM_FEATURES.length + CITATION_FEATURES.length);
    const path = join(tmp.dir, 'arena.json');
    policy.save(path);
    assert.equal(GymPolicy.load(path).model.dim, policy.model.dim);
    assert.throws(() => GymPolicy.load(path, getProtocol('reasonrag')), /trained for arena/);
  });
});

// ------------------------------------------------------------------------- learning to cite

/**
 * "Who directed F?" over four references in a shuffled order: F's page (gold), the director's page
 * (holds the answer, not gold), another film's page and its director's. Citing the references that
 * hold the answer is not enough; citing F's page alone is the gold.
 */
function makeQuestions(n: number): Question[] {
  const A = ['Silent', 'Hollow', 'Northern', 'Golden', 'Broken', 'Distant', 'Crimson', 'Quiet', 'Iron', 'Falling', 'Hidden', 'Winter'];
  const B = ['Harbor', 'Lantern', 'Meadow', 'Mirror', 'Garden', 'Island', 'Witness', 'Voyage', 'Bridge', 'Tower'];
  const F = ['Maren', 'Oskar', 'Ilse', 'Tomas', 'Vera', 'Anselm', 'Britta', 'Jorun', 'Kaspar', 'Liesel', 'Nils'];
  const L = ['Tolvik', 'Brandt', 'Oralimann', 'Stornford', 'Keavoxby', 'Pravova', 'Isirnard', 'Kroxova', 'Lawood', 'Vendby', 'Retreski', 'Nosivford', 'Elaxwood'];
  const C = ['Shyndport', 'Orondgate', 'Stoshaven', 'Linport', 'Canstead', 'Krapavburg'];
  const out: Question[] = [];
  for (let i = 0; i < n; i++) {
    const film = `${A[i % A.length]} ${B[(i * 7) % B.length]}`;
    const other = `${A[(i + 5) % A.length]} ${B[(i * 3 + 1) % B.length]}`;
    const director = `${F[i % F.length]} ${L[(i * 5) % L.length]}`;
    const otherDirector = `${F[(i + 4) % F.length]} ${L[(i * 5 + 6) % L.length]}`;
    const refs = [
      { id: `f${i}`, title: film, text: `${film} is a ${1950 + i} drama film directed by ${director}.` },
      { id: `d${i}`, title: director, text: `${director} is a film director born in ${C[i % C.length]}.` },
      { id: `o${i}`, title: other, text: `${other} is a ${1990 + i} comedy film directed by ${otherDirector}.` },
      { id: `e${i}`, title: otherDirector, text: `${otherDirector} was born in ${C[(i + 2) % C.length]} and lived in ${C[(i + 3) % C.length]}.` },
    ];
    // A fixed rotation per question, so that the gold is not always reference 1.
    const context = refs.map((_, k) => refs[(k + i) % refs.length]!);
    out.push({ id: `c${i}`, question: `Who directed ${film}?`, answers: [director], supporting: [`f${i}`], context });
  }
  return out;
}

describe('GRPO with the arena reward on a citing gym policy', () => {
  const questions = makeQuestions(24);

  /** Expected citation precision of the first decision under the policy's distribution (τ = 1), over the questions. */
  const expectedPrecision = (p: GymPolicy) => {
    let sum = 0;
    for (const question of questions) {
      const state = env.reset(question);
      const gold = goldReferenceNumbers(question.context!.map((r) => r.id), question.supporting!);
      const choice = choicesFor(state, arena);
      const lp = p.logProbs(choice, 1);
      choice.candidates.forEach((c, i) => (sum += Math.exp(lp[i]!) * citationPrecision(c.action.type === 'answer' ? c.action.citations : undefined, gold)));
    }
    return sum / questions.length;
  };

  it('arenaGrpoConfig: the arena scheme, k2 KL at 0.04, 7 episodes per question; the control drops relevance', () => {
    assert.deepEqual(arenaGrpoConfig(), { algo: 'grpo', reward: 'arena', rewardOptions: [], kl: 'k2', beta: 0.04, groupSize: 7 });
    assert.deepEqual(arenaGrpoConfig({ relevance: false }).rewardOptions, ['relevance_weight=0']);
  });

  it('with the relevance reward the policy learns to cite the gold reference', async () => {
    const before = expectedPrecision(GymPolicy.fresh(arena));
    const treated = GymPolicy.fresh(arena);
    const log = await trainRl(treated, { env, questions }, { ...arenaGrpoConfig(), epochs: 6, questionsPerBatch: 8 });
    const after = expectedPrecision(treated);
    assert.ok(log.at(-1)!['reward']! > log[0]!['reward']!, `sampled reward ${log[0]!['reward']} → ${log.at(-1)!['reward']}`);
    assert.ok(after > before + 0.3, `precision ${before} → ${after}`);
    // The greedy answer carries the gold citation.
    const t = (await sampleEpisode(env, treated, questions[0]!, 0, 0)).trajectory;
    const gold = goldReferenceNumbers(questions[0]!.context!.map((r) => r.id), ['f0']);
    assert.deepEqual(t.steps.at(-1)!.action, { type: 'answer', answer: questions[0]!.answers[0], citations: gold });
  });

  it('the control trains on format + accuracy + bonus only: each batch\'s mean reward is 1 + 11 · EM (the treatment\'s is more)', async () => {
    const run = (relevance: boolean) => trainRl(GymPolicy.fresh(arena), { env, questions }, { ...arenaGrpoConfig({ relevance }), epochs: 1, questionsPerBatch: 8 });
    const control = await run(false);
    for (const e of control) assert.ok(Math.abs(e['reward']! - (1 + 11 * e['em']!)) < 1e-9, `batch ${e.step}: reward ${e['reward']}, EM ${e['em']}`);
    // With the relevance term, partial and full citation matches add to the reward (the bonus then also needs relevance 1).
    const treated = await run(true);
    assert.ok(treated.some((e) => Math.abs(e['reward']! - (1 + 11 * e['em']!)) > 0.01));
  });
});
