/**
 * Property-based tests of every protocol's parser (fast-check, fixed seed and run counts so CI runs
 * the same cases): arbitrary text never throws and gives a well-formed action, and parse(format(a))
 * = a for actions whose text the protocol can carry.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Action, Step } from '../../src/core/trajectory.js';
import { PROTOCOLS } from '../../src/agents/registry.js';
import { firstTag } from '../../src/agents/protocol.js';
import { extractDecision } from '../../src/agents/research.js';
import { parseReactAction } from '../../src/agents/rag-gym.js';
import type { State } from '../../src/env/env.js';

const SEED = 49;
const question = { id: 'q1', question: 'Who directed The Silent Harbor?', answers: ['Maren Tolvik'] };
const docs = [{ passageId: 'p1', title: 'The Silent Harbor', text: 'The Silent Harbor is a 1971 film directed by Maren Tolvik.', score: 3.2 }];
const searched: Step = { action: { type: 'search', query: 'Silent Harbor director' }, raw: '<search>Silent Harbor director</search>', docs };
const STATES: State[] = [
  { question, steps: [], done: false, mustAnswer: false, turnsLeft: 5, searchesLeft: 5 },
  { question, steps: [searched], done: false, mustAnswer: false, turnsLeft: 4, searchesLeft: 4 },
  { question, steps: [searched], done: false, mustAnswer: true, turnsLeft: 0, searchesLeft: 0 },
];
const NAMES = Object.keys(PROTOCOLS) as (keyof typeof PROTOCOLS)[];

// The pieces model output is made of: every protocol's tags, open and closed, ReAct heads, JSON bits.
const TAGS = ['search', 'answer', 'think', 'reflect', 'information', 'query', 'evidence', 'step', 'subquery', 'subanswer', 'retrieval', 'relevance', 'analysis'];
const FRAGMENTS = [
  ...TAGS.flatMap((t) => [`<${t}>`, `</${t}>`]),
  'Action: search[', 'Action: finish[', ']', '[', 'Answer:', 'Final answer：', '\n', ' ', '{', '}', '"', '\\', '"predicted_answer": ', '"generated_query": ', '"None"', ':', ',', '[1, 2]', '```json', 'None', 'Maren Tolvik', 'é', '\u0000', '\uffff', '\ud800', '😀',
];

const fullText = fc.string({ unit: 'binary', maxLength: 300 });
const tagSoup = fc.array(fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ maxLength: 8 })), { maxLength: 60 }).map((parts) => parts.join(''));
// Tags nested in each other, some left unclosed or closed by the wrong tag.
const nested: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.string({ maxLength: 10 }),
    fc.tuple(fc.constantFrom(...TAGS), fc.array(tie('node'), { maxLength: 3 }), fc.constantFrom('close', 'open', 'wrong')).map(([t, kids, end]) => `<${t}>${kids.join('')}${end === 'close' ? `</${t}>` : end === 'wrong' ? '</x>' : ''}`),
  ),
})).node;
// Long text: one fragment repeated up to 40,000 times (hundreds of kilobytes), the shape that made
// several parsers quadratic.
const huge = fc.tuple(fc.array(fc.constantFrom(...FRAGMENTS), { minLength: 1, maxLength: 3 }), fc.integer({ min: 1000, max: 40_000 })).map(([parts, n]) => parts.join('').repeat(n));

/** A parsed action is one of the four kinds; a valid one carries non-empty, trimmed text; an invalid one says why. */
function checkAction(a: Action, where: string): void {
  switch (a.type) {
    case 'search':
      assert.ok(a.query !== '' && a.query === a.query.trim(), `${where}: search query ${JSON.stringify(a.query)}`);
      break;
    case 'extract':
      assert.ok(a.evidence !== '' && a.evidence === a.evidence.trim(), `${where}: evidence ${JSON.stringify(a.evidence)}`);
      break;
    case 'answer':
      assert.ok(a.answer !== '' && a.answer === a.answer.trim(), `${where}: answer ${JSON.stringify(a.answer)}`);
      if (a.citations !== undefined) assert.ok(a.citations.every((c) => Number.isInteger(c)), `${where}: citations`);
      break;
    case 'invalid':
      assert.ok(typeof a.reason === 'string' && a.reason.length > 0, `${where}: invalid without a reason`);
      break;
    default:
      assert.fail(`${where}: unknown action type ${JSON.stringify(a)}`);
  }
}

function neverThrows(text: fc.Arbitrary<string>, numRuns: number): void {
  fc.assert(
    fc.property(text, (t) => {
      for (const name of NAMES) for (const s of STATES) checkAction(PROTOCOLS[name].parse(t, s), name);
    }),
    { seed: SEED, numRuns },
  );
}

describe('every parser, on arbitrary text, returns a well-formed action and never throws', () => {
  it('any unicode (lone surrogates, NUL, astral)', () => neverThrows(fullText, 2000));
  it('tag soup of every protocol’s tags, ReAct heads and JSON pieces', () => neverThrows(tagSoup, 2000));
  it('nested, unclosed and crossed tags', () => neverThrows(nested, 1000));
  it('huge text (hundreds of kB) in linear time', () => neverThrows(huge, 20));
});

// Text a protocol can carry in an action: non-empty, trimmed, one line, without the characters its
// syntax is made of (tags, ReAct brackets) — and not itself an "Answer:" line.
const content = fc
  .oneof(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }), fc.constantFrom('Paris', ' 1971 ', '"quoted"', 'a\\b', '{"x": 1}', 'Answer', 'search', 'None', 'n/a', '😀 é'))
  .map((s) => s.replace(/[<>[\]\r\n\u2028\u2029\u0085]/g, ' ').trim())
  .filter((s) => s !== '' && !/^(?:final\s+)?answer\s*[:：]/i.test(s));

describe('parse(format(action)) = action for every allowed action of every protocol', () => {
  for (const name of NAMES) {
    it(name, () => {
      const p = PROTOCOLS[name];
      fc.assert(
        fc.property(content, fc.constantFrom(...STATES), fc.array(fc.integer({ min: 1, max: 20 }), { maxLength: 4 }), (text, s, citations) => {
          for (const type of p.allowed(s)) {
            if (type === 'invalid') continue;
            // The fixed retrieval step of RAG and ARENA is the question itself, never parsed from text.
            if (type === 'search' && (name === 'rag' || name === 'arena' || name === 'arena-direct' || name === 'skr' || name === 'sure')) continue;
            // So is any search a protocol takes itself (the compressors' rag).
            if (type === 'search' && p.fixedAction?.(s)?.type === 'search') continue;
            // ReSearch's words for "no query" (None, null, n/a, no query) cannot be a query in its format.
            if (type === 'search' && name === 'research' && /^(none|null|n\/a|no query)$/i.test(text)) continue;
            // R1-Searcher reads a query without double quotes and with its whitespace collapsed (as its rollout does).
            if (type === 'search' && name === 'r1-searcher' && (/"/.test(text) || /\s{2,}|[^\S ]/.test(text))) continue;
            // CoRAG drops the quotes around a sub-query and a leading "Intermediate query N:" (as its agent does).
            if (type === 'search' && name === 'corag' && (/^".*"$/s.test(text) || /^Intermediate query \d+:/.test(text))) continue;
            // SimpleDeepSearcher's reading of \boxed{} runs to the last "}" of its line and strips parentheses at the ends (as its evaluation does).
            if (type === 'answer' && name === 'simple-deep-searcher' && /^[()]|[()]$|[{}]|\\text/.test(text)) continue;
            // Iter-RetGen's searches are the question joined to a generation.
            const query = name === 'iter-retgen' ? `${s.question.question} ${text}` : text;
            const action: Action = type === 'search' ? { type, query } : type === 'extract' ? { type, evidence: text } : name === 'arena' ? { type: 'answer', answer: text, citations } : { type: 'answer', answer: text };
            assert.deepEqual(p.parse(p.format(action, s), s), action, `${name} ${type}: ${JSON.stringify(p.format(action, s))}`);
          }
        }),
        { seed: SEED, numRuns: 500 },
      );
    });
  }
});

describe('defects the fuzzing found, kept as examples', () => {
  const n = 20_000;
  it('Direct: a bare "Answer:" line is no answer; the next line with text is', () => {
    assert.deepEqual(PROTOCOLS.direct.parse('Final answer：', STATES[0]!), { type: 'invalid', reason: 'empty reply' });
    assert.deepEqual(PROTOCOLS.direct.parse('Answer:\n Paris ', STATES[0]!), { type: 'answer', answer: 'Paris' });
    assert.deepEqual(PROTOCOLS.direct.parse('answer: 1971\nbecause…', STATES[0]!), { type: 'answer', answer: '1971' });
  });
  it('firstTag over 20,000 unclosed <search> tags reads them as one cut-off search (was quadratic)', () => {
    assert.deepEqual(firstTag('<search>'.repeat(n), ['search', 'answer']), { tag: 'search', content: '' });
    assert.deepEqual(PROTOCOLS['search-r1'].parse('<answer>'.repeat(n), STATES[0]!), { type: 'invalid', reason: 'empty <answer>' });
    assert.deepEqual(firstTag('<search>a<answer>b</answer>', ['search', 'answer']), { tag: 'answer', content: 'b' });
  });
  it('ReAct finds the first action head that is closed, without rescanning from each head', () => {
    assert.equal(parseReactAction('Action: search['.repeat(n)).type, 'invalid');
    assert.deepEqual(parseReactAction('Action: search[' + 'x'.repeat(n) + '] Action: finish[y]'), { type: 'search', query: 'x'.repeat(n) });
    assert.deepEqual(parseReactAction('Action: finish [ Paris ]'), { type: 'answer', answer: 'Paris' });
  });
  it('ReSearch reads the last decision out of thousands of unclosed braces and deep JSON', () => {
    assert.equal(extractDecision('{"'.repeat(n)), undefined);
    assert.equal(extractDecision('{"a":'.repeat(n) + '1' + '}'.repeat(n)), undefined);
    assert.deepEqual(extractDecision('{'.repeat(n) + '{"predicted_answer": "1971", "generated_query": "None"}'), { predicted_answer: '1971', generated_query: 'None' });
    // An object jumped over (it closed, but is not the decision) still counts as nested in an earlier one.
    assert.deepEqual(extractDecision('{"predicted_answer": "x", "why": {"a": "}"}} and {"b": 1}'), { predicted_answer: 'x', why: { a: '}' } });
  });
});
