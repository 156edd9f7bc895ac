"""Regenerate the ReasonRAG MCTS parity sets (test/fixtures/parity-rl/reasonrag_{running_mean,q_update,uct}/dev.jsonl).

Drives the search-tree statistics of ReasonRAG's `pipeline/reasonrag_pipeline.py` with seeded inputs of our own
and writes each input with what the authors' code returned (or the exception it raised):
  reasonrag_running_mean  MCTSRAGNode.update_reward(r), called once per reward on a fresh node:
                            node_dict["reward"] = np.mean(reward_list) after each call
  reasonrag_q_update      ReasonRAGPipeline.backpropagate(node, Q, reward) on seeded trees of MCTSRAGNode:
                            each node's N, Q (np.mean of Q_list) and node_dict["reward"] after all the calls
  reasonrag_uct           ReasonRAGPipeline._select_child(parent): max over the children of _uct(child),
                            Q + c·sqrt(log(parent.N) / N), default_uct_score for an unvisited child

Nothing of the authors' code is copied here: the module is imported from a checkout at run time.

    git clone https://github.com/wlzhang2020/ReasonRAG && git -C ReasonRAG checkout 225e249a26fa0d1d2fd3c9bf60855d725b7cd435
    python3.11 -m venv /tmp/venv && /tmp/venv/bin/pip install numpy
    /tmp/venv/bin/python scripts/parity/reasonrag_mcts.py --repo ReasonRAG --out test/fixtures/parity-rl

The module imports FlashRAG, transformers, psutil and tqdm at module level for the pipeline; empty stand-ins
are registered for the ones that are missing (no function used here touches them), and the module is then
imported as it is. The pipeline's methods are run on `object.__new__(ReasonRAGPipeline)` with only the
attributes they read (`c`, `default_uct_score`); the nodes are real `MCTSRAGNode`s, their statistics built by
the real `update_Q` / `backpropagate` (uct: each child's Q values are fed to its `update_Q`; the parent's N is
then set, as the search would have, from its children's visits plus extra ones, or adversarially below them).
"""

from __future__ import annotations

import importlib.util
import math
import os
import random
import warnings

from parity_io import generator_args, num, stub_missing, write_set

SEED = 4557
FILE = "pipeline/reasonrag_pipeline.py"


def load(repo: str):
    class Any_:  # stand-in for classes the module subclasses or names
        def __init__(self, *a, **k):
            pass

    stubs = {
        "psutil": {},
        "transformers": {n: Any_ for n in ("AutoTokenizer", "PreTrainedTokenizer", "PreTrainedTokenizerFast")},
        "flashrag": {},
        "flashrag.utils": {n: Any_ for n in ("get_retriever", "get_generator", "selfask_pred_parse", "ircot_pred_parse")},
        "flashrag.pipeline": {"BasicPipeline": Any_},
        "flashrag.dataset": {n: Any_ for n in ("get_batch_dataset", "merge_batch_dataset", "Dataset")},
        "flashrag.evaluator": {},
        "flashrag.evaluator.metrics": {"F1_Score": Any_},
        "flashrag.prompt": {"PromptTemplate": Any_},
        "tqdm": {"tqdm": Any_},
    }
    stub_missing(stubs)
    path = os.path.join(repo, FILE)
    spec = importlib.util.spec_from_file_location("reasonrag_pipeline", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name in ("update_Q", "update_reward"):
        if not hasattr(mod.MCTSRAGNode, name):
            raise SystemExit(f"MCTSRAGNode.{name} not found in {path}: is the checkout at 225e249a?")
    for name in ("backpropagate", "_select_child", "_uct"):
        if not hasattr(mod.ReasonRAGPipeline, name):
            raise SystemExit(f"ReasonRAGPipeline.{name} not found in {path}: is the checkout at 225e249a?")
    return mod


def node(mod, i, parent=None, step=0):
    n = mod.MCTSRAGNode(i, "S", parent, parent.id if parent else -1, step=step, next_state="reasoning")
    if parent is not None:
        parent.add_child(n)
    return n


def pipeline(mod, c=1.414, default=float("inf")):
    p = object.__new__(mod.ReasonRAGPipeline)
    p.c = c
    p.default_uct_score = default
    return p


def value(rng: random.Random):
    """A node value or terminal reward: mostly what the search produces (F1 · 0.95^step, judge scores / 100)."""
    k = rng.random()
    if k < 0.35:
        return rng.choice([0.0, 0.25, 0.4, 0.5, 2 / 3, 0.8, 1.0]) * 0.95 ** rng.randint(0, 9)
    if k < 0.55:
        return rng.randint(0, 100) / 100
    if k < 0.65:
        return rng.choice([0.0, 1.0, 0.5, 0.1, 0.2, 0.3])  # ties
    if k < 0.75:
        return rng.uniform(-1, 2)
    if k < 0.8:
        return rng.choice([0, 1, -0.0, 5e-324, 1e-300, 0.1 + 0.2])
    if k < 0.88:
        return rng.choice([1e16, -1e16, 1e308, -1e308, 3.0, 1e-16])  # cancellation and overflow
    if k < 0.92:
        return rng.choice([float("nan"), float("inf"), float("-inf")])
    return rng.uniform(0, 1) * 10 ** rng.randint(-8, 8)


def length(rng: random.Random) -> int:
    k = rng.random()
    if k < 0.55:
        return rng.randint(1, 7)
    if k < 0.9:
        return rng.randint(8, 40)
    return rng.randint(120, 280)  # numpy's pairwise summation splits above 128


def running_mean_cases(mod, rng, n):
    rows = []
    for i in range(n):
        seq = [value(rng) for _ in range(length(rng))]
        if i % 10 == 0:  # one value repeated: the mean of equal values
            seq = [seq[0]] * len(seq)
        nd = node(mod, 0)
        means = []
        for r in seq:
            nd.update_reward(r)
            means.append(num(nd.node_dict["reward"]))
        rows.append({"id": f"mean-{i:04d}", "rewards": [num(r) for r in seq], "expected": {"means": means}})
    return rows


def q_update_cases(mod, rng, n):
    rows = []
    for i in range(n):
        size = rng.randint(1, 10)
        parents = [-1] + [rng.randrange(0, j) for j in range(1, size)]
        nodes = []
        for j, p in enumerate(parents):
            nodes.append(node(mod, j, nodes[p] if p >= 0 else None, step=0 if p < 0 else nodes[p].step + 1))
        events = []
        for _ in range(length(rng) if rng.random() < 0.3 else rng.randint(1, 12)):
            leaf = rng.randrange(size)
            reward = value(rng) if rng.random() < 0.5 else None
            events.append({"node": leaf, "Q": num(value(rng)), "reward": None if reward is None else num(reward)})
        pipe = pipeline(mod)
        for e in events:
            q = float(e["Q"]) if not isinstance(e["Q"], str) else float(e["Q"].replace("Infinity", "inf"))
            r = e["reward"]
            r = None if r is None else float(r) if not isinstance(r, str) else float(r.replace("Infinity", "inf"))
            pipe.backpropagate(nodes[e["node"]], q, r)
        out = [{"N": nd.N, "Q": num(nd.Q), "reward": num(nd.node_dict["reward"]) if "reward" in nd.node_dict else None}
               for nd in nodes]
        rows.append({"id": f"backprop-{i:04d}", "parents": parents, "events": events, "expected": {"nodes": out}})
    return rows


C_VALUES = [1.414, 1.414, 1.414, 1.0, 0.0, 2.0, 0.5, 1e-9, 100.0, -1.414, float("inf"), float("nan")]
DEFAULTS = [float("inf"), float("inf"), float("inf"), 0.0, 1.0, -1.0, float("-inf"), float("nan"), 2.5]


def uct_cases(mod, rng, n):
    rows = []
    for i in range(n):
        c = rng.choice(C_VALUES)
        default = rng.choice(DEFAULTS)
        parent = node(mod, 0)
        k = rng.randint(1, 6)
        tie = rng.random() < 0.25
        shared = [value(rng) for _ in range(rng.randint(1, 4))]
        children = []
        for j in range(k):
            ch = node(mod, j + 1, parent, 1)
            if tie and rng.random() < 0.7:
                qs = list(shared)
            elif rng.random() < 0.2:
                qs = []  # unvisited
            else:
                qs = [value(rng) if rng.random() < 0.3 else rng.randint(0, 100) / 100 for _ in range(rng.randint(1, 9))]
            for q in qs:
                ch.update_Q(q)
            children.append(ch)
        visits = sum(ch.N for ch in children)
        m = rng.random()
        if m < 0.7:
            parent.N = visits + rng.randint(0, 3)
        elif m < 0.85:
            parent.N = visits + rng.randint(4, 10 ** rng.randint(1, 6))
        else:  # inconsistent trees: fewer visits than the children's, none, one
            parent.N = rng.choice([0, 1, max(0, visits - 1), rng.randint(0, max(0, visits))])
        pipe = pipeline(mod, c, default)
        scores = []
        for ch in children:
            try:
                scores.append(num(pipe._uct(ch)))
            except Exception as e:  # the exception is the fact to record
                scores.append({"error": {"type": type(e).__name__, "message": str(e)}})
        row = {"id": f"uct-{i:04d}", "c": num(c), "default_uct_score": num(default), "parent_N": parent.N,
               "children": [{"N": ch.N, "Q": num(ch.Q)} for ch in children]}
        try:
            chosen = pipe._select_child(parent)
            row["expected"] = {"chosen": children.index(chosen), "scores": scores}
        except Exception as e:  # the exception is the fact to record
            row["expected"] = {"scores": scores}
            row["error"] = {"type": type(e).__name__, "message": str(e)}
        rows.append(row)
    return rows


def write(out_dir: str, name: str, rows: list[dict]):
    write_set(out_dir, name, rows, allow_nan=False, raising=sum('error' in r for r in rows))


def main():
    a = generator_args(300)
    warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's notes on inf − inf and the like; the values are the facts
    mod = load(a.repo)
    write(a.out, "reasonrag_running_mean", running_mean_cases(mod, random.Random(SEED), a.n))
    write(a.out, "reasonrag_q_update", q_update_cases(mod, random.Random(SEED + 1), a.n))
    write(a.out, "reasonrag_uct", uct_cases(mod, random.Random(SEED + 2), a.n))


if __name__ == "__main__":
    main()
