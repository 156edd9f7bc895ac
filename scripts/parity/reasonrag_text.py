"""Regenerate the ReasonRAG text parity sets (test/fixtures/parity-rl/reasonrag_{judge_score,eval_answer}/dev.jsonl).

Drives two pure-Python pieces of ReasonRAG's `pipeline/reasonrag_pipeline.py` with seeded inputs of our own
and writes each input with the value the authors' code returned (or the exception it raised):
  reasonrag_judge_score  the judge-score parse of `evaluate_thoughts`:
                           Q = extract_last_number(reply); Q = float(Q) / 100
  reasonrag_eval_answer  reason_rag_pred_parse(dataset): the answer the evaluation scores, for one item

Nothing of the authors' code is copied here: the functions are read from a checkout at run time.

    git clone https://github.com/wlzhang2020/ReasonRAG && git -C ReasonRAG checkout 225e249a26fa0d1d2fd3c9bf60855d725b7cd435
    python3.11 scripts/parity/reasonrag_text.py --repo ReasonRAG --out test/fixtures/parity-rl

The module imports FlashRAG, transformers and psutil at module level for the pipeline; the two functions use
only `re`, so each is taken out of the file with Python's `ast` module and compiled on its own. The two
statements of `evaluate_thoughts` that parse the judge's reply are taken out the same way (the method's
generator call is the only part not run: the reply is the case's input). Python 3.11: `\\d` is Unicode 14's
decimal digits, which decides what the parse reads.
"""

from __future__ import annotations

import ast
import os
import random
import re

from parity_io import generator_args, num, write_set

SEED = 4549

FILE = "pipeline/reasonrag_pipeline.py"


def load(repo: str):
    path = os.path.join(repo, FILE)
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name in ("extract_last_number", "reason_rag_pred_parse") \
                and node.col_offset == 0:
            found[node.name] = node
        if isinstance(node, ast.FunctionDef) and node.name == "evaluate_thoughts":
            # Its last three statements: the parse, the division, the return.
            found["judge"] = ast.FunctionDef(
                name="judge", args=ast.arguments(posonlyargs=[], args=[ast.arg("evaluation_response")], kwonlyargs=[],
                                                 kw_defaults=[], defaults=[]),
                body=node.body[-3:], decorator_list=[], returns=None)
            ast.copy_location(found["judge"], node)
    if set(found) != {"extract_last_number", "reason_rag_pred_parse", "judge"}:
        raise SystemExit(f"functions not found in {path}: is the checkout at 225e249a?")
    src = "\n".join(ast.unparse(s) for s in found["judge"].body)
    if "extract_last_number(evaluation_response)" not in src or "/ 100" not in src:
        raise SystemExit(f"evaluate_thoughts has changed: {src}")
    mod = ast.fix_missing_locations(ast.Module(body=list(found.values()), type_ignores=[]))
    ns = {"re": re}
    exec(compile(mod, path, "exec"), ns)
    return ns["judge"], ns["reason_rag_pred_parse"]


class Item:
    """The two members of FlashRAG's dataset item that reason_rag_pred_parse uses."""

    def __init__(self, pred: str):
        self.pred = pred
        self.output = {}

    def update_output(self, key, value):
        self.output[key] = value


DIGITS = ["0", "1", "5", "7", "9", "٣", "۸", "५", "৭", "８", "𝟓", "๒", "᠑", "\U00011f53", "\U0001e4f5", "\U00010d42",
          "\U0001ccf7", "²", "½", "Ⅻ", "①"]
WORDS = ["So the score is", "So the score is:", "score", "Score:", "/100", "out of 100", "The reasoning is flawed.",
         "[Score]", "step 2", "Step 3 of 4", "1e5", "3.75", "−12", "-", "+", "0x1F", "constructor", "__proto__",
         "toString", "NaN", "Infinity", "\n", " ", "", "：", "，", "%"]


def number(rng: random.Random) -> str:
    k = rng.random()
    if k < 0.5:
        return str(rng.randint(0, 100))
    if k < 0.6:
        return rng.choice(["+", "-", "", "--", "+-"]) + str(rng.randint(0, 1000))
    if k < 0.7:
        return f"{rng.uniform(0, 100):.{rng.randint(1, 3)}f}"
    if k < 0.85:
        return "".join(rng.choice(DIGITS) for _ in range(rng.randint(1, 4)))
    if k < 0.93:
        return "0" * rng.randint(1, 5) + str(rng.randint(0, 99))
    return rng.choice(["9" * rng.randint(300, 400), "1" + "0" * rng.randint(305, 320), "0" * 400, "-" + "9" * 350])


def judge_cases(rng: random.Random, n: int):
    out = []
    for i in range(n):
        k = i % 6
        if k == 0:
            reply = f"{rng.choice(WORDS)} {number(rng)}. So the score is {number(rng)}{rng.choice(['', '.', '/100', '%', ' '])}"
        elif k == 1:
            reply = " ".join(rng.choice(WORDS) if rng.random() < 0.6 else number(rng) for _ in range(rng.randint(0, 8)))
        elif k == 2:  # no number at all, or only digits Python 3.11 does not read
            reply = rng.choice(["", "So the score is [Score].", "no grade", "So the score is \U00011f55\U00011f50",
                                "So the score is ²", "So the score is ½", "Ⅻ", "①②", "\U0001ccf9"]) + rng.choice(["", "."])
        elif k == 3:
            reply = f"So the score is {number(rng)}"
        elif k == 4:  # long replies
            reply = (" ".join(rng.choice(WORDS) for _ in range(20)) + "\n") * rng.randint(3, 25) + f"So the score is {number(rng)}."
        else:
            reply = "".join(rng.choice(DIGITS + WORDS + ["-", "+", ".", " "]) for _ in range(rng.randint(1, 12)))
        out.append({"reply": reply})
    return out


TAGS = ["<answer>", "</answer>", "<answer >", "<answer id=1>", "<query>", "</query>", "answer>", "<answer", "<", ">",
        "So the answer is", "So the answer is ", "so the answer is", "."]
TEXT = ["Paris", "St. Louis", "U.S.", "Barack  Obama", "1984", "3.14", "the Beatles", "  ", "\n", "\t", "\u00a0", "\u3000",
        "\x1c", "\u200b", "constructor", "__proto__", "toString", "日本", "é", "😀", "", "...", "yes", "no"]


def pred_cases(rng: random.Random, n: int):
    out = []
    for i in range(n):
        k = i % 7
        word = lambda: rng.choice(TEXT)  # noqa: E731
        if k == 0:
            pred = f"{word()} {word()}. So the answer is {rng.choice(['', '<answer>'])}{word()}{rng.choice(['', '</answer>'])}{rng.choice(['', '.', '. ' + word()])}"
        elif k == 1:  # several answers, nested or spanning lines
            pred = "".join(f"<answer>{word()}{rng.choice(['', chr(10), '<b>'])}{word()}</answer>{word()}" for _ in range(rng.randint(1, 3)))
        elif k == 2:  # the prefix twice, or the prefix with no answer after it
            pred = f"So the answer is {word()}. So the answer is {word()}" if rng.random() < 0.5 else f"{word()} So the answer is"
        elif k == 3:  # tag soup
            pred = "".join(rng.choice(TAGS) if rng.random() < 0.5 else word() for _ in range(rng.randint(1, 12)))
        elif k == 4:  # double spaces and whitespace around the answer
            pred = f"So the answer is{rng.choice(TEXT[7:13])}{word()}   {word()}{rng.choice(TEXT[7:13])}"
        elif k == 5:  # long
            pred = (word() + " " + word() + " ") * rng.randint(50, 200) + rng.choice(["", f"So the answer is <answer>{word()}</answer>"])
        else:
            pred = rng.choice(["", " ", ".", "So the answer is", "<answer></answer>", "<answer>St. Louis</answer>",
                               "<query>x</query> So the answer is <answer>y</answer>", "answer>answer>", "<answer<answer>x</answer>"])
        out.append({"pred": pred})
    return out


def write(out_dir: str, name: str, rows: list[dict]):
    write_set(out_dir, name, rows, raising=sum('error' in r for r in rows))


def main():
    a = generator_args(300)
    judge, pred_parse = load(a.repo)

    rng = random.Random(SEED)
    rows = []
    for i, c in enumerate(judge_cases(rng, a.n)):
        try:
            r = {"expected": num(judge(c["reply"]))}
        except Exception as e:  # the exception is the fact to record
            r = {"error": {"type": type(e).__name__, "message": str(e)}}
        rows.append({"id": f"judge-{i:04d}", **c, **r})
    write(a.out, "reasonrag_judge_score", rows)

    rng = random.Random(SEED + 1)
    rows = []
    for i, c in enumerate(pred_cases(rng, a.n)):
        item = Item(c["pred"])
        pred_parse([item])
        rows.append({"id": f"pred-{i:04d}", **c, "expected": item.output["pred"]})
    write(a.out, "reasonrag_eval_answer", rows)


if __name__ == "__main__":
    main()
