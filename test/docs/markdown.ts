/** The Markdown the project shows users (README.md and docs/), read for the tests that check its code. */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT } from '../helpers.js';

/** README.md and every page of docs/ (the built site, its cache and the API output left out). */
export function documents(): string[] {
  const out = [join(ROOT, 'README.md')];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name.startsWith('.') || e.name === 'api' || e.name === 'node_modules') continue;
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.md')) out.push(p);
    }
  };
  walk(join(ROOT, 'docs'));
  return out;
}

export interface CodeBlock {
  /** Path relative to the repository. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  code: string;
}

/** The fenced code blocks of a Markdown text. */
export function codeBlocks(file: string, markdown: string): CodeBlock[] {
  const out: CodeBlock[] = [];
  let open: { line: number; lang: string; lines: string[] } | null = null;
  for (const [i, raw] of markdown.split('\n').entries()) {
    const fence = /^\s*```\s*([^\s{]*)/.exec(raw);
    if (fence && !open) open = { line: i + 1, lang: fence[1]!, lines: [] };
    else if (fence && open) {
      out.push({ file: relative(ROOT, file), line: open.line, lang: open.lang, code: open.lines.join('\n') });
      open = null;
    } else if (open) open.lines.push(raw);
  }
  return out;
}

/** Every block of every document. */
export const allCodeBlocks = (): CodeBlock[] => documents().flatMap((f) => codeBlocks(f, readFileSync(f, 'utf8')));

/** VitePress includes of example files (`<<< @/../examples/NAME`), as [document, included path]. */
export function exampleIncludes(): { file: string; target: string }[] {
  return documents().flatMap((f) =>
    [...readFileSync(f, 'utf8').matchAll(/^<<< @\/\.\.\/(\S+)/gm)].map((m) => ({ file: relative(ROOT, f), target: m[1]! })),
  );
}
