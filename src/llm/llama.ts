/**
 * A local GGUF model through node-llama-cpp: chat template from the model, sampling with
 * temperature / top-p / seed, stop strings, optional grammar-constrained (JSON schema) output.
 * node-llama-cpp is an optional dependency (hundreds of MB with its GPU builds), loaded on first use
 * with prebuilt binaries only (`build: "never"`), so nothing compiles or downloads at run time.
 */
import { existsSync } from 'node:fs';
import { InputError } from '../core/errors.js';
import type { GenerateRequest, GenerateResult, LLM } from './types.js';

/* The slice of node-llama-cpp's API used here (its own types are not a dependency of ragtrail). */
interface ChatHistoryItem {
  type: 'system' | 'user' | 'model';
  text?: string;
  response?: string[];
}
interface ChatSession {
  setChatHistory(h: ChatHistoryItem[]): void;
  prompt(text: string, o: Record<string, unknown>): Promise<string>;
}
interface NodeLlamaCpp {
  getLlama(o: object): Promise<{
    loadModel(o: { modelPath: string }): Promise<{
      createContext(o?: object): Promise<{ getSequence(): unknown; dispose(): Promise<void> }>;
      tokenize(text: string): unknown[];
    }>;
    createGrammarForJsonSchema?(schema: object): Promise<unknown>;
  }>;
  LlamaChatSession: new (o: { contextSequence: unknown }) => ChatSession;
}

export interface LlamaCppOptions {
  /** Constrain every answer to this JSON schema (node-llama-cpp grammar). */
  jsonSchema?: object;
  contextSize?: number;
}

export class LlamaCppLLM implements LLM {
  private constructor(
    readonly spec: string,
    private readonly mod: NodeLlamaCpp,
    private readonly context: { getSequence(): unknown; dispose(): Promise<void> },
    private readonly model: { tokenize(text: string): unknown[] },
    private readonly grammar: unknown,
  ) {}

  static async load(modelPath: string, opts: LlamaCppOptions = {}): Promise<LlamaCppLLM> {
    if (!existsSync(modelPath)) throw new InputError(`llm llama:${modelPath}: no such model file`, 'pass the path of a local .gguf model');
    let mod: NodeLlamaCpp;
    try {
      const name = 'node-llama-cpp'; // a variable keeps TypeScript from requiring the optional package's types
      mod = (await import(name)) as NodeLlamaCpp;
    } catch {
      throw new InputError('llm llama: needs the optional package node-llama-cpp', 'run `npm install node-llama-cpp` in your project');
    }
    const llama = await mod.getLlama({ build: 'never' });
    const model = await llama.loadModel({ modelPath });
    const context = await model.createContext(opts.contextSize ? { contextSize: opts.contextSize } : undefined);
    const grammar = opts.jsonSchema && llama.createGrammarForJsonSchema ? await llama.createGrammarForJsonSchema(opts.jsonSchema) : undefined;
    return new LlamaCppLLM(`llama:${modelPath}`, mod, context, model, grammar);
  }

  async generate(req: GenerateRequest): Promise<GenerateResult> {
    const messages = req.messages ?? [{ role: 'user' as const, content: req.prompt ?? '' }];
    const last = messages[messages.length - 1];
    if (!last || last.role !== 'user') throw new InputError('llm llama: the last message must be from the user');
    const history: ChatHistoryItem[] = messages.slice(0, -1).map((m) =>
      m.role === 'assistant' ? { type: 'model', response: [m.content] } : { type: m.role === 'system' ? 'system' : 'user', text: m.content },
    );
    const choices = [];
    let completionTokens = 0;
    for (let i = 0; i < (req.n ?? 1); i++) {
      // A fresh session per sample: the history is set, the last user message is the prompt.
      const session = new this.mod.LlamaChatSession({ contextSequence: this.context.getSequence() });
      session.setChatHistory(history);
      const text = await session.prompt(last.content, {
        temperature: req.temperature ?? 0,
        topP: req.topP,
        maxTokens: req.maxTokens,
        seed: req.seed === undefined ? undefined : req.seed + i,
        customStopTriggers: req.stop,
        grammar: this.grammar,
      });
      completionTokens += this.model.tokenize(text).length;
      choices.push({ text, finishReason: 'stop' });
    }
    const promptTokens = this.model.tokenize(messages.map((m) => m.content).join('\n')).length;
    return { choices, usage: { promptTokens, completionTokens } };
  }

  async close(): Promise<void> {
    await this.context.dispose();
  }
}
