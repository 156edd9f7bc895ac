/**
 * An LLM PRM through TRL (RAG-Gym §3.2, ProRAG §3.2): TRL's RewardTrainer on a one-output head,
 * Bradley-Terry on the mined pairs. Each pair's state and step are joined into one text exactly as
 * the remote PRM joins them at inference (prm/remote.ts prmInputText), so the served model
 * (python/ragtrail_trl/serve_prm.py, `remote:vllm-pooling:URL`) scores the text it learned; the
 * hold-out is by question, as for the lexical head (prm/trained.ts splitByQuestion).
 */
import { join } from 'node:path';
import { writeJsonl } from '../core/io.js';
import { prmInputText } from '../prm/remote.js';
import { createPrm } from '../prm/select.js';
import { evaluatePrm, type PairEval, pairState, type PrmPairRecord, readPrmPairs, rejectedPairState, splitByQuestion } from '../prm/trained.js';
import { servePrm } from './python-service.js';

/** Writes `OUT/prm_text.jsonl` ({chosen, rejected} texts of the training pairs) and `OUT/heldout.jsonl` (the held-out pairs). */
export async function writeTrlPrmData(pairsPath: string, outDir: string, seed: number, holdout = 0.2): Promise<{ data: string; pairs: number; heldOut: PrmPairRecord[] }> {
  const records = await readPrmPairs(pairsPath);
  const { train, heldOut } = splitByQuestion(records, holdout, seed);
  const data = join(outDir, 'prm_text.jsonl');
  await writeJsonl(data, train.map((r) => ({ chosen: prmInputText(pairState(r), r.chosen.raw), rejected: prmInputText(rejectedPairState(r), r.rejected.raw) })));
  await writeJsonl(join(outDir, 'heldout.jsonl'), heldOut);
  return { data, pairs: records.length, heldOut };
}

/** Held-out pair accuracy of a TRL-trained PRM checkpoint, served for the measurement and stopped after. */
export async function trlPrmAccuracy(python: string, modelDir: string, heldOut: readonly PrmPairRecord[], log: string): Promise<PairEval> {
  const svc = await servePrm(python, modelDir, log);
  try {
    return await evaluatePrm(await createPrm(svc.spec), heldOut);
  } finally {
    await svc.stop();
  }
}
