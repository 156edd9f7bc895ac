"""Probe: FlashRAG's OpenaiGenerator.generate given a bare str (what SelfAskPipeline.run_item passes)."""
import json, os, urllib.request, tiktoken
LLM = "http://127.0.0.1:" + os.environ.get("LLM_PORT", "18001")
class E:
    encode = lambda self, s, **k: [ord(c) for c in s]; decode = lambda self, t: "".join(map(chr, t))
tiktoken.encoding_for_model = lambda n: E()
urllib.request.urlopen(urllib.request.Request(LLM + "/reset", data=json.dumps({"tag": "probe-str"}).encode()))
from flashrag.config import Config
from flashrag.utils import get_generator
cfg = Config(config_dict={"framework": "openai", "generator_model": "scripted", "gpu_id": None,
    "openai_setting": {"api_key": "x", "base_url": LLM + "/v1"}, "generator_batch_size": 4,
    "generation_params": {"max_tokens": 32}})
g = get_generator(cfg)
prompt = "Question: Who is the spouse of the author of Harry Potter?\nAre follow up questions needed here: Yes.\n"
out = g.generate(prompt, stop=["Context:", "#", "Intermediate answer:"])
reqs = [json.loads(l) for l in open("logs/probe-str.llm.jsonl")]
print(json.dumps({"prompt_chars": len(prompt), "requests": len(reqs), "first_request_prompt": reqs[0]["prompt"],
                  "endpoints": sorted({r["endpoint"] for r in reqs}), "returned_[0]": out[0], "returned_len": len(out)}))
