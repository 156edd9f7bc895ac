/**
 * Python's `json.loads` and the few Python value semantics that authors' reward code relies on
 * (set, sorted, ==), so that compatibility modes reproduce their results exactly. Python's decoder
 * differs from JSON.parse in accepting NaN, Infinity and -Infinity; Python's equality makes
 * True == 1 == 1.0, and sorting a list that mixes strings and numbers raises TypeError.
 */

/**
 * A decoded Python value: numbers (int, float and bool compare by value), str, None, list, dict. An int
 * outside ±(2^53 − 1) keeps its exact value in `big` (Python's ints are arbitrary precision, and whether
 * 2^53 + 1 equals 2^53 decides ARENA's relevance); `value` is then its nearest double.
 */
export type PyValue =
  | { kind: 'num'; value: number; bool?: boolean; big?: bigint; float?: boolean }
  | { kind: 'str'; value: string }
  | { kind: 'none' }
  | { kind: 'list'; items: PyValue[] }
  | { kind: 'dict'; keys: string[]; values: PyValue[] };

/**
 * Raised where Python would raise: `pythonType` is the exception Python raises there (ValueError, with
 * JSONDecodeError its subclass, of the decoder; TypeError of an operation; RecursionError past the
 * interpreter's depth), so an error record can name it.
 */
export class PyError extends Error {
  constructor(
    message: string,
    readonly pythonType: string = 'ValueError',
  ) {
    super(message);
  }
}

const WS = new Set([' ', '\t', '\n', '\r']);
const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?/y;

/**
 * Python's recursion limit as its JSON decoder meets it: CPython 3.11's C scanner enters one recursive
 * call per nested list or dict and shares the interpreter's limit of 1,000 with the Python frames below
 * it (the caller's few), so nesting past about 990 raises RecursionError. The exact cut moves by the
 * caller's frame count; the parity sets' deep cases (1,500 and 100,000 levels) are far past it.
 */
export const PY_MAX_JSON_DEPTH = 990;
/** CPython 3.11's `sys.get_int_max_str_digits()`: int() of a longer digit string raises ValueError. */
export const PY_INT_MAX_STR_DIGITS = 4300;

/** A number literal as Python's decoder reads it: an int (exact, see PyValue) or a float. */
function pyNumber(lit: string, isFloat: boolean): PyValue {
  if (isFloat) return { kind: 'num', value: Number(lit), float: true };
  const digits = lit.length - (lit.startsWith('-') ? 1 : 0);
  if (digits > PY_INT_MAX_STR_DIGITS)
    throw new PyError(`Exceeds the limit (${PY_INT_MAX_STR_DIGITS} digits) for integer string conversion: value has ${digits} digits; use sys.set_int_max_str_digits() to increase the limit`);
  const value = Number(lit);
  return Number.isSafeInteger(value) ? { kind: 'num', value } : { kind: 'num', value, big: BigInt(lit) };
}

/** The words Python's decoder reads as values (NaN and the infinities are its extensions to JSON). */
const WORDS: readonly (readonly [string, () => PyValue])[] = [
  ['null', () => ({ kind: 'none' })],
  ['true', () => ({ kind: 'num', value: 1, bool: true })],
  ['false', () => ({ kind: 'num', value: 0, bool: true })],
  ['NaN', () => ({ kind: 'num', value: NaN, float: true })],
  ['Infinity', () => ({ kind: 'num', value: Infinity, float: true })],
  ['-Infinity', () => ({ kind: 'num', value: -Infinity, float: true })],
];

/** An open list or dict on the reader's stack: the key its next value goes under, and whether it has one yet. */
interface Frame {
  value: Extract<PyValue, { kind: 'list' | 'dict' }>;
  key: string;
  started: boolean;
}

/**
 * `json.loads(text)` with Python's rules; throws PyError where Python raises (JSONDecodeError, the int
 * digit limit, RecursionError). Iterative, with its own stack: nesting of any depth is an error record,
 * never a stack overflow that would stop a whole file.
 */
export function pyJsonLoads(text: string): PyValue {
  let i = 0;
  const skip = () => {
    while (i < text.length && WS.has(text[i]!)) i++;
  };
  const fail = (what: string): never => {
    // JSONDecodeError's position: line and column counted from 1 over "\n", and the character offset.
    const line = text.slice(0, i).split('\n').length;
    throw new PyError(`${what}: line ${line} column ${i - text.lastIndexOf('\n', i - 1)} (char ${i})`);
  };
  const str = (): string => {
    // Reuse JSON.parse for one string literal: its escapes and control-character rule are Python's.
    let j = i + 1;
    while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
    if (j >= text.length) fail('Unterminated string starting at');
    let s: string;
    try {
      s = JSON.parse(text.slice(i, j + 1)) as string;
    } catch {
      return fail('Invalid control character or escape');
    }
    i = j + 1;
    return s;
  };
  /** The scalar that starts at i (a string, a word, a number). */
  const scalar = (): PyValue => {
    const c = text[i];
    if (c === '"') return { kind: 'str', value: str() };
    if (c === 'n' || c === 't' || c === 'f' || c === 'N' || c === 'I' || c === '-') {
      for (const [word, make] of WORDS) {
        if (text.startsWith(word, i)) {
          i += word.length;
          return make();
        }
      }
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) return fail('Expecting value');
    i += m[0].length;
    return pyNumber(m[0], m[1] !== undefined || m[2] !== undefined);
  };
  const stack: Frame[] = [];
  /** Where a finished value goes: into the open container, or it is the result. */
  let result: PyValue | undefined;
  const put = (v: PyValue) => {
    const top = stack[stack.length - 1];
    if (!top) result = v;
    else if (top.value.kind === 'list') top.value.items.push(v);
    else {
      const d = top.value;
      const at = d.keys.indexOf(top.key);
      if (at >= 0) d.values[at] = v; // a repeated key: the last value wins, in the first key's place
      else {
        d.keys.push(top.key);
        d.values.push(v);
      }
    }
  };
  /** Reads a value's start: pushes a container or puts a scalar. */
  const begin = () => {
    skip();
    const c = text[i];
    if (c === '[' || c === '{') {
      if (stack.length >= PY_MAX_JSON_DEPTH) throw new PyError(`maximum recursion depth exceeded while decoding a JSON ${c === '[' ? 'array' : 'object'} from a unicode string`, 'RecursionError');
      i++;
      const frame: Frame = { value: c === '[' ? { kind: 'list', items: [] } : { kind: 'dict', keys: [], values: [] }, key: '', started: false };
      skip();
      if (text[i] === (c === '[' ? ']' : '}')) {
        i++;
        put(frame.value);
        return;
      }
      stack.push(frame);
      if (c === '{') dictKey();
      return;
    }
    put(scalar());
  };
  const dictKey = () => {
    skip();
    if (text[i] !== '"') fail('Expecting property name enclosed in double quotes');
    stack[stack.length - 1]!.key = str();
    skip();
    if (text[i] !== ':') fail("Expecting ':' delimiter");
    i++;
  };
  begin();
  while (stack.length > 0) {
    // After a value inside the top container: a comma (next value) or its closing bracket.
    const top = stack[stack.length - 1]!;
    // A container just opened (and not empty) has no value yet: read its first one.
    if (!top.started) {
      top.started = true;
      begin();
      continue;
    }
    skip();
    const close = top.value.kind === 'list' ? ']' : '}';
    if (text[i] === ',') {
      i++;
      if (top.value.kind === 'dict') dictKey();
      begin();
    } else if (text[i] === close) {
      i++;
      stack.pop();
      put(top.value);
    } else fail("Expecting ',' delimiter");
  }
  skip();
  if (i !== text.length) fail('Extra data');
  return result!;
}

/**
 * The top-level list `field` of a JSON object's text, read with Python's rules, as plain values with ints past
 * 2^53 as BigInt (what JSON.parse would round); undefined when the text does not parse or the list holds
 * containers. For gold lists whose exact ints decide a score (ARENA's gold_reference_ids).
 */
export function exactScalarList(text: string, field: string): unknown[] | undefined {
  let v: PyValue;
  try {
    v = pyJsonLoads(text);
  } catch {
    return undefined;
  }
  if (v.kind !== 'dict') return undefined;
  const at = v.keys.indexOf(field);
  const list = at < 0 ? undefined : v.values[at];
  if (list?.kind !== 'list') return undefined;
  const out: unknown[] = [];
  for (const x of list.items) {
    if (x.kind === 'num') out.push(x.big ?? (x.bool ? x.value === 1 : x.value));
    else if (x.kind === 'str') out.push(x.value);
    else if (x.kind === 'none') out.push(null);
    else return undefined;
  }
  return out;
}

/**
 * A decoded Python value as the JSON value json.dumps writes (bools as booleans, NaN and the infinities kept
 * as numbers, dict keys as own properties, so a key named `__proto__` is data). A float written as a whole
 * number under one of `idFields` (e.g. a tree id `1.0`) becomes the text Python's str() gives it ("1.0"),
 * which is what code formatting it into a key sees.
 */
export function pyToJs(v: PyValue, idFields?: ReadonlySet<string>, isId = false): unknown {
  switch (v.kind) {
    case 'none':
      return null;
    case 'str':
      return v.value;
    case 'num':
      if (v.bool) return v.value === 1;
      if (isId && v.float && Number.isInteger(v.value)) return `${v.value}.0`;
      return v.value;
    case 'list':
      return v.items.map((x) => pyToJs(x, idFields, isId));
    case 'dict': {
      const out: Record<string, unknown> = {};
      v.keys.forEach((k, n) => Object.defineProperty(out, k, { value: pyToJs(v.values[n]!, idFields, idFields?.has(k) ?? false), enumerable: true, writable: true, configurable: true }));
      return out;
    }
  }
}

/** A plain JSON value (from a dataset file) as a Python value; iterative, so any depth converts. */
export function pyFromJs(v: unknown): PyValue {
  const scalar = (x: unknown): PyValue | undefined => {
    if (x === null || x === undefined) return { kind: 'none' };
    if (typeof x === 'boolean') return { kind: 'num', value: x ? 1 : 0, bool: true };
    if (typeof x === 'number') return { kind: 'num', value: x };
    if (typeof x === 'bigint') return Number.isSafeInteger(Number(x)) ? { kind: 'num', value: Number(x) } : { kind: 'num', value: Number(x), big: x };
    if (typeof x === 'string') return { kind: 'str', value: x };
    return undefined;
  };
  const top = scalar(v);
  if (top) return top;
  const root: PyValue = Array.isArray(v) ? { kind: 'list', items: [] } : { kind: 'dict', keys: [], values: [] };
  const todo: [unknown, PyValue][] = [[v, root]];
  while (todo.length > 0) {
    const [js, py] = todo.pop()!;
    const entries: [string, unknown][] = Array.isArray(js) ? js.map((x, k) => [String(k), x]) : Object.entries(js as Record<string, unknown>);
    for (const [k, x] of entries) {
      let out = scalar(x);
      if (!out) {
        out = Array.isArray(x) ? { kind: 'list', items: [] } : { kind: 'dict', keys: [], values: [] };
        todo.push([x, out]);
      }
      if (py.kind === 'list') py.items.push(out);
      else if (py.kind === 'dict') {
        py.keys.push(k);
        py.values.push(out);
      }
    }
  }
  return root;
}

/** Python's int/float comparison: exact, also between a big int and a float (2^53 + 1 != 2.0**53). */
function numCompare(a: Extract<PyValue, { kind: 'num' }>, b: Extract<PyValue, { kind: 'num' }>): number {
  if (a.big === undefined && b.big === undefined) return a.value < b.value ? -1 : a.value > b.value ? 1 : a.value === b.value ? 0 : NaN;
  const exact = (x: typeof a) => (x.big !== undefined ? x.big : Number.isInteger(x.value) ? BigInt(x.value) : undefined);
  const [x, y] = [exact(a), exact(b)];
  if (x !== undefined && y !== undefined) return x < y ? -1 : x > y ? 1 : 0;
  // A big int against a non-integral or infinite float: the double is far enough from it.
  return a.value < b.value ? -1 : a.value > b.value ? 1 : a.big !== undefined ? (b.value > 0 ? -1 : 1) : a.value === b.value ? 0 : NaN;
}

/** Python `==`. */
export function pyEquals(a: PyValue, b: PyValue): boolean {
  if (a.kind === 'num' && b.kind === 'num') return numCompare(a, b) === 0;
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
  else throw new PyError(`'${v.kind === 'num' ? (v.bool ? 'bool' : v.float ? 'float' : 'int') : 'NoneType'}' object is not iterable`, 'TypeError');
  const out: PyValue[] = [];
  for (const x of items) {
    if (x.kind === 'list' || x.kind === 'dict') throw new PyError(`unhashable type: '${x.kind}'`, 'TypeError');
    // Equal values hash alike (1, 1.0 and True are one element); NaN objects stay distinct.
    if (!out.some((y) => pyEquals(x, y))) out.push(x);
  }
  return out;
}

/** `sorted(items)` for hashable scalars: numbers by value, strings by code point; TypeError when they mix. */
export function pySorted(items: readonly PyValue[]): PyValue[] {
  if (items.length < 2) return [...items];
  const kinds = new Set(items.map((x) => x.kind));
  if (kinds.size > 1 || kinds.has('none')) throw new PyError("'<' not supported between these types", 'TypeError');
  const cmpStr = (a: string, b: string) => {
    const x = Array.from(a, (c) => c.codePointAt(0)!);
    const y = Array.from(b, (c) => c.codePointAt(0)!);
    for (let k = 0; k < Math.min(x.length, y.length); k++) if (x[k] !== y[k]) return x[k]! - y[k]!;
    return x.length - y.length;
  };
  return [...items].sort((a, b) => (a.kind === 'num' && b.kind === 'num' ? numCompare(a, b) || 0 : cmpStr((a as { value: string }).value, (b as { value: string }).value)));
}
