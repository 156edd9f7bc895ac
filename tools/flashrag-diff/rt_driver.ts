/**
 * ragtrail's agents with settings the CLI has no flags for, run like `ragtrail run` (one episode per
 * question through RagEnv, LlmPolicy and runEpisode; an OpenAICompatibleLLM; the HttpRetriever that
 * `--index http://…` opens), writing OUT/trajectories.jsonl in the CLI's format.
 *
 *   npx tsx tools/flashrag-diff/rt_driver.ts CONFIG --llm URL/v1 --index URL --dataset FILE --out DIR
 *
 * CONFIG:
 *   flare-flashrag  FLARE with FlashRAG's FLAREPipeline settings where ragtrail has them: θ = β = 0.2
 *                   (its one `threshold`), 64-token look-aheads, 256 generated tokens, FlashRAG's
 *                   top-k 5 (its config's retrieval_topk); chat mode. What flareProtocol has no option
 *                   for (the first search with the question, documents in look-aheads, the answer read
 *                   after "answer is") stays ragtrail's.
 *   self-rag        `--agent self-rag` (the authors' defaults) in completion mode, as the CLI runs it;
 *                   besides the trajectories it writes OUT/selfrag_scores.json: the decision and every
 *                   passage's score, computed by ragtrail's own retrievalDecision / scorePassage on the
 *                   exact replies of the run (the trajectory's summary rounds them to 4 digits).
 *   self-rag-logprob-ratio   the same with `decisionRule: 'logprob-ratio'` (run_short_form.py's literal rule)
 *   self-rag-top5            the same with `topLogprobs: 5` (what FlashRAG's SelfRAGPipeline asks vLLM for
 *                            per passage; its decision call asks for 20)
 *
 * RAGTRAIL (default: the checkout this folder is in) picks the ragtrail source tree.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(process.env['RAGTRAIL'] ?? join(here, '..', '..'));
const load = (p: string) => import(pathToFileURL(join(root, 'src', p)).href);

const [config, ...rest] = process.argv.slice(2);
const flag = (name: string) => {
  const i = rest.indexOf(`--${name}`);
  if (i < 0 || i + 1 >= rest.length) throw new Error(`--${name} is required`);
  return rest[i + 1]!;
};
const SELF_RAG: Record<string, object> = { 'self-rag': {}, 'self-rag-logprob-ratio': { decisionRule: 'logprob-ratio' }, 'self-rag-top5': { topLogprobs: 5 } };
if (config !== 'flare-flashrag' && !(config! in SELF_RAG)) throw new Error(`CONFIG: flare-flashrag | ${Object.keys(SELF_RAG).join(' | ')}`);

const { flareProtocol } = await load('agents/flare.ts');
const { selfRagProtocol, retrievalDecision, scorePassage, selfRagAnswer, SELF_RAG_DEFAULTS } = await load('agents/self-rag.ts');
const { LlmPolicy } = await load('agents/policy.ts');
const { RagEnv } = await load('env/env.ts');
const { runEpisode } = await load('eval/run.ts');
const { OpenAICompatibleLLM } = await load('llm/openai.ts');
const { HttpRetriever } = await load('retrieval/client.ts');
const { loadDataset } = await load('corpus/dataset.ts');

const flare = config === 'flare-flashrag';
const settings = flare ? {} : SELF_RAG[config!]!;
const protocol = flare ? flareProtocol({ theta: 0.2, beta: 0.2, lookAheadTokens: 64, maxGenerationTokens: 256 }) : selfRagProtocol(settings);
const inner = new OpenAICompatibleLLM(flag('llm'), 'scripted', { mode: flare ? 'chat' : 'completion', extraBody: flare ? {} : { skip_special_tokens: false } });
// Every request and its first choice, in the order the requests were made.
type Call = { req: { prompt?: string; maxTokens?: number; topLogprobs?: number }; choice?: unknown };
let calls: Call[] = [];
const llm = {
  spec: inner.spec,
  async generate(req: Call['req']) {
    const call: Call = { req };
    calls.push(call);
    const r = await inner.generate(req);
    call.choice = r.choices[0];
    return r;
  },
};
const d = protocol.defaults;
const env = new RagEnv({ retriever: new HttpRetriever(flag('index')), topK: flare ? 5 : d.topK, maxTurns: d.maxTurns, maxSearches: d.maxSearches });
const policy = new LlmPolicy(protocol, llm);
const out = flag('out');
mkdirSync(out, { recursive: true });
const lines: string[] = [];
const scores: Record<string, unknown> = {};
for await (const q of loadDataset(flag('dataset'))) {
  calls = [];
  const t = await runEpisode(env, policy, q);
  lines.push(JSON.stringify({ ...t, agent: flare ? 'flare (θ = β = 0.2, top-k 5)' : `self-rag ${JSON.stringify(settings)}` }));
  if (!flare) {
    const docs = (t.steps.find((s: { action: { type: string } }) => s.action.type === 'search')?.docs ?? []) as { passageId: string; text: string }[];
    const decision = calls.find((c) => c.req.maxTokens === 1);
    const passages = calls.filter((c) => c.req.prompt?.includes('<paragraph>'));
    const full = { ...SELF_RAG_DEFAULTS, ...settings };
    scores[q.id] = {
      decision: decision ? retrievalDecision(decision.choice, full) : null,
      passages: passages.map((c) => {
        const s = scorePassage(c.choice, full);
        return { passage: docs.find((x) => c.req.prompt!.includes(x.text))?.passageId, ...s, answer: selfRagAnswer(s.text) };
      }),
      prediction: t.prediction,
    };
  }
}
writeFileSync(join(out, 'trajectories.jsonl'), lines.join('\n') + '\n');
if (!flare) writeFileSync(join(out, 'selfrag_scores.json'), JSON.stringify(scores, null, 1));
console.log(`${config}: ${lines.length} questions -> ${out}`);
