"""Regenerate the ProRAG RL-stage parity sets (test/fixtures/parity-rl/prorag_*/dev.jsonl).

Drives the authors' code of lilinwz/ProRAG at c7a64110 with seeded inputs of our own:
  prorag_rl_advantage    `prorag/rl/trainer.py` `RAGTrainer._generate_and_score_completions`: the outcome advantage
                         (r - group mean) / (group std + 1e-4) plus prm_beta times the step advantage normalised over
                         the group's valid tokens. The real method runs on `object.__new__(RAGTrainer)`: `_generate`
                         returns the case's completions (token masks and per-token PRM scores, as the rollout
                         function leaves them in `extra_fields`), `_calculate_rewards` the case's outcome rewards,
                         and the accelerator is one CPU process (gather and pad_across_processes are the identity).
  prorag_prm_score       `prorag/rl/rollout.py` `rag_rollout_with_prm` with the real `RAGTrainer.get_prm_score`: the
                         per-token step scores sigmoid(PRM logit) + format_reward_step(step text). vLLM is a scripted
                         stand-in that returns each row's next hop, the retriever returns seeded documents, the
                         PRM is a stand-in whose logit (bfloat16, as train.py loads it, or float32) is drawn per call,
                         and the tokenizer gives one token per whitespace-separated word.
  prorag_rft_filter_em   `prorag/rft/filter_em.py` `main(args)`: which sampled trajectories are kept (final answer
                         equal to the gold one after lower()); vLLM and the retriever are scripted stand-ins.
  prorag_rft_filter_prm  `prorag/rft/filter_prm.py` `main(args)`: which (input, output) steps are kept (PRM logit >= 0,
                         read in bfloat16); the tokenizer and the sequence-classification model are stand-ins whose
                         logit for each text is the case's.
Nothing of the authors' code is copied here: the modules are loaded at run time from a checkout. The `main`
functions read and write files; they run in a temporary folder and their files are read back.

    git clone https://github.com/lilinwz/ProRAG && git -C ProRAG checkout c7a64110d0c900561fde4292f234b97dfe633e94
    python -m venv /tmp/venv && /tmp/venv/bin/pip install torch numpy trl accelerate transformers tqdm
    /tmp/venv/bin/python scripts/parity/prorag_rl.py --repo ProRAG --out test/fixtures/parity-rl

trainer.py imports TRL (the authors pin 0.26.0; these files were made with the TRL named in each SOURCE.md:
the statements under test use only its `pad`) and accelerate's `gather_object`. vllm, aiohttp and requests
(imported for generation and the remote retriever, never called here) are given empty stand-ins when missing.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import importlib.util
import io
import json
import math
import os
import random
import struct
import sys
import tempfile
import types
import warnings

import torch

from parity_io import num, write_jsonl

SEED = 4546


# ------------------------------------------------------------------------------------------ loading


def stub(name: str, **attrs):
    try:
        __import__(name)
    except ImportError:
        mod = types.ModuleType(name)
        mod.__dict__.update(attrs)
        sys.modules[name] = mod


class SamplingParams:
    """vLLM's SamplingParams as a record of its keyword arguments (no generation happens here)."""

    def __init__(self, **kwargs):
        self.kwargs = kwargs


def load(repo: str):
    def module(dotted: str, rel: str):
        spec = importlib.util.spec_from_file_location(dotted, os.path.join(repo, rel))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[dotted] = mod
        spec.loader.exec_module(mod)
        return mod

    sys.path[:0] = [repo, os.path.join(repo, "prorag", "rl")]  # rollout.py imports `reward` from its own folder
    trainer = module("trainer", "prorag/rl/trainer.py")  # first: TRL looks vllm up with find_spec, which a stand-in fails
    stub("vllm", SamplingParams=SamplingParams, LLM=type("LLM", (), {}))
    sys.modules["vllm"].SamplingParams = SamplingParams  # the rollout only builds one
    stub("aiohttp")
    stub("requests")
    return types.SimpleNamespace(
        trainer=trainer,
        rollout=module("rollout", "prorag/rl/rollout.py"),
        filter_em=module("prorag.rft.filter_em", "prorag/rft/filter_em.py"),
        filter_prm=module("prorag.rft.filter_prm", "prorag/rft/filter_prm.py"),
    )


def f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0] if math.isfinite(x) else x


def error(e: Exception) -> dict:
    return {"error": type(e).__name__, "message": str(e)}


# ---------------------------------------------------------------------------------------- advantage


class Accelerator:
    """One CPU process: gathering and padding across processes change nothing."""

    device = torch.device("cpu")
    process_index = 0

    def gather(self, t):
        return t

    def pad_across_processes(self, t, dim=0, pad_index=0):
        return t


class Decoder:
    def batch_decode(self, ids, skip_special_tokens=False):
        return [" ".join(str(int(i)) for i in row) for row in ids]


def make_trainer(RAGTrainer, **attrs):
    t = object.__new__(RAGTrainer)
    t.__dict__.update(
        accelerator=Accelerator(), model=types.SimpleNamespace(training=True, is_gradient_checkpointing=False),
        args=types.SimpleNamespace(per_device_train_batch_size=1, per_device_eval_batch_size=1, steps_per_generation=1,
                                   gradient_accumulation_steps=1, gradient_checkpointing_kwargs=None),
        num_iterations=1, use_vllm=False, vllm_importance_sampling_correction=False, pad_token_id=0,
        processing_class=Decoder(), reward_func_names=["outcome_reward"], reward_weights=torch.tensor([1.0]),
        _metrics={"train": collections.defaultdict(list), "eval": collections.defaultdict(list)},
        _logs={"prompt": [], "completion": [], "rewards": collections.defaultdict(list), "advantages": []},
    )
    t.__dict__.update(attrs)
    return t


def outcome_value(rng: random.Random, style: str) -> float:
    """prorag/rl/reward.py outcome_reward's range: (0 or 2·F1 with F1 >= 0.2) + (+1 / -1 format)."""
    if style == "odd":
        return rng.choice([0.0, 1e-8, -1e-8, 1e6, -1e6, 0.1 + 0.2, 3.5, -3.0])
    if style == "ties":
        return rng.choice([1.0, -1.0])
    f1 = rng.choice([0.0, 0.0, 1.0, 0.5, 2 / 3, 0.4, 0.25, 0.8, round(rng.uniform(0.2, 1), 4)])
    return (0.0 if f1 < 0.2 else 2 * f1) + rng.choice([1.0, -1.0])


def step_value(rng: random.Random, style: str) -> float:
    """rollout.py's step score: sigmoid(PRM logit) + format_reward_step (which returns -2 at this commit)."""
    if style == "odd":
        return rng.choice([0.0, 1e-7, -1e-7, 1e5, -2.0, 0.5, 1.5, float("nan"), float("inf")])
    if style == "ties":
        return rng.choice([-1.5, -1.0])
    s = 1 / (1 + math.exp(-rng.gauss(0, 3)))
    return s + (-2.0 if rng.random() < 0.7 else 1.0)


def advantage_cases(RAGTrainer, rng: random.Random, n: int):
    out = []
    for k in range(n):
        g = [8, 8, 8, 2, 3, 4, 5, 1][k % 8]  # ProRAG's run: num_generations 8
        groups = 1 if g == 8 else rng.randint(1, 3)
        beta = [0.5, 0.5, 0.3, 1.0, 0.0, 0.05, 0.5][k % 7]
        ostyle = ["normal", "normal", "ties", "odd"][k % 4]
        sstyle = ["normal", "normal", "ties", "normal", "odd"][k % 5]
        if sstyle == "odd" and k % 3:  # NaN and inf now and then, not in every odd case
            sstyle = "odd-finite"
        rows = []
        for i in range(groups * g):
            mask, scores = [], []
            for _ in range(rng.choice([0, 1, 1, 2, 2, 3]) if g < 8 else rng.choice([1, 1, 2])):
                s = step_value(rng, ("odd" if rng.random() < 0.3 else "normal") if sstyle.startswith("odd") else sstyle)
                if sstyle == "odd-finite" and not math.isfinite(s):
                    s = 0.25
                gen = rng.choice([1, 1, 2, 3]) if rng.random() < 0.93 else 0  # a hop of no tokens now and then
                tail = rng.choice([1, 1, 2])
                mask += [1] * gen + [0] * tail
                scores += [f32(s)] * gen + [0.0] * tail
            rows.append({"outcome": f32(outcome_value(rng, ostyle)), "mask": mask, "scores": scores})
        if k % 6 == 1:  # a group whose step scores are all alike
            for r in rows[:g]:
                r["scores"] = [0.5 if m else 0.0 for m in r["mask"]]
        if k % 9 == 2:  # a group whose outcomes are all alike
            for r in rows[:g]:
                r["outcome"] = rows[0]["outcome"]
        out.append(run_advantage(RAGTrainer, k, g, beta, rows))
    return out


def run_advantage(RAGTrainer, k: int, g: int, beta: float, rows):
    masks, scores = [r["mask"] for r in rows], [r["scores"] for r in rows]
    ids = [[5] * len(m) for m in masks]

    def generate(prompts):
        return ([[1, 2]] * len(prompts), ids, None, ["c"] * len(prompts), sum(map(len, ids)),
                [[0.0] * len(m) for m in masks], {"rag_mask": masks, "prm_scores": scores})

    rewards = torch.tensor([[r["outcome"]] for r in rows], dtype=torch.float32)
    trainer = make_trainer(RAGTrainer, prm_beta=beta, num_generations=g, num_generations_eval=g)
    trainer._generate = generate
    trainer._calculate_rewards = lambda inputs, prompts, completions, ids_list: rewards
    case = {"id": f"prorag-adv-{k:04d}", "num_generations": g, "prm_beta": beta,
            "outcome": [r["outcome"] for r in rows], "mask": masks, "scores": [[num(s) for s in r] for r in scores]}
    try:
        o = trainer._generate_and_score_completions([{"prompt": "p"} for _ in rows])
        case["expected"] = {"advantages": [[num(v) for v in r] for r in o["advantages"].tolist()]}
    except Exception as e:  # noqa: BLE001 - the authors' exception is the expected value
        case["expected"] = error(e)
    return case


# ---------------------------------------------------------------------------------------- PRM score


class Encoder:
    """Tokenizer stand-in: one token per whitespace-separated word (str.split)."""

    def encode(self, text, add_special_tokens=True):
        return [len(w) for w in text.split()]


class PrmTokenizer:
    def __call__(self, text, return_tensors=None, truncation=False, max_length=None):
        enc = {"text": text}
        return types.SimpleNamespace(to=lambda device: enc)


class PrmModel:
    """The PRM: a logit per call, drawn from the case's list in order; logits of shape [1, 1] in the case's dtype."""

    def __init__(self, logits, dtype):
        self.logits, self.dtype, self.seen = list(logits), dtype, []

    def __call__(self, text):
        self.seen.append(text)
        return types.SimpleNamespace(logits=torch.tensor([[self.logits[len(self.seen) - 1]]], dtype=self.dtype))


class Output:
    def __init__(self, text, n_tokens):
        self.outputs = [types.SimpleNamespace(text=text, token_ids=list(range(7, 7 + n_tokens)), logprobs=None)]


class LLM:
    """vLLM stand-in: call t returns hop t of each row's script (an empty hop once a script is used up)."""

    def __init__(self, scripts):
        self.scripts, self.calls = scripts, 0

    def generate(self, texts, sampling_params, use_tqdm=False):
        assert len(texts) == len(self.scripts)
        hop = self.calls
        self.calls += 1
        return [Output(*(s[hop] if hop < len(s) else ("", 0))) for s in self.scripts]


class Retriever:
    """The retriever: the case's document text for a query it knows, a fixed one otherwise; `served` records them."""

    def __init__(self, docs):
        self.docs, self.served = docs, {}

    def batch_search(self, queries):
        for q in queries:
            self.served[q] = self.docs.get(q, "Doc 1(Title: none) nothing\n")
        return [self.served[q] for q in queries]


WORDS = ["Paris", "capital", "of", "France", "river", "1889", "Eiffel", "Ünïcödé", "日本", "x", "Q:", "-", "naïve", "𝔘"]


def hop_text(rng: random.Random, kind: str, query: str) -> str:
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 4)))
    step = f"{words}\n</step>\n"
    if kind == "search":
        return f"{step}<subquery>{query}</subquery>"
    if kind == "sub":
        return f"{step}<subanswer>{words}</subanswer>"
    if kind == "answer":
        return f"{step}<answer>{words}</answer>"
    return rng.choice([
        words, "", f"{step}</subquery>", f"<subquery>{query}</subquery><answer>x</answer>", f"<step>{step}<subanswer>a</subanswer>",
        f"{step}<SUBQUERY>{query}</SUBQUERY>", f"{step}<subquery>  {query}\n</subquery> trailing", f"{step}<answer>x</answer><|im_end|>",
        f"{step}<subquery></subquery>",
    ])


def logit(rng: random.Random) -> float:
    return rng.choice([0.0, 1e-3, -1e-3, 40.0, -40.0, 100.0, -100.0, 1e-40, -1e-40, round(rng.gauss(0, 2), 5),
                       round(rng.gauss(0, 2), 5), round(rng.gauss(0, 6), 5), float("inf"), float("-inf"), float("nan")]
                      if rng.random() < 0.4 else [round(rng.gauss(0, 3), 6)])


def by_row(prompts, texts, values=None):
    """The PRM's calls grouped by row, in order. Each text is recorded as what it adds to the row's previous
    scored text (the prompt before the first): they grow hop by hop, and whole they would fill megabytes."""
    rows = [[] for _ in prompts]
    last = list(prompts)
    for j, text in enumerate(texts):
        r = next(r for r, p in enumerate(prompts) if text.startswith(p))
        assert text.startswith(last[r])
        rows[r].append(text[len(last[r]):] if values is None else values[j])
        last[r] = text
    return rows


def prm_cases(mods, rng: random.Random, n: int):
    RAGTrainer = mods.trainer.RAGTrainer
    out = []
    for k in range(n):
        rows = rng.randint(1, 3)
        dtype = torch.float32 if k % 4 == 3 else torch.bfloat16  # train.py loads the PRM in bfloat16
        with_prm = k % 13 != 5
        prompts, scripts, docs = [], [], {}
        for r in range(rows):
            prompts.append(rng.choice(["<|im_start|>user\nQ?<|im_end|>\n<|im_start|>assistant\n<think>\n</think>\n<step>\n", "p", ""]) + f"#{r}")
            hops = 12 if k % 40 == 7 else rng.randint(1, 5)
            script = []
            for h in range(hops):
                kind = "answer" if h == hops - 1 and rng.random() < 0.8 else rng.choice(["search", "search", "sub", "odd"])
                query = rng.choice(["who built it", " Eiffel  tower ", "日本 capital", "", "a\nb"])
                docs.setdefault(query.strip(), rng.choice(["Doc 1(Title: A) a b c\n", "", "Doc 1(Title: 𝔘) x\nDoc 2(Title: B) y\n"]))
                script.append((hop_text(rng, kind, query), rng.choice([0, 1, 2, 3])))
            scripts.append(script)
        logits = [logit(rng) for _ in range(rows * 12)]
        trainer = make_trainer(RAGTrainer, reward_processing_classes=[PrmTokenizer()])
        prm = PrmModel(logits, dtype)
        trainer.prm_model = (lambda **inputs: prm(inputs["text"])) if with_prm else None
        host = types.SimpleNamespace(
            min_p=None, max_completion_length=64, args=types.SimpleNamespace(generation_kwargs=None, vllm_enable_sleep_mode=False),
            vllm_tensor_parallel_size=1, llm=LLM(scripts), retriever=(retriever := Retriever(docs)), processing_class=Encoder(),
            get_prm_score=trainer.get_prm_score,
        )
        case = {"id": f"prorag-prm-{k:04d}", "prm_dtype": str(dtype).replace("torch.", "") if with_prm else None,
                "prompts": prompts, "hops": [[{"text": t, "tokens": c} for t, c in s] for s in scripts]}
        try:
            o = mods.rollout.rag_rollout_with_prm(prompts, host)
            case["expected"] = {"scored": by_row(prompts, prm.seen) if with_prm else None, "prm_scores": [[num(x) for x in r] for r in o["prm_scores"]],
                                "rag_mask": o["rag_mask"], "completion_tokens": [len(r) for r in o["completion_ids"]]}
        except Exception as e:  # noqa: BLE001
            case["expected"] = error(e)
        case["logits"] = by_row(prompts, prm.seen, [num(x) for x in logits[: len(prm.seen)]])  # the PRM's outputs
        case["docs"] = dict(sorted(retriever.served.items()))  # what the retriever returned for each query it was asked
        out.append(case)
    return out


# ------------------------------------------------------------------------------------ RFT: EM filter


def em_cases(mods, rng: random.Random, n: int):
    fe = mods.filter_em
    out = []
    for k in range(n):
        samples, scripts, docs = [], {}, {}
        for s in range(rng.randint(1, 3)):
            gold = rng.choice(["Paris", "paris", "PARIS ", "1889", "Max hops reached", "ǅemal", "İstanbul", "straße", "", "a  b", "Ｐａｒｉｓ"])
            sample = {"id": f"s{k}-{s}", "question": f"Q{k}-{s}: {rng.choice(['where?', 'who', '日本?', ''])}", "answer": gold}
            if rng.random() < 0.15:
                sample = {"id": sample["id"], "Question": sample["question"], "Answer": gold}
            samples.append(sample)
            hops = rng.randint(1, 5) if k % 25 != 3 else 14
            script = []
            for h in range(hops):
                kind = "answer" if h == hops - 1 and rng.random() < 0.85 else rng.choice(["search", "search", "sub", "odd"])
                query = rng.choice(["who built it", " Eiffel  tower ", "日本 capital", "", "x\ny"])
                docs.setdefault(query.strip(), rng.choice(["Doc 1(Title: A) a b c\n", "", "  \n", "Doc 1(Title: 𝔘) x\n"]))
                text = hop_text(rng, kind, query)
                if kind == "answer" and rng.random() < 0.6:
                    pred = rng.choice([gold, gold.upper(), gold.lower(), f" {gold} ", "Paris", "paris.", "", "ǆemal", "i̇stanbul", "STRASSE"])
                    text = text.split("<answer>")[0] + f"<answer>{pred}</answer>"
                script.append(text)
            scripts[sample["id"]] = script
        max_iter = [13, 13, 13, 1, 2, 3, 4][k % 7]  # filter_em.py's default: 13 hops
        out.append(run_em(fe, k, samples, scripts, docs, max_iter, rng.choice([1, 2, 1024])))
    return out


def run_em(fe, k, samples, scripts, docs, max_iter, batch_size):
    states = {}

    class EmLLM:
        def __init__(self, *a, **kw):
            pass

        def generate(self, prompts, sampling_params, use_tqdm=True):
            outs = []
            for p in prompts:
                sid = next(i for i, start in states.items() if p.startswith(start[0]))
                hop = states[sid][1]
                states[sid][1] += 1
                text = scripts[sid][hop] if hop < len(scripts[sid]) else ""
                outs.append(types.SimpleNamespace(outputs=[types.SimpleNamespace(text=text)]))
            return outs

    retriever = Retriever(docs)

    class EmRetriever:
        def __init__(self, *a, **kw):
            pass

        def batch_search(self, queries):
            return retriever.batch_search(queries)

    real_state = fe.RequestState

    def request_state(sample, retriever):
        s = real_state(sample, retriever)
        states[s.id] = [s.prompt, 0]
        return s

    fe.LLM, fe.RemoteRetriever, fe.RequestState = EmLLM, EmRetriever, request_state
    fe.SamplingParams = SamplingParams
    case = {"id": f"prorag-em-{k:04d}", "max_iter": max_iter, "samples": samples, "hops": scripts}
    with tempfile.TemporaryDirectory() as d:
        data = os.path.join(d, "in.jsonl")
        with open(data, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(s, ensure_ascii=False) + "\n" for s in samples)
        args = types.SimpleNamespace(model_path="m", data_path=data, output_path=os.path.join(d, "out.jsonl"),
                                     holdout_path=os.path.join(d, "h", "holdout.jsonl"), batch_size=batch_size, sample_size=0,
                                     max_seq_length=64, max_iter=max_iter, temperature=0.8)
        random.seed(k)  # main() shuffles the samples; every sample has an id, so the order is all it changes
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):  # its prints and tqdm bars
                fe.main(args)
            kept = []
            if os.path.exists(args.output_path):
                with open(args.output_path, encoding="utf-8") as f:
                    kept = [json.loads(line) for line in f if line.strip()]
            # Each kept input is the sample's first prompt (the authors' template around the question) plus what the
            # hops added; only the addition is recorded: the template would be most of the file.
            for rec in kept:
                start = states[rec["id"]][0]
                assert rec["input"].startswith(start)
                rec["input"] = rec["input"][len(start):]
            case["docs"] = dict(sorted(retriever.served.items()))
            case["expected"] = {"kept": kept}
        except Exception as e:  # noqa: BLE001
            case["expected"] = error(e)
    return case


# ----------------------------------------------------------------------------------- RFT: PRM filter


def prm_filter_cases(mods, rng: random.Random, n: int):
    fp = mods.filter_prm
    out = []
    for k in range(n):
        eos = rng.choice(["<|im_end|>", "</s>", "<|endoftext|>"])
        pool = [("<step>\nQ", "a</step>"), ("ctx 日本", "<subquery>q</subquery>"), ("", ""), ("x", "y"), ("xy", ""), ("in\n", "out 𝔘")]
        items = []
        for i in range(rng.randint(1, 9)):
            inp, outp = rng.choice(pool) if rng.random() < 0.5 else (f"in{k}-{i} {rng.choice(WORDS)}", f"out{rng.randint(0, 3)}")
            item = {"id": f"{k}-{i}", "input": inp, "output": outp}
            if rng.random() < 0.1:
                item["prm_score"] = 9.0  # a stale field, overwritten
            items.append(item)
        existing = [dict(it, prm_score=1.0) for it in items if rng.random() < 0.2]
        table = {}
        for it in items:
            tiny = [0.0, -0.0, 1e-40, -1e-40, -1e-45, 3e-3, -3e-3]
            table.setdefault(it["input"] + it["output"] + eos, logit(rng) if rng.random() < 0.5 else rng.choice(tiny))  # drawn for repeats too
        dtype = torch.float32 if k % 5 == 4 else torch.bfloat16  # filter_prm.py loads the PRM in bfloat16
        out.append(run_prm_filter(fp, k, items, existing, table, eos, dtype, rng.choice([1, 2, 3, 16])))
    return out


def run_prm_filter(fp, k, items, existing, table, eos, dtype, batch_size):
    class Tokenizer:
        pad_token = None
        eos_token = eos

        @classmethod
        def from_pretrained(cls, *a, **kw):
            return cls()

        def __call__(self, texts, **kw):
            enc = {"texts": list(texts)}
            return types.SimpleNamespace(to=lambda device: enc)

    class Model:
        device = "cpu"

        @classmethod
        def from_pretrained(cls, *a, **kw):
            return cls()

        def eval(self):
            return self

        def __call__(self, texts):
            return types.SimpleNamespace(logits=torch.tensor([[table[t]] for t in texts], dtype=dtype))

    fp.AutoTokenizer, fp.AutoModelForSequenceClassification = Tokenizer, Model
    case = {"id": f"prorag-prmfilter-{k:04d}", "eos_token": eos, "prm_dtype": str(dtype).replace("torch.", ""), "batch_size": batch_size,
            "items": items, "existing": existing,
            "logits": [num(table[it["input"] + it["output"] + eos]) for it in items]}
    with tempfile.TemporaryDirectory() as d:
        data, output = os.path.join(d, "in.jsonl"), os.path.join(d, "o", "out.jsonl")
        with open(data, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(it, ensure_ascii=False) + "\n" for it in items)
        if existing:
            os.makedirs(os.path.dirname(output))
            with open(output, "w", encoding="utf-8") as f:
                f.writelines(json.dumps(it, ensure_ascii=False) + "\n" for it in existing)
        args = types.SimpleNamespace(model_path="m", data_path=data, output_path=output, batch_size=batch_size, max_length=4096)
        try:
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                fp.main(args)
            with open(output, encoding="utf-8") as f:
                written = [json.loads(line) for line in f if line.strip()][len(existing):]
            case["expected"] = {"written": [dict(w, prm_score=num(w["prm_score"])) for w in written]}
        except Exception as e:  # noqa: BLE001
            case["expected"] = error(e)
    return case


# ---------------------------------------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", required=True, help="a checkout of lilinwz/ProRAG at c7a64110")
    ap.add_argument("--out", default="test/fixtures/parity-rl")
    ap.add_argument("--n", type=int, default=240, help="cases per set")
    args = ap.parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore", message="std\\(\\): degrees of freedom")  # a group of one: NaN, recorded as such
    mods = load(os.path.abspath(args.repo))
    sets = {
        "prorag_rl_advantage": advantage_cases(mods.trainer.RAGTrainer, random.Random(SEED), args.n),
        "prorag_prm_score": prm_cases(mods, random.Random(SEED + 1), args.n),
        "prorag_rft_filter_em": em_cases(mods, random.Random(SEED + 2), args.n),
        "prorag_rft_filter_prm": prm_filter_cases(mods, random.Random(SEED + 3), args.n),
    }
    for name, cases in sets.items():
        write_jsonl(os.path.join(args.out, name, "dev.jsonl"), cases, ensure_ascii=False, allow_nan=False)
        raising = sum("error" in c["expected"] for c in cases)
        print(f"{name}: {len(cases)} cases ({raising} raising)")
    import trl

    print(f"python {sys.version.split()[0]}, torch {torch.__version__}, trl {trl.__version__}")


if __name__ == "__main__":
    main()
