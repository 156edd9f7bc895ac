"""The environment the reference compressors run in (see run_reference.py's docstring for each stub),
and the fixtures in the shapes their entry points take. Importing this module installs the stubs."""
import functools, importlib.util, json, os, sys, time, types

HERE = os.path.dirname(os.path.abspath(__file__))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
MODEL = os.path.join(HERE, "model")
REF = os.path.join(HERE, "ref")
FLASHRAG = os.environ.get("FLASHRAG", os.path.join(REF, "FlashRAG"))
sys.path.insert(0, HERE)
from fixtures import QUESTIONS, docs_for  # noqa: E402
import standin  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

torch.set_num_threads(1)

# ------------------------------------------------------------------------------------------- stubs
import spacy  # noqa: E402

spacy.load = lambda name, **kw: spacy.blank("en")  # 1

import tiktoken  # noqa: E402


class _CharEnc:
    def encode(self, s, **kw):
        return [ord(c) for c in s]

    def decode(self, toks):
        return "".join(chr(t) for t in toks)


tiktoken.encoding_for_model = lambda name: _CharEnc()  # 2

_to = torch.nn.Module.to


def _cpu_to(self, *a, **k):  # 3
    a = tuple("cpu" if isinstance(x, str) and x.startswith("cuda") else x for x in a)
    if isinstance(k.get("device"), str) and k["device"].startswith("cuda"):
        k["device"] = "cpu"
    return _to(self, *a, **k)


torch.nn.Module.to = _cpu_to

from transformers import DynamicCache, GPT2LMHeadModel  # noqa: E402
from transformers.cache_utils import Cache  # noqa: E402

_forward = GPT2LMHeadModel.forward


@functools.wraps(_forward)
def _legacy_cache_forward(self, *a, past_key_values=None, **k):  # 4
    if isinstance(past_key_values, (list, tuple)):
        past_key_values = DynamicCache(ddp_cache_data=[(kv[0], kv[1]) for kv in past_key_values])
    out = _forward(self, *a, past_key_values=past_key_values, **k)
    if isinstance(getattr(out, "past_key_values", None), Cache):
        out.past_key_values = tuple((layer.keys, layer.values) for layer in out.past_key_values.layers)
    return out


GPT2LMHeadModel.forward = _legacy_cache_forward


def _package(name, path=None):  # 5
    mod = types.ModuleType(name)
    mod.__path__ = [path] if path else []
    sys.modules[name] = mod
    return mod


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


class StandinEncoder:
    """FlashRAG's Encoder interface (encode(texts, is_query)) over standin.encode; records what it encodes."""

    def __init__(self, unit):
        self.unit, self.calls = unit, []

    def encode(self, texts, is_query=False):
        texts = list(texts) if not isinstance(texts, str) else [texts]
        self.calls.append({"is_query": is_query, "texts": texts})
        return standin.encode(texts, unit=self.unit)


_package("flashrag", os.path.join(FLASHRAG, "flashrag"))
_package("flashrag.refiner", os.path.join(FLASHRAG, "flashrag", "refiner"))
_package("flashrag.retriever", os.path.join(FLASHRAG, "flashrag", "retriever"))
_package("flashrag.retriever.encoder").Encoder = StandinEncoder

# -------------------------------------------------------------------------------------- inputs


def ragtrail_doc_lines():
    """ragtrail's own document lines (docLines of src/agents/compressed-rag.ts, as out/doc_lines.json holds
    them: doc_lines.ts writes it from the tree under test), so that the references compress exactly the
    text ragtrail compresses. Since ragtrail's fix of its format these are FlashRAG's lines,
    `Doc i(Title: "T") text`; a tree with another format feeds the references that format."""
    path = os.path.join(HERE, "out", "doc_lines.json")
    if not os.path.exists(path):
        sys.exit("out/doc_lines.json is missing: run `npx tsx tools/compressor-diff/doc_lines.ts` first (run_all.sh does)")
    return json.load(open(path))["lines"]


class Item:
    def __init__(self, q):
        self.id, self.question = q["id"], q["question"]
        self.retrieval_result = [{"id": d["id"], "contents": d["contents"]} for d in docs_for(q["id"])]


class Dataset(list):
    @property
    def question(self):
        return [x.question for x in self]

    @property
    def retrieval_result(self):
        return [x.retrieval_result for x in self]


DATA = Dataset(Item(q) for q in QUESTIONS)
OUT = {"model": MODEL, "questions": QUESTIONS, "docs": {q["id"]: docs_for(q["id"]) for q in QUESTIONS},
       "doc_lines": ragtrail_doc_lines(), "times": {}}


def lap(name, t):
    OUT["times"][name] = round(time.time() - t, 2)
    print(f"{name}: {OUT['times'][name]}s", file=sys.stderr, flush=True)


