"""Regenerate the RAG-Gym PRM pair-rule parity set (test/fixtures/parity-rl/raggym_prm_pairs/dev.jsonl).

Runs the data-preparation part of RAG-Gym's `reward_training` (rag_gym/algorithms/prm/reward/reward.py) on
seeded rollout folders of our own and writes each folder with the preference pairs the authors' code built
(or the exception it raised). The rule is written inline in the function, between reading the rollout files
and training with TRL, so the whole function is run, with what it calls around the rule replaced:
  - `CustomRewardTrainer` and `RewardConfig` in the module are replaced by recorders: the trainer records the
    `train_dataset` / `eval_dataset` it is given and its `train()` does nothing (no model is loaded or trained);
  - the reward model and tokenizer are plain objects with the attributes the function sets (`config.pad_token_id`,
    `pad_token`, `eos_token`, `padding_side`, `truncation_side`);
  - the agent is a stand-in whose `apply_template(state, qa_cache=None)` returns one user message holding the
    state's question and history (query and documents) as JSON, so that the prompt of each pair can be read back;
  - the module-level name `agent_type`, which the function reads but only the script's `__main__` block defines
    (without it the first step that has a pair raises NameError), is set on the module to the agent's type;
  - `tqdm.tqdm` in the module is the identity and the function's prints go nowhere.
`dpo_training` (rag_gym/algorithms/prm/dpo/dpo.py) has the same statements; it is run the same way (its
`DPOTrainer` / `DPOConfig` replaced, the agent given the `llm.model` attributes it sets) and the generator
checks that it builds the same pairs on every case.

Nothing of the authors' code is copied here: the modules are loaded from a checkout at run time.

    git clone https://github.com/RAG-Gym/RAG-Gym && git -C RAG-Gym checkout 2abbdd48380b3a27eb143be67f29410a8ed5d5e6
    python3.11 -m venv /tmp/venv && /tmp/venv/bin/pip install torch transformers trl peft datasets accelerate
    /tmp/venv/bin/python scripts/parity/raggym_pairs.py --repo RAG-Gym --out test/fixtures/parity-rl

The `rag_gym` package's __init__ pulls in the retrievers and LLM clients (sentence_transformers, faiss, openai);
a stand-in package is registered instead holding the checkout's own `envs/state.py`, `envs/action.py` and
`rewards/{utils,em_reward,f1_reward}.py`, loaded as they are (`BaseAgent`, used only as an annotation, is
`object`). reward.py imports `compute_accuracy` and `RewardDataCollatorWithPadding` from `trl.trainer.utils`,
which TRL removed after the 0.13 the repository pins; where they are missing, placeholders are put there
(they are used only inside `CustomRewardTrainer`, which is replaced).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import random
import shutil
import sys
import tempfile
import types

from parity_io import generator_args, write_jsonl

SEED = 4561


def load(repo: str):
    pkg = types.ModuleType("rag_gym")
    pkg.__path__ = [os.path.join(repo, "rag_gym")]
    sys.modules["rag_gym"] = pkg
    for sub in ("envs", "rewards"):
        m = types.ModuleType(f"rag_gym.{sub}")
        m.__path__ = [os.path.join(repo, "rag_gym", sub)]
        sys.modules[f"rag_gym.{sub}"] = m

    def load_file(dotted: str, rel: str):
        spec = importlib.util.spec_from_file_location(dotted, os.path.join(repo, rel))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[dotted] = mod
        spec.loader.exec_module(mod)
        return mod

    state = load_file("rag_gym.envs.state", "rag_gym/envs/state.py")
    action = load_file("rag_gym.envs.action", "rag_gym/envs/action.py")
    pkg.State, pkg.History, pkg.Action = state.State, state.History, action.Action
    load_file("rag_gym.rewards.utils", "rag_gym/rewards/utils.py")
    pkg.EMReward = load_file("rag_gym.rewards.em_reward", "rag_gym/rewards/em_reward.py").EMReward
    pkg.F1Reward = load_file("rag_gym.rewards.f1_reward", "rag_gym/rewards/f1_reward.py").F1Reward
    pkg.BaseAgent = object

    import trl.trainer.utils as tu
    for name in ("compute_accuracy", "RewardDataCollatorWithPadding"):
        if not hasattr(tu, name):
            setattr(tu, name, type(name, (), {}))
    reward = load_file("prm_reward", "rag_gym/algorithms/prm/reward/reward.py")
    dpo = load_file("prm_dpo", "rag_gym/algorithms/prm/dpo/dpo.py")
    if not hasattr(reward, "reward_training") or not hasattr(dpo, "dpo_training"):
        raise SystemExit("reward_training / dpo_training not found: is the checkout at 2abbdd48?")
    return reward, dpo


CAPTURED = {}


class Trainer:
    """Stands in for CustomRewardTrainer / DPOTrainer: records the datasets, trains nothing."""

    def __init__(self, *args, train_dataset=None, eval_dataset=None, **kwargs):
        CAPTURED["train"] = train_dataset
        CAPTURED["eval"] = eval_dataset

    def train(self):
        pass


class Config:
    def __init__(self, *args, **kwargs):
        self.kwargs = kwargs


def ns(**kw):
    return types.SimpleNamespace(**kw)


class Agent:
    def __init__(self, agent_type: str):
        self.agent_type = agent_type
        config = ns(use_cache=True)
        self.llm = ns(model=ns(tokenizer=ns(pad_token=None, eos_token="</s>"), model=ns(model=ns(config=config))))

    def apply_template(self, state, qa_cache=None):
        prompt = {"question": state.question, "history": state.history.qd_list}
        return [{"role": "user", "content": json.dumps(prompt, ensure_ascii=False)}]


def patch(mod):
    mod.tqdm = ns(tqdm=lambda xs: xs)
    for name in ("CustomRewardTrainer", "DPOTrainer"):
        if hasattr(mod, name):
            setattr(mod, name, Trainer)
    for name in ("RewardConfig", "DPOConfig"):
        if hasattr(mod, name):
            setattr(mod, name, Config)


def pairs_of(dataset):
    """The dataset's pairs, grouped by question in dataset order; within a question sorted (the code's order
    there follows Python's set iteration, which depends on string hashing)."""
    if dataset is None:
        return None
    groups = []
    for row in dataset.to_list():
        prompt = row["chosen"][:-1]
        assert prompt == row["rejected"][:-1] and len(prompt) == 1 and row["chosen"][-1]["role"] == "assistant"
        p = json.loads(prompt[0]["content"])
        pair = {"history": p["history"], "chosen": row["chosen"][-1]["content"], "rejected": row["rejected"][-1]["content"]}
        if not groups or groups[-1]["question"] != p["question"]:
            groups.append({"question": p["question"], "pairs": []})
        groups[-1]["pairs"].append(pair)
    for g in groups:
        g["pairs"].sort(key=lambda x: json.dumps(x, sort_keys=True, ensure_ascii=False))
    return groups


def run(fn, case, folder):
    CAPTURED.clear()
    agent = Agent(case["agent_type"])
    sys.modules[fn.__module__].agent_type = case["agent_type"]
    save = tempfile.mkdtemp()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            if fn.__name__ == "reward_training":
                fn(agent, ns(config=ns(pad_token_id=None)), ns(pad_token=None, eos_token="</s>"), folder, save,
                   eval_ratio=case["eval_ratio"], outcome_reward=case["outcome_reward"])
            else:
                fn(agent, folder, save, eval_ratio=case["eval_ratio"], outcome_reward=case["outcome_reward"])
        return {"expected": {"train": pairs_of(CAPTURED["train"]), "eval": pairs_of(CAPTURED["eval"])}}
    except Exception as e:  # the exception is the fact to record
        return {"error": {"type": type(e).__name__, "message": str(e)}}
    finally:
        shutil.rmtree(save, ignore_errors=True)


QUESTIONS = ["Who directed Jaws?", "Where was the director of Jaws born?", "What is 2+2?", "Which city hosts the Louvre?",
             "¿Quién escribió Don Quijote?", "日本の首都は？", "Is the Eiffel Tower in Paris?", "  spaced  question ", ""]
ANSWERS = ["Steven Spielberg", "Cincinnati, Ohio", "4", "Paris", "Miguel de Cervantes", "東京", "yes", "the Beatles", ""]
QUERIES = ["Jaws director", "Steven Spielberg birthplace", "Louvre city", "Cervantes", "capital of Japan", "Jaws", "", "x" * 40]
REWARDS = [1.0, 0.5, 1 / 3, 0.25, 0.2, 1, 0, 0.75, 0.5, 0.7500001, 0.4999999, 0.76, 0.6, 0.9, 0.1, -1.0, 2]
ODD = [float("nan"), float("inf"), float("-inf")]


def reward(rng):
    k = rng.random()
    return rng.choice(ODD) if k < 0.03 else rng.choice(REWARDS) if k < 0.8 else round(rng.random(), 3)


def predicted(rng, answer):
    k = rng.random()
    if k < 0.5:
        return answer
    if k < 0.6:
        return rng.choice(["The " + answer, answer.upper(), answer + ".", " " + answer + " "])
    if k < 0.75:
        return rng.choice(["Steven Spielberg Jr", "Cincinnati", "Paris, France", "4 apples", "no", "Tokyo"])
    if k < 0.85:
        return None
    return rng.choice(ANSWERS)


def action_string(rng, kind):
    if kind == "answer":
        return f"Answer: {rng.choice(ANSWERS)}"
    return rng.choice([f"Query: {rng.choice(QUERIES)}", f"Search: {rng.choice(QUERIES)}", "Error: unparsable", "", "Query: é 😀"])


def item_for(rng, question, agent_type):
    """One rollout file (rag_gym/algorithms/prm/rollout.py's format, with only the fields reward_training reads:
    the states' question and query history, the actions' query, each step's candidates with their strings and
    rewards, and the candidates' answers for the direct agent) and its query-to-documents cache."""
    answer = rng.choice(ANSWERS) if rng.random() < 0.99 else None
    steps = rng.choice([1, 1, 2, 2, 3, 4])
    queries = [rng.choice(QUERIES) for _ in range(steps - 1)]
    history, cache = [], []
    for i in range(steps):
        state = {"history": [{"query": q} for q in queries[:i]]}
        history.append({"content": {"question": question, **state} if i == 0 else state})
        last = i == steps - 1
        truncated = last and rng.random() < 0.08
        history.append({"content": {"query": None if last and not truncated else queries[i] if not last else "more"}})
        cands = []
        for _ in range(rng.randint(1, 4)):
            is_answer = agent_type == "direct" or rng.random() < (0.7 if last else 0.2)
            text = rng.choice(ANSWERS)
            s = f"Answer: {text}" if is_answer and rng.random() < 0.7 else action_string(rng, "answer" if is_answer else "query")
            cand = {"action_string": s, "reward": reward(rng)}
            if agent_type == "direct":
                cand["action"] = {"answer": text}
            cands.append(cand)
        if rng.random() < 0.3 and len(cands) > 1:  # a duplicate string with another reward
            cands.append({**cands[0], "reward": reward(rng)})
        cache.append({"actions": cands})
    history.append({"content": {"history": [{"query": q} for q in queries]}})
    if rng.random() < 0.03:  # more cached steps than states
        cache.append({"actions": [{"action_string": "A", "reward": 1.0, "action": {"answer": "x"}},
                                  {"action_string": "B", "reward": 0.0, "action": {"answer": "y"}}]})
    item = {"answer": answer, "history": history, "action_cache": cache}
    if rng.random() < 0.93:
        item["prediction"] = predicted(rng, answer if answer is not None else "x")
    qd = {q: [{"id": f"d{j}", "text": q[:6]} for j in range(rng.randint(0, 2))] for q in queries}
    if queries and rng.random() < 0.04:
        qd.pop(queries[0], None)
    return item, qd


def dumps(x):
    return json.dumps(x, ensure_ascii=rng_ascii[0])


rng_ascii = [False]


def case_for(rng, i):
    agent_type = ["react", "rag", "cot", "search_o1", "research", "direct", "react", "rag"][i % 8]
    files = []
    questions = rng.sample(QUESTIONS, rng.randint(1, 3))
    for j, q in enumerate(questions):
        for copy in range(2 if rng.random() < 0.15 else 1):  # two rollouts of one question
            item, qd = item_for(rng, q, agent_type)
            stem = rng.choice([f"{j}{copy}", f"q{j}_{copy}", f"é{j}{copy}", f"\uff5e{j}{copy}", f"\U0001F600{j}{copy}", f"{10 - j}{copy}"])
            rng_ascii[0] = rng.random() < 0.5
            files.append({"name": f"{stem}.json", "text": dumps(item)})
            if agent_type != "direct" and rng.random() < 0.96:
                files.append({"name": f"{stem}_qd_cache.json", "text": dumps(qd)})
            if agent_type in ("search_o1", "research") and rng.random() < 0.5:
                files.append({"name": f"{stem}_qa_cache.json", "text": dumps({"q": "a"})})
    extra = rng.random()
    if extra < 0.1:
        files.append({"name": "broken.json", "text": "{\"question\": "})
    elif extra < 0.15:
        files.append({"name": "history_0.json", "text": files[0]["text"]})
    elif extra < 0.2:
        files.append({"name": "notes.txt", "text": files[0]["text"]})
    elif extra < 0.23:
        files.append({"name": "list.json", "text": "[1, 2]"})
    # Names must be unique in a folder.
    seen, unique = set(), []
    for f in files:
        if f["name"] not in seen:
            seen.add(f["name"])
            unique.append(f)
    return {"agent_type": agent_type, "outcome_reward": rng.choice(["em", "f1"]),
            "eval_ratio": rng.choice([0.1, 0.1, 0.1, 0.0, 0.25, 0.34, 0.5, 1.0]), "files": unique}


def stored(f):
    """A file as the set stores it: its JSON value under `json` where standard JSON holds it (the folder gets
    json.dumps of it, ensure_ascii as drawn), else its text under `text` (NaN or infinite rewards, broken JSON)."""
    try:
        value = json.loads(f["text"])
        json.dumps(value, allow_nan=False)
    except ValueError:
        return f
    if f["text"] not in (json.dumps(value), json.dumps(value, ensure_ascii=False)):
        return f
    return {"name": f["name"], "json": value, "ascii": f["text"] == json.dumps(value)}


def main():
    a = generator_args(240)
    reward, dpo = load(a.repo)
    patch(reward)
    patch(dpo)
    rng = random.Random(SEED)
    rows = []
    for i in range(a.n):
        case = case_for(rng, i)
        folder = tempfile.mkdtemp()
        try:
            for f in case["files"]:
                with open(os.path.join(folder, f["name"]), "w", encoding="utf-8") as fh:
                    fh.write(f["text"])
            got = run(reward.reward_training, case, folder)
            other = run(dpo.dpo_training, case, folder)
            if got != other:
                raise SystemExit(f"case {i}: dpo_training built other pairs than reward_training: {got} vs {other}")
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        rows.append({"id": f"prm-{i:04d}", **case, "files": [stored(f) for f in case["files"]], **got})
    path = os.path.join(a.out, "raggym_prm_pairs", "dev.jsonl")
    write_jsonl(path, rows, ensure_ascii=True)
    n_pairs = sum(len(g["pairs"]) for r in rows if "expected" in r for part in ("train", "eval")
                  for g in (r["expected"][part] or []))
    print(f"raggym_prm_pairs: {len(rows)} cases, {sum('error' in r for r in rows)} raising, {n_pairs} pairs")


if __name__ == "__main__":
    main()
