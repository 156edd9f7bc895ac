import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { copyExample, quoteExamples } from '../../src/pipelines/warmup.js';

describe('copy warm-up examples', () => {
  it('shows a passage as the agent protocols show a retrieved document, and has the assistant repeat it', () => {
    const ex = copyExample({ id: 'p1', title: 'Ginus Aleaxberg', text: 'Ginus Aleaxberg (1917–2002) was a Thaposian entrepreneur.' });
    const shown = 'Doc 1 (Title: Ginus Aleaxberg) Ginus Aleaxberg (1917–2002) was a Thaposian entrepreneur.';
    assert.deepEqual(ex.messages, [
      { role: 'user', content: shown },
      { role: 'assistant', content: shown },
    ]);
  });

  it('quote examples show a search result and quote every sentence of it once, in a seeded random order', () => {
    const passages = [
      { id: 'p1', title: 'Ginus Aleaxberg', text: 'Ginus Aleaxberg (1917–2002) was a Thaposian entrepreneur. He was born in Oslo.' },
      { id: 'p2', title: 'Oslo', text: 'Oslo is a city. It lies in Norway.' },
      { id: 'p3', title: 'Norway', text: 'Norway is a country.' },
    ];
    const examples = quoteExamples(passages, { docs: 2, seed: 1 });
    assert.equal(examples.length, 3);
    for (const [i, ex] of examples.entries()) {
      const [user, assistant] = ex.messages;
      assert.match(user!.content, /^Doc 1 \(Title: .+\) .+\nDoc 2 \(Title: .+\) .+$/);
      assert.ok(user!.content.includes(`(Title: ${passages[i]!.title}) ${passages[i]!.text}`), 'its own passage is among the shown ones');
      const shown = passages.filter((p) => user!.content.includes(`(Title: ${p.title}) ${p.text}`));
      const expected = shown.flatMap((p) => p.text.split(/(?<=\.) /).map((s) => `"${p.title}" says: ${s}`));
      assert.deepEqual(assistant!.content.split('\n').sort(), expected.sort());
    }
    assert.deepEqual(quoteExamples(passages, { docs: 2, seed: 1 }), examples);
  });
});
