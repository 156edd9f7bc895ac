/**
 * A whole episode's text — the model's turns with the environment's insertions between them, as
 * RL trainers and result files store it — split back into turns. Which text the environment wrote is
 * decided by where it writes, not by tags alone: a model may write its own <information> tag or copy
 * the environment's notices, and neither is an environment turn.
 */
import type { Action, Step } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import type { Question } from '../core/types.js';
import { stableId } from '../core/hash.js';
import { tagContent } from './protocol.js';
import { parseInformation, parseSearchR1Turn, searchR1 } from './search-r1.js';
import { prorag } from './prorag.js';

export interface TranscriptTurn {
  /** The model's text of this turn. */
  text: string;
  /** The environment's reply to a search (the inside of its <information> / <retrieval> block). */
  information?: string;
  /** The query the environment answered. */
  query?: string;
}

/** The notice Search-R1's generation loop inserts after a turn with neither a search nor an answer. */
export const SEARCH_R1_INVALID_NOTICE =
  '\nMy previous action is invalid. If I want to search, I should put the query between <search> and </search>. If I want to give the final answer, I should put the answer between <answer> and </answer>. Let me try again.\n';


/** Splits model text at the environment's invalid-action notices: a notice counts only after a turn the environment could not act on. */
function splitNotices(segment: string): string[] {
  const out: string[] = [];
  let start = 0;
  let from = 0;
  for (;;) {
    const at = segment.indexOf(SEARCH_R1_INVALID_NOTICE, from);
    if (at < 0) break;
    const before = segment.slice(start, at);
    // Search-R1 notices only a turn it could not read as an action (`postprocess_predictions`).
    if (parseSearchR1Turn(before).type === 'invalid') {
      out.push(before);
      start = at + SEARCH_R1_INVALID_NOTICE.length;
    }
    from = at + SEARCH_R1_INVALID_NOTICE.length;
  }
  out.push(segment.slice(start));
  return out;
}

/**
 * Search-R1 / FlashRAG transcripts: a search counts when the environment answered it, i.e. an
 * <information> block right after the turn's closing </search> (whitespace between); the query is
 * that <search> text, whatever the turn wrote before it (its own <information> tags included).
 */
export function searchR1Turns(response: string): TranscriptTurn[] {
  const turns: TranscriptTurn[] = [];
  let pos = 0;
  let from = 0;
  for (;;) {
    const close = response.indexOf('</search>', from);
    if (close < 0) break;
    const end = close + '</search>'.length;
    const info = /^\s*<information>/.exec(response.slice(end));
    if (!info) {
      from = end;
      continue;
    }
    const turnText = response.slice(pos, end);
    const pieces = splitNotices(turnText);
    const last = pieces.pop()!;
    for (const p of pieces) turns.push({ text: p });
    const open = last.lastIndexOf('<search>');
    const query = (open < 0 ? last.slice(0, -'</search>'.length) : last.slice(open + '<search>'.length, -'</search>'.length)).trim();
    const infoStart = end + info[0].length;
    const infoEnd = response.indexOf('</information>', infoStart);
    turns.push({ text: last, information: response.slice(infoStart, infoEnd < 0 ? response.length : infoEnd), query });
    pos = from = infoEnd < 0 ? response.length : infoEnd + '</information>'.length;
  }
  for (const p of splitNotices(response.slice(pos))) if (p.trim() !== '' || turns.length === 0) turns.push({ text: p });
  return turns;
}

/**
 * ProRAG transcripts: turns end at </subquery>, </subanswer> or </answer>; the environment appends
 * <retrieval>…</retrieval> after a sub-query and re-opens a <step> before the next turn. ProRAG's
 * prompt ends inside an opened <step>, so a first turn that closes a step it never opened gets it back.
 */
export function proragTurns(response: string): TranscriptTurn[] {
  const turns: TranscriptTurn[] = [];
  const re = /<\/(subquery|subanswer|answer)>/g;
  let pos = 0;
  for (let m = re.exec(response); m; m = re.exec(response)) {
    let end = m.index + m[0].length;
    const turn: TranscriptTurn = { text: response.slice(pos, end) };
    if (m[1] === 'subquery') {
      const ret = /^\s*<retrieval>([\s\S]*?)(?:<\/retrieval>|$)/.exec(response.slice(end));
      if (ret) {
        turn.information = ret[1]!;
        end += ret[0].length;
      }
    }
    turns.push(turn);
    pos = re.lastIndex = end;
  }
  const rest = response.slice(pos).replace(/<\|(?:im_end|endoftext)\|>/g, '');
  if (rest.trim() !== '' && rest.trim() !== '<step>') turns.push({ text: rest });
  const first = turns[0];
  if (first) {
    const open = first.text.indexOf('<step>');
    const close = first.text.indexOf('</step>');
    if (close >= 0 && (open < 0 || open > close)) first.text = `<step>${first.text}`;
  }
  return turns;
}

function emptyState(question: Question, steps: Step[]): State {
  return { question, steps, done: false, mustAnswer: false, turnsLeft: Infinity, searchesLeft: Infinity };
}

/** Steps of a Search-R1 transcript: environment-answered searches with their documents, other turns parsed. */
export function searchR1Steps(response: string, question: Question): Step[] {
  const steps: Step[] = [];
  for (const turn of searchR1Turns(response)) {
    let action: Action;
    const step: Step = { action: { type: 'invalid', reason: '' }, raw: turn.text };
    if (turn.information !== undefined) {
      action = { type: 'search', query: turn.query ?? '' };
      step.docs = parseInformation(turn.information).map((d) => ({ passageId: stableId('doc-', d.title, d.text), title: d.title, text: d.text, score: 0 }));
    } else {
      action = searchR1.parse(turn.text, emptyState(question, steps));
      // A <search> the environment never answered (a cut-off transcript) was not executed.
      if (action.type === 'search') {
        const answer = tagContent(turn.text, 'answer');
        action = answer ? { type: 'answer', answer } : { type: 'invalid', reason: 'a <search> the environment did not answer' };
      }
    }
    step.action = action;
    steps.push(step);
  }
  return steps;
}

/** Steps of a ProRAG transcript. */
export function proragSteps(response: string, question: Question): Step[] {
  const steps: Step[] = [];
  for (const turn of proragTurns(response)) {
    const step: Step = { action: prorag.parse(turn.text, emptyState(question, steps)), raw: turn.text };
    if (turn.information !== undefined)
      step.docs = parseInformation(turn.information).map((d) => ({ passageId: stableId('doc-', d.title, d.text), title: d.title, text: d.text, score: 0 }));
    steps.push(step);
  }
  return steps;
}
