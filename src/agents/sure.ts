/**
 * SuRe (Kim et al., ICLR 2024, "SuRe: Summarizing Retrievals using Answer Candidates for Open-domain
 * QA of LLMs"), a baseline of ARENA's table: retrieve once with the question; ask for K answer
 * candidates (K = 2, the paper's default); for each, a summary of the documents written to support that
 * candidate; then judge the summaries — each alone (does it support its candidate? 1 or 0) and in pairs
 * (which of two is the more informative? asked in both orders, as the authors' code does against a
 * judge's position bias: a win counts 1 when the two verdicts agree or only one is readable, ½ each
 * otherwise) — and answer with the candidate whose validity plus share of pairwise wins is highest (the
 * first on a tie). 1 + 2K + K(K−1) model calls (7 for K = 2), all at temperature 0, made in `prepare`; the answer
 * step is then fixed. The search step's `summary` records the candidates, scores and choice. When no
 * candidate can be read, the model is asked for the answer directly over the documents (as `rag`).
 */
import type { Action, Step } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import type { LLM } from '../llm/types.js';
import { firstSearch, formatDocs, hasAnswered, type Protocol } from './protocol.js';
import { rag } from './rag-gym.js';

/** Answer candidates per question (the paper's K). */
export const SURE_CANDIDATES = 2;

interface SureRecord {
  candidates: string[];
  validity: number[];
  ranking: number[];
  chosen?: string;
}

const decided = new WeakMap<Step, SureRecord>();

const ask = async (llm: LLM, content: string, maxTokens: number) => ((await llm.generate({ messages: [{ role: 'user', content }], temperature: 0, maxTokens })).choices[0]?.text ?? '').trim();

/** Candidates of a reply: lines "(a) X", "(b) Y" (also "a)", "1.", "- "), distinct, at most K. */
export function readCandidates(text: string, k = SURE_CANDIDATES): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*(?:\(?[a-z1-9]\)|[1-9][.)]|-)\s*(.+?)\s*$/i.exec(line);
    // "(a) X, (b) Y" on one line (the form SuRe's own prompt asks for) holds several candidates.
    for (const part of (m?.[1] ?? '').split(/[,;]?\s*\([b-j]\)\s*/i)) {
      const c = part.trim().replace(/[,;.]+$/, '').trim();
      if (c && !out.some((x) => x.toLowerCase() === c.toLowerCase())) out.push(c);
      if (out.length === k) return out;
    }
  }
  return out;
}

/** The candidate SuRe keeps: highest validity + share of pairwise wins, the first on a tie. */
export function sureChoice(candidates: readonly string[], validity: readonly number[], ranking: readonly number[]): string | undefined {
  let best = -1;
  candidates.forEach((_, i) => {
    if (best < 0 || validity[i]! + ranking[i]! > validity[best]! + ranking[best]!) best = i;
  });
  return candidates[best];
}

async function runSure(state: State, search: Step, llm: LLM): Promise<SureRecord> {
  const q = state.question.question;
  const docs = formatDocs(search.docs ?? []);
  const letters = 'abcdefghij';
  const list = Array.from({ length: SURE_CANDIDATES }, (_, i) => `(${letters[i]}) <short answer>`).join('\n');
  const candidates = readCandidates(await ask(llm, `Documents:\n${docs}\n\nQuestion: ${q}\nGive ${SURE_CANDIDATES} different short candidate answers to the question, using the documents, one per line:\n${list}`, 64));
  const summaries: string[] = [];
  for (const c of candidates) summaries.push(await ask(llm, `Documents:\n${docs}\n\nQuestion: ${q}\nIn a few sentences, summarise what the documents say that supports the answer "${c}". Summary:`, 160));
  const validity: number[] = [];
  for (const [i, c] of candidates.entries()) validity.push(/^\W*true\b/i.test(await ask(llm, `Question: ${q}\nProposed answer: ${c}\nSummary: ${summaries[i]}\nDoes the summary support the proposed answer? Reply True or False.`, 4)) ? 1 : 0);
  const wins = candidates.map(() => 0);
  for (let i = 0; i < candidates.length; i++) {
    for (let j = i + 1; j < candidates.length; j++) {
      const judge = async (a: number, b: number) => /\b([12])\b/.exec(await ask(llm, `Question: ${q}\nSummary 1: ${summaries[a]}\nSummary 2: ${summaries[b]}\nWhich summary is more informative and better supports an answer to the question? Reply 1 or 2.`, 4))?.[1];
      // Both orders, against a judge's position bias (the authors' use_api_rank / postprocess_rank): a win
      // when the two verdicts agree or only one is readable, ½ each otherwise.
      const v1 = await judge(i, j);
      const v2 = await judge(j, i);
      const w1 = v1 === '1' ? i : v1 === '2' ? j : undefined;
      const w2 = v2 === '1' ? j : v2 === '2' ? i : undefined;
      const w = w1 !== undefined && w2 !== undefined ? (w1 === w2 ? w1 : undefined) : (w1 ?? w2);
      if (w !== undefined) wins[w]! += 1;
      else {
        wins[i]! += 0.5;
        wins[j]! += 0.5;
      }
    }
  }
  const ranking = wins.map((w) => (candidates.length > 1 ? w / (candidates.length - 1) : 0));
  const chosen = sureChoice(candidates, validity, ranking);
  return { candidates, validity, ranking, ...(chosen !== undefined && { chosen }) };
}

export const sure: Protocol = {
  ...rag,
  name: 'sure',
  description: 'SuRe: one search; K answer candidates, a supporting summary of each, summaries judged alone and in pairs; the best candidate answers',
  defaults: { ...rag.defaults, maxTokens: 160 },
  async prepare(state: State, llm: LLM): Promise<void> {
    const search = firstSearch(state);
    if (!search || decided.has(search) || hasAnswered(state)) return;
    const r = await runSure(state, search, llm);
    decided.set(search, r);
    search.summary = `SuRe candidates: ${r.candidates.map((c, i) => `${c} (validity ${r.validity[i]}, ranking ${r.ranking[i]})`).join('; ') || 'none readable'}${r.chosen !== undefined ? `; chosen: ${r.chosen}` : ''}`;
  },
  fixedAction(state: State): Action | undefined {
    const fixed = rag.fixedAction!(state);
    if (fixed) return fixed;
    const search = firstSearch(state);
    const chosen = search ? decided.get(search)?.chosen : undefined;
    return chosen !== undefined && !hasAnswered(state) ? { type: 'answer', answer: chosen } : undefined;
  },
};
