/**
 * Features of a gym candidate in a state: the PRM's process features (prm/features.ts) plus what the
 * generator knows — where the candidate came from, whether an answer's kind fits the question (a year
 * for "when", a name for "who", an option for "which … A or B", yes/no), how much the sentence of a
 * span speaks of the question's relation, whether it came from the latest search.
 *
 * Protocols whose answers cite (ARENA) get CITATION_FEATURES after these, read from the cited numbers
 * themselves (so a demonstrated answer's citations are described the same way as a generated one's):
 * whether nothing is cited, the share of the references cited, the shares of the cited references
 * that hold the answer, that name a question entity, and that do neither, and whether a reference
 * holding the answer, or naming a question entity, is left out. One more describes the answer alone,
 * whatever it cites — whether a reference naming a question entity holds it — so that what makes an
 * answer likely right need not be learned through its citations. Other protocols' vectors are unchanged.
 */
import type { State } from '../../env/env.js';
import type { Protocol } from '../../agents/protocol.js';
import { processFeatures, PROCESS_FEATURES } from '../../prm/features.js';
import { type GymCandidate, referencesHolding, referenceView, SOURCES } from './candidates.js';

export const GYM_FEATURES = [
  ...PROCESS_FEATURES,
  ...SOURCES.map((s) => `source:${s}`),
  'answer:kind_fits_question',
  'answer:sentence_overlap',
  'answer:from_latest_search',
  'extract:sentence_overlap',
  'search:uses_new_doc_entity',
];

/** Features of an answer's citations, for protocols whose answers cite (all 0 for other actions). */
export const CITATION_FEATURES = [
  'cite:none',
  'cite:share_of_references',
  'cite:share_holding_answer',
  'cite:share_naming_question_entity',
  'cite:share_holding_neither',
  'cite:leaves_out_answer_reference',
  'cite:leaves_out_entity_reference',
  'answer:in_entity_reference',
];

/** The feature names of a protocol's gym policy: GYM_FEATURES, then CITATION_FEATURES when its answers cite. */
export function gymFeatureNames(protocol: Pick<Protocol, 'references'>): string[] {
  return protocol.references ? [...GYM_FEATURES, ...CITATION_FEATURES] : [...GYM_FEATURES];
}

function questionWants(q: string): 'number' | 'name' | 'yesno' | 'option' | 'other' {
  const s = q.trim().toLowerCase();
  if (/,\s*.+\s+or\s+.+\?$/.test(q)) return 'option';
  if (/^(are|is|was|were|do|does|did|can|has|have)\b/.test(s)) return 'yesno';
  if (/^(when|in what year|what year|in which year|how many)/.test(s)) return 'number';
  if (/^(who|whom|whose|where|which|what is the capital|in which (city|country))/.test(s)) return 'name';
  return 'other';
}

/** CITATION_FEATURES of a candidate of a citing protocol. */
export function citationFeatures(state: State, c: GymCandidate, protocol: Pick<Protocol, 'references'>): number[] {
  const view = referenceView(state, protocol);
  const a = c.action;
  if (!view || a.type !== 'answer') return CITATION_FEATURES.map(() => 0);
  const cited = [...new Set(a.citations ?? [])];
  const holding = new Set(referencesHolding(view, a.answer));
  const naming = new Set(view.entityRefs);
  const share = (f: (k: number) => boolean) => (cited.length ? cited.filter(f).length / cited.length : 0);
  return [
    cited.length === 0 ? 1 : 0,
    view.n ? cited.filter((k) => k >= 1 && k <= view.n).length / view.n : 0,
    share((k) => holding.has(k)),
    share((k) => naming.has(k)),
    share((k) => !holding.has(k) && !naming.has(k)),
    [...holding].some((k) => !cited.includes(k)) ? 1 : 0,
    [...naming].some((k) => !cited.includes(k)) ? 1 : 0,
    view.entityRefs.some((k) => holding.has(k)) ? 1 : 0,
  ];
}

/** The feature vector of a candidate; with a citing `protocol`, CITATION_FEATURES follow GYM_FEATURES. */
export function gymFeatures(state: State, c: GymCandidate, protocol?: Pick<Protocol, 'references'>): Float64Array {
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
    ...(protocol?.references ? citationFeatures(state, c, protocol) : []),
  ]);
}
