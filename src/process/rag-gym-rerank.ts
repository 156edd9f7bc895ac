/**
 * RAG-Gym's LLM-rerank process reward read exactly as the authors' code reads the judge's reply
 * (`rag_gym/rewards/lm_rerank.py`, `LMReranker.__call__`): the first code fence opened as json (three
 * backticks, `json`) and followed by a brace, up to the first closing brace; that text evaluated as a
 * Python expression; its "ranked_indices"; and each candidate's reward 1 / (1 + its position there). Any failure along the way — no fence, text Python cannot
 * evaluate, no such key, a candidate missing from the list — gives every candidate 0.
 *
 * ragtrail's own reader (`parseRanking` in rank.ts) is lenient on purpose: it takes the numbers of a
 * malformed reply and puts unlisted candidates last, so a judge's slip costs one step's ranking, not all of
 * its rewards. This one is for reproducing the authors' numbers (`compat`). The authors evaluate the text
 * with Python's `eval`; this evaluates the literals such a reply can hold (dicts, lists, tuples, sets,
 * numbers, strings, True/False/None, unary signs, comments) and treats any other expression as a failure,
 * which is what Python gives for the names a judge writes instead of literals (`true`, `null`).
 */
import { parseRanking } from './rank.js';
import { PY_SPACE_CLASS } from '../core/text.js';

type PyVal =
  | { t: 'int'; v: bigint }
  | { t: 'float'; v: number }
  | { t: 'bool'; v: boolean }
  | { t: 'none' }
  | { t: 'str'; v: string }
  | { t: 'bytes'; v: string }
  | { t: 'list' | 'tuple'; v: PyVal[] }
  | { t: 'dict'; v: [PyVal, PyVal][] }
  | { t: 'set'; v: PyVal[] };

class PyFail extends Error {}

// Python's `\s` in a str pattern is str.isspace()'s set (no U+FEFF, which JavaScript's `\s` has).
const FENCE = new RegExp('```json' + PY_SPACE_CLASS + '*(\\{.*?\\})' + PY_SPACE_CLASS + '*`?', 's');

/** A recursive-descent reader of Python literal expressions, failing (PyFail) wherever eval would raise or go beyond literals. */
class LiteralReader {
  private i = 0;
  constructor(private readonly s: string) {}

  read(): PyVal {
    const v = this.expr();
    this.skip();
    if (this.i !== this.s.length) throw new PyFail('trailing text');
    return v;
  }

  /** Whitespace and comments; inside brackets (where all of this text is) newlines are whitespace too. */
  private skip(): void {
    for (;;) {
      const c = this.s[this.i];
      if (c === ' ' || c === '\t' || c === '\f' || c === '\n' || c === '\r') this.i++;
      else if (c === '\\' && this.s[this.i + 1] === '\n') this.i += 2;
      else if (c === '#') while (this.i < this.s.length && this.s[this.i] !== '\n' && this.s[this.i] !== '\r') this.i++;
      else return;
    }
  }

  /** Brackets open at once, and expressions nested (issue 45: a reply nested 100,000 deep is read without overflowing). */
  private level = 0;
  private depth = 0;

  /**
   * One expression, within Python's limits: its tokenizer refuses more than 200 brackets open at once
   * (SyntaxError "too many nested parentheses"), and CPython 3.11 fails to compile a value under the fenced
   * dict with more than 2,992 unary signs (RecursionError; measured). Either is a reply eval cannot read.
   * Mixed deep nesting fails earlier in CPython (MemoryError of its parser), which this does not model.
   */
  private expr(): PyVal {
    if (this.depth >= 2994) throw new PyFail('expression nested too deeply');
    const c = this.s[this.skipped()];
    const bracket = c === '{' || c === '[' || c === '(';
    if (bracket && this.level >= 200) throw new PyFail('too many nested parentheses');
    this.depth++;
    if (bracket) this.level++;
    try {
      return this.expr1();
    } finally {
      this.depth--;
      if (bracket) this.level--;
    }
  }

  private skipped(): number {
    this.skip();
    return this.i;
  }

  private expr1(): PyVal {
    this.skip();
    const c = this.s[this.i];
    if (c === '-' || c === '+') {
      this.i++;
      const v = this.expr();
      const neg = c === '-';
      if (v.t === 'int') return { t: 'int', v: neg ? -v.v : v.v };
      if (v.t === 'bool') return { t: 'int', v: (v.v ? 1n : 0n) * (neg ? -1n : 1n) };
      if (v.t === 'float') return { t: 'float', v: neg ? -v.v : v.v };
      throw new PyFail('bad operand for unary sign');
    }
    if (c === '{') return this.braces();
    if (c === '[') return { t: 'list', v: this.items(']') };
    if (c === '(') {
      this.i++;
      this.skip();
      if (this.s[this.i] === ')') {
        this.i++;
        return { t: 'tuple', v: [] };
      }
      const first = this.expr();
      this.skip();
      if (this.s[this.i] === ')') {
        this.i++;
        return first;
      }
      const out: PyVal[] = [first];
      while (this.s[this.i] === ',') {
        this.i++;
        this.skip();
        if (this.s[this.i] === ')') break;
        out.push(this.expr());
        this.skip();
      }
      if (this.s[this.i] !== ')') throw new PyFail('syntax');
      this.i++;
      return { t: 'tuple', v: out };
    }
    if (c !== undefined && /[0-9.]/.test(c)) return this.number();
    if (c !== undefined && /[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.s.slice(this.i))![0];
      const quote = this.s[this.i + m.length];
      if ((quote === '"' || quote === "'") && /^(r|u|b|br|rb)$/i.test(m)) return this.strings();
      this.i += m.length;
      if (m === 'True' || m === 'False') return { t: 'bool', v: m === 'True' };
      if (m === 'None') return { t: 'none' };
      throw new PyFail(`name ${m}`);
    }
    if (c === '"' || c === "'") return this.strings();
    throw new PyFail('syntax');
  }

  /** Comma-separated items up to `close`, a trailing comma allowed; the opening bracket is at this.i. */
  private items(close: string): PyVal[] {
    this.i++;
    const out: PyVal[] = [];
    for (;;) {
      this.skip();
      if (this.s[this.i] === close) {
        this.i++;
        return out;
      }
      out.push(this.expr());
      this.skip();
      if (this.s[this.i] === ',') this.i++;
      else if (this.s[this.i] !== close) throw new PyFail('syntax');
    }
  }

  private braces(): PyVal {
    this.i++;
    this.skip();
    if (this.s[this.i] === '}') {
      this.i++;
      return { t: 'dict', v: [] };
    }
    const first = this.expr();
    this.skip();
    if (this.s[this.i] !== ':') {
      const rest: PyVal[] = [first];
      while (this.s[this.i] === ',') {
        this.i++;
        this.skip();
        if (this.s[this.i] === '}') break;
        rest.push(this.expr());
        this.skip();
      }
      if (this.s[this.i] !== '}') throw new PyFail('syntax');
      this.i++;
      rest.forEach(hashable);
      return { t: 'set', v: rest };
    }
    const pairs: [PyVal, PyVal][] = [];
    let key = first;
    for (;;) {
      this.i++; // the colon
      const value = this.expr();
      hashable(key);
      pairs.push([key, value]);
      this.skip();
      if (this.s[this.i] === ',') {
        this.i++;
        this.skip();
        if (this.s[this.i] === '}') break;
        key = this.expr();
        this.skip();
        if (this.s[this.i] !== ':') throw new PyFail('syntax');
        continue;
      }
      if (this.s[this.i] !== '}') throw new PyFail('syntax');
      break;
    }
    this.i++;
    return { t: 'dict', v: pairs };
  }

  private number(): PyVal {
    const rest = this.s.slice(this.i);
    const based = /^0([xX](?:_?[0-9a-fA-F])+|[oO](?:_?[0-7])+|[bB](?:_?[01])+)/.exec(rest);
    const digits = '[0-9](?:_?[0-9])*';
    const float = new RegExp(`^(?:(?:${digits})?\\.${digits}(?:[eE][+-]?${digits})?|${digits}\\.(?:[eE][+-]?${digits})?|${digits}[eE][+-]?${digits})`).exec(rest);
    const int = /^(?:[1-9](?:_?[0-9])*|0(?:_?0)*)/.exec(rest);
    let v: PyVal;
    let len: number;
    if (based) {
      const p = based[1]![0]!.toLowerCase();
      v = { t: 'int', v: BigInt(`0${p}${based[1]!.slice(1).replaceAll('_', '')}`) };
      len = based[0].length;
    } else if (float) {
      v = { t: 'float', v: Number(float[0].replaceAll('_', '')) };
      len = float[0].length;
    } else if (int) {
      v = { t: 'int', v: BigInt(int[0].replaceAll('_', '')) };
      len = int[0].length;
    } else throw new PyFail('number');
    // "01", "1x", "1j": Python's tokenizer refuses a number run into letters or digits (or makes it complex).
    if (/[0-9A-Za-z_]/.test(this.s[this.i + len] ?? '')) throw new PyFail('number');
    this.i += len;
    return v;
  }

  /** One or more adjacent string literals, concatenated as Python does (str with bytes is an error). */
  private strings(): PyVal {
    let out: PyVal | undefined;
    for (;;) {
      this.skip();
      const m = /^([rRuUbB]{0,2})(['"])/.exec(this.s.slice(this.i));
      if (!m || !/^(|r|u|b|br|rb)$/i.test(m[1]!)) break;
      const prefix = m[1]!.toLowerCase();
      this.i += m[0].length;
      const quote = m[2]!;
      const triple = this.s.startsWith(quote + quote, this.i);
      if (triple) this.i += 2;
      const end = triple ? quote.repeat(3) : quote;
      let text = '';
      for (;;) {
        if (this.i >= this.s.length) throw new PyFail('unterminated string');
        if (this.s.startsWith(end, this.i)) {
          this.i += end.length;
          break;
        }
        const c = this.s[this.i]!;
        if (!triple && (c === '\n' || c === '\r')) throw new PyFail('unterminated string');
        if (c === '\\') {
          const [piece, used] = prefix.includes('r') ? [c + (this.s[this.i + 1] ?? ''), 2] : escape(this.s, this.i, prefix.includes('b'));
          text += piece;
          this.i += used;
          continue;
        }
        if (prefix.includes('b') && c.charCodeAt(0) > 127) throw new PyFail('bytes can only contain ASCII');
        text += c;
        this.i++;
      }
      const kind = prefix.includes('b') ? 'bytes' : 'str';
      if (out && out.t !== kind) throw new PyFail('cannot mix bytes and nonbytes literals');
      out = { t: kind, v: (out && 'v' in out ? (out.v as string) : '') + text };
    }
    if (!out) throw new PyFail('syntax');
    return out;
  }
}

/** One backslash escape of a (non-raw) Python string at s[i]: the text it stands for and the characters it used. */
function escape(s: string, i: number, bytes: boolean): [string, number] {
  const n = s[i + 1];
  const simple: Record<string, string> = { '\n': '', '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };
  if (n !== undefined && Object.hasOwn(simple, n)) return [simple[n]!, 2];
  const oct = /^[0-7]{1,3}/.exec(s.slice(i + 1));
  if (oct) return [String.fromCodePoint(parseInt(oct[0], 8)), 1 + oct[0].length];
  const hex = (len: number) => {
    const h = s.slice(i + 2, i + 2 + len);
    if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(h)) throw new PyFail('truncated escape');
    const cp = parseInt(h, 16);
    if (cp > 0x10ffff) throw new PyFail('illegal Unicode character');
    return [String.fromCodePoint(cp), 2 + len] as [string, number];
  };
  if (n === 'x') return hex(2);
  if (!bytes && n === 'u') return hex(4);
  if (!bytes && n === 'U') return hex(8);
  if (!bytes && n === 'N') throw new PyFail('named escapes are not read here');
  return ['\\', 1]; // an unknown escape keeps its backslash
}

function hashable(v: PyVal): void {
  if (v.t === 'list' || v.t === 'dict' || v.t === 'set') throw new PyFail('unhashable type');
  if (v.t === 'tuple') v.v.forEach(hashable);
}

/** Python's == between an item of the list and a candidate index (ints, bools and floats compare by value). */
function equalsIndex(v: PyVal, index: number): boolean {
  if (v.t === 'int') return v.v === BigInt(index);
  if (v.t === 'bool') return (v.v ? 1 : 0) === index;
  if (v.t === 'float') return v.v === index;
  return false;
}

/**
 * The LLM-rerank rewards of `count` candidates from the judge's reply, exactly as RAG-Gym's `LMReranker`
 * computes them: 1 / (1 + position of the candidate in "ranked_indices"), or 0 for every candidate when the
 * reply cannot be read that way. See the module comment for what "exactly" covers.
 */
export function ragGymRerankRewards(reply: string, count: number): number[] {
  const zeros = Array.from({ length: count }, () => 0);
  const m = FENCE.exec(reply);
  if (!m) return zeros;
  let value: PyVal;
  try {
    value = new LiteralReader(m[1]!).read();
  } catch (e) {
    if (e instanceof PyFail) return zeros;
    throw e;
  }
  if (value.t !== 'dict') return zeros;
  // Python keeps the last value of a repeated key.
  const hit = value.v.filter(([k]) => k.t === 'str' && k.v === 'ranked_indices').at(-1);
  if (!hit || (hit[1].t !== 'list' && hit[1].t !== 'tuple')) return zeros;
  const list = hit[1].v;
  const rewards: number[] = [];
  for (let i = 0; i < count; i++) {
    const at = list.findIndex((v) => equalsIndex(v, i));
    if (at < 0) return zeros;
    rewards.push(1 / (1 + at));
  }
  return rewards;
}

/** The same rewards from ragtrail's lenient reader: 1 / (1 + rank) in `parseRanking`'s order, which never fails. */
export function lenientRerankRewards(reply: string, count: number): number[] {
  const { order } = parseRanking(reply, count);
  const rewards = Array.from({ length: count }, () => 0);
  order.forEach((candidate, rank) => (rewards[candidate] = 1 / (1 + rank)));
  return rewards;
}
