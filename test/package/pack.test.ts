/**
 * ragtrail as a library, the way a user gets it: `npm pack`, install the tarball into an empty folder,
 * type-check the examples there with `tsc` against the installed package's types, and run each one
 * with plain `node`. Dependencies come from npm's cache (filled by `npm ci`), so no network is used
 * when the cache holds them.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ROOT, tempDir } from '../helpers.js';
import { allCodeBlocks } from '../docs/markdown.js';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version: string }> };
const versionOf = (name: string) => lock.packages[`node_modules/${name}`]!.version;
const docBlocks = allCodeBlocks().filter((b) => /^(ts|typescript)$/.test(b.lang));

describe('npm pack → install into an empty folder → examples', { timeout: 600_000 }, () => {
  const tmp = tempDir();
  const app = join(tmp.dir, 'app');
  let tarball = '';

  before(() => {
    // `npm pack` runs the `prepare` script (the build), so the tarball holds a fresh dist/.
    const packed = JSON.parse(execFileSync(npm, ['pack', '--json', '--pack-destination', tmp.dir], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })) as { filename: string; size: number; unpackedSize: number; entryCount: number }[];
    tarball = join(tmp.dir, packed[0]!.filename);
    mkdirSync(join(app, 'examples'), { recursive: true });
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'ragtrail-example-app', private: true, type: 'module' }, null, 2));
    // typescript and @types/node at the versions the project itself uses (in npm's cache after `npm ci`).
    execFileSync(npm, ['install', tarball, `typescript@${versionOf('typescript')}`, `@types/node@${versionOf('@types/node')}`, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] });
    for (const f of readdirSync(join(ROOT, 'examples'))) if (f.endsWith('.ts') || f === 'tsconfig.json') copyFileSync(join(ROOT, 'examples', f), join(app, 'examples', f));
    // The README's and the docs' inline TypeScript blocks, each a program of its own beside the examples.
    for (const [i, b] of docBlocks.entries()) writeFileSync(join(app, 'examples', `doc-block-${i}.ts`), `// ${b.file}:${b.line}\n${b.code}\n`);
  });
  after(() => tmp.cleanup());

  it('packs a tarball with the build, the recipes, the examples and the Python package, and no tests or sources', (t) => {
    const list = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n');
    for (const f of ['package/dist/index.js', 'package/dist/index.d.ts', 'package/dist/agents/index.d.ts', 'package/dist/cli/main.js', 'package/recipes/reasonrag.yaml', 'package/examples/env-loop.ts', 'package/python/ragtrail_trl/train.py']) assert.ok(list.includes(f), `${f} missing from the tarball`);
    assert.ok(!list.some((f) => f.startsWith('package/test/') || f.startsWith('package/src/')), 'tests or TypeScript sources in the tarball');
    t.diagnostic(`tarball ${(statSync(tarball).size / 1024).toFixed(0)} KiB, ${list.filter(Boolean).length} files`);
  });

  it('every subpath entry point imports in plain node and names what it should', () => {
    const script = `
      const want = { '': 'definePlugin', retrieval: 'openRetriever', llm: 'createLLM', env: 'RagEnv', agents: 'registerProtocol', rewards: 'registerRewardScheme', process: 'annotate', prm: 'registerPrm', learn: 'GymPolicy', eval: 'runEval' };
      for (const [sub, name] of Object.entries(want)) {
        const m = await import(sub ? 'ragtrail/' + sub : 'ragtrail');
        if (typeof m[name] !== 'function') throw new Error('ragtrail/' + sub + ' lacks ' + name);
      }
      console.log('ok');`;
    assert.equal(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: app, encoding: 'utf8' }).trim(), 'ok');
  });

  it('the examples type-check with tsc against the installed package', () => {
    const r = spawnSync(process.execPath, [join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'examples'], { cwd: app, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stdout + r.stderr);
  });

  const run = (name: string) => {
    const r = spawnSync(process.execPath, [join('examples', 'dist', `${name}.js`)], { cwd: app, encoding: 'utf8', timeout: 120_000 });
    assert.equal(r.status, 0, `${name}: ${r.stderr}`);
    return r.stdout;
  };

  it('env-loop: the oracle answers every question through reset/step', (t) => {
    const out = run('env-loop');
    t.diagnostic(out);
    assert.match(out, /oracle \[non-LLM\] over 10 questions: EM 1\.00/);
  });

  it('custom-protocol: a registered protocol is an agent; its parser turns bad text into an invalid action', (t) => {
    const out = run('custom-protocol');
    t.diagnostic(out);
    assert.match(out, /registered agents: .*arena, .*, lines/);
    assert.match(out, /"type":"invalid"/);
    assert.match(out, /oracle \[non-LLM\] with --agent lines: EM 1\.00/);
  });

  it('mcts-own-llm: MCTS annotation with a user-written LLM class yields preference pairs', (t) => {
    const out = run('mcts-own-llm');
    t.diagnostic(out);
    const pairs = Number(/(\d+) step pairs/.exec(out)?.[1]);
    assert.ok(pairs > 0, out);
    assert.match(out, /chosen: +\[\{"role":"assistant"/);
  });

  it('custom-reward: a plugin reward drives annotate --outcome and train --reward', (t) => {
    const out = run('custom-reward');
    t.diagnostic(out);
    assert.match(out, /annotate --outcome thrifty-em: \d+ step pairs/);
    assert.match(out, /train --reward thrifty-em: trained grpo/);
  });

  it('custom-retriever: a plugin retriever answers /retrieve behind serve-retriever', (t) => {
    const out = run('custom-retriever');
    t.diagnostic(out);
    assert.match(out, /→ 200/);
    assert.equal(out.split('\n').filter((l) => /^ {2}\d\.\d\d {2}"/.test(l)).length, 3);
  });

  it("the README's and the docs' TypeScript blocks run as written, over the files they name", (t) => {
    // They read `runs/world` and `runs/index`, as the README's commands before them make: made here
    // with the installed CLI, on a small world.
    const cli = join(app, 'node_modules', 'ragtrail', 'dist', 'cli', 'main.js');
    execFileSync(process.execPath, [cli, 'world', '--seed', '1', '--entities', '600', '--out', 'runs/world'], { cwd: app, stdio: 'pipe' });
    execFileSync(process.execPath, [cli, 'index', 'build', '--corpus', 'runs/world/corpus.jsonl', '--out', 'runs/index'], { cwd: app, stdio: 'pipe' });
    assert.ok(docBlocks.length >= 1);
    for (const [i, b] of docBlocks.entries()) {
      const out = run(`doc-block-${i}`);
      t.diagnostic(`${b.file}:${b.line}: ${out.trim().split('\n').at(-1)}`);
    }
  });
});
