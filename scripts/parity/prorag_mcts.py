"""Regenerate the ProRAG MCTS and PRM-label parity sets (test/fixtures/parity-rl/prorag_{mcts_puct,mcts_backprop,
mcts_terminal,prm_labels}/dev.jsonl).

Drives the search-tree and pair-labelling code of ProRAG (lilinwz/ProRAG) with seeded inputs of our own and
writes each input with what the authors' code returned (or the exception it raised):
  prorag_mcts_puct       prorag/prm/mcts.py  Node.select_best_child(c_puct) on a node with seeded children
  prorag_mcts_backprop   prorag/prm/mcts.py  Node.backpropagate(init_reward, gamma) on a seeded chain of Nodes
  prorag_mcts_terminal   prorag/prm/mcts.py  AsyncMCTS._compute_terminal_reward(action) and _is_terminal(state)
  prorag_prm_labels      prorag/prm/filter.py  normalize_mcts_q, format_check, traverse_and_collect_jobs, and a
                         judge reply turned into a preference pair: AsyncLLMEngine.run_batch (prorag/utils/llm.py)
                         with build_prompt and parse_result, its model call replaced by the case's reply

Nothing of the authors' code is copied here: the modules are imported from a checkout at run time.

    git clone https://github.com/lilinwz/ProRAG && git -C ProRAG checkout c7a64110d0c900561fde4292f234b97dfe633e94
    python3.11 -m venv /tmp/venv && /tmp/venv/bin/pip install numpy
    /tmp/venv/bin/python scripts/parity/prorag_mcts.py --repo ProRAG --out test/fixtures/parity-rl

The modules import openai, tqdm, tenacity, aiohttp and requests at module level for the search service and the
judge's API; none of them is used on the paths driven here, so where they are missing empty stand-ins are
registered (tenacity's `retry` as a decorator that returns the function unchanged; tqdm's `as_completed` as
asyncio's). Methods run on real objects: Nodes built with their constructor; the AsyncMCTS made with
`object.__new__` and given only `final_answer` (the constructor wants an API client and a retriever); the
AsyncLLMEngine made with `object.__new__`, its `_generate_single` (the API call) replaced on the instance by a
coroutine that returns the case's reply, `run_batch` writing to a fresh temporary file that is read back.
Python 3.11.7 with numpy (mcts.py imports it at module level); nothing else besides the checkout.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import io
import json
import math
import os
import random
import sys
import tempfile

from parity_io import generator_args, num, stub_missing, write_set

SEED = 4561


# ------------------------------------------------------------------------------------------ loading


def load(repo: str):
    """Import prorag.prm.mcts, prorag.prm.filter and prorag.utils.llm from the checkout."""

    class _Err(Exception):
        pass

    def _retry(*_a, **_k):
        return lambda f: f

    class _TqdmAsyncio:
        @staticmethod
        def as_completed(tasks, **_k):
            return asyncio.as_completed(tasks)

    stubs = {
        "openai": {"AsyncOpenAI": type("AsyncOpenAI", (), {}), "RateLimitError": _Err, "APIError": _Err},
        "tqdm": {"tqdm": _TqdmAsyncio},
        "tqdm.asyncio": {"tqdm": _TqdmAsyncio, "tqdm_asyncio": _TqdmAsyncio},
        "tenacity": {"retry": _retry, "stop_after_attempt": _retry, "wait_random_exponential": _retry,
                     "retry_if_exception_type": _retry},
        "aiohttp": {},
        "requests": {},
    }
    stub_missing(stubs)
    sys.path.insert(0, os.path.abspath(repo))
    mcts = importlib.import_module("prorag.prm.mcts")
    filt = importlib.import_module("prorag.prm.filter")
    llm = importlib.import_module("prorag.utils.llm")
    for mod in (mcts, filt, llm):
        if not os.path.abspath(mod.__file__).startswith(os.path.abspath(repo)):
            raise SystemExit(f"{mod.__name__} was imported from {mod.__file__}, not from the checkout")
    return mcts, filt, llm


def error(e: Exception) -> dict:
    return {"error": {"type": type(e).__name__, "message": str(e)}}


def enc(v):
    """A value for JSON with non-finite floats marked (a reason can hold NaN: Python's json.loads reads it)."""
    if isinstance(v, float) and not math.isfinite(v):
        return {"py_float": num(v)}
    if isinstance(v, list):
        return [enc(x) for x in v]
    if isinstance(v, dict):
        return {k: enc(x) for k, x in v.items()}
    return v


# ----------------------------------------------------------------------------------------- PUCT


def puct_cases(rng: random.Random, n: int):
    out = []
    for i in range(n):
        k = i % 8
        width = rng.choice([0, 1, 2, 2, 3, 4, 5, 5, 6]) if k != 7 else rng.randint(2, 5)
        prior_mode = rng.choice(["uniform", "uniform", "random", "zero", "one"])
        kids = []
        for _ in range(width):
            r = rng.random()
            nv = 0 if r < 0.3 else rng.randint(1, 3) if r < 0.7 else rng.randint(1, 60)
            mean = rng.choice([0.0, 1.0, 0.5, rng.random(), rng.random(), 0.99 ** rng.randint(1, 9), rng.uniform(-1, 3)])
            q = nv * mean if rng.random() < 0.85 else rng.uniform(-5, 5)
            if nv == 0 and rng.random() < 0.85:
                q = 0.0
            kids.append({"q": q, "n": nv})
        if prior_mode == "uniform":
            for c in kids:
                c["prior"] = 1.0 / width
        elif prior_mode == "random":
            w = [rng.random() for _ in kids]
            for c, x in zip(kids, w):
                c["prior"] = x / sum(w)
        else:
            for c in kids:
                c["prior"] = 0.0 if prior_mode == "zero" else 1.0
        parent = 1 + sum(c["n"] for c in kids) if rng.random() < 0.6 else rng.choice([0, 1, 2, rng.randint(0, 500)])
        c_puct = rng.choice([2.5, 2.5, 2.5, 1.0, 0.0, 1.414, 1e-9, 1e9, rng.uniform(0, 10)])
        if k == 1 and kids:  # exact ties: copies of one child
            kids = [dict(kids[0]) for _ in kids]
        elif k == 2 and kids:  # the same mean from different visit counts (Q / (N + 1e-8) is not quite the mean)
            mean = rng.choice([0.5, 1.0, 0.25, 0.75, 1 / 3])
            for c in kids:
                c["n"] = rng.randint(1, 8)
                c["q"] = c["n"] * mean
            if rng.random() < 0.5:
                c_puct = 0.0
        elif k == 3 and kids:  # all unvisited
            for c in kids:
                c["n"], c["q"] = 0, 0.0
            parent = rng.choice([0, 1, 2, 5])
        elif k == 4 and kids and rng.random() < 0.5:  # an unvisited child carrying Q (Q / 1e-8)
            c = rng.choice(kids)
            c["n"], c["q"] = 0, rng.choice([1e-9, -1e-9, 0.5, -0.5])
        elif k == 5 and kids and rng.random() < 0.4:  # non-finite values: no score beats −∞, or NaN never wins
            c = rng.choice(kids)
            field = rng.choice(["q", "prior", "c"])
            bad = rng.choice([math.inf, -math.inf, math.nan])
            if field == "c":
                c_puct = bad
            else:
                c[field] = bad
            if rng.random() < 0.4:
                for c in kids:
                    c["q"] = -math.inf
        elif k == 6 and kids:  # near-ties: scores a few ulps apart
            base = rng.random()
            for j, c in enumerate(kids):
                c["n"] = rng.randint(1, 4)
                c["q"] = c["n"] * (base + j * rng.choice([0.0, 1e-16, 1e-12, 5e-9]))
        out.append({"c_puct": c_puct, "parent_n": parent, "children": kids})
    return out


def run_puct(mcts, c):
    root = mcts.Node(state="s", depth=0)
    root.N = c["parent_n"]
    for j, k in enumerate(c["children"]):
        ch = mcts.Node(state=f"s{j}", parent=root, action=f"a{j}", prior=k["prior"], depth=1)
        ch.Q, ch.N = k["q"], k["n"]
        root.children.append(ch)
    try:
        best = root.select_best_child(c["c_puct"])
    except Exception as e:  # the exception is the fact to record
        return error(e)
    return {"expected": {"index": None if best is None else root.children.index(best)}}


def enc_puct(c):
    return {"c_puct": num(c["c_puct"]), "parent_n": c["parent_n"],
            "children": [{"q": num(k["q"]), "n": k["n"], "prior": num(k["prior"])} for k in c["children"]]}


# ------------------------------------------------------------------------------------- backprop


def backprop_cases(rng: random.Random, n: int):
    out = []
    for i in range(n):
        k = i % 6
        length = rng.randint(1, 12) if k != 5 else rng.randint(30, 80)
        chain = []
        for d in range(length):
            nv = 0 if rng.random() < 0.2 else rng.randint(1, 200 // (d + 1) + 1)
            chain.append({"q": nv * rng.random() if rng.random() < 0.9 else rng.uniform(-3, 3), "n": nv})
        gamma = rng.choice([0.99, 0.99, 0.99, 1.0, 0.9, 0.5, 0.0, rng.random(), 1.01])
        reward = rng.choice([0.0, 1.0, rng.random(), rng.random(), 2 / 3, 0.4, rng.uniform(-1, 3)])
        if k == 1:
            gamma = rng.choice([0.0, 1.0, -1.0, 2.0, 1e-200, 1e200, 0.1])
        elif k == 2:
            reward = rng.choice([1e308, -1e308, 5e-324, 1e-200, 1e200, 0.1, -0.0])
        elif k == 3 and rng.random() < 0.5:
            reward = rng.choice([math.inf, -math.inf, math.nan])
            if rng.random() < 0.5:
                gamma = rng.choice([0.0, 0.99, math.inf])
        elif k == 4:  # back up from a node in the middle: the nodes below are untouched
            pass
        start = length - 1 if k != 4 else rng.randint(0, length - 1)
        out.append({"gamma": gamma, "reward": reward, "start": start, "chain": chain})
    return out


def run_backprop(mcts, c):
    nodes, parent = [], None
    for d, k in enumerate(c["chain"]):
        node = mcts.Node(state=f"s{d}", parent=parent, action=f"a{d}", depth=d)
        node.Q, node.N = k["q"], k["n"]
        if parent is not None:
            parent.children.append(node)
        nodes.append(node)
        parent = node
    nodes[c["start"]].backpropagate(c["reward"], c["gamma"])
    return {"expected": {"chain": [{"q": num(x.Q), "n": x.N} for x in nodes]}}


def enc_backprop(c):
    return {"gamma": num(c["gamma"]), "reward": num(c["reward"]), "start": c["start"],
            "chain": [{"q": num(k["q"]), "n": k["n"]} for k in c["chain"]]}


# ------------------------------------------------------------------------------------- terminal

WORDS = ["Paris", "paris", "Paris.", "PARIS", "the", "The Beatles", "Barack Obama", "1984", "3.14", "U.S.", "yes", "no",
         "İstanbul", "istanbul", "ΣΟΦΟΣ", "σοφος", "straße", "STRASSE", "ǅ", "日本", "東京 都", "😀", "é", "é", "ﬁ",
         "\u00a0", "\u3000", "\x1c", "\u200b", "\ufeff", "\n", "\t", "  ", "", "constructor", "__proto__", "<b>", "&amp;"]
SPACES = ["", " ", "\n", "\t", "\r\n", "\u00a0", "\u2028", "\x1c", "\x85", "\u3000", "\u200b", "\ufeff", " \n "]


def phrase(rng: random.Random, lo: int = 0, hi: int = 4) -> str:
    return rng.choice([" ", "  ", "\n"]).join(rng.choice(WORDS) for _ in range(rng.randint(lo, hi)))


def terminal_cases(rng: random.Random, n: int):
    out = []
    for i in range(n):
        if i % 2 == 0:
            k = (i // 2) % 6
            gold = phrase(rng, 0, 3) if rng.random() < 0.8 else rng.choice(["Paris", "the Beatles", "", " ", "1984"])
            ans = rng.choice([gold, gold.upper(), gold.lower(), phrase(rng), f"{gold}.", f"{phrase(rng, 1, 2)} {gold}"])
            thought = phrase(rng, 0, 6)
            if k == 0:
                action = f"<step>\n{thought}</step>\n<answer>{rng.choice(SPACES)}{ans}{rng.choice(SPACES)}</answer>"
            elif k == 1:  # tag case, spacing, attributes: only the exact lower-case pair counts
                tag = rng.choice([("<ANSWER>", "</ANSWER>"), ("<Answer>", "</answer>"), ("<answer >", "</answer>"),
                                  ("<answer>", "</answer >"), ("<answer>", "<answer>"), ("answer>", "</answer>"),
                                  ("<answer>", "</answer>")])
                action = f"<step>\n{thought}</step>\n{tag[0]}{ans}{tag[1]}"
            elif k == 2:  # several answers, nested tags: the first, shortest match
                action = "".join(f"<answer>{rng.choice([ans, phrase(rng)])}</answer>{rng.choice(['', ' ', phrase(rng)])}"
                                 for _ in range(rng.randint(2, 3)))
                if rng.random() < 0.4:
                    action = f"<answer><answer>{ans}</answer></answer>"
            elif k == 3:  # an answer across lines, with retrieved text around it
                action = (f"<step>\n{thought}</step>\n<subquery>{phrase(rng)}</subquery>\n<retrieval>Doc 1(Title: "
                          f"{phrase(rng)}) {phrase(rng)}\n</retrieval>\n<answer>\n{ans}\n{phrase(rng)}\n</answer>")
            elif k == 4:  # no answer at all, an unclosed one, an empty one
                action = rng.choice([f"<step>\n{thought}</step>\n<subanswer>\n{ans}</subanswer>\n",
                                     f"<step>\n{thought}</step>\n<answer>\n{ans}", "", "<answer></answer>",
                                     f"<answer>{rng.choice(SPACES)}</answer>", f"</answer>{ans}<answer>"])
            else:  # repeated tokens: the Counter intersection
                w = rng.choice(WORDS[:12])
                action = f"<answer>{' '.join([w] * rng.randint(1, 4))} {phrase(rng, 0, 2)}</answer>"
                gold = " ".join([w] * rng.randint(1, 3)) + rng.choice(["", " " + phrase(rng, 0, 2)])
            out.append({"kind": "reward", "action": action, "final_answer": gold})
        else:
            k = (i // 2) % 4
            end = rng.choice(["<|im_end|>", "</answer>", "</subquery>", "</subanswer>", "</ANSWER>", "<|im_end|",
                              "</answer>.", "<|im_end|><|im_end|>", "</answer></step>", ""])
            body = rng.choice(["", "<step>\n", f"<step>\n{phrase(rng)}</step>\n<answer>{phrase(rng)}",
                               f"<|im_start|>assistant\n{phrase(rng)}"])
            if k == 0:
                state = body + end
            elif k == 1:  # whitespace after the end token (Python's strip: Unicode spaces, not U+200B / U+FEFF)
                state = body + end + rng.choice(SPACES) + rng.choice(SPACES)
            elif k == 2:  # whitespace before it
                state = rng.choice(SPACES) + end + rng.choice(SPACES)
            else:
                state = rng.choice(["", " ", "\n", "<|im_end|>", "</answer>", "\u200b</answer>", "</answer>\u200b",
                                    "</answer>\u2029", "<|im_end|>\x1f", "</answer>\u180e", "<|im_end|>\xa0\u205f"])
            out.append({"kind": "terminal", "state": state})
    return out


def run_terminal(mcts, c):
    m = object.__new__(mcts.AsyncMCTS)
    try:
        if c["kind"] == "reward":
            m.final_answer = c["final_answer"]
            return {"expected": num(m._compute_terminal_reward(c["action"]))}
        return {"expected": m._is_terminal(c["state"])}
    except Exception as e:  # the exception is the fact to record
        return error(e)


# ----------------------------------------------------------------------------------- PRM labels

THOUGHTS = ["I need the director first.", "Now find where he was born", "", "Use <b>bold</b> here", "x < y > z",
            "Step 2: 1 < 2", "naïve café", "日本語の思考", "\n", "<h1>", "<im_end>", "<|im_end|>", "<stép>"]


def action_text(rng: random.Random, valid_bias: float = 0.7) -> str:
    thought = rng.choice(THOUGHTS) + rng.choice(["", " " + phrase(rng, 0, 3)])
    docs = rng.choice(["Doc 1(Title: Paris) Paris is the capital.\nDoc 2(Title: Lyon) text\n", "",
                       "Doc 1(Title: HTML) use <p>tags</p>\n", "Doc 1(Title: x) a<b\n", phrase(rng)])
    forms = [
        f"<step>\n{thought}</step>\n<subquery>{phrase(rng, 1, 3)}</subquery>\n<retrieval>{docs}\n</retrieval>\n",
        f"<step>\n{thought}</step>\n<subanswer>\n{phrase(rng, 1, 3)}</subanswer>\n",
        f"<step>\n{thought}</step>\n<answer>\n{phrase(rng, 1, 3)}</answer>",
    ]
    if rng.random() < valid_bias:
        return rng.choice(forms)
    a = rng.choice(forms)
    mut = rng.randint(0, 11)
    if mut == 0:
        return a.replace("</step>", "", 1)
    if mut == 1:
        return a.replace("<step>", "<Step>", 1)
    if mut == 2:
        return a + a
    if mut == 3:
        return a.replace("<retrieval>", "<retrieval >", 1).replace("<subanswer>", "<sub_answer>", 1)
    if mut == 4:
        return a.replace("</answer>", "</answer>\n<|im_end|>").replace("</subanswer>", "</subanswer><h2>")
    if mut == 5:
        return "<step>\n" + thought + "</step>\n<subquery>q</subquery>\n<retrieval>" + docs + "</retrieval>\n<answer>a</answer>"
    if mut == 6:
        return a.replace("<step>\n", "", 1)
    if mut == 7:
        return "".join(rng.choice(["<step>", "</step>", "<answer>", "</answer>", "<subquery>", "</subquery>",
                                   "<retrieval>", "</retrieval>", "<subanswer>", "</subanswer>", "<x>", "</ step>",
                                   " ", "text"]) for _ in range(rng.randint(0, 8)))
    if mut == 8:
        return rng.choice(["", "<step></step><answer></answer>", "<step></step><subquery></subquery><retrieval></retrieval>",
                           "<step></step><subanswer></subanswer>", "<step>\n</step>\n<answer>\n</answer>\n\n"])
    if mut == 9:
        return a.replace("<answer>", "<ANSWER>").replace("</subquery>", "</subQuery>")
    if mut == 10:
        return a.replace("</step>", "</step></step>", 1)
    return a.replace("<", "\uff1c", 1)


def tree(rng: random.Random, depth: int, max_depth: int) -> dict:
    node: dict = {}
    if depth > 0 or rng.random() < 0.2:
        node["action"] = action_text(rng, 0.85)
    nv = rng.choice([0, 1, 1, 2, 3, 3, 3, 4, 5, 8, 20]) if depth > 0 else rng.randint(5, 60)
    node["q"] = nv * rng.choice([0.0, 1.0, rng.random(), rng.random(), 0.99 ** rng.randint(1, 5)])
    node["n"] = nv
    node["prior"] = 0.2
    node["depth"] = depth
    width = 0 if depth >= max_depth or (depth > 0 and nv < 2 and rng.random() < 0.7) else rng.choice([0, 1, 2, 3, 3, 4, 5])
    node["children"] = [tree(rng, depth + 1, max_depth) for _ in range(width)]
    for c in node["children"]:
        r = rng.random()
        if r < 0.04:
            del c["n"]
        elif r < 0.08:
            del c["q"]
        elif r < 0.11:
            del c["action"]
        elif r < 0.14:
            c["n"] = rng.choice([1.5, 2.5, 3.0, 0.5, -1])
        elif r < 0.16:
            c["children"] = None
        elif r < 0.17:
            del c["children"]
    return node


REASONS = ['"Step 1 asks the right question."', '""', '"naïve — 日本 😀"', "null", "3", "NaN", "Infinity", '["a", 1]',
           '{"k": "v"}', "true", '"a\\nb \\"quoted\\""', '"\\ud83d\\ude00"']


def reply_text(rng: random.Random, count: int) -> str:
    odd = [str(count), "-1", "1.0", "0.0", "-0", "1e0", "true", "false", '"1"', '"0"', "null", "NaN", "Infinity",
           "10000000000000000001", "0.9999999999999999", "1.0000000000000001"]
    ids = lambda: str(rng.randrange(count)) if rng.random() < 0.75 else rng.choice(odd)  # noqa: E731
    flag = "true" if rng.random() < 0.7 else rng.choice(["false", "false", '"true"', "1", "null", "True"])
    fields = [("has_valid_pair", flag), ("positive_id", ids()), ("negative_id", ids()), ("reason", rng.choice(REASONS))]
    if rng.random() < 0.15:
        fields.pop(rng.randrange(len(fields)))
    if rng.random() < 0.1:
        fields.append(("positive_id", ids()))
    rng.shuffle(fields)
    obj = "{" + ", ".join(f'"{k}": {v}' for k, v in fields) + "}"
    wrap = rng.randint(0, 11)
    if wrap <= 4:
        return obj
    if wrap == 5:
        return f"```json\n{obj}\n```"
    if wrap == 6:
        return f"Here is my verdict: {obj} Hope this helps."
    if wrap == 7:
        return f"{obj}\n{{\"note\": 1}}"
    if wrap == 8:
        return rng.choice([f"[{obj}]", json.dumps(obj), "", "no json", "{", "}", "{}", "null", "42", "\ufeff" + obj,
                           obj.replace('"', "'"), obj[:-1], obj[:-1] + ",}", obj + "}"])
    if wrap == 9:
        return f"  \n{obj}\n\t"
    if wrap == 10:
        return f"{{\"verdict\": {obj}}}"
    return obj.replace(", ", ",\n  ")


def label_cases(rng: random.Random, filt, n: int):
    out = []
    i = 0
    while len(out) < n:
        t = tree(rng, 0, rng.randint(1, 3))
        question = rng.choice(["Who directed Jaws?", "Where was the director of Jaws born?", "", "日本の首都は?"])
        if i % 3 == 0:
            if i % 21 == 0 and t["children"]:  # a null count or action in a hand-made tree: Python raises TypeError
                c = rng.choice(t["children"])
                c[rng.choice(["n", "action"])] = None
                c["n"] = None if c.get("n") is None else 2
            out.append({"kind": "jobs", "tree": t, "question": question})
        else:
            jobs = filt.traverse_and_collect_jobs(t, question, "")
            if not jobs:
                continue
            job = rng.choice(jobs)
            job["id"] = rng.randint(0, 50)
            out.append({"kind": "label", "job": job, "reply": reply_text(rng, len(job["candidates"]))})
        i += 1
    return out


def normalize_cases(rng: random.Random, n: int):
    out = []
    qs = [0, 0.0, -0.0, 1.5, -2, 3, 7, 1e308, -1e308, 5e-324, math.inf, -math.inf, math.nan, 0.1, 2.0]
    ns = [0, -1, 1, 2, 3, 7, 0.5, -0.0, 1e-300, 5e-324, 1e300, math.inf, -math.inf, math.nan, 10]
    for _ in range(n):
        q = rng.choice(qs) if rng.random() < 0.7 else rng.uniform(-10, 10)
        nv = rng.choice(ns) if rng.random() < 0.7 else rng.randint(0, 100)
        out.append({"kind": "normalize", "q": q, "n": nv})
    return out


def format_cases(rng: random.Random, n: int):
    return [{"kind": "format", "action": action_text(rng, 0.35)} for _ in range(n)]


def run_label(filt, llm, c):
    if c["kind"] == "normalize":
        return {"expected": num(filt.normalize_mcts_q(c["q"], c["n"]))}
    if c["kind"] == "format":
        return {"expected": filt.format_check(c["action"])}
    if c["kind"] == "jobs":
        try:
            return {"expected": filt.traverse_and_collect_jobs(c["tree"], c["question"], "")}
        except Exception as e:  # the exception is the fact to record
            return error(e)
    engine = object.__new__(llm.AsyncLLMEngine)

    async def reply(system_prompt, user_prompt, temperature=0.7, json_mode=False):
        return c["reply"]

    engine._generate_single = reply
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "pairs.jsonl")
        with contextlib.redirect_stdout(io.StringIO()):
            asyncio.run(engine.run_batch(items=[dict(c["job"])], prompt_builder=filt.build_prompt, system_prompt="",
                                         output_file=path, extract_json=True, result_parser=filt.parse_result))
        with open(path, encoding="utf-8") as f:
            lines = [json.loads(line) for line in f if line.strip()]
    if len(lines) > 1:
        raise SystemExit("run_batch wrote more than one line for one job")
    return {"expected": enc(lines[0]) if lines else None}


def enc_label(c):
    if c["kind"] == "normalize":
        return {"kind": "normalize", "q": num(c["q"]), "n": c["n"] if isinstance(c["n"], int) else num(c["n"])}
    return c


# --------------------------------------------------------------------------------------- main


def write(out_dir: str, name: str, rows: list[dict]):
    write_set(out_dir, name, rows, allow_nan=False, raising=sum('error' in r for r in rows))


def main():
    a = generator_args()
    mcts, filt, llm = load(a.repo)

    rng = random.Random(SEED)
    rows = [{"id": f"puct-{i:04d}", **enc_puct(c), **run_puct(mcts, c)} for i, c in enumerate(puct_cases(rng, 320))]
    write(a.out, "prorag_mcts_puct", rows)

    rng = random.Random(SEED + 1)
    rows = [{"id": f"backprop-{i:04d}", **enc_backprop(c), **run_backprop(mcts, c)}
            for i, c in enumerate(backprop_cases(rng, 240))]
    write(a.out, "prorag_mcts_backprop", rows)

    rng = random.Random(SEED + 2)
    rows = [{"id": f"terminal-{i:04d}", **c, **run_terminal(mcts, c)} for i, c in enumerate(terminal_cases(rng, 320))]
    write(a.out, "prorag_mcts_terminal", rows)

    rng = random.Random(SEED + 3)
    cases = normalize_cases(rng, 60) + format_cases(rng, 100) + label_cases(rng, filt, 200)
    rows = [{"id": f"{c['kind']}-{i:04d}", **enc_label(c), **run_label(filt, llm, c)} for i, c in enumerate(cases)]
    write(a.out, "prorag_prm_labels", rows)


if __name__ == "__main__":
    main()
