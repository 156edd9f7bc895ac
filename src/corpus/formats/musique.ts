/**
 * MuSiQue records: `paragraphs [{idx, title, paragraph_text, is_supporting}]`, `question_decomposition
 * [{question, answer, paragraph_support_idx}]`, `answer` and `answer_aliases`. Sub-questions keep
 * MuSiQue's `#1`-style references to earlier answers verbatim.
 */
import { RecordError, type SourceLocation } from '../../core/errors.js';
import type { DecompositionStep, Passage, Question } from '../../core/types.js';
import { type Json, requireAnswerList, requireString, withAliases } from './fields.js';
import { contextPassageId } from './hotpotqa.js';

export function fromMusique(rec: Json, loc: SourceLocation): Question {
  const id = requireString(rec, 'id', loc);
  const question = requireString(rec, 'question', loc);
  const answers = withAliases(requireAnswerList(rec, 'answer', loc), rec['answer_aliases']);
  const paragraphs = rec['paragraphs'];
  if (!Array.isArray(paragraphs)) throw new RecordError(loc, 'paragraphs', 'must be a list of {idx, title, paragraph_text}');
  const byIdx = new Map<number, Passage>();
  const context: Passage[] = [];
  const supporting: string[] = [];
  paragraphs.forEach((raw, i) => {
    const p = (raw ?? {}) as Json;
    if (typeof p['paragraph_text'] !== 'string') throw new RecordError(loc, `paragraphs[${i}].paragraph_text`, 'is missing');
    const title = typeof p['title'] === 'string' ? p['title'] : '';
    const text = p['paragraph_text'].trim();
    const passage = { id: contextPassageId(title, text), title, text };
    context.push(passage);
    byIdx.set(typeof p['idx'] === 'number' ? p['idx'] : i, passage);
    if (p['is_supporting'] === true && !supporting.includes(passage.id)) supporting.push(passage.id);
  });
  const decomposition: DecompositionStep[] = [];
  const steps = rec['question_decomposition'];
  if (Array.isArray(steps)) {
    steps.forEach((raw, i) => {
      const s = (raw ?? {}) as Json;
      if (typeof s['question'] !== 'string' || s['answer'] === undefined) {
        throw new RecordError(loc, `question_decomposition[${i}]`, 'needs "question" and "answer"');
      }
      const step: DecompositionStep = { question: s['question'], answer: String(s['answer']) };
      const support = typeof s['paragraph_support_idx'] === 'number' ? byIdx.get(s['paragraph_support_idx']) : undefined;
      if (support) step.passageId = support.id;
      decomposition.push(step);
    });
  }
  const q: Question = { id, question, answers, context, supporting };
  if (decomposition.length > 0) {
    q.decomposition = decomposition;
    q.type = `${decomposition.length}hop`;
  }
  if (rec['answerable'] !== undefined) q.metadata = { answerable: rec['answerable'] };
  return q;
}
