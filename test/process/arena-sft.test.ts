/** ARENA's SFT baselines' data on real HotpotQA questions (the fixture sample): targets the protocols read back, gold relevance by hand. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PROTOCOLS } from '../../src/agents/registry.js';
import { loadDatasetAll } from '../../src/corpus/dataset.js';
import type { State } from '../../src/env/env.js';
import { ScriptedLLM } from '../../src/llm/scripted.js';
import { arenaSftExamples, templateAnalysis } from '../../src/process/arena-sft.js';
import { data } from '../helpers.js';

const { questions } = await loadDatasetAll(data('hotpotqa', 'distractor_dev_sample100_hf.json'));
const first = questions[0]!; // "Were Scott Derrickson and Ed Wood of the same nationality?": supporting pages 2 and 5 of its ten
const state = (): State => ({ question: first, steps: [], done: false, mustAnswer: false, turnsLeft: 2, searchesLeft: 0 });

describe('ARENA SFT data', () => {
  it('direct: the references and the question, then the gold answer alone, which arena-direct reads back', async () => {
    const { examples } = await arenaSftExamples([first], 'direct');
    const m = examples[0]!.messages;
    assert.match(m[1]!.content, /^<question>Were Scott Derrickson and Ed Wood of the same nationality\?<\/question>\n<references>\n1\. Ed Wood \(film\): /);
    assert.deepEqual(m.at(-1), { role: 'assistant', content: 'yes' });
    assert.deepEqual(PROTOCOLS['arena-direct'].parse(m.at(-1)!.content, state()), { type: 'answer', answer: 'yes' });
  });

  it('reasoning: gold relevance from the supporting facts, an analysis from the gold references, a target ARENA reads back with its citations', async () => {
    const { examples } = await arenaSftExamples([first], 'reasoning');
    const target = examples[0]!.messages.at(-1)!.content;
    assert.equal(target, `<relevance>[2,5]</relevance>\n<analysis>${templateAnalysis(first, [2, 5], 'yes')}</analysis>\n<answer>yes</answer>`);
    assert.match(target, /Reference 5 says: Edward Davis Wood Jr\. \(October 10, 1924 – December 10, 1978\) was an American filmmaker/);
    assert.deepEqual(PROTOCOLS.arena.parse(target, state()), { type: 'answer', answer: 'yes', citations: [2, 5] });
  });

  it('a trace writer writes the analysis from the question, references, gold numbers and answer; questions without their own paragraphs are skipped', async () => {
    const llm = new ScriptedLLM(['Reference 2 and reference 5 both say American.']);
    const worldQuestion = { id: 'w1', question: 'Who?', answers: ['x'] };
    const r = await arenaSftExamples([first, worldQuestion], 'reasoning', { traceWriter: llm });
    assert.equal(r.examples.length, 1);
    assert.deepEqual(r.skipped.map((s) => s.id), ['w1']);
    assert.match(llm.requests[0]!.messages![0]!.content, /Relevant reference numbers: \[2,5\]\nAnswer: yes\n\nReasoning:$/);
    assert.match(r.examples[0]!.messages.at(-1)!.content, /<analysis>Reference 2 and reference 5 both say American\.<\/analysis>/);
  });
});
