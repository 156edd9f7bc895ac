/**
 * --prompt-template: any template that uses a protocol's documented placeholders renders, its
 * values land where the template puts them, and an episode run through the templated protocol
 * (a scripted model writing the protocol's own format) parses step by step as the built-in does;
 * unknown and missing placeholders are one-line errors.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Question } from '../../src/core/types.js';
import type { Action, Step } from '../../src/core/trajectory.js';
import { InputError } from '../../src/core/errors.js';
import { AGENT_NAMES } from '../../src/agents/protocol.js';
import { getProtocol, PROTOCOLS, registerProtocol } from '../../src/agents/registry.js';
import { fillTemplate, loadPromptTemplate, parsePromptTemplate, placeholders, templateFields, usePromptTemplate, withPromptTemplate } from '../../src/agents/prompt-template.js';
import type { State } from '../../src/env/env.js';

const question: Question = { id: 'q1', question: 'Who directed The Silent Harbor?', answers: ['Maren Tolvik'] };
const docs = [{ passageId: 'p1', title: 'The Silent Harbor', text: 'The Silent Harbor is a 1971 film directed by Maren Tolvik.', score: 3.2 }];
const state = (steps: Step[] = [], extra: Partial<State> = {}): State => ({ question, steps, done: false, mustAnswer: false, turnsLeft: 5, searchesLeft: 5, ...extra });

/** A template using every documented placeholder of every kind, in both spellings, with a JSON example in literal braces. */
function fullTemplate(name: string): string {
  const kinds = templateFields(PROTOCOLS[name as keyof typeof PROTOCOLS])!;
  const out: string[] = [];
  Object.entries(kinds).forEach(([kind, fields], i) => {
    const head = i === 0 ? '' : `${kind} `;
    const names = Object.keys(fields);
    out.push(`@${head}system`, `SYSTEM ${kind} {"example": [1, 2]} {{ ${names[0]} }}`, `@${head}user`, ...names.map((n) => `<<${n}>>{${n}}<</${n}>>`));
  });
  return out.join('\n');
}

/** The states a protocol meets in one episode: start, after a search, after its extraction, and forced. */
function episodeStates(name: string): State[] {
  const searched: Step = { action: { type: 'search', query: 'Silent Harbor director' }, raw: 'x', docs };
  const extracted: Step = { action: { type: 'extract', evidence: 'directed by Maren Tolvik' }, raw: 'y' };
  const withContext = name === 'arena' ? { question: { ...question, context: [{ id: 'a', title: 'A', text: 'alpha' }] } } : {};
  return [state([], withContext), state([searched], withContext), state([searched, extracted], withContext), state([searched], { ...withContext, mustAnswer: true })];
}

describe('any template with the documented placeholders renders, and its episodes parse as the protocol', () => {
  const actions: Action[] = [
    { type: 'search', query: 'Silent Harbor director' },
    { type: 'extract', evidence: 'directed by Maren Tolvik' },
    { type: 'answer', answer: 'Maren Tolvik' },
  ];
  for (const name of AGENT_NAMES) {
    it(name, () => {
      const base = PROTOCOLS[name];
      const text = fullTemplate(name);
      const templated = withPromptTemplate(base, parsePromptTemplate(text, 't.txt'));
      for (const s of episodeStates(name)) {
        const forced = s.mustAnswer;
        const messages = templated.render(s, { forced });
        const fill = base.template!.fill(s, { forced });
        // The template's messages open the prompt, every placeholder filled with the protocol's value.
        assert.equal(messages[0]!.role, 'system');
        assert.match(messages[0]!.content, new RegExp(`^SYSTEM ${fill.kind} \\{"example": \\[1, 2\\]\\} `));
        const user = messages[1]!.content;
        assert.equal(placeholders(user).length, 0, `${name}: a placeholder left unfilled`);
        for (const [field, value] of Object.entries({ ...fill.values, forced: fill.forcedNote ?? '' })) assert.ok(user.includes(`<<${field}>>${value}<</${field}>>`), `${name} ${fill.kind}: {${field}}`);
        assert.ok(user.includes(question.question));
        // What follows is the protocol's own continuation (search-r1 / prorag turns), unchanged.
        assert.deepEqual(messages.slice(2), fill.continuation);
        // The protocol's parser and writer are untouched: parse(format(a)) = a for every allowed action.
        for (const type of templated.allowed(s)) {
          let action = actions.find((a) => a.type === type)!;
          if (name === 'arena' && action.type === 'answer') action = { ...action, citations: [1] };
          if ((name === 'arena' || name === 'arena-direct' || name === 'rag' || name === 'skr' || name === 'sure') && action.type === 'search') continue; // fixed retrieval steps (SKR routes to rag until a model decides)
          if (action.type === 'search' && base.fixedAction?.(s)?.type === 'search') continue; // any other search the protocol takes itself
          if (name === 'iter-retgen' && action.type === 'search') action = { type: 'search', query: `${question.question} Silent Harbor director` }; // the question joined to a generation
          assert.deepEqual(templated.parse(templated.format(action, s), s), action, `${name} ${type}`);
          assert.deepEqual(templated.parse(base.format(action, s), s), base.parse(base.format(action, s), s));
        }
      }
    });
  }

  it('a file without section lines is the default prompt\'s user message, with no system message', () => {
    const p = withPromptTemplate(PROTOCOLS['search-r1'], parsePromptTemplate('Answer the given question. Question: {question}\n', 'sr1.txt'));
    const after: Step = { action: { type: 'search', query: 'q' }, raw: '<search> q </search>', docs };
    const m = p.render(state([after]));
    assert.deepEqual(m[0], { role: 'user', content: 'Answer the given question. Question: Who directed The Silent Harbor?' });
    assert.deepEqual(m.slice(1), PROTOCOLS['search-r1'].render(state([after])).slice(1));
  });

  it('a kind the file leaves out keeps the built-in prompt (ReasonRAG grounding)', () => {
    const p = withPromptTemplate(PROTOCOLS.reasonrag, parsePromptTemplate('@system\nR\n@user\nQ: {question}\nPrevious: {history}', 'r.txt'));
    assert.deepEqual(p.render(state()), [{ role: 'system', content: 'R' }, { role: 'user', content: 'Q: Who directed The Silent Harbor?\nPrevious: (nothing yet)' }]);
    const grounding = state([{ action: { type: 'search', query: 'q' }, raw: '', docs }]);
    assert.deepEqual(p.render(grounding), PROTOCOLS.reasonrag.render(grounding));
  });

  it('without {forced}, the forced note follows the template as a user message; with it, it is placed there', () => {
    const forced = state([], { mustAnswer: true });
    const plain = withPromptTemplate(PROTOCOLS.research, parsePromptTemplate('{history}\n{question}', 'a.txt')).render(forced, { forced: true });
    assert.equal(plain.length, 2);
    assert.match(plain[1]!.content, /You cannot search any more/);
    const placed = withPromptTemplate(PROTOCOLS.research, parsePromptTemplate('{history}\n{question}\n{forced}', 'b.txt')).render(forced, { forced: true });
    assert.equal(placed.length, 1);
    assert.match(placed[0]!.content, /Who directed The Silent Harbor\?\nYou cannot search any more/);
    const history = PROTOCOLS.research.template!.fill(state(), {}).values['history'];
    assert.equal(withPromptTemplate(PROTOCOLS.research, parsePromptTemplate('{history}\n{question}\n{forced}', 'b.txt')).render(state())[0]!.content, `${history}\nWho directed The Silent Harbor?\n`);
  });

  it('fills values literally ($& and braces in a question stay as written)', () => {
    assert.equal(fillTemplate('Q: {question} {{question}}', { question: 'a $& {b}' }), 'Q: a $& {b} a $& {b}');
  });
});

describe('a template that does not fit is refused with one line', () => {
  const err = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      assert.ok(e instanceof InputError);
      assert.doesNotMatch(e.message, /\n/);
      return e.message;
    }
    assert.fail('no error');
  };
  it('an unknown placeholder', () => {
    assert.equal(
      err(() => withPromptTemplate(PROTOCOLS.reasonrag, parsePromptTemplate('{question} {history} {answer_format}', 'r.txt'))),
      '--prompt-template r.txt: unknown placeholder {answer_format} in the reasoning prompt of agent reasonrag (it takes {question}, {history}, {forced})',
    );
  });
  it('a missing required placeholder', () => {
    assert.equal(err(() => withPromptTemplate(PROTOCOLS.arena, parsePromptTemplate('Question: {question}', 'a.txt'))), '--prompt-template a.txt: the main prompt of agent arena must use {references}');
    assert.equal(err(() => withPromptTemplate(PROTOCOLS['search-r1'], parsePromptTemplate('no placeholder at all', 's.txt'))), '--prompt-template s.txt: the main prompt of agent search-r1 must use {question}');
    assert.equal(
      err(() => withPromptTemplate(PROTOCOLS.reasonrag, parsePromptTemplate('@user\n{question} {history}\n@grounding user\n{question} {documents}', 'g.txt'))),
      '--prompt-template g.txt: the grounding prompt of agent reasonrag must use {query}',
    );
  });
  it('an unknown kind, a section without @user, text before the first section, a repeated section, an empty file, an unreadable file', () => {
    assert.equal(err(() => withPromptTemplate(PROTOCOLS.arena, parsePromptTemplate('@grounding user\n{question}', 'k.txt'))), '--prompt-template k.txt: agent arena has no "grounding" prompt (its kinds: main)');
    assert.equal(err(() => parsePromptTemplate('@system\nS', 'n.txt')), '--prompt-template n.txt: @system has no @user section');
    assert.equal(err(() => parsePromptTemplate('hello\n@user\n{question}', 'p.txt')), '--prompt-template p.txt:1: text before the first section line (@system or @user)');
    assert.equal(err(() => parsePromptTemplate('@user\n{question}\n@user\nx', 'd.txt')), '--prompt-template d.txt:3: a second @user section');
    assert.equal(err(() => parsePromptTemplate(' \n', 'e.txt')), '--prompt-template e.txt: the template is empty');
    assert.match(err(() => loadPromptTemplate('/nonexistent/t.txt', PROTOCOLS.cot)), /^--prompt-template \/nonexistent\/t\.txt: cannot read it \(ENOENT\)$/);
  });
  it('a protocol without template hooks', () => {
    const { template: _t, ...bare } = PROTOCOLS.cot;
    assert.equal(err(() => withPromptTemplate({ ...bare, name: 'mine' }, parsePromptTemplate('{question}', 'm.txt'))), '--prompt-template m.txt: agent mine does not take a prompt template (it defines no Protocol.template)');
  });
});

describe('usePromptTemplate (the CLI flag) re-registers the agent so every command path renders the template', () => {
  it('getProtocol returns the templated protocol; the built-in is restored after', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ragtrail-tpl-'));
    const file = join(dir, 'lws.txt');
    writeFileSync(file, 'Released-checkpoint prompt. Question: {question}\n');
    try {
      usePromptTemplate(file, ['search-r1', 'search-r1']);
      assert.equal(getProtocol('search-r1').render(state())[0]!.content, 'Released-checkpoint prompt. Question: Who directed The Silent Harbor?');
      assert.deepEqual(getProtocol('search-r1').parse('<search> q </search>', state()), { type: 'search', query: 'q' });
    } finally {
      registerProtocol(PROTOCOLS['search-r1'], { replace: true });
    }
    assert.equal(getProtocol('search-r1'), PROTOCOLS['search-r1']);
  });
});
