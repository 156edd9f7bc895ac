/** Search-R1's wire text (search-r1-wire.ts) against hand-worked cases and a real Search-R1 run's outputs. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { pyStrip } from '../../src/core/text.js';
import { informationBlock, parsePrediction, passagesToString } from '../../src/learn/serve/search-r1-wire.js';
import { data } from '../helpers.js';

describe("Search-R1's observation text and action parsing", () => {
  it('formats documents as _passages2string does, stripped, framed by two newlines', () => {
    const docs = [
      { passageId: 'a', title: 'Citibank', text: 'Founded in 1812.' },
      { passageId: 'b', title: 'Two lines', text: 'first\nsecond ' },
    ];
    // contents = "Title"\ntext; split at the first newline; the rest keeps its own newline.
    assert.equal(passagesToString(docs), 'Doc 1(Title: "Citibank") Founded in 1812.\nDoc 2(Title: "Two lines") first\nsecond \n');
    assert.equal(informationBlock(docs), '\n\n<information>Doc 1(Title: "Citibank") Founded in 1812.\nDoc 2(Title: "Two lines") first\nsecond</information>\n\n');
    assert.equal(informationBlock([]), '\n\n<information></information>\n\n');
  });

  it("strips exactly Python's whitespace", () => {
    assert.equal(pyStrip('\x1c\x85 a b\u3000\t\n'), 'a b');
    assert.equal(pyStrip('\ufeffa'), '\ufeffa', 'U+FEFF is not whitespace to Python');
  });

  it('parses as postprocess_predictions: first complete pair, stripped, empty allowed, unclosed is none', () => {
    assert.deepEqual(parsePrediction('<think>x</think> <search>  a b \n</search>'), { type: 'search', query: 'a b' });
    assert.deepEqual(parsePrediction('<search></search>'), { type: 'search', query: '' });
    assert.deepEqual(parsePrediction('<search>a</search><search>b</search>'), { type: 'search', query: 'a' });
    assert.deepEqual(parsePrediction('<search>a <answer>b</answer>'), { type: 'answer', answer: 'b' });
    assert.equal(parsePrediction('<search> open').type, 'invalid');
    assert.equal(parsePrediction('<search>a</answer>').type, 'invalid');
  });

  it("agrees with a real Search-R1 run: every turn it answered with <information> parses as a search, every final turn as its recorded answer", () => {
    const run = JSON.parse(readFileSync(data('trajectories', 'search_r1_bamboogle_base', 'intermediate_data.json'), 'utf8')) as { output: { final_response: string; pred: string } }[];
    let searches = 0;
    for (const { output } of run) {
      const turns = output.final_response.split(/<information>[\s\S]*?<\/information>/);
      for (const t of turns.slice(0, -1)) {
        assert.equal(parsePrediction(t).type, 'search', t);
        searches++;
      }
      assert.deepEqual(parsePrediction(turns[turns.length - 1]!), { type: 'answer', answer: output.pred.trim() });
      // Its information blocks sit in the same frame serve-env writes.
      for (const m of output.final_response.matchAll(/<information>[\s\S]*?<\/information>/g)) assert.equal(output.final_response.slice(m.index! - 2, m.index!), '\n\n');
    }
    assert.equal(run.length, 125);
    assert.equal(searches, 125);
  });
});
