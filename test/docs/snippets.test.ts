/**
 * The code the docs show is code that runs: TypeScript and JavaScript blocks of the README and docs/
 * are compiled and run by the package test (test/package/pack.test.ts) in a project that installed
 * the packed tarball, and every file the docs include (`<<< @/../examples/…`) is one of the examples
 * that test compiles and runs. This file checks the second half and that nothing slips past the first.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'node:test';
import { ROOT } from '../helpers.js';
import { allCodeBlocks, exampleIncludes } from './markdown.js';

it('every file the docs include is an example the package test runs', () => {
  const includes = exampleIncludes();
  assert.ok(includes.length >= 5, `only ${includes.length} includes`);
  const bad = includes.filter((x) => !/^examples\/[\w-]+\.(ts|json)$/.test(x.target) || !existsSync(join(ROOT, x.target)));
  assert.deepEqual(bad, []);
});

it('the inline TypeScript / JavaScript blocks are whole programs the package test can run', (t) => {
  const blocks = allCodeBlocks().filter((b) => /^(ts|typescript|js|javascript|mjs)$/.test(b.lang));
  t.diagnostic(`${blocks.length} inline blocks: ${blocks.map((b) => `${b.file}:${b.line}`).join(', ')}`);
  // A fragment with `…` or `...` standing for elided code cannot run; show it as an include instead.
  assert.deepEqual(blocks.filter((b) => /…|\.\.\.(?![\w[(])/.test(b.code)).map((b) => `${b.file}:${b.line}`), []);
  for (const b of blocks) assert.match(b.code, /^import /m, `${b.file}:${b.line} imports nothing from ragtrail`);
});
