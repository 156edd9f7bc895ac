/**
 * Python's `json.loads` and the few Python value semantics that authors' reward code relies on
 * (set, sorted, ==), so that compatibility modes reproduce their results exactly. Python's decoder
 * differs from JSON.parse in accepting NaN, Infinity and -Infinity; Python's equality makes
 * True == 1 == 1.0, and sorting a list that mixes strings and numbers raises TypeError.
 */

/** A decoded Python value: numbers (int, float and bool compare by value), str, None, list, dict. */
export type PyValue =
  | { kind: 'num'; value: number; bool?: boolean }
  | { kind: 'str'; value: string }
  | { kind: 'none' }
  | { kind: 'list'; items: PyValue[] }
  | { kind: 'dict'; keys: string[]; values: PyValue[] };

/** Raised where Python would raise (ValueError of the decoder, TypeError of an operation). */
export class PyError extends Error {}

const WS = new Set([' ', '\t', '\n', '\r']);
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?/y;

/** `json.loads(text)` with Python's rules; throws PyError where Python raises JSONDecodeError. */
export function pyJsonLoads(text: string): PyValue {
  let i = 0;
  const skip = () => {
    while (i < text.length && WS.has(text[i]!)) i++;
  };
  const fail = (what: string): never => {
    throw new PyError(`${what} at char ${i}`);
  };
  const str = (): string => {
    // Reuse JSON.parse for one string literal: its escapes and control-character rule are Python's.
    let j = i + 1;
    while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
    if (j >= text.length) fail('unterminated string');
    let s: string;
    try {
      s = JSON.parse(text.slice(i, j + 1)) as string;
    } catch {
      return fail('invalid string');
    }
    i = j + 1;
    return s;
  };
  const value = (): PyValue => {
    skip();
    const c = text[i];
    if (c === '"') return { kind: 'str', value: str() };
    if (c === '{') {
      i++;
      const keys: string[] = [];
      const values: PyValue[] = [];
      skip();
      if (text[i] === '}') {
        i++;
        return { kind: 'dict', keys, values };
      }
      for (;;) {
        skip();
        if (text[i] !== '"') fail('expecting property name');
        const k = str();
        skip();
        if (text[i] !== ':') fail("expecting ':'");
        i++;
        const v = value();
        const at = keys.indexOf(k);
        if (at >= 0) values[at] = v;
        else {
          keys.push(k);
          values.push(v);
        }
        skip();
        if (text[i] === ',') i++;
        else if (text[i] === '}') {
          i++;
          return { kind: 'dict', keys, values };
        } else fail("expecting ',' delimiter");
      }
    }
    if (c === '[') {
      i++;
      const items: PyValue[] = [];
      skip();
      if (text[i] === ']') {
        i++;
        return { kind: 'list', items };
      }
      for (;;) {
        items.push(value());
        skip();
        if (text[i] === ',') i++;
        else if (text[i] === ']') {
          i++;
          return { kind: 'list', items };
        } else fail("expecting ',' delimiter");
      }
    }
    for (const [word, v] of [
      ['null', { kind: 'none' }],
      ['true', { kind: 'num', value: 1, bool: true }],
      ['false', { kind: 'num', value: 0, bool: true }],
      ['NaN', { kind: 'num', value: NaN }],
      ['Infinity', { kind: 'num', value: Infinity }],
      ['-Infinity', { kind: 'num', value: -Infinity }],
    ] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return v;
      }
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) return fail('expecting value');
    i += m[0].length;
    return { kind: 'num', value: Number(m[0]) };
  };
  const v = value();
  skip();
  if (i !== text.length) fail('extra data');
  return v;
}

/** A plain JSON value (from a dataset file) as a Python value. */
export function pyFromJs(v: unknown): PyValue {
  if (v === null || v === undefined) return { kind: 'none' };
  if (typeof v === 'boolean') return { kind: 'num', value: v ? 1 : 0, bool: true };
  if (typeof v === 'number') return { kind: 'num', value: v };
  if (typeof v === 'string') return { kind: 'str', value: v };
  if (Array.isArray(v)) return { kind: 'list', items: v.map(pyFromJs) };
  const entries = Object.entries(v as Record<string, unknown>);
  return { kind: 'dict', keys: entries.map(([k]) => k), values: entries.map(([, x]) => pyFromJs(x)) };
}

/** Python `==`. */
export function pyEquals(a: PyValue, b: PyValue): boolean {
  if (a.kind === 'num' && b.kind === 'num') return a.value === b.value;
  if (a.kind === 'str' && b.kind === 'str') return a.value === b.value;
  if (a.kind === 'none' && b.kind === 'none') return true;
  if (a.kind === 'list' && b.kind === 'list') return a.items.length === b.items.length && a.items.every((x, k) => x === b.items[k] || pyEquals(x, b.items[k]!));
  if (a.kind === 'dict' && b.kind === 'dict')
    return a.keys.length === b.keys.length && a.keys.every((k, n) => {
      const at = b.keys.indexOf(k);
      return at >= 0 && pyEquals(a.values[n]!, b.values[at]!);
    });
  return false;
}

/** The elements of `set(value)`: a list's items, a dict's keys, a str's characters; TypeError otherwise. */
export function pySet(v: PyValue): PyValue[] {
  let items: PyValue[];
  if (v.kind === 'list') items = v.items;
  else if (v.kind === 'dict') items = v.keys.map((k) => ({ kind: 'str', value: k }));
  else if (v.kind === 'str') items = Array.from(v.value, (ch) => ({ kind: 'str', value: ch }));
  else throw new PyError(`'${v.kind}' object is not iterable`);
  const out: PyValue[] = [];
  for (const x of items) {
    if (x.kind === 'list' || x.kind === 'dict') throw new PyError(`unhashable type: '${x.kind}'`);
    // Equal values hash alike (1, 1.0 and True are one element); NaN objects stay distinct.
    if (!out.some((y) => pyEquals(x, y))) out.push(x);
  }
  return out;
}

/** `sorted(items)` for hashable scalars: numbers by value, strings by code point; TypeError when they mix. */
export function pySorted(items: readonly PyValue[]): PyValue[] {
  if (items.length < 2) return [...items];
  const kinds = new Set(items.map((x) => x.kind));
  if (kinds.size > 1 || kinds.has('none')) throw new PyError("'<' not supported between these types");
  const cmpStr = (a: string, b: string) => {
    const x = Array.from(a, (c) => c.codePointAt(0)!);
    const y = Array.from(b, (c) => c.codePointAt(0)!);
    for (let k = 0; k < Math.min(x.length, y.length); k++) if (x[k] !== y[k]) return x[k]! - y[k]!;
    return x.length - y.length;
  };
  return [...items].sort((a, b) => (a.kind === 'num' && b.kind === 'num' ? (a.value < b.value ? -1 : a.value > b.value ? 1 : 0) : cmpStr((a as { value: string }).value, (b as { value: string }).value)));
}
