/**
 * Coverage-guided fuzzing of every protocol's parser (not in CI). A small libFuzzer-style loop on
 * node's own V8 block coverage (node:inspector's precise coverage): inputs are mutated from a corpus
 * of seeds; an input that reaches a block of the parsers not reached before joins the corpus. Each
 * input is parsed by every protocol in three states; a parser that throws, returns a malformed action
 * or takes over 200 ms on it is a finding, written to OUT/finding-N.txt.
 *
 *   node --import tsx scripts/fuzz-parsers.ts [--seconds 600] [--seed 1] [--out fuzz-out]
 *
 * (@jazzer.js/core would do the same with libFuzzer, but its native module needs glibc 2.38.)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import type { Action } from '../src/core/trajectory.js';
import { PROTOCOLS } from '../src/agents/registry.js';
import { Rng } from '../src/core/rng.js';
import type { State } from '../src/env/env.js';

const { values: args } = parseArgs({ options: { seconds: { type: 'string', default: '600' }, seed: { type: 'string', default: '1' }, out: { type: 'string', default: 'fuzz-out' } } });
const budgetMs = Number(args.seconds) * 1000;
const rng = new Rng(Number(args.seed));
mkdirSync(args.out, { recursive: true });

const question = { id: 'q', question: 'Who directed The Silent Harbor?', answers: ['Maren Tolvik'] };
const docs = [{ passageId: 'p1', title: 'T', text: 'x', score: 1 }];
const STATES: State[] = [
  { question, steps: [], done: false, mustAnswer: false, turnsLeft: 5, searchesLeft: 5 },
  { question, steps: [{ action: { type: 'search', query: 'q' }, raw: '<search>q</search>', docs }], done: false, mustAnswer: false, turnsLeft: 4, searchesLeft: 4 },
  { question, steps: [{ action: { type: 'search', query: 'q' }, raw: '<search>q</search>', docs }], done: false, mustAnswer: true, turnsLeft: 0, searchesLeft: 0 },
];
const TOKENS = [
  '<search>', '</search>', '<answer>', '</answer>', '<think>', '</think>', '<reflect>', '</reflect>', '<query>', '</query>', '<evidence>', '</evidence>', '<step>', '</step>',
  '<subquery>', '</subquery>', '<subanswer>', '</subanswer>', '<relevance>', '</relevance>', '<analysis>', '</analysis>', 'Action: search[', 'Action: finish[', ']',
  'Answer:', 'Final answer：', '{"predicted_answer": "x", "generated_query": "None"}', '{', '}', '"', '\\', 'None', '\n', '[1, 2]', 'null', '😀', '\ud800',
];
// Seeds: what each protocol writes for each action, so mutation starts from well-formed text.
const corpus: string[] = [''];
for (const p of Object.values(PROTOCOLS))
  for (const s of STATES) for (const a of [{ type: 'search', query: 'Silent Harbor' }, { type: 'extract', evidence: 'It was 1971.' }, { type: 'answer', answer: 'Maren Tolvik', citations: [1] }] as Action[]) corpus.push(p.format(a, s));

function mutate(text: string): string {
  let t = text;
  for (let k = 1 + rng.int(4); k > 0; k--) {
    const at = rng.int(t.length + 1);
    switch (rng.int(7)) {
      case 0: t = t.slice(0, at) + TOKENS[rng.int(TOKENS.length)]! + t.slice(at); break; // insert a token
      case 1: t = t.slice(0, at) + t.slice(at + 1 + rng.int(8)); break; // delete a few characters
      case 2: t = t.slice(0, at) + String.fromCharCode(rng.int(0x10000)) + t.slice(at); break; // any UTF-16 unit
      case 3: t = t.slice(0, at); break; // truncate (a cut-off generation)
      case 4: { const o = corpus[rng.int(corpus.length)]!; t = t.slice(0, at) + o.slice(rng.int(o.length + 1)); break; } // splice with another input
      case 5: { const piece = t.slice(at, at + 1 + rng.int(16)); t = t.slice(0, at) + piece.repeat(2 + rng.int(rng.int(3) === 0 ? 5000 : 8)) + t.slice(at); break; } // repeat a piece (long inputs)
      default: { const b = rng.int(t.length + 1); t = t.slice(0, Math.min(at, b)) + t.slice(Math.min(at, b), Math.max(at, b)).split('').reverse().join('') + t.slice(Math.max(at, b)); } // reverse a span
    }
  }
  return t.length > 400_000 ? t.slice(0, 400_000) : t;
}

function check(a: Action): string | undefined {
  if (a.type === 'invalid') return a.reason ? undefined : 'invalid without a reason';
  const text = a.type === 'search' ? a.query : a.type === 'extract' ? a.evidence : a.type === 'answer' ? a.answer : undefined;
  if (text === undefined) return `unknown action ${JSON.stringify(a)}`;
  if (text === '' || text !== text.trim()) return `${a.type} with empty or untrimmed text ${JSON.stringify(text)}`;
  return undefined;
}

const session = new Session();
session.connect();
await session.post('Profiler.enable');
await session.post('Profiler.startPreciseCoverage', { callCount: false, detailed: true });
const seen = new Set<string>();
/** Ranges V8 has listed per function: a nested range is listed only where its count differs from its parent's. */
const listed = new Map<string, Set<string>>();
/**
 * Blocks of src/agents reached since the last call that were never reached before: a listed range
 * with a count, or one listed before that an executed function no longer lists as unreached.
 */
async function newCoverage(): Promise<number> {
  const { result } = await session.post('Profiler.takePreciseCoverage');
  let fresh = 0;
  const reach = (key: string) => {
    if (!seen.has(key)) {
      seen.add(key);
      fresh++;
    }
  };
  for (const script of result) {
    if (!script.url.includes('/src/agents/')) continue;
    for (const fn of script.functions) {
      if (!fn.ranges[0] || fn.ranges[0].count === 0) continue;
      const fnKey = `${script.url}:${fn.ranges[0].startOffset}`;
      const known = listed.get(fnKey) ?? new Set<string>();
      listed.set(fnKey, known);
      const unreached = new Set<string>();
      for (const r of fn.ranges) {
        const key = `${script.url}:${r.startOffset}:${r.endOffset}`;
        known.add(key);
        if (r.count === 0) unreached.add(key);
        else reach(key);
      }
      for (const key of known) if (!unreached.has(key)) reach(key);
    }
  }
  return fresh;
}

const findings = new Map<string, string>();
const start = performance.now();
let execs = 0;
let lastReport = start;
for (const c of corpus) for (const p of Object.values(PROTOCOLS)) for (const s of STATES) p.parse(c, s);
await newCoverage();
while (performance.now() - start < budgetMs) {
  const input = mutate(corpus[rng.int(corpus.length)]!);
  for (const [name, p] of Object.entries(PROTOCOLS))
    for (const [si, s] of STATES.entries()) {
      const t0 = performance.now();
      let problem: string | undefined;
      try {
        problem = check(p.parse(input, s));
      } catch (e) {
        problem = `throws ${e instanceof Error ? e.name : typeof e}: ${e instanceof Error ? e.message : String(e)}`;
      }
      const ms = performance.now() - t0;
      if (!problem && ms > 200) {
        // Timed again, best of three, so that a GC pause or a busy machine is not a finding.
        let best = ms;
        for (let k = 0; k < 3; k++) {
          const t1 = performance.now();
          p.parse(input, s);
          best = Math.min(best, performance.now() - t1);
        }
        if (best > 200) problem = `slow: ${best.toFixed(0)} ms on ${input.length} characters`;
      }
      execs++;
      const key = `${name}: ${problem?.replace(/".*"/, '"…"').slice(0, 80)}`;
      if (problem && !findings.has(key)) {
        findings.set(key, input);
        writeFileSync(`${args.out}/finding-${findings.size}.txt`, `${name} (state ${si}): ${problem}\n---\n${input.slice(0, 10_000)}`);
        console.log(`finding ${findings.size}: ${name} (state ${si}): ${problem.slice(0, 200)}`);
      }
    }
  if ((await newCoverage()) > 0) corpus.push(input);
  if (performance.now() - lastReport > 30_000) {
    lastReport = performance.now();
    console.log(`${((lastReport - start) / 1000).toFixed(0)} s: ${execs} parses, corpus ${corpus.length}, blocks ${seen.size}, findings ${findings.size}`);
  }
}
const seconds = (performance.now() - start) / 1000;
console.log(`done: ${seconds.toFixed(0)} s, ${execs} parses (${(execs / seconds).toFixed(0)}/s), corpus ${corpus.length}, blocks of src/agents reached ${seen.size}, findings ${findings.size}`);
session.disconnect();
process.exitCode = findings.size ? 1 : 0;
