"""Drive FlashRAG's IRCOTPipeline / IterativePipeline / SelfAskPipeline / SuRePipeline / AdaptivePipeline /
ConditionalPipeline (SKR) against the shared stub servers. FlashRAG code is used unmodified; only its
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
    the decision is stubbed; what each pipeline does after it is FlashRAG's own code."""
import argparse, contextlib, io, json, os, sys, urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "fixtures"))
from fixtures import ADAPTIVE_ROUTE, SKR_RETRIEVE

ap = argparse.ArgumentParser()
ap.add_argument("method", choices=["ircot", "iter-retgen", "self-ask", "sure", "adaptive-rag", "skr"])
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


class _CharEnc:
    def encode(self, s, **kw):
        return [ord(c) for c in s]

    def decode(self, toks):
        return "".join(chr(t) for t in toks)


tiktoken.encoding_for_model = lambda name: _CharEnc()

from flashrag.config import Config
from flashrag.dataset import Dataset
from flashrag.utils import get_generator
from flashrag.pipeline import IRCOTPipeline, IterativePipeline, SelfAskPipeline, SuRePipeline, AdaptivePipeline, ConditionalPipeline
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
config = Config(config_dict={
    "framework": "openai", "generator_model": "scripted",
    "openai_setting": {"api_key": "x", "base_url": args.llm + "/v1"},
    "generator_max_input_len": 10**7, "generator_batch_size": 1,
    "generation_params": {"max_tokens": 32},  # FlashRAG's default (basic_config.yaml / my_config.yaml)
    "retrieval_method": "bm25", "retrieval_topk": 5, "gpu_id": None,
    "metrics": ["em", "f1", "acc"], "save_dir": out_dir, "save_intermediate_data": False,
    "save_metric_score": False, "dataset_name": "fixtures", "data_dir": os.path.join(HERE, "fixtures"),
})
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
else:
    pipe = ConditionalPipeline(config, retriever=retriever, generator=generator)

# One question at a time (FlashRAG batches the dataset; per-item runs take the same steps per item
# and let the servers attribute every request to its question). SKR's ConditionalPipeline cannot run
# per item (a batch whose questions all get the same judgement raises KeyError, pipeline.py:169), so it
# runs once over the dataset, as run_exp.py does; every request of it carries its question.
buf = io.StringIO()
result, error = [], None
raws = [json.loads(l) for l in open(args.data)]
batches = [raws] if args.method == "skr" and not args.skr_per_item else [[r] for r in raws]
try:
    for run_no in range(args.skr_runs if args.method == "skr" else 1):
        if run_no > 0:  # log only the last run
            post(args.ret + "/reset", RESET)
            result = []
        for batch in batches:
            with contextlib.redirect_stdout(buf):  # OpenaiGenerator prints every request
                result.extend(pipe.run(Dataset(config, data=batch), do_eval=True))
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
                 "intermediate": {k: v for k, v in o.items() if k.startswith(("intermediate_output", "pred_iter"))},
                 **{k: o[k] for k in ("candidates", "all_summary", "val_scores", "ranking_scores", "judge_result") if k in o},
                 "metric_score": o.get("metric_score")})
json.dump({"tag": args.tag, "metrics": metrics_line, "items": rows, "error": error}, open(f"{out_dir}/{args.tag}.json", "w"), indent=1, default=str)
print(json.dumps({"tag": args.tag, "metrics": metrics_line, "preds": {r["id"]: r["pred"] for r in rows}, "error": error and error.strip().splitlines()[-1]}))
sys.exit(1 if error else 0)
