/**
 * A named table of extension points (protocols, reward schemes, retrievers, LLM backends, PRMs,
 * policies). Built-ins are registered by the module that defines them; a user's own entries are
 * registered from code or from a `--plugin FILE`, and from then on every lookup — the library's and
 * the CLI's — finds them exactly as it finds a built-in one.
 */
import { InputError } from './errors.js';

/** Options of {@link Registry.register}. */
export interface RegisterOptions {
  /** Replace an existing entry of the same name (default: registering a taken name is an error). */
  replace?: boolean;
}

/** A table of `T` by name, with errors that list what exists. */
export class Registry<T> {
  private readonly entries = new Map<string, T>();

  /**
   * @param kind  what the entries are, for messages ("agent", "reward scheme", …)
   * @param hint  appended to the "unknown" message (e.g. how to add one)
   */
  constructor(
    readonly kind: string,
    private readonly hint = 'register your own with a --plugin FILE (see docs/guides/plugins.md)',
  ) {}

  /** Adds `value` under `name`; throws when the name is taken unless `replace` is set. */
  register(name: string, value: T, opts: RegisterOptions = {}): void {
    if (!/^[a-z0-9][a-z0-9._-]*$/i.test(name)) throw new InputError(`${this.kind} name "${name}" is not valid`, 'use letters, digits, ".", "_" and "-", starting with a letter or digit');
    if (this.entries.has(name) && !opts.replace) throw new InputError(`${this.kind} "${name}" is already registered`, 'pick another name, or pass { replace: true } to override it');
    this.entries.set(name, value);
  }

  /** The entry called `name`, or an InputError naming every registered one. */
  get(name: string): T {
    const v = this.entries.get(name);
    if (v === undefined) throw new InputError(`unknown ${this.kind} "${name}"`, `choose one of ${this.names().join(', ')}; or ${this.hint}`);
    return v;
  }

  /** The entry called `name`, or undefined. */
  find(name: string): T | undefined {
    return this.entries.get(name);
  }

  /** Whether an entry called `name` is registered. */
  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** Registered names, in registration order (built-ins first). */
  names(): string[] {
    return [...this.entries.keys()];
  }

  /** Registered entries, in registration order (built-ins first). */
  values(): T[] {
    return [...this.entries.values()];
  }
}

/** Splits a spec `kind:rest` at its first colon; a spec without a colon is all `kind`. */
export function splitSpec(spec: string): { kind: string; rest: string } {
  const colon = spec.indexOf(':');
  return colon < 0 ? { kind: spec, rest: '' } : { kind: spec.slice(0, colon), rest: spec.slice(colon + 1) };
}
