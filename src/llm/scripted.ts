/**
 * A scripted model for tests and replays: answers each request with the next output of a list, or
 * with what a function returns for the request. Deterministic; records every request it saw.
 */
import type { Choice, GenerateRequest, GenerateResult, LLM } from './types.js';

/** One scripted sample: its text, or a whole choice (to script token log-probabilities). */
export type ScriptOutput = string | Choice;

/**
 * The outputs of a {@link ScriptedLLM}: a list used in turn (cycling when exhausted), or a function of
 * the request and the call number (from 0) returning one output (repeated `n` times) or one per sample.
 */
export type Script = ScriptOutput[] | ((req: GenerateRequest, call: number) => ScriptOutput | ScriptOutput[]);

/**
 * A deterministic model for tests and replays: replies follow the script, and every request is kept in
 * `requests`. Spec `scripted:NAME`.
 */
export class ScriptedLLM implements LLM {
  readonly spec: string;
  readonly requests: GenerateRequest[] = [];
  private next = 0;

  constructor(
    private readonly script: Script,
    name = 'scripted',
  ) {
    this.spec = `scripted:${name}`;
  }

  /** The next `n` script outputs, with rough token counts (4 characters a token). */
  async generate(req: GenerateRequest): Promise<GenerateResult> {
    const call = this.requests.length;
    this.requests.push(req);
    const n = req.n ?? 1;
    const outs: ScriptOutput[] = [];
    if (typeof this.script === 'function') {
      const out = this.script(req, call);
      outs.push(...(Array.isArray(out) ? out : Array.from({ length: n }, () => out)));
    } else {
      for (let i = 0; i < n; i++) outs.push(this.script[this.next++ % Math.max(1, this.script.length)] ?? '');
    }
    const choices = outs.slice(0, n).map((o): Choice => (typeof o === 'string' ? { text: o, finishReason: 'stop' } : o));
    const promptChars = JSON.stringify(req.messages ?? req.prompt ?? '').length;
    return {
      choices,
      // Rough counts (4 characters a token) so that usage accounting has something to add up.
      usage: { promptTokens: Math.ceil(promptChars / 4), completionTokens: choices.reduce((s, c) => s + Math.ceil(c.text.length / 4), 0) },
    };
  }
}
