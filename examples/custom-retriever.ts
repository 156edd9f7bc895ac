/**
 * A retriever of your own behind `ragtrail serve-retriever` (the Search-R1 `/retrieve` protocol that
 * RL trainers call). The plugin (this file's default export) registers the kind `overlap`: an
 * in-memory word-overlap search over a JSONL corpus, opened as `--index overlap:/path/corpus.jsonl`.
 * Run as a script, it starts the server with `--plugin` pointing at itself and queries it over HTTP.
 *
 *   node custom-retriever.js
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { definePlugin, type Passage } from 'ragtrail';
import type { Hit, Retriever } from 'ragtrail/retrieval';

const words = (s: string) => new Set(s.toLowerCase().match(/[a-z0-9]+/g) ?? []);

/** Scores a passage by the share of the query's words it contains. */
class OverlapRetriever implements Retriever {
  readonly name = 'overlap (example plugin)';
  private readonly passages: { p: Passage; w: Set<string> }[];

  constructor(corpusPath: string) {
    this.passages = readFileSync(corpusPath, 'utf8').split('\n').filter(Boolean).map((line) => {
      const p = JSON.parse(line) as Passage;
      return { p, w: words(`${p.title} ${p.text}`) };
    });
  }

  async search(query: string, k: number): Promise<Hit[]> {
    const q = [...words(query)];
    return this.passages
      .map(({ p, w }) => ({ p, score: q.filter((t) => w.has(t)).length / Math.max(1, q.length) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, k)
      .map(({ p, score }) => ({ passageId: p.id, title: p.title, text: p.text, score }));
  }

  async searchBatch(queries: readonly string[], k: number): Promise<Hit[][]> {
    return Promise.all(queries.map((q) => this.search(q, k)));
  }
}

export default definePlugin((api) => api.registerRetriever('overlap', (path) => new OverlapRetriever(path)));

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { smallWorld } = await import('./world.js');
  const w = await smallWorld();
  const cli = join(dirname(createRequire(import.meta.url).resolve('ragtrail/package.json')), 'dist', 'cli', 'main.js');
  const server = spawn(process.execPath, [cli, 'serve-retriever', '--plugin', fileURLToPath(import.meta.url), '--index', `overlap:${w.corpus}`, '--port', '0', '--quiet'], { stdio: ['ignore', 'pipe', 'ignore'] });
  try {
    // The server prints its address once it listens.
    const url = await new Promise<string>((resolve, reject) => {
      server.stdout!.on('data', (b: Buffer) => {
        const m = /(http:\/\/\S+\/retrieve)/.exec(b.toString());
        if (m) resolve(m[1]!);
      });
      server.on('exit', (code) => reject(new Error(`serve-retriever exited with ${code}`)));
    });
    const question = w.questions[0]!.question;
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ queries: [question], topk: 3, return_scores: true }) });
    const body = (await res.json()) as { result: { document: { contents: string }; score: number }[][] };
    console.log(`POST ${url} → ${res.status}\nquery: ${question}`);
    for (const r of body.result[0]!) console.log(`  ${r.score.toFixed(2)}  ${r.document.contents.split('\n')[0]}`);
  } finally {
    server.kill();
  }
}
