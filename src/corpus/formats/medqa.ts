/**
 * MedQA (Jin et al., 2021; RAG-Gym's fourth benchmark): USMLE-style multiple-choice questions, in the
 * layout of the MedQA release and its Hugging Face copies — `{question, options: {A: …, B: …}, answer,
 * answer_idx}` per line (`answer` the option text, `answer_idx` its letter; MedRAG's benchmark file
 * gives the letter as `answer`). The question text lists the options ("A. …" lines), as the models
 * are shown them; `answers` is [gold letter, gold option text] and `choices` the options, so that a
 * prediction is scored by the option it picks (core/metrics.ts choiceScores). The release has no ids:
 * an id is made from the question's text.
 */
import { type SourceLocation, RecordError } from '../../core/errors.js';
import { stableId } from '../../core/hash.js';
import type { Question } from '../../core/types.js';
import { type Json, optionalString, requireString } from './fields.js';

/** Whether a record is MedQA-shaped: lettered options and the gold letter. */
export function looksLikeMedqa(rec: Json): boolean {
  const o = rec['options'];
  return !!o && typeof o === 'object' && !Array.isArray(o) && ('answer_idx' in rec || (typeof rec['answer'] === 'string' && /^[A-J]$/.test(rec['answer'])));
}

export function fromMedqa(rec: Json, loc: SourceLocation): Question {
  const question = requireString(rec, 'question', loc);
  const raw = rec['options'];
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new RecordError(loc, 'options', 'must be an object of lettered options, e.g. {"A": "…", "B": "…"}');
  const choices: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw as Json)) {
    if (!/^[A-J]$/.test(k) || typeof v !== 'string') throw new RecordError(loc, `options.${k}`, 'must map a letter A–J to the option text');
    choices[k] = v;
  }
  const letter = optionalString(rec, 'answer_idx') ?? optionalString(rec, 'answer');
  if (!letter || !(letter in choices)) throw new RecordError(loc, 'answer_idx', `must be the letter of one of the options (${Object.keys(choices).join(', ')})`);
  const listed = Object.entries(choices).map(([k, v]) => `${k}. ${v}`).join('\n');
  const q: Question = {
    id: optionalString(rec, 'id') ?? stableId('medqa-', question),
    question: `${question}\n${listed}`,
    answers: [letter, choices[letter]!],
    choices,
    type: 'multiple-choice',
  };
  const meta = rec['meta_info'];
  if (typeof meta === 'string') q.metadata = { meta_info: meta };
  return q;
}
