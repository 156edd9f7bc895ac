/**
 * The module layout holds: data flows one way through the stages (core → corpus → retrieval → llm →
 * env + agents → rewards → process → prm → learn → eval), so a stage imports only from itself, from
 * stages to its left and from core/; and no group of modules imports itself round a cycle. The test
 * reads the import statements of src/**\/*.ts as text (static, type-only, re-exports and literal
 * dynamic imports alike), so it runs in milliseconds and needs no build.
 *
 * Where the pieces outside the stage folders stand:
 * - `types/` holds ambient declarations for untyped dependencies: rank of core/, anyone may use them.
 * - `pipelines/` composes whole runs from every stage, `plugin.ts` registers into every stage's
 *   registry (and loads the gym policy from learn/), and `index.ts` is the root entry point (it
 *   re-exports metrics from eval/): these three rank after eval/.
 * - `view/` (`ragtrail view`) reads the files every stage writes, not their code (it imports core/ only),
 *   so it ranks with pipelines/, after everything whose output it shows.
 * - `cli/` ranks last: it parses flags and calls into any of the above.
 * - env/ and agents/ are one stage, yet inside it agents read the environment's `State`, so env/
 *   must not import agents/ (that edge would make the two one tangle).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

/** Rank of each top-level entry of src/; a module may import only modules of equal or lower rank. */
const RANK: Record<string, number> = {
  core: 0,
  types: 0,
  corpus: 1,
  retrieval: 2,
  llm: 3,
  env: 4,
  agents: 4,
  rewards: 5,
  process: 6,
  prm: 7,
  learn: 8,
  eval: 9,
  pipelines: 10,
  'plugin.ts': 10,
  'index.ts': 10,
  view: 10,
  cli: 11,
};

/**
 * Upward edges kept on purpose, each with its reason. The environment server moved from env/serve/
 * to learn/serve/ (it needs agents' protocols, and learn/ is the stage that serves environments to
 * trainers); the `ragtrail/env` entry point still re-exports it so that users' imports keep working.
 */
const ALLOWED_UPWARD = new Set([
  'env/index.ts -> learn/serve/env-service.ts',
  'env/index.ts -> learn/serve/serve-env.ts',
]);

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      // AssemblyScript sources compile to wasm on their own; they are not part of the module graph.
      if (name !== 'assembly') out.push(...sourceFiles(p));
    } else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** `a/b.ts`-style path relative to src/, with forward slashes on every platform. */
const rel = (p: string) => relative(SRC, p).split(sep).join('/');

/**
 * The relative module specifiers a file imports. Declarations start at column 0 in this code base
 * (`import …`, `export {…} from`, `export * from`), which keeps doc comments that quote an import
 * (` * import { X } from 'ragtrail/…'`) out; dynamic imports count when their argument is a literal.
 */
function importSpecifiers(text: string): string[] {
  const specs: string[] = [];
  const declaration = /^(?:import|export\s+(?:type\s+)?(?:\*|\{))[^;]*?['"]([^'"]+)['"]\s*;?/gm;
  for (const m of text.matchAll(declaration)) {
    // An import statement ends with its specifier: `… from '…'` or the bare `import '…'`.
    if (/^import\s+['"]/.test(m[0]) || /\bfrom\s+['"][^'"]+['"]\s*;?$/.test(m[0])) specs.push(m[1]!);
  }
  for (const line of text.split('\n')) {
    const t = line.trimStart();
    if (t.startsWith('*') || t.startsWith('//') || t.startsWith('/*')) continue;
    for (const m of line.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) specs.push(m[1]!);
  }
  return specs.filter((s) => s.startsWith('.'));
}

function moduleGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(SRC)) {
    const targets = new Set<string>();
    for (const spec of importSpecifiers(readFileSync(file, 'utf8'))) {
      const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
      assert.ok(existsSync(target), `${rel(file)} imports ${spec}, which resolves to no file under src/`);
      targets.add(rel(target));
    }
    graph.set(rel(file), targets);
  }
  return graph;
}

const top = (path: string) => path.split('/')[0]!;

/** Strongly connected components with more than one module (or a module importing itself): Tarjan's algorithm. */
function cycles(graph: Map<string, Set<string>>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || graph.get(v)?.has(v)) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('module layering', () => {
  const graph = moduleGraph();

  it('reads the import statements it should (a check on the reader itself)', () => {
    const text = [
      "import { a } from './a.js';",
      "import type {\n  B,\n  C,\n} from '../b.js';",
      "import './side-effect.js';",
      "export { d } from './d.js';",
      "export * from './e.js';",
      "export type { F } from './f.js';",
      "export { g };",
      " * import { X } from './in-a-comment.js';",
      "// const h = await import('./commented.js');",
      "const i = await import('./dynamic.js');",
      "const j = await import(name);",
      "import { readFileSync } from 'node:fs';",
    ].join('\n');
    assert.deepEqual(importSpecifiers(text).sort(), ['../b.js', './a.js', './d.js', './dynamic.js', './e.js', './f.js', './side-effect.js']);
    assert.ok(graph.size > 100, `found only ${graph.size} modules under src/`);
    assert.ok(graph.get('env/index.ts')?.has('env/env.ts'), 'the graph misses env/index.ts → env/env.ts');
  });

  it('places every top-level folder and file of src/ in a stage', () => {
    const unplaced = [...new Set([...graph.keys()].map(top))].filter((t) => RANK[t] === undefined);
    assert.deepEqual(unplaced, [], 'give each new top-level entry of src/ a rank in RANK (and say why in the header)');
  });

  it('imports only from the same or earlier stages', () => {
    const upward: string[] = [];
    for (const [from, targets] of graph) {
      for (const to of targets) {
        const edge = `${from} -> ${to}`;
        if (RANK[top(to)]! > RANK[top(from)]! && !ALLOWED_UPWARD.has(edge)) upward.push(edge);
      }
    }
    assert.deepEqual(upward, [], 'these imports run against the data flow: move the imported piece down, or the importer up');
  });

  it('keeps env/ free of agents/ (agents read the environment, not the other way round)', () => {
    const edges = [...graph].flatMap(([from, targets]) => (top(from) === 'env' ? [...targets].filter((t) => top(t) === 'agents').map((t) => `${from} -> ${t}`) : []));
    assert.deepEqual(edges, []);
  });

  it('lists only upward edges that still exist', () => {
    const stale = [...ALLOWED_UPWARD].filter((edge) => {
      const [from, to] = edge.split(' -> ') as [string, string];
      return !graph.get(from)?.has(to);
    });
    assert.deepEqual(stale, [], 'drop these from ALLOWED_UPWARD');
  });

  it('has no import cycles between modules', () => {
    assert.deepEqual(cycles(graph), [], 'split the types these modules share into a module of their own');
  });
});
