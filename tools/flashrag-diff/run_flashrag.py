"""Drive FlashRAG's IRCOTPipeline / IterativePipeline / SelfAskPipeline / SuRePipeline / AdaptivePipeline /
ConditionalPipeline (SKR) / FLAREPipeline / SelfRAGPipeline, and the Self-RAG authors' scoring, against the shared stub servers. FlashRAG code is used unmodified; only its
environment is stubbed:
  - tiktoken's BPE files cannot be downloaded here: encoding_for_model returns a char-level encoder
    (only used to truncate prompts longer than generator_max_input_len, set far above ours);
  - the retriever is a small class calling the shared /retrieve server (FlashRAG's search /
    batch_search signatures, return_score as in its BaseRetriever);
  - the generator is FlashRAG's own OpenaiGenerator (framework: openai) pointed at the scripted server.
    For Self-Ask only, a str prompt is wrapped in a one-element list before OpenaiGenerator.generate
    (see --no-selfask-wrap and the report: without it every character becomes its own request);
  - the judgers of Adaptive-RAG (a T5 classifier) and SKR (a SimCSE encoder over labelled training
    questions) cannot be loaded here: get_judger returns FixedJudger, which gives each question the
    decision ragtrail's router is scripted to take (fixtures.ADAPTIVE_ROUTE, fixtures.SKR_RETRIEVE). Only
    the decision is stubbed; what each pipeline does after it is FlashRAG's own code;
  - FLARE (FLAREPipeline with FlashRAG's defaults, as run_exp.py builds it): FlashRAG re-encodes each
    sentence with the generator's tokenizer to slice the reply's token scores, so tiktoken's stand-in
    is the scripted model's own word-level tokenizer (fixtures/logprob_models.flare_tokens) and both
    count the same tokens;
  - Self-RAG (SelfRAGPipeline with run_exp.py's settings, framework vllm): vLLM cannot be installed
    here, so a `vllm` module is stubbed (install_vllm_stub): LLM.generate answers every prompt from
    fixtures/logprob_models.selfrag_positions, the same script the server answers ragtrail from, as
    vLLM's RequestOutput (outputs[0].text / token_ids / logprobs / cumulative_logprob); the
    tokenizer (transformers.AutoTokenizer) is a stub over the script's 67-token vocabulary, and the
    model folder holds only a config.json naming a Llama architecture;
  - Self-RAG, the authors' scoring (method self-rag-authors): retrieval_lm/run_short_form.py of
    AkariAsai/self-rag (a checkout beside this folder, ./self-rag), imported unmodified with the same
    vLLM stub in the shape of the vLLM its requirements pin (0.2.6: logprobs as plain floats) and
    empty `spacy` / `jsonlines` modules (imported by it, used only by its main); each question's
    evidences are the /retrieve server's passages for the question, and call_model_rerank_w_scores_batch
    runs with the arguments main() passes (README.md:251-253's PopQA command)."""
import argparse, contextlib, io, json, os, re, sys, urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "fixtures"))
from fixtures import ADAPTIVE_ROUTE, SKR_RETRIEVE, EVIDENCE

ap = argparse.ArgumentParser()
ap.add_argument("method", choices=["ircot", "iter-retgen", "self-ask", "sure", "adaptive-rag", "skr", "flare", "self-rag", "self-rag-authors"])
ap.add_argument("--tag", required=True)
ap.add_argument("--include-stop", action="store_true")
ap.add_argument("--ircot-style", default="strict")
ap.add_argument("--selfask-end", default="hash")
ap.add_argument("--llm", default="http://127.0.0.1:18001")
ap.add_argument("--ret", default="http://127.0.0.1:18002")
ap.add_argument("--data", default=os.path.join(HERE, "fixtures", "data.jsonl"))
ap.add_argument("--no-selfask-wrap", action="store_true")
ap.add_argument("--sure-format", default="asked", help="scripted model's candidate lines: asked|inline|bare")
ap.add_argument("--skr-per-item", action="store_true", help="SKR: one run() per question instead of one over the dataset")
ap.add_argument("--skr-runs", type=int, default=1, help="SKR: run() the same pipeline object this many times (the last is logged)")
args = ap.parse_args()


def post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    return json.loads(urllib.request.urlopen(req).read())


RESET = {"tag": args.tag, "include_stop": args.include_stop, "ircot_style": args.ircot_style, "selfask_end": args.selfask_end,
         "sure_format": args.sure_format}
post(args.ret + "/reset", RESET)

import tiktoken
from logprob_models import ID, VOCAB, SPECIAL, REFLECTION, flare_tokens, selfrag_case, selfrag_positions, top_k


class _CharEnc:
    def encode(self, s, **kw):
        return [ord(c) for c in s]

    def decode(self, toks):
        return "".join(chr(t) for t in toks)


class _WordEnc:
    """FLARE: the scripted model's own tokenizer (ids assigned as strings are first seen)."""
    def __init__(self):
        self.ids, self.strs = {}, []

    def encode(self, s, **kw):
        out = []
        for t in flare_tokens(s):
            if t not in self.ids:
                self.ids[t] = len(self.strs)
                self.strs.append(t)
            out.append(self.ids[t])
        return out

    def decode(self, toks):
        return "".join(self.strs[t] for t in toks)


_enc = _WordEnc() if args.method == "flare" else _CharEnc()
tiktoken.encoding_for_model = lambda name: _enc
LOG = os.path.join(HERE, "logs", f"{args.tag}.llm.jsonl")


def install_vllm_stub(logprob_objects, side):
    """A `vllm` module (LLM, SamplingParams) whose LLM.generate answers each prompt from the script
    (logprob_models.selfrag_positions) as vLLM's RequestOutput: outputs[0].text, .token_ids,
    .cumulative_logprob (the sum of the generated tokens' log-probs) and .logprobs, one dict per
    generated token of token id -> log-prob holding the `logprobs` most likely tokens and the generated
    one (vLLM's rule), values vLLM >= 0.4's Logprob objects (FlashRAG reads `.logprob`) or, with
    logprob_objects False, vLLM 0.2's plain floats (the authors' code calls float() on them). Text
    drops special tokens (the reflection tokens are special in Self-RAG's tokenizer) unless
    skip_special_tokens=False. Every prompt is logged like a server call (logs/TAG.llm.jsonl)."""
    import dataclasses, types
    mod = types.ModuleType("vllm")

    @dataclasses.dataclass
    class Logprob:
        logprob: float
        rank: int = None
        decoded_token: str = None

    class SamplingParams:
        def __init__(self, **kw):
            self.n, self.temperature, self.top_p, self.max_tokens, self.logprobs = 1, 1.0, 1.0, 16, None
            self.stop, self.skip_special_tokens = None, True
            self.__dict__.update(kw)

    calls = {}

    class LLM:
        def __init__(self, model=None, **kw):
            self.model, self.kw = model, kw

        def generate(self, prompts, sampling_params=None, **kw):
            sp = sampling_params or SamplingParams()
            outs = []
            for prompt in [prompts] if isinstance(prompts, str) else prompts:
                positions = selfrag_positions(prompt)
                finish = "stop"
                if sp.max_tokens is not None and len(positions) > sp.max_tokens:
                    positions, finish = positions[: sp.max_tokens], "length"
                toks = [t for t, _ in positions]
                lps = [d[t] for t, d in positions]
                logprobs = None
                if sp.logprobs is not None:
                    logprobs = []
                    for t, d in positions:
                        kept = top_k(d, sp.logprobs, t)
                        ranks = {a: r + 1 for r, a in enumerate(sorted(d, key=lambda a: (-d[a], ID[a])))}
                        logprobs.append({ID[a]: (Logprob(b, ranks[a], a) if logprob_objects else b) for a, b in kept.items()})
                skip = set(SPECIAL + REFLECTION) if sp.skip_special_tokens else set()
                text = "".join(t for t in toks if t not in skip)
                out = types.SimpleNamespace(index=0, text=text, token_ids=[ID[t] for t in toks], cumulative_logprob=sum(lps),
                                            logprobs=logprobs, finish_reason=finish)
                outs.append(types.SimpleNamespace(prompt=prompt, outputs=[out], finished=True))
                case = selfrag_case(prompt)
                qid = case[0] if case else None
                calls[qid] = calls.get(qid, 0) + 1
                with open(LOG, "a") as f:
                    f.write(json.dumps({"qid": qid, "call": calls[qid] - 1, "kind": f"{side}-selfrag-{case[1]}" if case else None,
                                        "endpoint": "vllm-stub", "max_tokens": sp.max_tokens, "logprobs": sp.logprobs,
                                        "skip_special_tokens": sp.skip_special_tokens, "prompt": prompt, "text": text,
                                        "tokens": toks, "finish": finish, **({"passage": case[2]} if case and case[2] else {}),
                                        "evidence": [m in prompt for m in EVIDENCE[qid]] if qid else None}) + "\n")
            return outs

    mod.LLM, mod.SamplingParams, mod.Logprob = LLM, SamplingParams, Logprob
    sys.modules["vllm"] = mod
    return mod


class TinyTokenizer:
    """AutoTokenizer's stand-in for Self-RAG: the script's vocabulary (reflection tokens among it)."""
    vocab_size = len(VOCAB)
    added_tokens_decoder = {}

    def convert_tokens_to_ids(self, token):
        return ID.get(token, ID["<unk>"])

    def encode(self, text, **kw):  # only its length is read (prompt truncation)
        ids = [ID.get(t.strip(), ID["<unk>"]) for t in flare_tokens(text)]
        return [ids] if kw.get("return_tensors") else ids

    def decode(self, ids, **kw):
        return "".join(VOCAB[i] for i in ids)


def em(pred, golds):
    """FlashRAG's / SQuAD's exact match (lower case, no punctuation, no articles, spaces collapsed)."""
    import string

    def norm(s):
        s = "".join(c for c in s.lower() if c not in set(string.punctuation))
        return " ".join(re.sub(r"\b(a|an|the)\b", " ", s).split())
    return float(any(norm(pred) == norm(g) for g in golds))


def retrieve_for(question, topk):
    return post(args.ret + "/retrieve", {"queries": [question], "topk": topk, "return_scores": True})["result"][0]


if args.method == "self-rag-authors":
    # retrieval_lm/run_short_form.py, unmodified, with vLLM 0.2's float log-probs; spacy and jsonlines
    # are imported by it (and its utils) but only used by main() / the file loaders
    import types
    for name in ("spacy", "jsonlines"):
        try:
            __import__(name)
        except ImportError:
            sys.modules[name] = types.ModuleType(name)
    install_vllm_stub(logprob_objects=False, side="au")
    sys.path.insert(0, os.path.join(HERE, "self-rag", "retrieval_lm"))
    import run_short_form as rsf
    from vllm import LLM
    from utils import PROMPT_DICT, load_special_tokens
    tokenizer = TinyTokenizer()
    model = LLM(model="selfrag/selfrag_llama2_7b")
    ret_tokens, rel_tokens, grd_tokens, ut_tokens = load_special_tokens(tokenizer, use_grounding=True, use_utility=True)
    rows = []
    for line in open(args.data):
        row = json.loads(line)
        hits = retrieve_for(row["question"], 10)  # main(): the first --ndocs 10 of the item's ctxs
        evidences = [{"title": h["document"]["title"], "text": h["document"]["text"], "id": h["document"]["id"]} for h in hits]
        prompt = PROMPT_DICT["prompt_no_input"].format_map({"instruction": row["question"]})  # PopQA: no TASK_INST
        pred, results, do_retrieve = rsf.call_model_rerank_w_scores_batch(
            prompt, evidences=evidences, model=model, max_new_tokens=100, rel_tokens=rel_tokens, ret_tokens=ret_tokens,
            grd_tokens=grd_tokens, ut_tokens=ut_tokens, threshold=0.2, use_seqscore=True, w_rel=1.0, w_sup=1.0, w_use=1.0,
            mode="adaptive_retrieval", closed=False)
        if type(pred) is str and pred[0] == "#" or pred[0] == ":":  # main()'s trim, as written there
            pred = pred[1:]
        scores = [{"passage": r["ctx"]["id"], "score": float(r["score"]), "pred": r["pred"]} for k, r in results.items() if k != "no_retrieval"]
        rows.append({"id": row["id"], "question": row["question"], "golden_answers": row["golden_answers"], "pred": pred,
                     "retrieval_flag": bool(do_retrieve), "passage_scores": scores, "metric_score": {"em": em(pred, row["golden_answers"])}})
    json.dump({"tag": args.tag, "metrics": [], "items": rows, "error": None}, open(os.path.join(HERE, "fr-out", f"{args.tag}.json"), "w"), indent=1)
    print(json.dumps({"tag": args.tag, "preds": {r["id"]: r["pred"] for r in rows}}))
    sys.exit(0)

if args.method == "self-rag":
    install_vllm_stub(logprob_objects=True, side="fr")
    import transformers
    transformers.AutoTokenizer.from_pretrained = classmethod(lambda cls, *a, **kw: TinyTokenizer())
    MODEL_DIR = os.path.join(HERE, "output", "selfrag-stub-model")
    os.makedirs(MODEL_DIR, exist_ok=True)
    json.dump({"architectures": ["LlamaForCausalLM"], "model_type": "llama"}, open(os.path.join(MODEL_DIR, "config.json"), "w"))

from flashrag.config import Config
from flashrag.dataset import Dataset
from flashrag.utils import get_generator
from flashrag.pipeline import IRCOTPipeline, IterativePipeline, SelfAskPipeline, SuRePipeline, AdaptivePipeline, ConditionalPipeline, FLAREPipeline, SelfRAGPipeline
import flashrag.pipeline.pipeline as fr_pipeline_module


class StubRetriever:
    """FlashRAG's retriever interface over the shared /retrieve server."""
    def __init__(self, url, topk):
        self.url, self.topk = url + "/retrieve", topk

    def _call(self, queries, num):
        res = post(self.url, {"queries": list(queries), "topk": num or self.topk, "return_scores": True})["result"]
        docs = [[{"id": h["document"]["id"], "contents": h["document"]["contents"]} for h in lst] for lst in res]
        scores = [[h["score"] for h in lst] for lst in res]
        return docs, scores

    def search(self, query, num=None, return_score=False):
        d, s = self._call([query], num)
        return (d[0], s[0]) if return_score else d[0]

    def batch_search(self, query, num=None, return_score=False):
        if isinstance(query, str):
            query = [query]
        d, s = self._call(query, num)
        return (d, s) if return_score else d


class FixedJudger:
    """Stands in for AdaptiveJudger / SKRJudger: judge(dataset) returns, per question, the decision
    ragtrail's router is scripted to take (A/B/C for Adaptive-RAG; True = retrieve for SKR)."""
    def __init__(self, decisions):
        self.decisions = decisions

    def judge(self, dataset):
        return [self.decisions[item.id] for item in dataset]


if args.method in ("adaptive-rag", "skr"):
    # AdaptivePipeline / ConditionalPipeline call get_judger(config) as imported into flashrag/pipeline/pipeline.py
    fr_pipeline_module.get_judger = lambda config: FixedJudger(ADAPTIVE_ROUTE if args.method == "adaptive-rag" else SKR_RETRIEVE)

out_dir = os.path.join(HERE, "fr-out")
os.makedirs(out_dir, exist_ok=True)
config_dict = {
    "framework": "openai", "generator_model": "scripted",
    "openai_setting": {"api_key": "x", "base_url": args.llm + "/v1"},
    "generator_max_input_len": 10**7, "generator_batch_size": 1,
    "generation_params": {"max_tokens": 32},  # FlashRAG's default (basic_config.yaml / my_config.yaml)
    "retrieval_method": "bm25", "retrieval_topk": 5, "gpu_id": None,
    "metrics": ["em", "f1", "acc"], "save_dir": out_dir, "save_intermediate_data": False,
    "save_metric_score": False, "dataset_name": "fixtures", "data_dir": os.path.join(HERE, "fixtures"),
}
if args.method == "self-rag":  # run_exp.py selfrag(): the vLLM generator and its generation settings
    config_dict.update({"framework": "vllm", "generator_model": "selfrag-llama2-7B", "generator_model_path": MODEL_DIR,
                        "generation_params": {"max_tokens": 100, "temperature": 0.0, "top_p": 1.0, "skip_special_tokens": False}})
config = Config(config_dict=config_dict)
dataset = Dataset(config, dataset_path=args.data)
retriever = StubRetriever(args.ret, config["retrieval_topk"])
generator = get_generator(config)

# IRCOTPipeline.run_batch keeps looping to max_iter after every item has answered and then calls
# generate([]), which OpenaiGenerator cannot take (IndexError on input_list[0]); vLLM returns [].
# Per-item runs hit this whenever the item answers early, so an empty batch returns [] here.
_gen0 = generator.generate
generator.generate = lambda input_list, *a, **kw: [] if len(input_list) == 0 else _gen0(input_list, *a, **kw)

if args.method == "self-ask" and not args.no_selfask_wrap:
    _gen = generator.generate

    def generate(input_list, *a, **kw):
        return _gen([input_list] if isinstance(input_list, str) else input_list, *a, **kw)

    generator.generate = generate

# FlashRAG's settings as in examples/methods/run_exp.py
if args.method == "ircot":
    pipe = IRCOTPipeline(config, max_iter=5, retriever=retriever, generator=generator)
elif args.method == "iter-retgen":
    pipe = IterativePipeline(config, iter_num=3, retriever=retriever, generator=generator)
elif args.method == "self-ask":
    pipe = SelfAskPipeline(config, max_iter=5, single_hop=False, retriever=retriever, generator=generator)
elif args.method == "sure":
    pipe = SuRePipeline(config, retriever=retriever, generator=generator)
elif args.method == "adaptive-rag":
    pipe = AdaptivePipeline(config, retriever=retriever, generator=generator)
elif args.method == "skr":
    pipe = ConditionalPipeline(config, retriever=retriever, generator=generator)
elif args.method == "flare":
    pipe = FLAREPipeline(config, retriever=retriever, generator=generator)
else:
    pipe = SelfRAGPipeline(config, threshold=0.2, max_depth=2, beam_width=2, w_rel=1.0, w_sup=1.0, w_use=1.0, use_grounding=True,
                           use_utility=True, use_seqscore=True, ignore_cont=True, mode="adaptive_retrieval",
                           retriever=retriever, generator=generator)
    # the per-passage scores with their parts (critic_preds' fourth value; the pipeline keeps only the totals)
    CRITIC = []
    _critic = pipe.critic_preds

    def critic_preds(preds):
        r = _critic(preds)
        CRITIC.append({i: {k: float(v) for k, v in o.items() if k.endswith("_score")} for i, o in r[3].items()})
        return r
    pipe.critic_preds = critic_preds

# One question at a time (FlashRAG batches the dataset; per-item runs take the same steps per item
# and let the servers attribute every request to its question). SKR's ConditionalPipeline cannot run
# per item (a batch whose questions all get the same judgement raises KeyError, pipeline.py:169), so it
# runs once over the dataset, as run_exp.py does; every request of it carries its question.
buf = io.StringIO()
result, error = [], None
critic_parts = {}  # Self-RAG: per question, each passage's score parts
raws = [json.loads(l) for l in open(args.data)]
batches = [raws] if args.method == "skr" and not args.skr_per_item else [[r] for r in raws]
try:
    for run_no in range(args.skr_runs if args.method == "skr" else 1):
        if run_no > 0:  # log only the last run
            post(args.ret + "/reset", RESET)
            result = []
        for batch in batches:
            n_critic = len(CRITIC) if args.method == "self-rag" else 0
            with contextlib.redirect_stdout(buf):  # OpenaiGenerator prints every request
                result.extend(pipe.run(Dataset(config, data=batch), do_eval=True))
            if args.method == "self-rag" and len(CRITIC) > n_critic:
                critic_parts[batch[0]["id"]] = CRITIC[-1]
except Exception as e:  # a probe that makes FlashRAG fail records how
    import traceback
    error = traceback.format_exc(limit=-3)
    print(error, file=sys.stderr)
metrics_line = [l for l in buf.getvalue().splitlines() if l.startswith("{")]
rows = []
for item in result:
    o = item.output
    rows.append({"id": item.id, "question": item.question, "golden_answers": item.golden_answers,
                 "pred": o.get("pred"), "raw_pred": o.get("raw_pred"),
                 "intermediate": {k: v for k, v in o.items() if k.startswith(("intermediate_output", "pred_iter", "judge_result_iter", "gen_iter_"))},
                 **{k: o[k] for k in ("candidates", "all_summary", "val_scores", "ranking_scores", "judge_result", "critic_result") if k in o},
                 **({"retrieval_flag": bool(o["retrieval_flag"])} if "retrieval_flag" in o else {}),  # a numpy bool in Self-RAG
                 **({"critic_parts": critic_parts[item.id]} if item.id in critic_parts else {}),
                 "metric_score": o.get("metric_score")})
json.dump({"tag": args.tag, "metrics": metrics_line, "items": rows, "error": error}, open(f"{out_dir}/{args.tag}.json", "w"), indent=1, default=str)
print(json.dumps({"tag": args.tag, "metrics": metrics_line, "preds": {r["id"]: r["pred"] for r in rows}, "error": error and error.strip().splitlines()[-1]}))
sys.exit(1 if error else 0)
