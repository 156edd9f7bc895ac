/**
 * Over-search and ending early (eval/search-use.ts), hand-counted on built episodes: a two-page
 * question (pages p1 and p2) searched in different orders and amounts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Trajectory } from '../../src/core/trajectory.js';
import type { Question } from '../../src/core/types.js';
import { episodeSearchUse, searchUse } from '../../src/eval/search-use.js';

const doc = (passageId: string, title = passageId) => ({ passageId, title, text: '', score: 1 });
const search = (query: string, ...docs: ReturnType<typeof doc>[]) => ({ action: { type: 'search' as const, query }, raw: '', docs });
const answer = (a: string) => ({ action: { type: 'answer' as const, answer: a }, raw: '' });
const extract = (e: string) => ({ action: { type: 'extract' as const, evidence: e }, raw: '' });
const episode = (id: string, steps: Trajectory['steps']) => ({ id, steps }) as unknown as Trajectory;

const q: Question = { id: 'q', question: 'Who?', answers: ['x'], supporting: ['p1', 'p2'] };

describe('search use against the supporting passages', () => {
  it('counts the searches after both pages were found, and whether the episode ended before', () => {
    // Finds p1, then p2, answers: nothing wasted, nothing missed.
    assert.deepEqual(episodeSearchUse(episode('q', [search('a', doc('p1')), search('b', doc('p2'), doc('z')), answer('x')]), q), { overSearch: 0, answeredEarly: false });
    // Both pages in one search, then two more searches and an extract before answering: 2 over.
    assert.deepEqual(episodeSearchUse(episode('q', [search('a', doc('p2'), doc('p1')), extract('e'), search('b', doc('p1')), search('c'), answer('x')]), q), { overSearch: 2, answeredEarly: false });
    // Answers after p1 only: early. A search that repeats p1 is not over-search while p2 is missing.
    assert.deepEqual(episodeSearchUse(episode('q', [search('a', doc('p1')), search('a', doc('p1')), answer('x')]), q), { overSearch: 0, answeredEarly: true });
    // Out of turns without an answer, both pages found on the last search: complete, not early.
    assert.deepEqual(episodeSearchUse(episode('q', [search('a', doc('p1')), search('b', doc('p2'))]), q), { overSearch: 0, answeredEarly: false });
    // No search at all: early; steps after the answer are not read.
    assert.deepEqual(episodeSearchUse(episode('q', [answer('x'), search('late', doc('p1'), doc('p2')), search('later')]), q), { overSearch: 0, answeredEarly: true });
  });

  it('matches a supporting page by its title (HotpotQA names titles) as well as by its id', () => {
    const titled: Question = { ...q, supporting: ['Page One', 'p2'] };
    assert.deepEqual(episodeSearchUse(episode('q', [search('a', doc('id-9', 'Page One'), doc('p2')), search('b'), answer('x')]), titled), { overSearch: 1, answeredEarly: false });
  });

  it('averages over the questions that name their passages, and is absent where none does', () => {
    const qs = new Map<string, Question>([
      ['a', { ...q, id: 'a' }],
      ['b', { ...q, id: 'b' }],
      ['c', { ...q, id: 'c', supporting: [] }],
    ]);
    const ts = [
      episode('a', [search('1', doc('p1'), doc('p2')), search('2'), search('3'), search('4'), answer('x')]),
      episode('b', [search('1', doc('p1')), answer('x')]),
      episode('c', [search('1'), search('2'), answer('x')]),
    ];
    // a: 3 over, not early; b: 0 over, early; c: not counted.
    assert.deepEqual(searchUse(ts, qs), { n: 2, overSearch: 1.5, overSearchShare: 0.5, answeredEarly: 0.5 });
    assert.equal(searchUse([ts[2]!], qs), undefined);
  });
});
