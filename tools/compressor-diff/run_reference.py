"""Runs the reference compressors, their code unmodified, on the fixtures and the shared tiny model, and
writes out/reference.json:

  - Selective-Context: the authors' package (liyucheng09/Selective_Context, `selective_context`) and
    FlashRAG's copy (flashrag/refiner/selective_context_compressor.py, through FlashRAG's
    SelectiveContextRefiner.batch_run), at the sentence, phrase and token levels, reduce ratio 0.5, on
    two inputs: FlashRAG's document format (its refiner's format_reference) and ragtrail's own lines
    (out/doc_lines.json: docLines of the tree under test, which since ragtrail's fix of B2 writes
    FlashRAG's format, so the two inputs are the same text but FlashRAG's final line break); and the
    authors' sentence split on fixtures.SPLIT_PROBES;
  - LongLLMLingua: the authors' package (microsoft/LLMLingua, `llmlingua.PromptCompressor`, model_name =
    the tiny model, device_map="cpu") with the settings FlashRAG passes, on ragtrail's document lines
    and through FlashRAG's LLMLinguaRefiner.batch_run (its own document format); FlashRAG's copy of the
    compressor (flashrag/refiner/llmlingua_compressor.py) on ragtrail's lines as a check;
  - RECOMP: the exact inputs FlashRAG's AbstractiveRecompRefiner builds for its T5, and FlashRAG's
    ExtractiveRefiner.batch_run (top 2 and top 5) with the stand-in encoder (standin.py).

Only the environment is stubbed (nothing of the references' own code is changed):
  1. spaCy's English models cannot be downloaded: spacy.load returns a blank English pipeline (a
     tokenizer only; the merge_noun_chunks pipe the references add is a no-op without a parser);
  2. tiktoken's BPE files cannot be downloaded: encoding_for_model returns a character-level encoder
     (LLMLingua uses it only for the token counts it reports, never to decide what is kept);
  3. no GPU: Module.to("cuda") moves to the CPU (FlashRAG's Selective-Context calls .to("cuda"));
  4. transformers 5 no longer takes or returns the legacy tuple KV cache that LLMLingua slices past its
     first 200-token window (LLMLingua issue #215): the model's forward converts a list/tuple cache to a
     DynamicCache and hands the cache back as a tuple of (key, value) pairs, as transformers <= 4.4x did;
  5. FlashRAG's package __init__ files import its retrievers (faiss, ...): empty packages stand in for
     `flashrag`, `flashrag.refiner` and `flashrag.retriever`; the refiner modules are loaded from their files;
     FlashRAG's Encoder (a HF model) is the stand-in encoder, its T5 is a recorder of its inputs.
The authors' Selective-Context loads GPT2Tokenizer/GPT2LMHeadModel 'gpt2' from the working directory:
ref/gpt2 is a link to the tiny model. Wrappers around a few methods record what they return (the
document ranking, the documents kept, each sentence's token scores) without changing it.

    python run_reference.py            (after make_model.py; writes out/reference.json)"""
import functools, json, os, sys, time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from refenv import (DATA, FLASHRAG, HERE, MODEL, OUT, QUESTIONS, REF, Dataset, StandinEncoder, _load, _package, lap)  # noqa: E402  (installs the stubs)

T0 = time.time()

# ---------------------------------------------------------------------------- Selective-Context
refiner_mod = _load("flashrag.refiner.refiner", os.path.join(FLASHRAG, "flashrag", "refiner", "refiner.py"))
fr_sc_mod = _load("flashrag.refiner.selective_context_compressor", os.path.join(FLASHRAG, "flashrag", "refiner", "selective_context_compressor.py"))

t = time.time()
cwd = os.getcwd()
os.chdir(REF)  # the authors' package loads 'gpt2' from here (ref/gpt2 -> ../model)
import selective_context  # noqa: E402

authors_sc = selective_context.SelectiveContext(model_type="gpt2", lang="en")
os.chdir(cwd)
fr_sc = fr_sc_mod.SelectiveContext(model_type="gpt2", model_path=MODEL, lang="en")


def record_sc(sc):
    """Wraps the instance's scoring and unit building to record, per sentence, its tokens with their
    self-information and its phrase units with theirs (the returned values are unchanged)."""
    log = []
    get = sc.get_self_information
    calc = sc._calculate_lexical_unit

    def get_info(text):
        tokens, info = get(text)
        log.append({"sentence": text, "tokens": tokens, "self_info": info})
        return tokens, info

    def calc_units(tokens, info):
        units, unit_info = calc(tokens, info)
        log[-1]["units"], log[-1]["unit_info"] = list(units), [float(x) for x in unit_info]
        return units, unit_info

    sc.get_self_information, sc._calculate_lexical_unit = get_info, calc_units
    return log, (get, calc)


def run_sc(sc, text, level):
    log, originals = record_sc(sc)
    try:
        kept, masked = sc(text, reduce_ratio=0.5, reduce_level=level)
        res = {"kept": kept, "masked": masked}
    except Exception as e:  # FlashRAG's sentence level: see the report
        res = {"error": f"{type(e).__name__}: {e}"}
    res["sentences"] = log
    res["threshold"] = float(getattr(sc, "ppl_threshold", float("nan")))
    sc.get_self_information = originals[0]
    del sc._calculate_lexical_unit  # the bound method of the class again
    return res


sc_out = {}
for q in QUESTIONS:
    qid = q["id"]
    fr_text = refiner_mod.SelectiveContextRefiner.format_reference(None, DATA[[x.id for x in DATA].index(qid)].retrieval_result)
    rt_text = "\n".join(OUT["doc_lines"][qid])
    sc_out[qid] = {"input_flashrag": fr_text, "input_ragtrail": rt_text}
    for level in ("sent", "phrase", "token"):
        sc_out[qid][f"authors/ragtrail-input/{level}"] = run_sc(authors_sc, rt_text, level)
        sc_out[qid][f"authors/flashrag-input/{level}"] = run_sc(authors_sc, fr_text, level)
# FlashRAG's own entry point: SelectiveContextRefiner.batch_run (its default sc_config, reduce_ratio 0.5: phrase level)
fr_refiner = refiner_mod.SelectiveContextRefiner.__new__(refiner_mod.SelectiveContextRefiner)
fr_refiner.refiner = fr_sc
for level in ("sent", "phrase", "token"):
    fr_refiner.compress_config = {"reduce_ratio": 0.5, "reduce_level": level}
    for qid, item in zip([x.id for x in DATA], DATA):
        sc_out[qid][f"flashrag/flashrag-input/{level}"] = run_sc(fr_sc, refiner_mod.SelectiveContextRefiner.format_reference(None, item.retrieval_result), level)
    try:
        batch = fr_refiner.batch_run(DATA)
    except Exception as e:
        batch = [f"ERROR {type(e).__name__}: {e}"] * len(DATA)
    for qid, text in zip([x.id for x in DATA], batch):
        sc_out[qid][f"flashrag/batch_run/{level}"] = text
    for q in QUESTIONS:
        sc_out[q["id"]][f"flashrag/ragtrail-input/{level}"] = run_sc(fr_sc, "\n".join(OUT["doc_lines"][q["id"]]), level)
OUT["selective_context"] = sc_out
# The sentence-split probe: the authors' own steps of __call__ (beautify_context, its pattern, strip, drop empty).
from fixtures import SPLIT_PROBES  # noqa: E402
OUT["split_probe"] = [[x.strip() for x in __import__("re").split(authors_sc.sent_tokenize_pattern, authors_sc.beautify_context(t)) if x.strip()] for t in SPLIT_PROBES]
lap("selective-context", t)

# --------------------------------------------------------------------------------- LongLLMLingua
t = time.time()
import llmlingua  # noqa: E402

FLASHRAG_LLMLINGUA = {"rate": 0.55, "condition_in_question": "after_condition", "reorder_context": "sort",
                      "dynamic_context_compression_ratio": 0.3, "condition_compare": True, "context_budget": "+100",
                      "rank_method": "longllmlingua"}
LL_LOG = []


def wrap_method(cls, name, record):
    orig = getattr(cls, name)

    @functools.wraps(orig)
    def wrapper(self, *a, **k):
        res = orig(self, *a, **k)
        record(a, k, res)
        return res

    setattr(cls, name, wrapper)


def wrap_llmlingua(cls):
    wrap_method(cls, "get_rank_results", lambda a, k, res: LL_LOG.append({"rank": [[int(i), float(p)] for i, p in res]}))
    wrap_method(cls, "control_context_budget", lambda a, k, res: LL_LOG.append({"used": [int(i) for i in res[2]], "dynamic_ratio": [float(x) for x in res[1]]}))
    wrap_method(cls, "get_dynamic_compression_ratio", lambda a, k, res: LL_LOG.append({"windows": [[[int(n), float(r)] for n, r in w] for w in res], "target_token": float(a[1]), "start": int(a[4])}))
    wrap_method(cls, "get_compressed_input", lambda a, k, res: LL_LOG.append({"chunk_end": int(a[3]) if len(a) > 3 else int(k.get("end")), "chunk_size": int(k.get("iterative_size")), "threshold": float(k.get("threshold")), "kept_len": int(res[0].shape[1])}))


wrap_llmlingua(llmlingua.PromptCompressor)
pc = llmlingua.PromptCompressor(model_name=MODEL, device_map="cpu")


def ll_run(compressor, qid, context):
    LL_LOG.clear()
    res = compressor.compress_prompt(context, instruction="", question=DATA[[x.id for x in DATA].index(qid)].question, **FLASHRAG_LLMLINGUA)
    return {"compressed_prompt": res["compressed_prompt"], "log": [dict(x) for x in LL_LOG],
            "input_ids": compressor.tokenizer("\n\n".join(context), add_special_tokens=False).input_ids}


ll_out = {}
for q in QUESTIONS:
    ll_out[q["id"]] = {"authors/ragtrail-input": ll_run(pc, q["id"], OUT["doc_lines"][q["id"]])}
# FlashRAG's LLMLinguaRefiner over the authors' PromptCompressor (FlashRAG builds it with device "cuda": here "cpu")
_package("flashrag.refiner.llmlingua_compressor").PromptCompressor = functools.partial(llmlingua.PromptCompressor, device_map="cpu")
fr_ll = refiner_mod.LLMLinguaRefiner({"refiner_name": "longllmlingua", "refiner_model_path": MODEL, "device": "cpu"})
OUT["flashrag_llmlingua_config"] = fr_ll.compress_config
for item in DATA:
    LL_LOG.clear()
    text = fr_ll.batch_run([item])[0]
    ll_out[item.id]["flashrag/batch_run"] = {"compressed_prompt": text, "log": [dict(x) for x in LL_LOG],
                                            "context": [i for i in fr_ll.format_reference(item.retrieval_result).split("\n") if i != ""]}
lap("longllmlingua", t)
t = time.time()
# FlashRAG's own copy of the compressor, on ragtrail's lines: the same code path, reformatted
fr_ll_mod = _load("flashrag.refiner.llmlingua_compressor", os.path.join(FLASHRAG, "flashrag", "refiner", "llmlingua_compressor.py"))
wrap_llmlingua(fr_ll_mod.PromptCompressor)
fr_pc = fr_ll_mod.PromptCompressor(model_name=MODEL, device_map="cpu")
for q in QUESTIONS:
    ll_out[q["id"]]["flashrag-copy/ragtrail-input"] = ll_run(fr_pc, q["id"], OUT["doc_lines"][q["id"]])
OUT["longllmlingua"] = ll_out
lap("longllmlingua-flashrag-copy", t)

# ----------------------------------------------------------------------------------------- RECOMP
t = time.time()


class RecordingT5Tokenizer:
    """Stands in for FlashRAG's T5 tokenizer: records the strings it is given."""

    def __init__(self):
        self.inputs = []

    def __call__(self, texts, **kw):
        self.inputs.extend(texts)
        n = len(texts)

        class Batch(dict):
            def to(self, device):
                return self

        return Batch(input_ids=torch.zeros((n, 1), dtype=torch.long), settings={k: v for k, v in kw.items() if k != "return_tensors"})

    def batch_decode(self, outputs, **kw):
        return [""] * len(outputs)


class NullT5:
    def generate(self, input_ids=None, settings=None, **kw):
        return [[0]] * input_ids.shape[0]


abs_ref = refiner_mod.AbstractiveRecompRefiner.__new__(refiner_mod.AbstractiveRecompRefiner)
abs_ref.tokenizer, abs_ref.model, abs_ref.device = RecordingT5Tokenizer(), NullT5(), "cpu"
abs_ref.max_input_length, abs_ref.max_output_length = 512, 512
abs_ref.batch_run(DATA)
OUT["recomp_abstractive"] = {item.id: s for item, s in zip(DATA, abs_ref.tokenizer.inputs)}

ext = {}
for unit in (True, False):
    for topk in (2, 5):
        r = refiner_mod.ExtractiveRefiner.__new__(refiner_mod.ExtractiveRefiner)
        r.topk, r.mini_batch_size, r.encoder = topk, 256, StandinEncoder(unit)
        kept = r.batch_run(DATA)
        sents = [c["texts"] for c in r.encoder.calls if not c["is_query"]]
        ext[f"{'unit' if unit else 'raw'}/top{topk}"] = {"kept": {item.id: k for item, k in zip(DATA, kept)}, "sentences_encoded": sents}
# the sentence lists per question (FlashRAG encodes them flattened over the batch)
r = refiner_mod.ExtractiveRefiner.__new__(refiner_mod.ExtractiveRefiner)
r.topk, r.mini_batch_size, r.encoder = 2, 256, StandinEncoder(True)
ext["sentences"] = {}
for item in DATA:
    r.encoder.calls.clear()
    r.batch_run(Dataset([item]))
    ext["sentences"][item.id] = [c["texts"] for c in r.encoder.calls if not c["is_query"]][0]
OUT["recomp_extractive"] = ext
lap("recomp", t)
OUT["times"]["total"] = round(time.time() - T0, 2)

os.makedirs(os.path.join(HERE, "out"), exist_ok=True)
with open(os.path.join(HERE, "out", "reference.json"), "w") as f:
    json.dump(OUT, f, indent=1, ensure_ascii=False)
print(f"wrote out/reference.json in {OUT['times']['total']}s", file=sys.stderr)
