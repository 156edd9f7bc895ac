/**
 * ragtrail's side of the compressor differential, through the agents' exported functions (the CLI runs in
 * run_all.sh cover the agents end to end with their defaults): for each fixture question, its five
 * documents as the retriever client gives them (title and text), and
 *  - Selective-Context at the sentence, phrase and token levels, ratio 0.5, with no prefix (the default)
 *    and with the `<|endoftext|>` prefix the reference sends; plus a probe of the phrase machinery: the
 *    reference's own units (spaCy's tokens) scored by ragtrail's unitSelfInfo / keepInformative;
 *  - LongLLMLingua step by step (ranking, budget, dynamic ratios, fine compression) and as a whole;
 *  - RECOMP: the trained-summariser prompt, the extractive sentences and the kept ones (top 2 and 5) with
 *    the stand-in encoder served at /v1/embeddings (unit vectors and raw counts).
 * ragtrail's code is loaded from RAGTRAIL (default: this checkout). Writes out/ragtrail.json. Servers:
 * serve_lm with the tiny model (SCORER, default :18112) and servers/server.py (AUX, default :18111).
 *
 *    npx tsx tools/compressor-diff/ragtrail_side.ts
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { LexicalUnit } from '../../src/agents/selective-context.js';
import type { RetrievedDoc } from '../../src/core/trajectory.js';

const HERE = dirname(fileURLToPath(import.meta.url));
// ragtrail's code comes from the tree under test (RAGTRAIL, default: this checkout), as the CLI runs do.
const ROOT = resolve(process.env.RAGTRAIL ?? join(HERE, '../..'));
const load = (path: string) => import(pathToFileURL(join(ROOT, path)).href);
const { docLines, nanMean, scoreText, selfInfo }: typeof import('../../src/agents/compressed-rag.js') = await load('src/agents/compressed-rag.ts');
const { coarseBudget, dynamicRatios, fineCompress, longLlmLinguaCompress, rankDocuments }: typeof import('../../src/agents/longllmlingua.js') = await load('src/agents/longllmlingua.ts');
const { recompExtract, recompSentences, recompTrainedPrompt, topSentences }: typeof import('../../src/agents/recomp.js') = await load('src/agents/recomp.ts');
const { keepInformative, phraseUnits, scSentences, selectiveContextCompress, unitSelfInfo }: typeof import('../../src/agents/selective-context.js') = await load('src/agents/selective-context.ts');
const { createLLM }: typeof import('../../src/llm/create.js') = await load('src/llm/create.ts');
const { createEmbedder }: typeof import('../../src/retrieval/embedders/embedder.js') = await load('src/retrieval/embedders/embedder.ts');

const SCORER = process.env.SCORER ?? 'http://127.0.0.1:18112/v1';
const AUX = process.env.AUX ?? 'http://127.0.0.1:18111/v1';
const PY = process.env.PY ?? join(HERE, 'venv/bin/python');

interface Fixture { id: string; question: string; docs: { id: string; title: string; text: string; score: number }[] }
const fixtures: Fixture[] = JSON.parse(
  execFileSync(PY, ['-c', 'import json,sys; sys.path.insert(0, sys.argv[1]); from fixtures import QUESTIONS, docs_for; print(json.dumps([{**q, "docs": docs_for(q["id"])} for q in QUESTIONS]))', HERE], { encoding: 'utf8' }),
);
const reference = JSON.parse(readFileSync(join(HERE, 'out/reference.json'), 'utf8'));

const scorer = await createLLM(`openai:${SCORER}#tiny`, { concurrency: 1 });
const unitEmb = await createEmbedder(`openai:${AUX}#standin`);
const rawEmb = await createEmbedder(`openai:${AUX}#standin-raw`);
const hashEmb = await createEmbedder('hash:512');
const EOT = '<|endoftext|>';
const t0 = Date.now();
const out: Record<string, unknown> = {};

for (const f of fixtures) {
  const docs: RetrievedDoc[] = f.docs.map((d) => ({ passageId: d.id, title: d.title, text: d.text, score: d.score }));
  const q: Record<string, unknown> = { docLines: docLines(docs) };
  const text = docLines(docs).join('\n').replace(/\s+/g, ' ');
  q.scSentences = scSentences(text);

  // ------------------------------------------------------------------ Selective-Context
  const sc: Record<string, string> = {};
  for (const unit of ['sentence', 'phrase', 'token'] as LexicalUnit[]) {
    sc[`${unit}/no-prefix`] = await selectiveContextCompress(docs, scorer, { unit, ratio: 0.5 });
    sc[`${unit}/eot-prefix`] = await selectiveContextCompress(docs, scorer, { unit, ratio: 0.5, prefix: EOT });
  }
  q.selectiveContext = sc;
  // Each sentence's tokens and self-information as ragtrail reads them (with the prefix), its own phrase
  // units, and the probe: the reference's units through ragtrail's unitSelfInfo.
  const refSentences: { sentence: string; units: string[]; unit_info: number[] }[] = reference.selective_context[f.id]['authors/ragtrail-input/phrase'].sentences;
  const perSentence = [];
  const probeUnits: string[] = [];
  const probeInfo: number[] = [];
  for (const [i, s] of (q.scSentences as string[]).entries()) {
    const scored = (await scoreText(scorer, EOT + s, 'probe')).filter((t) => t.start >= EOT.length).map((t) => ({ ...t, start: t.start - EOT.length, end: t.end - EOT.length }));
    const own = phraseUnits(s);
    const ref = refSentences[i];
    const refUnits = ref ? [...ref.units] : [];
    const usable = ref !== undefined && ref.sentence === s && refUnits.join('') === s;
    const refUnitInfo = usable ? unitSelfInfo(refUnits, scored) : [];
    perSentence.push({
      sentence: s,
      tokens: scored.map((t) => ({ token: t.token, start: t.start, end: t.end, info: selfInfo(t) })),
      // The sentence level's unit: the mean over every token (ragtrail since B3's fix, the reference's np.mean),
      // and the mean ragtrail took before the fix (whitespace-only tokens left out), for the record.
      meanInfo: nanMean(scored.map(selfInfo)),
      meanInfoNoWhitespace: nanMean(scored.filter((t) => !/^\s*$/.test(t.token)).map(selfInfo)),
      phraseUnits: own,
      phraseInfo: unitSelfInfo(own, scored),
      refUnitsUsable: usable,
      refUnitInfo,
    });
    if (usable) {
      if (i > 0 && refUnits.length > 0) refUnits[0] = ` ${refUnits[0]!.trimStart()}`;
      probeUnits.push(...refUnits);
      probeInfo.push(...refUnitInfo);
    }
  }
  q.scPerSentence = perSentence;
  const keep = keepInformative(probeInfo, 0.5);
  q.scProbeRefUnits = { kept: probeUnits.filter((_, i) => keep[i]).join('').trim(), units: probeUnits.length };

  // ---------------------------------------------------------------------- LongLLMLingua
  const lines = docLines(docs);
  const { ranked, questionTokens } = await rankDocuments(f.question, lines, scorer);
  const { target, kept } = coarseBudget(ranked, questionTokens, 0.55, 100);
  const ratios = dynamicRatios(kept, target, 0.3);
  const texts = await fineCompress(f.question, kept.map((d) => lines[d.index]!), ratios, scorer);
  q.longllmlingua = { ranked, questionTokens, target, kept: kept.map((d) => d.index), ratios, texts, compressed: await longLlmLinguaCompress(f.question, docs, scorer) };

  // ----------------------------------------------------------------------------- RECOMP
  q.recompTrainedPrompt = recompTrainedPrompt(f.question, docs);
  q.recompSentences = recompSentences(docs);
  q.recompExtract = {
    'unit/top2': await recompExtract(f.question, docs, unitEmb, 2),
    'unit/top5': await recompExtract(f.question, docs, unitEmb, 5),
    'raw/top2': await recompExtract(f.question, docs, rawEmb, 2),
    'raw/top5': await recompExtract(f.question, docs, rawEmb, 5),
    'hash512/top2': await recompExtract(f.question, docs, hashEmb, 2),
  };
  // ragtrail's selection rule (topSentences) on FlashRAG's sentence list, with the same encoder.
  const refSents: string[] = reference.recomp_extractive.sentences[f.id];
  const onRef: Record<string, string> = {};
  for (const [name, emb] of [['unit', unitEmb], ['raw', rawEmb]] as const) {
    const [qv] = await emb.embed([f.question], 'query');
    const vs = await emb.embed(refSents, 'passage');
    const scores = vs.map((v) => v.reduce((a, x, i) => a + x * (qv![i] ?? 0), 0));
    for (const n of [2, 5]) onRef[`${name}/top${n}`] = topSentences(refSents, scores, n).join(' ');
  }
  q.recompRuleOnFlashragSentences = onRef;
  out[f.id] = q;
}
// Probes beyond the documents (fixtures.py). Sentence splitting; and token placement: each text scored as
// the compressors score it (scoreText), checked on its own: every token that decodes cleanly (no "\uFFFD")
// should cover exactly its own text, the spans should tile the text in order, and there should be as many
// tokens as the tokenizer makes of the text (none of the generated one among them).
// Also alignTokens alone on each probe's tokens (decoded one by one, as the servers echo them) with the
// offsets each server would send: none (the string-matching path), serve_lm's (the length of the decoded
// prefix, in code points), and vLLM's (a running sum of the echoed tokens' lengths, in code points:
// _create_completion_logprobs in vllm/entrypoints/openai/serving_completion.py), without and with a BOS
// token echoed first ("<s>", as for a Llama scorer; vLLM counts its three characters).
const PROBE_PY = `import json, sys
sys.path.insert(0, sys.argv[1])
from fixtures import SPLIT_PROBES, ALIGN_PROBES
from tokenizers import Tokenizer
t = Tokenizer.from_file(sys.argv[1] + "/model/tokenizer.json")
align = []
for x in ALIGN_PROBES:
    ids = t.encode(x, add_special_tokens=False).ids
    pieces = [t.decode([i]) for i in ids]
    vllm = [sum(len(p) for p in pieces[:i]) for i in range(len(ids))]
    align.append({"text": x, "tokens": len(ids), "pieces": pieces, "serve_lm": [len(t.decode(ids[:i])) for i in range(len(ids))], "vllm": vllm})
print(json.dumps({"split": SPLIT_PROBES, "align": align}))`;
const probes: { split: string[]; align: { text: string; tokens: number; pieces: string[]; serve_lm: number[]; vllm: number[] }[] } = JSON.parse(
  execFileSync(PY, ['-c', PROBE_PY, HERE], { encoding: 'utf8' }),
);
const { alignTokens }: typeof import('../../src/agents/compressed-rag.js') = await load('src/agents/compressed-rag.ts');
const placed = (text: string, tokens: string[], spans: { start: number; end: number }[]) => {
  const clean = tokens.map((t, i) => ({ t, s: spans[i]! })).filter(({ t }) => !t.includes('\uFFFD') && !/^<\|?[^<>\s]*\|?>$/.test(t));
  return `${clean.filter(({ t, s }) => text.slice(s.start, s.end) === t).length}/${clean.length}`;
};
out.splitProbe = probes.split.map((t) => scSentences(t.replace(/\s+/g, ' ')));
out.alignProbe = [];
for (const p of probes.align) {
  const scored = await scoreText(scorer, p.text, 'probe');
  const clean = scored.filter((t) => !t.token.includes('\uFFFD') && t.logprob !== null);
  let at = 0;
  let tiles = true;
  for (const t of scored) {
    if (t.start !== at || t.end < t.start) tiles = false;
    at = t.end;
  }
  (out.alignProbe as unknown[]).push({
    text: p.text,
    tokens: { scored: scored.length, exact: p.tokens },
    clean: clean.length,
    cleanOnOwnText: clean.filter((t) => p.text.slice(t.start, t.end) === t.token).length,
    tiles: tiles && at === p.text.length,
    misplaced: clean.filter((t) => p.text.slice(t.start, t.end) !== t.token).slice(0, 4).map((t) => [t.token, p.text.slice(t.start, t.end)]),
    alignTokens: {
      'no offsets': placed(p.text, p.pieces, alignTokens(p.text, p.pieces)),
      "serve_lm's offsets": placed(p.text, p.pieces, alignTokens(p.text, p.pieces, p.serve_lm)),
      "vLLM's offsets": placed(p.text, p.pieces, alignTokens(p.text, p.pieces, p.vllm)),
      "vLLM's offsets, BOS echoed": placed(p.text, ['<s>', ...p.pieces], alignTokens(p.text, ['<s>', ...p.pieces], [0, ...p.vllm.map((o) => o + 3)])),
      'no offsets, BOS echoed': placed(p.text, ['<s>', ...p.pieces], alignTokens(p.text, ['<s>', ...p.pieces])),
    },
  });
}
out.ragtrail = ROOT;
out.seconds = (Date.now() - t0) / 1000;
writeFileSync(join(HERE, 'out/ragtrail.json'), JSON.stringify(out, null, 1));
console.error(`wrote out/ragtrail.json in ${out.seconds}s`);
