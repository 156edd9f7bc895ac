"""Regenerate the RAG-Gym outcome-reward and answer-location parity sets
(test/fixtures/parity-rl/raggym_{em_f1,locate_answer}/dev.jsonl).

Drives pure-Python functions of RAG-Gym with seeded inputs of our own and writes each input with the values
the authors' code returned:
  raggym_em_f1          EMReward()(state, action) and F1Reward()(state, action)   rag_gym/rewards/{em,f1}_reward.py
  raggym_locate_answer  locate_answer(s)                                          src/evaluate.py

Nothing of the authors' code is copied here: the modules are read from a checkout at run time.

    git clone https://github.com/RAG-Gym/RAG-Gym && git -C RAG-Gym checkout 2abbdd48380b3a27eb143be67f29410a8ed5d5e6
    python3.11 scripts/parity/raggym_text.py --repo RAG-Gym --out test/fixtures/parity-rl

The reward modules import `State` and `Action` from the `rag_gym` package, whose __init__ pulls in the
retrievers and LLM clients; a stand-in `rag_gym` module with two small classes carrying the fields the rewards
read (`truth`; `query`, `answer`) is registered instead, and `rag_gym/rewards/utils.py` is loaded from the
checkout as it is. src/evaluate.py imports tqdm and a sibling module for its script part; `locate_answer`
uses only `re`, so it is taken out with Python's `ast` module and compiled on its own.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import random
import re
import sys
import types

from parity_io import generator_args, write_set

SEED = 4551


class State:
    def __init__(self, truth):
        self.truth = truth


class Action:
    def __init__(self, query=None, answer=None):
        self.query = query
        self.answer = answer


def load_rewards(repo: str):
    pkg = types.ModuleType("rag_gym")
    pkg.__path__ = [os.path.join(repo, "rag_gym")]
    pkg.State, pkg.Action = State, Action
    sys.modules["rag_gym"] = pkg
    sub = types.ModuleType("rag_gym.rewards")
    sub.__path__ = [os.path.join(repo, "rag_gym", "rewards")]
    sys.modules["rag_gym.rewards"] = sub

    def load(dotted: str, rel: str):
        spec = importlib.util.spec_from_file_location(dotted, os.path.join(repo, rel))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[dotted] = mod
        spec.loader.exec_module(mod)
        return mod

    load("rag_gym.rewards.utils", "rag_gym/rewards/utils.py")
    em = load("rag_gym.rewards.em_reward", "rag_gym/rewards/em_reward.py")
    f1 = load("rag_gym.rewards.f1_reward", "rag_gym/rewards/f1_reward.py")
    return em.EMReward(), f1.F1Reward()


def load_locate(repo: str):
    path = os.path.join(repo, "src/evaluate.py")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "locate_answer":
            ns = {"re": re}
            exec(compile(ast.Module(body=[node], type_ignores=[]), path, "exec"), ns)
            return ns["locate_answer"]
    raise SystemExit(f"locate_answer not found in {path}: is the checkout at 2abbdd48?")


WORDS = ["Paris", "paris", "the Eiffel Tower", "Eiffel", "tower", "Barack Obama", "Obama", "yes", "no", "Yes.", "noanswer",
         "no answer", "1984", "3.14", "U.S.", "a", "an", "the", "", " ", "constructor", "__proto__", "toString", "valueOf",
         "hasOwnProperty", "é", "É", "ß", "İ", "ΣΑΣ", "日本", "😀", "\ua7cb", "\u0264", "–", "’", "\u00a0", "\u200b", "\x1c",
         "\u3000", "\n", "rock & roll", "o'neill", "the the", "A B C", "x y x"]


def phrase(rng: random.Random) -> str:
    return rng.choice(["", " ", "\t", "\u00a0"]).join(rng.choice(WORDS) for _ in range(rng.randint(0, 4)))


def em_f1_cases(rng: random.Random, n: int):
    out = []
    for i in range(n):
        truth = phrase(rng) or rng.choice(WORDS)
        k = i % 6
        if k == 0:
            answer = truth
        elif k == 1:
            answer = "".join(c.upper() if rng.random() < 0.5 else c for c in truth) + rng.choice(["", ".", "!", " the"])
        elif k == 2:
            answer = truth + " " + phrase(rng)
        elif k == 3:
            answer = phrase(rng) * rng.randint(1, 200) if rng.random() < 0.3 else phrase(rng)
        else:
            answer = rng.choice(WORDS)
        r = rng.random()
        if r < 0.1:
            action = {"query": phrase(rng), "answer": None}
        elif r < 0.15:
            action = {"query": None, "answer": None}
        elif r < 0.2:
            action = {"query": phrase(rng), "answer": answer}
        else:
            action = {"query": None, "answer": answer}
        out.append({"truth": truth, "action": action})
    return out


PIECES = ['"answer": "', "'answer': '", '"answer_choice": "', "answer_choice':", "answer:", "Answer:", "answer is",
          "answer is:", "The answer is ", "**Answer:** ", "Answer**: ", "is: ", "is **", "{", "}", '"', "'", ":", " ",
          "\n", "\t", "\u00a0", "\u3000", "\x1c", "\u2028", "\r\n", "A", "B", "C", "D", "E", "Paris", "St. Louis",
          "constructor", "__proto__", "日本", "😀", "{'predicted_answer': 'x'}", '{"answer": {"text": "y"}}']


def locate_cases(rng: random.Random, n: int):
    out = []
    for i in range(n):
        k = i % 6
        w = rng.choice(WORDS[:30])
        if k == 0:  # JSON-ish replies as the agents write them
            s = rng.choice(['{"answer": "%s"}', "{'answer': '%s'}", '{"answer_choice": "%s"}', '{"reasoning": "r", "answer": %s}',
                            '```json\n{\n  "answer": "%s"\n}\n```', '{"answer":{"%s"}}', '{"answer": "%s" , "x": 1}']) % w
        elif k == 1:  # "the answer is {…}" and multiple-choice forms
            s = rng.choice(["The answer is {%s}.", "answer is: '%s' }", "**Answer:** %s", "Answer: %s", "The answer is: %s",
                            "so it is **%s**", "It is: %s"]) % rng.choice([w, "A", "B", "C", "D", "E", "a"])
        elif k == 2:  # random soups of the pieces
            s = "".join(rng.choice(PIECES) for _ in range(rng.randint(1, 14)))
        elif k == 3:  # whitespace runs of every kind
            s = rng.choice(PIECES[:10]) + "".join(rng.choice([" ", "\n", "\t", "\u00a0", "\u3000", "\x1c", "\x85", "\u200b", "\ufeff", "\v"])
                                                  for _ in range(rng.randint(0, 5))) + w + rng.choice(["}", '"}', " }", ""])
        elif k == 4:  # long
            s = phrase(rng) * rng.randint(20, 200) + rng.choice(["", '{"answer": "%s"}' % w])
        else:
            s = rng.choice([None, "", " ", "}", "answer:}", "answer: }", "answer:  x}", '"answer": ""}', "NA", "is A", "isA",
                            "Answer:A", "answer_choice': {'B'}"])
        out.append({"s": s})
    return out


def write(out_dir: str, name: str, rows: list[dict]):
    write_set(out_dir, name, rows)


def main():
    a = generator_args(300)
    em, f1 = load_rewards(a.repo)
    locate = load_locate(a.repo)

    rng = random.Random(SEED)
    rows = []
    for i, c in enumerate(em_f1_cases(rng, a.n)):
        state, action = State(c["truth"]), Action(**c["action"])
        rows.append({"id": f"emf1-{i:04d}", **c, "expected": {"em": em(state, action), "f1": f1(state, action)}})
    write(a.out, "raggym_em_f1", rows)

    rng = random.Random(SEED + 1)
    rows = [{"id": f"locate-{i:04d}", **c, "expected": locate(c["s"])} for i, c in enumerate(locate_cases(rng, a.n))]
    write(a.out, "raggym_locate_answer", rows)


if __name__ == "__main__":
    main()
