import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { copyExample } from '../../src/learn/warmup.js';

describe('copy warm-up examples', () => {
  it('shows a passage as the agent protocols show a retrieved document, and has the assistant repeat it', () => {
    const ex = copyExample({ id: 'p1', title: 'Ginus Aleaxberg', text: 'Ginus Aleaxberg (1917–2002) was a Thaposian entrepreneur.' });
    const shown = 'Doc 1 (Title: Ginus Aleaxberg) Ginus Aleaxberg (1917–2002) was a Thaposian entrepreneur.';
    assert.deepEqual(ex.messages, [
      { role: 'user', content: shown },
      { role: 'assistant', content: shown },
    ]);
  });
});
