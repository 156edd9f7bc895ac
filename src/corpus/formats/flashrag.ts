/**
 * FlashRAG JSON Lines: `{id, question, golden_answers, metadata}`. The metadata is kept; where it
 * carries fields of the data model (ragtrail's own files put `type`, `supporting` and
 * `decomposition` there; FlashRAG's HotpotQA export puts `context` and `supporting_facts`), they
 * are lifted into the Question.
 */
import type { SourceLocation } from '../../core/errors.js';
import type { DecompositionStep, Question } from '../../core/types.js';
import { type Json, requireAnswerList, requireString } from './fields.js';
import { parseHotpotContext, parseSupportingFacts, supportingIds } from './hotpotqa.js';

function isStringList(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === 'string');
}

function asDecomposition(v: unknown): DecompositionStep[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const steps: DecompositionStep[] = [];
  for (const raw of v) {
    if (!raw || typeof raw !== 'object') return undefined;
    const s = raw as Json;
    if (typeof s['question'] !== 'string' || typeof s['answer'] !== 'string') return undefined;
    const step: DecompositionStep = { question: s['question'], answer: s['answer'] };
    if (typeof s['passageId'] === 'string') step.passageId = s['passageId'];
    steps.push(step);
  }
  return steps;
}

export function fromFlashrag(rec: Json, loc: SourceLocation): Question {
  const id = requireString(rec, 'id', loc);
  const question = requireString(rec, 'question', loc);
  const answers = requireAnswerList(rec, 'golden_answers', loc, true);
  const q: Question = { id, question, answers };
  const meta = rec['metadata'];
  if (meta && typeof meta === 'object' && !Array.isArray(meta)) {
    const m = { ...(meta as Json) };
    if (typeof m['type'] === 'string') {
      q.type = m['type'];
      delete m['type'];
    }
    if (m['context'] !== undefined) {
      q.context = parseHotpotContext(m['context'], loc, 'metadata.context');
      delete m['context'];
      const facts = parseSupportingFacts(m['supporting_facts'], loc);
      if (facts.length > 0) {
        q.supporting = supportingIds(q.context, facts);
        m['supporting_facts'] = facts; // normalised to [{title, sentence}], as fromHotpot keeps them
      }
    }
    if (isStringList(m['supporting'])) {
      q.supporting = m['supporting'];
      delete m['supporting'];
    }
    const decomposition = asDecomposition(m['decomposition']);
    if (decomposition) {
      q.decomposition = decomposition;
      delete m['decomposition'];
    }
    if (Object.keys(m).length > 0) q.metadata = m;
  }
  return q;
}

/** Question → FlashRAG line; data-model fields travel in `metadata` so that the round trip is lossless. */
export function toFlashrag(q: Question): Json {
  const metadata: Json = { ...(q.metadata ?? {}) };
  if (q.type !== undefined) metadata['type'] = q.type;
  if (q.supporting !== undefined) metadata['supporting'] = q.supporting;
  if (q.decomposition !== undefined) metadata['decomposition'] = q.decomposition;
  if (q.context !== undefined) {
    // HotpotQA's dict-of-lists layout, one "sentence" per passage: ids survive the round trip.
    metadata['context'] = { title: q.context.map((c) => c.title), sentences: q.context.map((c) => [c.text]) };
  }
  const line: Json = { id: q.id, question: q.question, golden_answers: q.answers };
  if (Object.keys(metadata).length > 0) line['metadata'] = metadata;
  return line;
}
