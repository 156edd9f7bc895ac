/**
 * HotpotQA distractor records, in the official layout (`_id`, `context: [[title, [sentences]]]`,
 * `supporting_facts: [[title, sent_id]]`) and the Hugging Face layout (`id`, dict-of-lists
 * `context: {title: [], sentences: [[]]}`), and 2WikiMultihopQA, which is HotpotQA-shaped plus
 * `evidences` triples. A passage is one context paragraph: its sentences concatenated as given
 * (HotpotQA sentences carry their own leading spaces).
 */
import { RecordError, type SourceLocation } from '../../core/errors.js';
import { stableId } from '../../core/hash.js';
import type { Passage, Question } from '../../core/types.js';
import { type Json, optionalString, requireAnswerList, requireString } from './fields.js';

/** Passage id for a (title, text) pair built from dataset contexts: stable and shared across datasets. */
export function contextPassageId(title: string, text: string): string {
  return stableId('ctx-', title, text);
}

export function makeContextPassage(title: string, sentences: string[]): Passage {
  const text = sentences.join('').trim();
  return { id: contextPassageId(title, text), title, text };
}

function sentencesOf(value: unknown): string[] | undefined {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((s) => typeof s === 'string')) return value as string[];
  return undefined;
}

/** Parses `context` in either layout into passages, in dataset order. */
export function parseHotpotContext(value: unknown, loc: SourceLocation, field = 'context'): Passage[] {
  const bad = (why: string) => new RecordError(loc, field, why, 'expected [[title, [sentences]]] or {title: [...], sentences: [[...]]}');
  if (Array.isArray(value)) {
    return value.map((pair, i) => {
      if (!Array.isArray(pair) || typeof pair[0] !== 'string') throw bad(`entry ${i} is not a [title, sentences] pair`);
      const sentences = sentencesOf(pair[1]);
      if (!sentences) throw bad(`entry ${i} has no list of sentences`);
      return makeContextPassage(pair[0], sentences);
    });
  }
  if (value && typeof value === 'object') {
    const obj = value as Json;
    const titles = obj['title'];
    // 2WikiMultihopQA on the Hugging Face hub names the sentence lists `content`.
    const bodies = obj['sentences'] ?? obj['content'];
    if (!Array.isArray(titles) || !Array.isArray(bodies) || titles.length !== bodies.length) {
      throw bad('must have equally long "title" and "sentences" lists');
    }
    return titles.map((title, i) => {
      const sentences = sentencesOf(bodies[i]);
      if (typeof title !== 'string' || !sentences) throw bad(`entry ${i} is not a title with sentences`);
      return makeContextPassage(title, sentences);
    });
  }
  throw bad('is missing or has an unknown layout');
}

/** [[title, sent_id]] or {title: [], sent_id: []} → list of {title, sentence}. */
export function parseSupportingFacts(value: unknown, loc: SourceLocation): { title: string; sentence: number }[] {
  if (value === undefined || value === null) return [];
  const bad = () => new RecordError(loc, 'supporting_facts', 'has an unknown layout', 'expected [[title, sent_id]] or {title: [...], sent_id: [...]}');
  if (Array.isArray(value)) {
    return value.map((f) => {
      if (!Array.isArray(f) || typeof f[0] !== 'string') throw bad();
      return { title: f[0], sentence: Number(f[1]) };
    });
  }
  if (typeof value === 'object') {
    const { title, sent_id } = value as Json;
    if (!Array.isArray(title) || !Array.isArray(sent_id)) throw bad();
    return title.map((t, i) => ({ title: String(t), sentence: Number(sent_id[i]) }));
  }
  throw bad();
}

/** The ids of context passages whose titles are named by the supporting facts, in fact order, deduplicated. */
export function supportingIds(context: Passage[], facts: { title: string }[]): string[] {
  const ids: string[] = [];
  for (const f of facts) {
    const p = context.find((c) => c.title === f.title);
    if (p && !ids.includes(p.id)) ids.push(p.id);
  }
  return ids;
}

/**
 * HotpotQA or 2WikiMultihopQA record → Question. Records without an id (the Hugging Face export of
 * HotpotQA drops it) get a stable id from a hash of the question text.
 */
export function fromHotpot(rec: Json, loc: SourceLocation): Question {
  const question = requireString(rec, 'question', loc);
  const answers = requireAnswerList(rec, 'answer', loc);
  const id = optionalString(rec, '_id') ?? optionalString(rec, 'id') ?? stableId('q-', question);
  const context = parseHotpotContext(rec['context'], loc);
  const facts = parseSupportingFacts(rec['supporting_facts'], loc);
  const metadata: Record<string, unknown> = {};
  for (const key of ['level', 'evidences', 'entity_ids'] as const) if (rec[key] !== undefined) metadata[key] = rec[key];
  if (facts.length > 0) metadata['supporting_facts'] = facts;
  const q: Question = { id, question, answers, context, supporting: supportingIds(context, facts) };
  const type = optionalString(rec, 'type');
  if (type) q.type = type;
  if (Object.keys(metadata).length > 0) q.metadata = metadata;
  return q;
}
