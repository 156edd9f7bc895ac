"""Regenerate the RAG-Gym LLM-rerank parity set (test/fixtures/parity-rl/raggym_rerank/dev.jsonl).

Drives `LMReranker.__call__` of RAG-Gym (`rag_gym/rewards/lm_rerank.py`) on judge replies of our own: the
method is taken from the checkout at run time with Python's `ast` module and called with a stand-in `self`
whose judge returns the case's reply, a state with an empty history, and `count` candidate actions. Nothing
of the authors' code is copied here; importing the `rag_gym` package (model engines, retrievers) is avoided.
The method evaluates part of the reply with `eval`: every reply here is one this script wrote.

    git clone https://github.com/RAG-Gym/RAG-Gym && git -C RAG-Gym checkout 2abbdd48380b3a27eb143be67f29410a8ed5d5e6
    python scripts/parity/raggym_rerank.py --repo RAG-Gym --out test/fixtures/parity-rl
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import sys
import types

from parity_io import write_jsonl

SEED = 4547
FILE = "rag_gym/rewards/lm_rerank.py"


def load(repo: str):
    with open(os.path.join(repo, FILE), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "LMReranker":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__call__":
                    # The signature's annotations name rag_gym's classes; stand-ins satisfy them.
                    scope = {"re": re, "json": json, "State": object, "Action": object, "LLMEngine": object}
                    exec(compile(ast.Module(body=[item], type_ignores=[]), FILE, "exec"), scope)
                    return scope["__call__"]
    raise SystemExit(f"{FILE} has no LMReranker.__call__: is --repo a checkout of RAG-Gym at 2abbdd48?")


class Judge:
    def __init__(self, reply: str):
        self.reply = reply

    def generate(self, messages):
        return [self.reply]


def state():
    history = types.SimpleNamespace(return_as_json=lambda return_documents=True: [])
    return types.SimpleNamespace(question="Who directed the film?", history=history)


def actions(count: int, rng: random.Random):
    return [types.SimpleNamespace(query=None, answer=f"answer {i}") if rng.random() < 0.3 else types.SimpleNamespace(query=f"query {i}", answer=None) for i in range(count)]


def py_list(items, rng: random.Random, style: str) -> str:
    if style == "tuple":
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    body = ", ".join(items)
    if rng.random() < 0.2:
        body += ","
    return "[" + body + "]"


def number(i: int, rng: random.Random, style: str) -> str:
    if style == "floats":
        return rng.choice([f"{i}.0", f"{i}e0", f"{i}.", f"{float(i)!r}"])
    if style == "bools" and i in (0, 1):
        return ["False", "True"][i]
    if style == "signs":
        return rng.choice([f"+{i}", f"-{i}" if i == 0 else str(i), f"--{i}"])
    if style == "bases":
        return rng.choice([hex(i), oct(i), bin(i), f"{i}" if i < 10 else f"1_{str(i)[1:]}"])
    if style == "strings":
        return json.dumps(str(i))
    if style == "big":
        return str(i + 2**64 * rng.choice([0, 1]))
    return str(i)


def fence(body: str, rng: random.Random) -> str:
    ws = rng.choice(["", "", "\n", " ", "\n\n", "\t", "\u00a0", "\x1c", "\ufeff", "\u3000"])
    close = rng.choice(["```", "```", "\n```", "", "`"])
    lead = rng.choice(["", "", "Here is the ranking:\n", "```json\nnot json\n```\n", "I think [2] is best.\n"])
    return f"{lead}```json{ws}{body}{close}"


def reply(rng: random.Random, count: int, k: int) -> str:
    order = list(range(count))
    rng.shuffle(order)
    kind = k % 20
    style = rng.choice(["plain", "plain", "floats", "bools", "signs", "bases", "tuple", "big"])
    key = rng.choice(['"ranked_indices"', "'ranked_indices'", '"ranked_indices"'])
    if kind == 1 and count:  # one candidate left out
        order = order[:-1]
    if kind == 2:  # out-of-range and repeated indices
        order = [count + 3] + order + order[:1]
    if kind == 3:  # a judge that writes JSON's literals
        return fence('{"ranked_indices": ' + py_list([str(i) for i in order], rng, "plain") + ', "confident": true}', rng)
    if kind == 4:
        return fence('{"ranked_indices": ' + py_list([str(i) for i in order], rng, "plain") + ', "note": null}', rng)
    if kind == 5:  # nested braces: the capture stops at the first closing brace
        return fence('{"ranked_indices": ' + py_list([str(i) for i in order], rng, "plain") + ', "why": {"0": "best"}}', rng)
    if kind == 6:  # no fence, or another language's fence
        return rng.choice(["", "```JSON", "```python\n", "Ranking: "]) + '{"ranked_indices": ' + str(order) + "}"
    if kind == 7:  # the key spelled otherwise
        key = rng.choice(['"Ranked_indices"', '"ranked indices"', '"ranking"', "b'ranked_indices'", '"ranked_" "indices"', '"ranked\\u005findices"', "r'ranked_indices'"])
    if kind == 8:  # the list in another shape
        return fence("{" + key + ": " + rng.choice([json.dumps(" ".join(map(str, order))), str(len(order)), "{" + ", ".join(f"{i}: {i}" for i in order) + "}", "None", str([[i] for i in order])]) + "}", rng)
    if kind == 9:  # a set, an empty dict, a repeated key
        return fence(rng.choice(["{" + ", ".join(map(str, order)) + "}", "{}", "{" + key + ": [0], " + key + ": " + str(order) + "}"]), rng)
    if kind == 10:  # comments and line breaks inside
        items = ",\n  ".join(str(i) for i in order)
        return fence("{\n  # best first\n  " + key + ": [\n  " + items + "\n  ]  # done\n}", rng)
    if kind == 11:  # numbers Python refuses
        return fence("{" + key + ": [" + ", ".join(rng.choice([f"0{i}", f"{i}x", f"{i}_", f"{i}__0"]) if j == 0 else str(i) for j, i in enumerate(order)) + "]}", rng)
    if kind == 12:
        style = "strings"
    if kind == 13:  # two fences: the first that opens with a brace wins
        other = list(order)
        rng.shuffle(other)
        return fence('{"ranked_indices": ' + str(other) + "}", rng) + "\n" + fence('{"ranked_indices": ' + str(order) + "}", rng)
    if kind == 14:  # unbalanced or cut short
        return fence("{" + key + ": " + str(order)[:-1] + "}", rng)
    items = [number(i, rng, style) for i in order]
    return fence("{" + key + ": " + py_list(items, rng, style) + rng.choice(["", "", ', "reason": "the query fetches the missing fact"']) + "}", rng)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", required=True, help="a checkout of RAG-Gym at 2abbdd48")
    ap.add_argument("--out", default="test/fixtures/parity-rl")
    ap.add_argument("--n", type=int, default=300)
    args = ap.parse_args()
    call = load(os.path.abspath(args.repo))
    rng = random.Random(SEED)
    cases = []
    for k in range(args.n):
        count = rng.choice([0, 1, 2, 3, 4, 5, 6, 10]) if k % 25 else 0
        text = reply(rng, count, k)
        judge = types.SimpleNamespace(reranker=Judge(text))
        rewards = call(judge, state(), actions(count, rng))
        cases.append({"id": f"raggym-rerank-{k:04d}", "count": count, "reply": text, "expected": {"rewards": [float(r) for r in rewards]}})
    write_jsonl(os.path.join(args.out, "raggym_rerank", "dev.jsonl"), cases, ensure_ascii=False)
    zero = sum(1 for c in cases if c["count"] and not any(c["expected"]["rewards"]))
    print(f"raggym_rerank: {len(cases)} cases ({zero} with every reward 0)")
    print(f"python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
