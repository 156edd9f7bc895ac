/**
 * The chain features (issue 43): which relation a multi-hop question asks for next, which name of the
 * latest page is that relation's object, the real name behind an alternative title, and the answer of
 * the last relation, and the PRM-only features the readers give (the page needed next, a decided chain)
 * — on hand-written pages in the synthetic world's wording, with hand-checked values.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Action, RetrievedDoc, Step } from '../../src/core/trajectory.js';
import type { State } from '../../src/env/env.js';
import type { Embedder } from '../../src/retrieval/embedders/embedder.js';
import { FEATURES, featurize, PRM_ONLY_FEATURES, PROCESS_FEATURES, processFeatures } from '../../src/prm/features.js';
import { aliasObject, relationObjects, relationOrder, relationOverlap, speaksOf } from '../../src/prm/question-parts.js';

const Q = 'What is the nationality of the spouse of the lead actor of Stolen Voyage?';

const page = (title: string, text: string): RetrievedDoc => ({ passageId: title, title, text, score: 1 });
const search = (query: string, docs: RetrievedDoc[]): Step => ({ action: { type: 'search', query }, raw: query, docs });
const state = (question: string, steps: Step[]): State => ({ question: { id: 'q', question, answers: [] }, steps, done: false, mustAnswer: false, turnsLeft: 10, searchesLeft: 5 });

/** The named features of an action in a state. */
function features(s: State, action: Action): Record<string, number> {
  const v = processFeatures(s, { action, raw: '' });
  return Object.fromEntries(PROCESS_FEATURES.map((n, i) => [n, v[i]!]));
}

const film = page('Stolen Voyage', 'Stolen Voyage is a 1961 drama film directed by Ora Wexley. Stolen Voyage stars Kromeaar Tencroft in the leading role. Much of Stolen Voyage was filmed on location in Tithton.');
const actor = page('Kromeaar Tencroft', 'Kromeaar Tencroft was born in Oriwick. His spouse is Theina Gyelarcroft. Kromeaar Tencroft often worked with Ora Wexley.');
const spouse = page('Theina Gyelarcroft', 'Theina Gyelarcroft was a Coeshi novelist who was born in 1856 and died in 1946. She studied at Oriwick University.');

describe('question parts: relations in the order a chain asks them, and how text words them', () => {
  it('the relation nearest the named entity comes first; words right of it after all on the left', () => {
    assert.deepEqual([...relationOrder(Q)], [['nationality', 9], ['spouse', 6], ['lead', 3], ['actor', 2]]);
    // "the university the director of F graduated from": "director" (left, 2) before "university" (left, 5), "graduated" (right) last.
    const order = relationOrder('When was the university the director of Red Harbour graduated from founded?');
    assert.ok(order.get('director')! < order.get('university')! && order.get('university')! < order.get('graduated')!, JSON.stringify([...order]));
  });

  it('a sentence speaks of a relation by its stem or by a word a text uses for it', () => {
    assert.equal(speaksOf('Kromeaar Tencroft was born in Oriwick.', 'birthplace'), true);
    assert.equal(speaksOf('His spouse is Theina Gyelarcroft.', 'spouse'), true);
    assert.equal(speaksOf('Mira Holt married Theina Gyelarcroft.', 'spouse'), true);
    assert.equal(speaksOf('The first edition of the novel was issued by Cetyxelli Press.', 'author'), false);
    assert.equal(relationOverlap('Stolen Voyage stars Kromeaar Tencroft in the leading role.', ['nationality', 'spouse', 'lead', 'actor']), 0.5);
  });

  it("a relation's object: the mention just after its cue, else just before; years count, the subject does not", () => {
    assert.deepEqual(relationObjects('Kromeaar Tencroft was born in Oriwick.', 'birthplace'), ['Oriwick']);
    // The year follows "born": the demonym further on is not where she was born.
    assert.deepEqual(relationObjects('Born in 1932, Fosa Zialovley was a Hyrnoran novelist.', 'birthplace', (m) => m === 'Fosa Zialovley'), ['1932']);
    const notFilm = (m: string) => m === 'Stolen Voyage';
    assert.deepEqual(relationObjects('Stolen Voyage stars Kromeaar Tencroft in the leading role.', 'actor', notFilm), ['Kromeaar Tencroft']);
    assert.deepEqual(relationObjects('Kromeaar Tencroft plays the main character in Stolen Voyage.', 'actor', notFilm), ['Kromeaar Tencroft']);
  });

  it('an alternative-title sentence gives the real name: its first mention other than the question’s', () => {
    const named = (m: string) => m === 'The Witness of Kavathport';
    assert.equal(aliasObject('When The Second Voyage opened in Gatholora, it was billed as The Witness of Kavathport.', named), 'The Second Voyage');
    assert.equal(aliasObject('The Witness of Kavathport is the title under which The Second Voyage was first shown in Gatholora.', named), 'The Second Voyage');
    assert.equal(aliasObject('Some listings give the same title to The Quiet Sparrow, the 1993 film by Toen Cupraski.', named), undefined);
  });
});

describe('chain features of a three-hop question, hop by hop', () => {
  const s1 = state(Q, [search('Stolen Voyage', [film])]);
  const s2 = state(Q, [search('Stolen Voyage', [film]), search('Kromeaar Tencroft', [actor])]);
  const s3 = state(Q, [search('Stolen Voyage', [film]), search('Kromeaar Tencroft', [actor]), search('Theina Gyelarcroft', [spouse])]);

  it('on the film page the lead actor is the next relation’s object; the director and the location are not', () => {
    const f = (q: string) => features(s1, { type: 'search', query: q });
    assert.equal(f('Kromeaar Tencroft')['search:bridge_next_relation'], 1);
    assert.equal(f('Ora Wexley')['search:bridge_next_relation'], 0);
    assert.equal(f('Tithton')['search:bridge_next_relation'], 0);
    // Every name on the film's page is beside it: the older feature cannot tell them apart.
    assert.equal(f('Ora Wexley')['search:bridge'], 1);
    assert.equal(f('Kromeaar Tencroft')['search:relations_open'], 1);
  });

  it('after searching the actor, "lead" and "actor" are followed: the spouse is next, not the birthplace', () => {
    const f = (q: string) => features(s2, { type: 'search', query: q });
    assert.equal(f('Theina Gyelarcroft')['search:bridge_next_relation'], 1);
    assert.equal(f('Oriwick')['search:bridge_next_relation'], 0);
    assert.equal(f('Theina Gyelarcroft')['search:relations_open'], 0.5);
  });

  it('on the spouse’s page the demonym answers the last relation; her birth year and a name from the chain do not', () => {
    const f = (a: string) => features(s3, { type: 'answer', answer: a });
    assert.deepEqual([f('Coeshi')['answer:beside_next_relation'], f('Coeshi')['answer:object_of_last_relation']], [1, 1]);
    assert.equal(f('1856')['answer:object_of_last_relation'], 0);
    assert.equal(f('Oriwick University')['answer:object_of_last_relation'], 0);
    assert.equal(f('Coeshi')['answer:relations_open'], 0.25);
    // One hop earlier the spouse is the next relation's object, but not the last one's.
    const early = features(s2, { type: 'answer', answer: 'Theina Gyelarcroft' });
    assert.deepEqual([early['answer:beside_next_relation'], early['answer:object_of_last_relation']], [1, 0]);
  });

  it('an alternative-title page: the real name is the query; the other film’s director is no relation’s object yet', () => {
    const q = 'Who directed The Witness of Kavathport?';
    const alt = page('The Witness of Kavathport', 'When The Second Voyage opened in Gatholora, it was billed as The Witness of Kavathport. Some listings give the same title to The Quiet Sparrow, the 1993 film directed by Toen Cupraski.');
    const s = state(q, [search('The Witness of Kavathport', [alt])]);
    const f = (x: string) => features(s, { type: 'search', query: x });
    assert.equal(f('The Second Voyage')['search:real_name_of_question_entity'], 1);
    assert.equal(f('Toen Cupraski')['search:real_name_of_question_entity'], 0);
    assert.equal(f('Toen Cupraski')['search:bridge_next_relation'], 0);
    assert.equal(features(s, { type: 'answer', answer: 'Toen Cupraski' })['answer:beside_next_relation'], 0);
    // Once the real title has been searched, its own page's director is the answer.
    const real = page('The Second Voyage', 'The Second Voyage is a Gatholoran documentary film from 1974, made by the director Vavina Projovcroft.');
    const after = state(q, [search('The Witness of Kavathport', [alt]), search('The Second Voyage', [real])]);
    const a = features(after, { type: 'answer', answer: 'Vavina Projovcroft' });
    assert.deepEqual([a['answer:beside_next_relation'], a['answer:object_of_last_relation']], [1, 1]);
  });
});

describe('PRM-only features from the readers (features.ts PRM_ONLY_FEATURES)', () => {
  const hash = { embed: async (texts: string[]) => texts.map(() => new Float32Array(4)) } as unknown as Embedder;
  /** The named PRM-only features of an action in a state. */
  async function prmOnly(s: State, action: Action): Promise<Record<string, number>> {
    const [v] = await featurize(hash, s, [{ action, raw: '' }]);
    return Object.fromEntries(PRM_ONLY_FEATURES.map((n, i) => [n, v![FEATURES.length - PRM_ONLY_FEATURES.length + i]!]));
  }
  const two = state(Q, [search('Stolen Voyage', [film]), search('Kromeaar Tencroft', [actor])]);
  const all = state(Q, [search('Stolen Voyage', [film]), search('Kromeaar Tencroft', [actor]), search('Theina Gyelarcroft', [spouse])]);

  it('a query naming the page the chain needs next, before the pages decide the question', async () => {
    const needed = await prmOnly(two, { type: 'search', query: 'Theina Gyelarcroft' });
    assert.deepEqual([needed['search:names_needed_page'], needed['search:question_decided']], [1, 0]);
    // The director is named on a retrieved page but the chain does not lead through him.
    assert.equal((await prmOnly(two, { type: 'search', query: 'Ora Wexley nationality' }))['search:names_needed_page'], 0);
    const answer = await prmOnly(two, { type: 'answer', answer: 'Coeshi' });
    assert.deepEqual([answer['answer:chain_decided'], answer['answer:chain_wins']], [0, 0]);
  });

  it('once the spouse’s page is in, the chain is decided: its answer wins, another name does not, a search needs nothing', async () => {
    const right = await prmOnly(all, { type: 'answer', answer: 'Coeshi' });
    assert.deepEqual([right['answer:chain_decided'], right['answer:chain_wins'], right['search:question_decided']], [1, 1, 0]);
    const wrong = await prmOnly(all, { type: 'answer', answer: 'Oriwick' });
    assert.deepEqual([wrong['answer:chain_decided'], wrong['answer:chain_wins']], [1, 0]);
    const more = await prmOnly(all, { type: 'search', query: 'Theina Gyelarcroft nationality' });
    assert.deepEqual([more['search:question_decided'], more['search:names_needed_page'], more['answer:chain_decided']], [1, 0, 0]);
  });
});
