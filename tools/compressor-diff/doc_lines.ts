/**
 * ragtrail's document lines for the fixtures — `docLines` of src/agents/compressed-rag.ts over each
 * question's five documents as the retriever client gives them (title and text) — written to
 * out/doc_lines.json. The references are fed exactly these lines (refenv.py reads them), so that both
 * sides compress the same text whatever format the ragtrail tree under test writes.
 * RAGTRAIL=<checkout> takes docLines from another tree (default: this one).
 *
 *    npx tsx tools/compressor-diff/doc_lines.ts
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(process.env.RAGTRAIL ?? join(HERE, '../..'));
const PY = process.env.PY ?? join(HERE, 'venv/bin/python');
const { docLines }: typeof import('../../src/agents/compressed-rag.js') = await import(pathToFileURL(join(ROOT, 'src/agents/compressed-rag.ts')).href);

interface Fixture { id: string; docs: { id: string; title: string; text: string; score: number }[] }
const fixtures: Fixture[] = JSON.parse(
  execFileSync(PY, ['-c', 'import json,sys; sys.path.insert(0, sys.argv[1]); from fixtures import QUESTIONS, docs_for; print(json.dumps([{"id": q["id"], "docs": docs_for(q["id"])} for q in QUESTIONS]))', HERE], { encoding: 'utf8' }),
);
const out: Record<string, string[]> = {};
for (const f of fixtures) out[f.id] = docLines(f.docs.map((d) => ({ passageId: d.id, title: d.title, text: d.text, score: d.score })));
mkdirSync(join(HERE, 'out'), { recursive: true });
writeFileSync(join(HERE, 'out/doc_lines.json'), JSON.stringify({ ragtrail: ROOT, lines: out }, null, 1));
console.error(`wrote out/doc_lines.json (docLines of ${ROOT})`);
