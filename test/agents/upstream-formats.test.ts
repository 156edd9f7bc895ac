/**
 * Protocol parsers against model outputs in the authors' own formats (the parity dev sets' turns and
 * responses), compared with how the authors' code reads them — not with ragtrail's own `format`.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { PROTOCOLS } from '../../src/agents/registry.js';
import type { State } from '../../src/env/env.js';
import { data } from '../helpers.js';

const state: State = { question: { id: 'q', question: 'Q?', answers: [] }, steps: [], done: false, mustAnswer: false, turnsLeft: 9, searchesLeft: 9 };
const rows = (set: string) =>
  readFileSync(data('parity', set, 'dev.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, any>);

describe('prorag: turns as ProRAG rollouts generate them', () => {
  it("reads every turn as prorag/rl/rollout.py does, apart from the documented stricter cases", () => {
    let turns = 0;
    let cutOff = 0;
    const stricter: string[] = [];
    for (const r of rows('prorag_outcome')) {
      for (const { gen_text: g } of r['turns'] as { gen_text: string }[]) {
        turns++;
        // The rollout: finished when "</answer>" occurs; a search when "</subquery>" does and <subquery>…</subquery> matches.
        const m = /<subquery>([\s\S]*?)<\/subquery>/.exec(g);
        const upstream = g.includes('</answer>') ? { type: 'answer' } : g.includes('</subquery>') && m ? { type: 'search', query: m[1]!.trim() } : { type: 'none' };
        // The prompt opens the turn's <step>.
        const a = PROTOCOLS.prorag.parse(`<step>${g}`, state);
        const agrees = upstream.type === 'search' ? a.type === 'search' && a.query === upstream.query : upstream.type === 'answer' ? a.type === 'answer' : a.type !== 'search' && a.type !== 'answer';
        if (agrees) continue;
        // A turn cut off inside its action tag: ragtrail's backends drop the stop string, so an unclosed
        // final tag is read as stopped at it; ProRAG's rollout (stop strings kept) sees an unfinished turn.
        if (upstream.type === 'none' && !/<\/(subquery|subanswer|answer)>/.test(g) && /<(subquery|subanswer|answer)>[^<]*$/.test(g)) {
          cutOff++;
          continue;
        }
        // ragtrail counts these as format failures where the rollout goes on: tags in another letter case,
        // tags with attributes or self-closed, and empty contents.
        assert.ok(/<Answer>|<answer[ /]|<(answer|subquery)>\s*<\/\1>/.test(g), `unexpected disagreement on ${JSON.stringify(g)}: ${JSON.stringify(a)}`);
        assert.equal(a.type, 'invalid');
        stricter.push(g);
      }
    }
    assert.equal(turns, 467);
    assert.equal(stricter.length, 13);
    assert.ok(cutOff > 0 && cutOff < 60, `cut-off turns ${cutOff}`);
  });

  it('a tag named in the reasoning is not the action; a crossed tag is not a cut-off one', () => {
    const p = PROTOCOLS.prorag;
    assert.deepEqual(p.parse('<step>I will write it in <answer> later</step>\n<subquery>\nVCU founding\n</subquery>', state), { type: 'search', query: 'VCU founding' });
    assert.equal(p.parse('<step>x</step>\n<subquery>\nWhat is known about Tromeo and Juliet?</subanswer>', state).type, 'invalid');
    // Cut off at the stop string: still read.
    assert.deepEqual(p.parse('<step>x</step>\n<subquery>Tromeo and Juliet', state), { type: 'search', query: 'Tromeo and Juliet' });
  });
});

describe('arena: outputs in ARENA\'s format', () => {
  it("reads the same answer as ARENA's extract_answer wherever that finds one", () => {
    let n = 0;
    for (const r of rows('arena')) {
      const want = (r['expected'].extracted_answer as string).trim();
      if (want === '') continue;
      n++;
      const a = PROTOCOLS.arena.parse(r['response'], state);
      assert.deepEqual(a.type === 'answer' ? a.answer : a, want, `${r['id']} (${r['labels'].struct})`);
    }
    assert.equal(n, 150);
  });
});
