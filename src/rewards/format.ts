/**
 * Format rewards: does the agent's text follow its protocol's shape? Each protocol's rule is from its
 * paper: LWS ±1 (eq. 6) on the whole transcript, ARENA 1/0 on its single output (§3.3), ProRAG per-step
 * schema and whole-workflow indicators. Generation stops before stop strings, so a model turn is
 * judged with the closing tag it stopped at put back.
 */
import type { Step, Trajectory } from '../core/trajectory.js';

export interface TagSequence {
  /** Top-level elements in order, by tag name. */
  tags: string[];
  /** Every tag closed, none nested, none stray. */
  wellFormed: boolean;
  /** Non-whitespace text outside the top-level elements. */
  hasOutsideText: boolean;
}

/** The top-level `<tag>…</tag>` elements of a text. */
export function tagSequence(text: string): TagSequence {
  const tags: string[] = [];
  const stack: string[] = [];
  let wellFormed = true;
  let outside = '';
  let last = 0;
  for (const m of text.matchAll(/<(\/?)([a-z_]+)>/gi)) {
    const name = m[2]!.toLowerCase();
    const at = m.index!;
    if (stack.length === 0) outside += text.slice(last, at);
    if (m[1] === '') {
      if (stack.length > 0) wellFormed = false; // nested
      stack.push(name);
    } else if (stack[stack.length - 1] === name) {
      stack.pop();
      if (stack.length === 0) tags.push(name);
    } else {
      wellFormed = false; // stray or crossed closing tag
    }
    last = at + m[0].length;
  }
  if (stack.length === 0) outside += text.slice(last);
  if (stack.length > 0) wellFormed = false;
  return { tags, wellFormed, hasOutsideText: outside.trim() !== '' };
}

/** A model turn with the closing tag its stop string removed. */
export function closedRaw(step: Step, tagFor: Partial<Record<Step['action']['type'], string>>): string {
  const tag = tagFor[step.action.type];
  const t = step.raw.trimEnd();
  return tag && t.includes(`<${tag}>`) && !t.endsWith(`</${tag}>`) ? `${t}</${tag}>` : t;
}

/**
 * LWS eq. 6: r_f = 1 if the transcript has one of the two valid shapes, else −1. Shapes (LWS §3.3):
 * think, reflect, answer — or (think | search | information | reflect)+ answer, with every search
 * answered by the environment's information and the answer last; each model turn ends in its action
 * (a search or the answer). With `strict`, text outside the tags also fails the format (choice;
 * default lenient, as models often write a preamble).
 */
export function lwsFormat(t: Pick<Trajectory, 'steps'>, strict = false): number {
  const seq: string[] = [];
  for (const step of t.steps) {
    const s = tagSequence(closedRaw(step, { search: 'search', answer: 'answer' }));
    if (!s.wellFormed || (strict && s.hasOutsideText)) return -1;
    const last = s.tags[s.tags.length - 1];
    if (last !== 'search' && last !== 'answer') return -1;
    seq.push(...s.tags);
    if (step.action.type === 'search') seq.push('information');
  }
  const shape = seq.join(' ');
  if (shape === 'think reflect answer') return 1;
  if (!/^((think|search|information|reflect) )+answer$/.test(shape)) return -1;
  // Every search is followed by its information, and information appears only after a search.
  for (let i = 0; i < seq.length; i++) {
    if (seq[i] === 'search' && seq[i + 1] !== 'information') return -1;
    if (seq[i] === 'information' && seq[i - 1] !== 'search') return -1;
  }
  return seq.includes('search') ? 1 : -1;
}

/** ARENA: 1 when <relevance>, <analysis> and <answer> appear once each, in that order, unnested, and nothing else. */
export function arenaFormat(text: string): number {
  const s = tagSequence(text);
  return s.wellFormed && !s.hasOutsideText && s.tags.join(' ') === 'relevance analysis answer' ? 1 : 0;
}

const PRORAG_CLOSE = { search: 'subquery', extract: 'subanswer', answer: 'answer' } as const;

/** ProRAG: does one model turn follow the step schema — <step>…</step> then exactly one of <subquery>, <subanswer>, <answer>? */
export function proragStepFormat(step: Step): boolean {
  const s = tagSequence(closedRaw(step, PRORAG_CLOSE));
  return s.wellFormed && s.tags.length === 2 && s.tags[0] === 'step' && ['subquery', 'subanswer', 'answer'].includes(s.tags[1]!);
}

/** ProRAG: does the whole trajectory follow the workflow (step, subquery, retrieval, step, subanswer)* step, answer? */
export function proragWorkflow(t: Pick<Trajectory, 'steps'>): boolean {
  const seq: string[] = [];
  for (const step of t.steps) {
    const s = tagSequence(closedRaw(step, PRORAG_CLOSE));
    if (!s.wellFormed) return false;
    seq.push(...s.tags);
    if (step.action.type === 'search') seq.push('retrieval');
  }
  return /^(step subquery retrieval step subanswer )*step answer$/.test(seq.join(' '));
}
