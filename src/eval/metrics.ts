/**
 * The answer metrics (EM, F1 and Acc as the SQuAD / HotpotQA / FlashRAG scripts compute them) live in
 * core/metrics.ts, shared with rewards and search; eval re-exports them. Here: RAG-Gym's answer location.
 */
import { PY_SPACE_CLASS, pyStrip } from '../core/text.js';

export * from '../core/metrics.js';

// Python's `\s` and, after the whitespace runs are made one space, its `.` (anything but "\n").
const S = PY_SPACE_CLASS;
const LOCATORS = [
  `answer_choice["']:${S}*\\{?["']?([^\\n]+?)["']?${S}*\\}`,
  `answer["']:${S}*\\{?["']?([^\\n]+?)["']?${S}*\\}`,
  `answer is:?${S}*\\{?["']?([^\\n]+?)["']?${S}*\\}`,
  `[Aa]nswer\\*?\\*?:${S}*(A|B|C|D)`,
  `is:?${S}*\\*?\\*?(A|B|C|D)`,
].map((p) => new RegExp(p, 'u'));
const PY_SPACE_RUN = new RegExp(`${S}+`, 'gu');

/**
 * RAG-Gym's answer location for evaluation (`locate_answer` in src/evaluate.py @2abbdd48): what its reported
 * EM/F1 compare with the gold. Whitespace runs (Python's) become one space; then the first of five patterns
 * that matches gives the answer — a JSON-ish `answer_choice": …}` or `answer": …}` (quotes and one opening
 * brace dropped; the value runs to the first "}" that may close it), "answer is … }", "Answer: B" or "is B"
 * (a letter A–D) — and otherwise the whole reply, stripped. A missing reply is "NA". Note the closing "}" the
 * first three need: `The answer is Paris.` is returned whole.
 */
export function ragGymLocateAnswer(s: string | null | undefined): string {
  if (s == null) return 'NA';
  const t = s.replace(PY_SPACE_RUN, ' ');
  for (const re of LOCATORS) {
    const m = re.exec(t);
    if (m) return m[1]!;
  }
  return pyStrip(t);
}
