/**
 * Features of a gym candidate in a state: the PRM's process features (prm/features.ts) plus what the
 * generator knows — where the candidate came from, whether an answer's kind fits the question (a year
 * for "when", a name for "who", an option for "which … A or B", yes/no), how much the sentence of a
 * span speaks of the question's relation, whether it came from the latest search.
 */
import type { State } from '../../env/env.js';
import { processFeatures, PROCESS_FEATURES } from '../../prm/features.js';
import { type GymCandidate, SOURCES } from './candidates.js';

export const GYM_FEATURES = [
  ...PROCESS_FEATURES,
  ...SOURCES.map((s) => `source:${s}`),
  'answer:kind_fits_question',
  'answer:sentence_overlap',
  'answer:from_latest_search',
  'extract:sentence_overlap',
  'search:uses_new_doc_entity',
];

function questionWants(q: string): 'number' | 'name' | 'yesno' | 'option' | 'other' {
  const s = q.trim().toLowerCase();
  if (/,\s*.+\s+or\s+.+\?$/.test(q)) return 'option';
  if (/^(are|is|was|were|do|does|did|can|has|have)\b/.test(s)) return 'yesno';
  if (/^(when|in what year|what year|in which year|how many)/.test(s)) return 'number';
  if (/^(who|whom|whose|where|which|what is the capital|in which (city|country))/.test(s)) return 'name';
  return 'other';
}

export function gymFeatures(state: State, c: GymCandidate): Float64Array {
  const p = processFeatures(state, { action: c.action, raw: '' });
  const src = SOURCES.map((s) => (c.source === s ? 1 : 0));
  const wants = questionWants(state.question.question);
  const a = c.action;
  const fits =
    a.type === 'answer'
      ? (wants === 'option' && c.source === 'option') || (wants === 'yesno' && c.kind === 'yesno') || (wants === 'number' && c.kind === 'number') || (wants === 'name' && c.kind === 'name')
        ? 1
        : 0
      : 0;
  return Float64Array.from([
    ...p,
    ...src,
    fits,
    a.type === 'answer' ? c.sentenceOverlap : 0,
    a.type === 'answer' && c.recent ? 1 : 0,
    a.type === 'extract' ? c.sentenceOverlap : 0,
    a.type === 'search' && c.source === 'doc-entity' ? 1 : 0,
  ]);
}
