/**
 * `--prompt-template FILE`: a protocol's prompt in the exact words a released checkpoint was trained
 * with, while the protocol's tags, parser, turn structure and budgets stay its own.
 *
 * The file is plain text with placeholders, `{name}` or `{{ name }}` (Python `format` and Liquid /
 * Jinja spellings alike); any other brace is literal text, so a JSON example needs no escaping. Each
 * protocol names the placeholders of each kind of prompt it sends (`Protocol.template`): `{question}`
 * always, `{history}`, `{documents}`, `{query}` or `{references}` where the prompt carries them, and
 * `{forced}` everywhere (empty, or the protocol's note that no searches are left: without it, that
 * note is sent as a user message after the template's). A file without section lines is the user
 * message of the protocol's default kind of prompt, with no system message. Section lines split it
 * into messages: `@system` and `@user` for the default kind, `@KIND system` and `@KIND user` for
 * another (ReasonRAG's `@grounding user`). A kind the file leaves out keeps the built-in prompt.
 * Multi-turn protocols (search-r1, prorag) template their opening message only: the model's turns
 * and the environment's <information> / <retrieval> blocks after it are the protocol's.
 */
import { readFileSync } from 'node:fs';
import { InputError } from '../core/errors.js';
import type { Message } from '../core/trajectory.js';
import type { State } from '../env/env.js';
import type { Protocol, RenderOptions, TemplateField, TemplateKind } from './protocol.js';
import { getProtocol, registerProtocol } from './registry.js';

/** --help of `--prompt-template` (docs/reference/agents.md, Prompt templates). */
export const PROMPT_TEMPLATE_HELP =
  "render the agent's prompts from this file, e.g. the exact template a released checkpoint was trained with: {question} and the protocol's other placeholders, optional @system / @user (and @grounding …) section lines; tags, parsing and turns stay the protocol's (docs/reference/agents.md, Prompt templates)";

/** The placeholder every kind of prompt takes besides its own: the forced-answer note, or "". */
export const FORCED_FIELD: TemplateField = { required: false, description: 'empty, or the note that no searches are left and the answer is due' };

/** One kind's messages in a template file. */
export interface TemplateSection {
  system?: string;
  user: string;
}

/** A parsed `--prompt-template` file: its sections by kind of prompt. */
export interface PromptTemplate {
  /** The file, for messages. */
  source: string;
  /** By kind; the key "" is the protocol's default (first) kind. */
  sections: Record<string, TemplateSection>;
}

const HEADER = /^@(?:([a-z][a-z0-9-]*)\s+)?(system|user)\s*$/;
const PLACEHOLDER = /\{\{\s*([A-Za-z_]\w*)\s*\}\}|\{([A-Za-z_]\w*)\}/g;

/** The section structure of a template's text (placeholders are checked against a protocol by {@link checkPromptTemplate}). */
export function parsePromptTemplate(text: string, source: string): PromptTemplate {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  if (!lines.some((l) => HEADER.test(l))) {
    if (text.trim() === '') throw new InputError(`--prompt-template ${source}: the template is empty`);
    return { source, sections: { '': { user: text.replace(/\n$/, '') } } };
  }
  const parts: Record<string, Partial<Record<'system' | 'user', string[]>>> = {};
  let current: string[] | undefined;
  lines.forEach((line, i) => {
    const m = HEADER.exec(line);
    if (m) {
      const kind = m[1] ?? '';
      const role = m[2] as 'system' | 'user';
      const part = (parts[kind] ??= {});
      if (part[role]) throw new InputError(`--prompt-template ${source}:${i + 1}: a second @${kind ? `${kind} ` : ''}${role} section`);
      current = part[role] = [];
    } else if (current) current.push(line);
    else if (line.trim() !== '') throw new InputError(`--prompt-template ${source}:${i + 1}: text before the first section line (@system or @user)`);
  });
  const sections: Record<string, TemplateSection> = {};
  for (const [kind, part] of Object.entries(parts)) {
    const at = kind ? `@${kind} ` : '@';
    if (!part.user) throw new InputError(`--prompt-template ${source}: ${at}system has no ${at}user section`);
    const body = (l: string[]) => l.join('\n').replace(/^\n+|\n+$/g, '');
    sections[kind] = { user: body(part.user), ...(part.system ? { system: body(part.system) } : {}) };
  }
  return { source, sections };
}

/** The placeholder names used in `text`, in order of first use. */
export function placeholders(text: string): string[] {
  return [...new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1] ?? m[2]!))];
}

/** Fills the placeholders of `text` (every one must have a value: {@link checkPromptTemplate} ensures it). */
export function fillTemplate(text: string, values: Record<string, string>): string {
  return text.replace(PLACEHOLDER, (all, a: string | undefined, b: string | undefined) => values[(a ?? b)!] ?? all);
}

function kindFields(kind: TemplateKind): Record<string, TemplateField> {
  return { ...kind.fields, forced: FORCED_FIELD };
}

const list = (names: string[]) => names.map((n) => `{${n}}`).join(', ');

/**
 * Refuses, with one line, a template that does not fit `protocol`: a protocol without template
 * support, an unknown kind, an unknown placeholder, or a kind's required placeholder absent from it.
 */
export function checkPromptTemplate(template: PromptTemplate, protocol: Protocol): void {
  const at = `--prompt-template ${template.source}`;
  const hooks = protocol.template;
  if (!hooks) throw new InputError(`${at}: agent ${protocol.name} does not take a prompt template`, 'it defines no Protocol.template');
  const kinds = Object.keys(hooks.kinds);
  for (const [key, section] of Object.entries(template.sections)) {
    const kindName = key || kinds[0]!;
    const kind = hooks.kinds[kindName];
    if (!kind) throw new InputError(`${at}: agent ${protocol.name} has no "${key}" prompt (its kinds: ${kinds.join(', ')})`);
    const fields = kindFields(kind);
    const used = placeholders(`${section.system ?? ''}\n${section.user}`);
    const unknown = used.filter((n) => !(n in fields));
    if (unknown.length) throw new InputError(`${at}: unknown placeholder {${unknown[0]}} in the ${kindName} prompt of agent ${protocol.name} (it takes ${list(Object.keys(fields))})`);
    const missing = Object.entries(fields).filter(([n, f]) => f.required && !used.includes(n)).map(([n]) => n);
    if (missing.length) throw new InputError(`${at}: the ${kindName} prompt of agent ${protocol.name} must use ${list(missing)}`);
  }
}

/** `protocol` with its prompts, where `template` gives them, rendered from the template instead. */
export function withPromptTemplate(protocol: Protocol, template: PromptTemplate): Protocol {
  checkPromptTemplate(template, protocol);
  const hooks = protocol.template!;
  const defaultKind = Object.keys(hooks.kinds)[0]!;
  const sectionOf = (kind: string) => template.sections[kind === defaultKind ? '' : kind] ?? template.sections[kind];
  return {
    ...protocol,
    render(state: State, opts: RenderOptions = {}): Message[] {
      const fill = hooks.fill(state, opts);
      const section = sectionOf(fill.kind);
      if (!section) return protocol.render(state, opts);
      const values = { ...fill.values, forced: fill.forcedNote ?? '' };
      const messages: Message[] = [];
      if (section.system !== undefined) messages.push({ role: 'system', content: fillTemplate(section.system, values) });
      messages.push({ role: 'user', content: fillTemplate(section.user, values) });
      messages.push(...fill.continuation);
      const usesForced = placeholders(`${section.system ?? ''}\n${section.user}`).includes('forced');
      if (fill.forcedNote && !usesForced) messages.push({ role: 'user', content: fill.forcedNote });
      return messages;
    },
  };
}

/** Reads `file` and returns `protocol` rendering through it (one-line InputErrors for a bad file). */
export function loadPromptTemplate(file: string, protocol: Protocol): Protocol {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new InputError(`--prompt-template ${file}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  return withPromptTemplate(protocol, parsePromptTemplate(text, file));
}

/**
 * The CLI's `--prompt-template FILE`: each named agent is re-registered, for this process, as itself
 * rendering through the template, so every command path that looks the protocol up by name (run,
 * annotate, eval, serve-env, train's environment server) renders the template's words.
 */
export function usePromptTemplate(file: string, agents: readonly string[]): void {
  for (const name of new Set(agents)) registerProtocol(loadPromptTemplate(file, getProtocol(name)), { replace: true });
}

/** The documented placeholders of a protocol's prompts, by kind (for docs and --help). */
export function templateFields(protocol: Protocol): Record<string, Record<string, TemplateField>> | undefined {
  if (!protocol.template) return undefined;
  return Object.fromEntries(Object.entries(protocol.template.kinds).map(([k, kind]) => [k, kindFields(kind)]));
}
