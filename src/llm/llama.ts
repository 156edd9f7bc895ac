/**
 * A local GGUF model through node-llama-cpp (`llama:PATH`), on its prebuilt CPU binary.
 *
 * Chat requests are rendered the way transformers (and so `transformers serve`) renders them: the
 * chat template stored in the GGUF file, run by a Jinja engine (@huggingface/jinja, which
 * node-llama-cpp itself depends on) with `add_generation_prompt`, then tokenized with special tokens
 * parsed and no BOS added unless the file asks for one. node-llama-cpp's own chat wrappers are not
 * used: they re-render conversations in their own way, and a small model trained on one exact
 * prompt format answers differently to another. A raw `prompt` is tokenized as is (completion mode).
 *
 * Sampling follows the request: temperature 0 is greedy; otherwise temperature, top-p (default 1)
 * and the seed, with no top-k cut, min-p or repeat penalty (transformers' defaults for a checkpoint
 * whose generation config sets top_k 0, as ragtrail's tiny models do). Stop strings end generation
 * and are left out of the text. Sample i of a request with seed s uses seed s + i.
 */
import { existsSync, statSync } from 'node:fs';
import { InputError, RagtrailError } from '../core/errors.js';
import { loadNodeLlamaCpp } from '../core/node-llama-cpp.js';
import { type Choice, type GenerateRequest, type GenerateResult, type LLM, type Message, messagesToPrompt } from './types.js';

/* The slice of node-llama-cpp's API used here (its own types are not a dependency of ragtrail). */
type Token = number;
interface CompletionOptions {
  maxTokens?: number;
  temperature?: number;
  topK?: number;
  topP?: number;
  minP?: number;
  seed?: number;
  repeatPenalty?: false;
  customStopTriggers?: readonly string[];
  grammar?: unknown;
  onToken?: (tokens: Token[]) => void;
}
interface LlamaCompletion {
  generateCompletionWithMeta(input: Token[], o: CompletionOptions): Promise<{ response: string; metadata: { stopReason: string } }>;
}
interface LlamaModel {
  tokenize(text: string, specialTokens?: boolean): Token[];
  detokenize(tokens: readonly Token[], specialTokens?: boolean): string;
  readonly trainContextSize: number;
  readonly fileInfo: { metadata: { tokenizer?: { chat_template?: string } } };
  readonly tokens: { bos: Token | null; eos: Token | null; shouldPrependBosToken: boolean };
  createContext(o: { contextSize?: number; sequences?: number; threads?: number }): Promise<LlamaContext>;
  dispose(): Promise<void>;
}
interface LlamaContext {
  readonly contextSize: number;
  getSequence(): unknown;
  dispose(): Promise<void>;
}
interface NodeLlamaCpp {
  getLlama(o: object): Promise<{
    loadModel(o: { modelPath: string }): Promise<LlamaModel>;
    createGrammarForJsonSchema(schema: object): Promise<unknown>;
  }>;
  LlamaCompletion: new (o: { contextSequence: unknown }) => LlamaCompletion;
}
interface JinjaTemplate {
  render(vars: Record<string, unknown>): string;
}

export interface LlamaCppOptions {
  /** Constrain every answer to this JSON schema (node-llama-cpp grammar). */
  jsonSchema?: object;
  /** Tokens of context per sequence (default: the model's training context, at most 4096). */
  contextSize?: number;
  /** Sequences decoded side by side (default 1); each holds its own context of `contextSize` tokens. */
  sequences?: number;
  /** Use a GPU build if one is installed (default false: the CPU binary, the same numbers everywhere). */
  gpu?: boolean;
  /** CPU threads (default $RAGTRAIL_LLAMA_THREADS, else 1 for a model file under 256 MB, else llama.cpp's choice). */
  threads?: number;
}

/**
 * One thread for small models: llama.cpp's worker threads meet at a barrier after every operation,
 * and for a tiny model that wait costs more than the arithmetic. Measured with the LLM loop's CI
 * model on this project's shared 2-core machine: 49 tokens in 0.03 s with 1 thread, 6.5 s with 2,
 * 70 s with llama.cpp's default of 4.
 */
function defaultThreads(modelPath: string): number | undefined {
  const env = Number(process.env['RAGTRAIL_LLAMA_THREADS']);
  if (Number.isInteger(env) && env > 0) return env;
  return statSync(modelPath).size < 256 * 2 ** 20 ? 1 : undefined;
}

export class LlamaCppLLM implements LLM {
  private readonly free: LlamaCompletion[];
  private readonly waiting: ((c: LlamaCompletion) => void)[] = [];

  private constructor(
    readonly spec: string,
    private readonly model: LlamaModel,
    private readonly context: LlamaContext,
    completions: LlamaCompletion[],
    private readonly template: JinjaTemplate | undefined,
    private readonly specials: Record<string, string>,
    private readonly grammar: unknown,
  ) {
    this.free = completions;
  }

  static async load(modelPath: string, opts: LlamaCppOptions = {}): Promise<LlamaCppLLM> {
    if (!existsSync(modelPath)) throw new InputError(`llm llama:${modelPath}: no such model file`, 'pass the path of a local .gguf model');
    const { mod, requireBeside } = await loadNodeLlamaCpp<NodeLlamaCpp>('llm llama');
    // build "never": prebuilt binaries only, nothing compiles or downloads at run time.
    const llama = await mod.getLlama({ gpu: opts.gpu ? 'auto' : false, build: 'never', logLevel: 'error' });
    let model: LlamaModel;
    try {
      model = await llama.loadModel({ modelPath });
    } catch (e) {
      throw new InputError(`llm llama:${modelPath}: llama.cpp cannot load this file (${(e as Error).message})`, 'pass a GGUF model, e.g. one written by `ragtrail export-gguf`');
    }
    const source = model.fileInfo.metadata.tokenizer?.chat_template;
    let template: JinjaTemplate | undefined;
    if (typeof source === 'string' && source) {
      const { Template } = requireBeside('@huggingface/jinja') as { Template: new (s: string) => JinjaTemplate };
      try {
        template = new Template(source);
      } catch (e) {
        throw new InputError(`llm llama:${modelPath}: the model's chat template does not parse (${(e as Error).message})`, 'export the model again with a plain Jinja chat template');
      }
    }
    const text = (t: Token | null) => (t === null ? '' : model.detokenize([t], true));
    const specials = { bos_token: text(model.tokens.bos), eos_token: text(model.tokens.eos) };
    const sequences = opts.sequences ?? 1;
    const threads = opts.threads ?? defaultThreads(modelPath);
    const context = await model.createContext({ contextSize: opts.contextSize ?? Math.min(model.trainContextSize, 4096), sequences, ...(threads ? { threads } : {}) });
    const completions = Array.from({ length: sequences }, () => new mod.LlamaCompletion({ contextSequence: context.getSequence() }));
    const grammar = opts.jsonSchema ? await llama.createGrammarForJsonSchema(opts.jsonSchema) : undefined;
    return new LlamaCppLLM(`llama:${modelPath}`, model, context, completions, template, specials, grammar);
  }

  /** The prompt text for chat `messages`, as transformers' apply_chat_template(add_generation_prompt=True) writes it. */
  renderChat(messages: readonly Message[]): string {
    if (!this.template) return messagesToPrompt(messages);
    return this.template.render({ messages, add_generation_prompt: true, ...this.specials });
  }

  /** The token ids the model is given for `req` (special tokens in the text are parsed). */
  promptTokens(req: GenerateRequest): Token[] {
    const text = req.prompt ?? this.renderChat(req.messages ?? []);
    const ids = this.model.tokenize(text, true);
    return this.model.tokens.shouldPrependBosToken && this.model.tokens.bos !== null ? [this.model.tokens.bos, ...ids] : ids;
  }

  async generate(req: GenerateRequest): Promise<GenerateResult> {
    if (!req.messages?.length && req.prompt === undefined) throw new InputError('llm llama: a request needs messages or a prompt');
    const input = this.promptTokens(req);
    const room = this.context.contextSize - input.length;
    if (room <= 0) throw new RagtrailError(`llm ${this.spec}: the prompt has ${input.length} tokens, the context holds ${this.context.contextSize}`);
    const choices: Choice[] = [];
    let completionTokens = 0;
    for (let i = 0; i < (req.n ?? 1); i++) {
      const completion = await this.acquire();
      try {
        let generated = 0;
        const r = await completion.generateCompletionWithMeta(input, {
          maxTokens: Math.min(req.maxTokens ?? room, room),
          temperature: req.temperature ?? 0,
          topK: 0,
          topP: req.topP ?? 1,
          minP: 0,
          seed: req.seed === undefined ? undefined : req.seed + i,
          repeatPenalty: false,
          customStopTriggers: req.stop?.length ? req.stop : undefined,
          grammar: this.grammar,
          onToken: (t) => (generated += t.length),
        });
        completionTokens += generated;
        choices.push({ text: r.response, finishReason: r.metadata.stopReason === 'maxTokens' ? 'length' : 'stop' });
      } finally {
        this.release(completion);
      }
    }
    return { choices, usage: { promptTokens: input.length * choices.length, completionTokens } };
  }

  private acquire(): Promise<LlamaCompletion> {
    const c = this.free.pop();
    return c ? Promise.resolve(c) : new Promise((resolve) => this.waiting.push(resolve));
  }

  private release(c: LlamaCompletion): void {
    const next = this.waiting.shift();
    if (next) next(c);
    else this.free.push(c);
  }

  async close(): Promise<void> {
    await this.context.dispose();
    await this.model.dispose();
  }
}
