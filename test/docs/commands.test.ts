/**
 * Every `ragtrail` command shown in the README and the documentation names a real command, and every
 * flag it shows is one that command takes: each shell block is read, its lines joined where they
 * continue with `\`, and each invocation checked against the CLI's own command tree (the program
 * `ragtrail` builds, read in process rather than through `--help` text).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, it } from 'node:test';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/program.js';
import { ROOT } from '../helpers.js';
import { documents } from './markdown.js';

export interface Invocation {
  file: string;
  line: number;
  text: string;
  words: string[];
}

/** The `ragtrail …` invocations of a Markdown text's shell blocks (`sh`, `bash`, `shell`, `console`). */
export function invocations(file: string, markdown: string): Invocation[] {
  const out: Invocation[] = [];
  const lines = markdown.split('\n');
  let inShell = false;
  let inFence = false;
  let pending = '';
  let pendingLine = 0;
  for (const [i, raw] of lines.entries()) {
    const fence = /^\s*```\s*(\S*)/.exec(raw);
    if (fence) {
      if (!inFence) {
        inFence = true;
        inShell = ['sh', 'bash', 'shell', 'console'].includes(fence[1]!);
      } else {
        inFence = false;
        inShell = false;
      }
      continue;
    }
    if (!inShell) continue;
    // A comment starts at a `#` after whitespace (a URL's `#model` has none before it).
    const code = raw.replace(/(^|\s)#.*$/, '').replace(/^\s*\$\s+/, '');
    if (!pending) pendingLine = i + 1;
    if (/\\\s*$/.test(code)) {
      pending += code.replace(/\\\s*$/, ' ');
      continue;
    }
    const whole = pending + code;
    pending = '';
    // Commands chained with && ; or a spaced pipe (an unspaced | is a list of choices: --algo dapo|lws).
    for (const segment of whole.split(/&&|;|\s\|\s/)) {
      const words = segment.trim().split(/\s+/).filter(Boolean);
      const at = words.findIndex((w, j) => w === 'ragtrail' && (j === 0 || words[j - 1] === 'npx'));
      if (at < 0) continue;
      out.push({ file: relative(ROOT, file), line: pendingLine, text: segment.trim(), words: words.slice(at + 1) });
    }
  }
  return out;
}

/** The command a word list names (walking subcommands), and the flags it shows. */
function resolve(program: Command, words: string[]): { command: Command; path: string[]; flags: string[] } {
  let command = program;
  const path: string[] = [];
  let k = 0;
  for (; k < words.length; k++) {
    const sub = command.commands.find((c) => c.name() === words[k] || c.aliases().includes(words[k]!));
    if (!sub) break;
    command = sub;
    path.push(words[k]!);
  }
  const flags: string[] = [];
  for (const w of words.slice(k)) {
    // `[--flag]`, `--flag=value`, `[--a|--b]`: each long flag named.
    for (const m of w.matchAll(/(?:^|[[|(])(--[a-z0-9][a-z0-9-]*)/g)) flags.push(m[1]!);
  }
  return { command, path, flags };
}

/** A flag of the command or of a command above it (a subcommand reads its parent's flags: `annotate relabel --out`). */
function known(command: Command, flag: string): boolean {
  if (flag === '--help') return true;
  for (let c: Command | null = command; c; c = c.parent) if (c.options.some((o) => o.long === flag)) return true;
  return false;
}

describe('the commands shown in the README and the docs', () => {
  const program = buildProgram();
  const all = documents().flatMap((f) => invocations(f, readFileSync(f, 'utf8')));

  it('finds the invocations (README and every docs page that shows one)', (t) => {
    t.diagnostic(`${all.length} invocations in ${new Set(all.map((x) => x.file)).size} files`);
    assert.ok(all.length >= 80, `only ${all.length} invocations found`);
    assert.ok(all.some((x) => x.file === 'README.md'));
  });

  it('every invocation names a command of the CLI', () => {
    const bad = all.filter((x) => {
      if (x.words.length === 0 || /^--(help|version)$/.test(x.words[0]!)) return false;
      const { path } = resolve(program, x.words);
      return path.length === 0;
    });
    assert.deepEqual(bad.map((x) => `${x.file}:${x.line}: ${x.text}`), []);
  });

  it('every flag shown is one that command takes', () => {
    const bad: string[] = [];
    for (const x of all) {
      const { command, path, flags } = resolve(program, x.words);
      for (const f of flags) if (!known(command, f)) bad.push(`${x.file}:${x.line}: ragtrail ${path.join(' ')} has no ${f}`);
    }
    assert.deepEqual(bad, []);
  });
});
