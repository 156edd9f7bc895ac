"""Regenerate the Search-R1 text parity sets (test/fixtures/parity-rl/searchr1_{subem,postprocess}/dev.jsonl).

Drives two pure-Python functions of Search-R1 with seeded inputs of our own and writes each input with the
value the authors' function returned (or the exception it raised):
  searchr1_subem        subem_check(prediction, golden_answers)          verl/utils/reward_score/qa_em.py
  searchr1_postprocess  LLMGenerationManager.postprocess_predictions(None, [prediction])
                                                                          search_r1/llm_agent/generation.py

Nothing of the authors' code is copied here: the modules are read from a checkout at run time.

    git clone https://github.com/PeterGriffinJin/Search-R1 && git -C Search-R1 checkout a14dc3a4ffc6fe88c1e95038d9738e21ba3f7a06
    python3.11 scripts/parity/searchr1_text.py --repo Search-R1 --out test/fixtures/parity-rl

qa_em.py imports only the standard library and is loaded as it is. generation.py imports torch, requests and
verl at module level for everything else it does; postprocess_predictions uses only `re`, and never reads
`self`, so that one method is taken from the file with Python's `ast` module and compiled on its own (with
`re` and the typing names it annotates with), which needs no third-party package at all.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import random
import typing

from parity_io import generator_args, write_set

SEED = 4547

# Inputs that a JavaScript port can get wrong: built-in property names, Unicode whose case or class differs
# between engines or versions, Python's whitespace set, articles beside non-ASCII letters.
ODD_WORDS = [
    "constructor", "toString", "__proto__", "valueOf", "hasOwnProperty", "prototype", "length", "NaN",
    "Infinity", "undefined", "null", "true", "None", "0", "-0", "1e400",
]
UNICODE = [
    "é", "É", "ß", "ẞ", "İ", "ı", "Σ", "ΣΑΣ", "ﬁ", "Ǆ", "ǅ", "Ⅻ", "\ua7cb", "\u1c89", "\U00010d50", "\U00016ea0",
    "😀", "𝔸", "\u0301", "e\u0301", "日本", "Ωmega", "–", "“", "”", "’", "…", "¿", "·", "\u00a0", "\u200b",
    "\ufeff", "\x1c", "\x1f", "\x85", "\u2028", "\u3000", "\t", "\n", "\v", "\f", "\r",
]
ARTICLES = ["a", "an", "the", "A", "The", "THE", "théa", "aé", "éa", "the_", "_the", "a1", "the\u0301", "an’"]
PUNCT = list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
WORDS = [
    "paris", "Paris", "france", "barack obama", "Obama", "1984", "3.14", "new york city", "york", "river", "u.s.",
    "U.S.A.", "rock & roll", "o'neill", "x", "", " ", "answer", "search",
]


def load_qa_em(repo: str):
    spec = importlib.util.spec_from_file_location("qa_em", os.path.join(repo, "verl/utils/reward_score/qa_em.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def load_postprocess(repo: str):
    """The method `postprocess_predictions` of generation.py, compiled on its own (see the module docstring)."""
    path = os.path.join(repo, "search_r1/llm_agent/generation.py")
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "postprocess_predictions":
            mod = ast.Module(body=[node], type_ignores=[])
            ns = {"re": __import__("re"), "List": typing.List, "Any": typing.Any, "Tuple": typing.Tuple}
            exec(compile(mod, path, "exec"), ns)
            return ns["postprocess_predictions"]
    raise SystemExit(f"postprocess_predictions not found in {path}: is the checkout at a14dc3a4?")


def piece(rng: random.Random) -> str:
    k = rng.random()
    if k < 0.3:
        return rng.choice(WORDS)
    if k < 0.5:
        return rng.choice(UNICODE)
    if k < 0.65:
        return rng.choice(ARTICLES)
    if k < 0.8:
        return rng.choice(PUNCT)
    if k < 0.9:
        return rng.choice(ODD_WORDS)
    return "".join(chr(rng.randrange(0x20, 0x3000)) for _ in range(rng.randint(1, 4)))


def phrase(rng: random.Random, n: int | None = None) -> str:
    n = rng.randint(0, 6) if n is None else n
    seps = [" ", " ", " ", "", "\n", "\t", "\u00a0", "\u200b", "\x1c", "  "]
    return "".join(piece(rng) + rng.choice(seps) for _ in range(n)).rstrip(" ") if n else ""


def subem_cases(rng: random.Random, n: int):
    out = []
    for i in range(n):
        k = i % 8
        gold = phrase(rng, rng.randint(1, 3))
        if k == 0:  # the gold inside the prediction, with noise around it
            pred = phrase(rng) + rng.choice([" ", "", ", ", "the "]) + gold + rng.choice([" ", "", ".", " the"]) + phrase(rng)
        elif k == 1:  # case and punctuation variants of the gold
            pred = "".join(ch.upper() if rng.random() < 0.5 else ch for ch in gold) + rng.choice(PUNCT)
        elif k == 2:  # built-in names as prediction and gold
            gold = rng.choice(ODD_WORDS)
            pred = rng.choice([gold, gold.lower(), "the " + gold, phrase(rng, 2), ""])
        elif k == 3:  # Unicode on both sides
            gold = rng.choice(UNICODE) + rng.choice(["", " ", "x"])
            pred = phrase(rng, 3) + rng.choice(UNICODE).lower() + rng.choice(UNICODE)
        elif k == 4:  # empties
            gold = rng.choice(["", " ", "the", "a an the", ".", "\u200b", "\x1c"])
            pred = rng.choice(["", " ", "x", phrase(rng)])
        elif k == 5:  # huge text
            pred = phrase(rng, 3) * rng.randint(100, 400) + rng.choice(["", gold])
        else:
            pred = phrase(rng)
        golds: object
        r = rng.random()
        if r < 0.35:
            golds = gold
        elif r < 0.9:
            golds = [phrase(rng, rng.randint(0, 3)) for _ in range(rng.randint(0, 3))] + [gold]
            rng.shuffle(golds)
        else:
            golds = []
        out.append({"prediction": pred, "golden_answers": golds})
    return out


TAGS = ["<search>", "</search>", "<answer>", "</answer>", "<Search>", "</ANSWER>", "<search >", "< search>",
        "<information>", "</information>", "<think>", "</think>", "</", "<", ">", "<answer></answer>",
        "<search></search>"]


def post_cases(rng: random.Random, n: int):
    out = []
    for i in range(n):
        k = i % 9
        body = phrase(rng, rng.randint(0, 4))
        tag = rng.choice(["search", "answer"])
        other = "answer" if tag == "search" else "search"
        ws = rng.choice(["", " ", "\n", "\t", "\u00a0", "\u3000", "\x1c", "\u200b", "\ufeff", "\x85", " \n "])
        if k == 0:  # one well-formed pair amid text
            pred = f"{phrase(rng)}<{tag}>{ws}{body}{ws}</{tag}>{phrase(rng)}"
        elif k == 1:  # nested pairs
            pred = f"<{tag}>{body}<{other}>{phrase(rng, 2)}</{other}>{phrase(rng, 1)}</{tag}>"
        elif k == 2:  # mismatched close, then maybe a matching one
            pred = f"<{tag}>{body}</{other}>" + rng.choice(["", f"</{tag}>", f"<{other}>x</{other}>"])
        elif k == 3:  # unclosed, or cut at the stop string
            pred = f"{phrase(rng)}<{tag}>{body}" + rng.choice(["", f"</{tag}", "<", f"</{tag[:3]}"])
        elif k == 4:  # several pairs: the first complete one counts
            pred = "".join(f"<{rng.choice(['search', 'answer'])}>{phrase(rng, 1)}</{rng.choice(['search', 'answer'])}>"
                           for _ in range(rng.randint(2, 5)))
        elif k == 5:  # built-in names as content, empty pairs
            pred = f"<{tag}>{ws}{rng.choice(ODD_WORDS + [''])}{ws}</{tag}>"
        elif k == 6:  # random tag soup
            pred = "".join(rng.choice(TAGS) if rng.random() < 0.5 else piece(rng) for _ in range(rng.randint(1, 12)))
        elif k == 7:  # huge text
            pred = phrase(rng, 3) * rng.randint(100, 400) + f"<{tag}>{body}</{tag}>" * rng.randint(0, 1)
        else:
            pred = rng.choice(["", " ", "<search>", "</search>", "<answer></answer>", "<search>\n</search>",
                               "<answer> <answer> x </answer> </answer>", "<search><search>q</search>"])
        out.append({"prediction": pred})
    return out


def call(fn, *args):
    try:
        return {"expected": fn(*args)}
    except Exception as e:  # the exception is the fact to record
        return {"error": {"type": type(e).__name__, "message": str(e)}}


def write(out_dir: str, name: str, rows: list[dict]):
    write_set(out_dir, name, rows)


def main():
    a = generator_args(400)
    qa_em = load_qa_em(a.repo)
    post = load_postprocess(a.repo)

    rng = random.Random(SEED)
    rows = []
    for i, c in enumerate(subem_cases(rng, a.n)):
        rows.append({"id": f"subem-{i:04d}", **c, **call(qa_em.subem_check, c["prediction"], c["golden_answers"])})
    write(a.out, "searchr1_subem", rows)

    rng = random.Random(SEED + 1)
    rows = []
    for i, c in enumerate(post_cases(rng, a.n)):
        r = call(post, None, [c["prediction"]])
        if "expected" in r:
            actions, contents = r["expected"]
            r = {"expected": {"action": actions[0], "content": contents[0]}}
        rows.append({"id": f"post-{i:04d}", **c, **r})
    write(a.out, "searchr1_postprocess", rows)


if __name__ == "__main__":
    main()
