"""Regenerate the ARENA evaluation parity sets (test/fixtures/parity-rl/arena_{f1,eval_averages,judge_parse}/dev.jsonl).

ARENA reports two kinds of numbers (scripts/run_evaluate_rulebase.sh, scripts/run_evaluate_gpt.sh): rule-based
EM / F1 / format / accuracy / relevance / bonus means (src/evaluate.py) and an LLM-judge accuracy
(src/gpt_eval.py). This script drives that code on seeded inputs of our own and writes each input with what
the authors' code returned:
  arena_f1               evaluate.normalize_answer, exact_match_score, f1_score              src/evaluate.py
  arena_eval_averages    evaluate.eval_jsonl_rulebase(input_file, output_file) on a written prediction file
                         (kind "rulebase"), and gpt_eval.py run as a script (`__main__`) on one (kind "judge"),
                         its judge call answered from the case's list of replies
  arena_judge_parse      get_score(reply) of src/gpt_eval.py (the evaluation) and of src/rewards.py (the
                         LLM-as-judge reward that training has commented out)

Nothing of the authors' code is copied here: the modules are loaded from a checkout at run time.

    git clone https://github.com/ren258/ARENA && git -C ARENA checkout 53f9569e1aff70b8bc307b2f7bdee6feee317cd8
    python3.11 scripts/parity/arena_eval.py --repo ARENA --out test/fixtures/parity-rl

Adaptation: src/gpt_eval.py imports `openai_call` from src/gpt_api.py, which builds an OpenAI client at import
(and raises without an API key); a stand-in `gpt_api` module is registered whose `openai_call(prompt,
temperature)` returns the case's next judge reply (None stands for the authors' "failed too many times"
return). `tqdm` (a progress bar around the loop, in gpt_eval.py and rewards.py) is replaced by a stand-in that
returns its iterable. `evaluate` is registered as the checkout's src/evaluate.py, so `from evaluate import ...`
in gpt_eval.py and rewards.py gets ARENA's module. The scripts' prints go to a discarded buffer; their output
files are written under a temporary folder laid out as their relative paths (../results/...) expect and read
back.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import random
import runpy
import sys
import tempfile
import types

from parity_io import generator_args, write_set

SEED = 4553


class Replies:
    """The stand-in judge: hands out the case's replies in call order, counting the calls."""

    def __init__(self):
        self.queue: list = []
        self.calls = 0

    def __call__(self, messages, temperature=0.0, model=None):
        self.calls += 1
        if not self.queue:
            raise SystemExit("the case has fewer judge replies than judge calls")
        return self.queue.pop(0)


def load(repo: str):
    src = os.path.join(repo, "src")
    judge = Replies()
    gpt_api = types.ModuleType("gpt_api")
    gpt_api.openai_call = judge
    sys.modules["gpt_api"] = gpt_api
    tqdm = types.ModuleType("tqdm")
    tqdm.tqdm = lambda it, *a, **k: it
    sys.modules["tqdm"] = tqdm

    def module(name: str, rel: str):
        spec = importlib.util.spec_from_file_location(name, os.path.join(src, rel))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        return mod

    evaluate = module("evaluate", "evaluate.py")
    gpt_eval = module("arena_gpt_eval", "gpt_eval.py")
    rewards = module("arena_rewards", "rewards.py")
    for name, m, attr in [("evaluate.py", evaluate, "eval_jsonl_rulebase"), ("gpt_eval.py", gpt_eval, "get_score"),
                          ("rewards.py", rewards, "get_score")]:
        if not hasattr(m, attr):
            raise SystemExit(f"src/{name} has no {attr}: is --repo a checkout of ARENA at 53f9569e?")
    return evaluate, gpt_eval, rewards, judge, os.path.join(src, "gpt_eval.py")


def error(e: BaseException) -> dict:
    return {"error": type(e).__name__, "message": str(e)}


# ------------------------------------------------------------------------------------------ inputs

WORDS = ["Paris", "paris", "the Eiffel Tower", "Eiffel", "tower", "Barack Obama", "Obama", "yes", "no", "Yes.", "noanswer",
         "1984", "3.14", "U.S.", "US", "u s", "a", "an", "the", "A", "The", "", " ", "constructor", "__proto__", "toString",
         "snake_case", "new_york", "New York", "rock & roll", "rock and roll", "o'neill", "o’neill", "O`Neill", "o´neill",
         "“quoted”", "the the", "x y x", "é", "É", "ß", "SS", "İstanbul", "istanbul", "ΣΑΣ", "σας", "日本", "😀", "\ua7cb",
         "\u0264", "–", "—", "\u00a0", "\u200b", "\x1c", "\u3000", "\n", "\t", "a\ua7cba", "a\U0001e4d0", "ｔｈｅ", "½",
         "an_apple", "the-end", "x.y", "'s", "ⅻ", "①"]
SEPS = ["", " ", "  ", "\t", "\u00a0", "_", "-", ".", ",", "\u3000", "\n"]


def phrase(rng: random.Random, k: int | None = None) -> str:
    n = rng.randint(0, 4) if k is None else k
    return "".join(rng.choice(WORDS) + rng.choice(SEPS) for _ in range(n)).rstrip(rng.choice(["", " ", "\n"]))


def variant(rng: random.Random, s: str) -> str:
    """The same answer written differently: case, punctuation, articles, underscores, repeats."""
    r = rng.randrange(7)
    if r == 0:
        return "".join(c.upper() if rng.random() < 0.5 else c.lower() for c in s)
    if r == 1:
        return rng.choice(["the ", "A ", "an ", "", "'", "“"]) + s + rng.choice([".", "!", "", " ", "'s", "”", "?"])
    if r == 2:
        return s.replace(" ", rng.choice(["_", "-", "  ", "\u00a0", "/"]))
    if r == 3:
        return s + " " + phrase(rng, rng.randint(1, 3))
    if r == 4:
        return " ".join(reversed(s.split(" ")))
    if r == 5:
        return (s + " ") * rng.randint(2, 5)
    return s


def f1_cases(rng: random.Random, n: int):
    out = []
    for i in range(n):
        k = i % 8
        golds = [phrase(rng) or rng.choice(WORDS) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
        if k == 6:
            golds = rng.choice([[], [""], [" ", "the"], ["a", "an"]])
        base = rng.choice(golds) if golds else phrase(rng)
        if k in (0, 1, 2):
            pred = variant(rng, base)
        elif k == 3:
            pred = base
        elif k == 4:
            pred = phrase(rng, rng.randint(1, 6))
        elif k == 5:
            pred = rng.choice(WORDS)
        elif k == 6:
            pred = rng.choice(["", " ", "the", "a an the", "...", base])
        else:
            pred = "".join(rng.choice(WORDS[:30] + ["_", "'", "‘", "’", "´", "`", "?", "-", "\u00a0"]) for _ in range(rng.randint(1, 12)))
        out.append({"prediction": pred, "golds": golds})
    return out


def response(rng: random.Random, golds: list, support: list) -> str:
    """A model output in ARENA's format, or one of the ways it goes wrong."""
    answer = variant(rng, rng.choice(golds)) if golds and rng.random() < 0.6 else phrase(rng)
    cited = rng.choice([support, sorted(support), support[::-1], support + [9], [], [1], [2, 1], [1, 1, 2]])
    rel = rng.choice([json.dumps(cited), json.dumps(cited).replace(" ", ""), str(cited), "[1, 2", "none", "", '["1"]',
                      "[1.0, 2.0]", "[true]", "{}"])
    sep = rng.choice(["\n", "", " ", "\n\n", "\t"])
    parts = [f"<relevance>{rel}</relevance>", f"<analysis>{phrase(rng)}</analysis>", f"<answer>{answer}</answer>"]
    r = rng.randrange(10)
    if r == 0:
        parts = parts[::-1]
    elif r == 1:
        parts = parts[1:]
    elif r == 2:
        parts[2] = f"<answer>{answer}"
    elif r == 3:
        parts[1] = "<analysis>a < b</analysis>"
    text = sep.join(parts)
    if rng.random() < 0.2:
        text = rng.choice(["", " ", "Sure!\n"]) + text + rng.choice(["", "\n", "\nmore", " "])
    return text


def items(rng: random.Random, n: int, kind: str) -> list[dict]:
    out = []
    for i in range(n):
        golds = [phrase(rng) or rng.choice(WORDS) for _ in range(rng.choice([1, 1, 2, 3]))]
        support = sorted(set(rng.randint(1, 6) for _ in range(rng.randint(0, 3))))
        it = {"prompt": f"q{i}", "model_response": response(rng, golds, support), "answers": golds, "supporting_ids": support}
        r = rng.random()
        if r < 0.12:
            it["model_response"] = None  # the inference left no output
        elif r < 0.18:
            del it["supporting_ids"]
        elif r < 0.22:
            it["model_response"] = rng.choice(["", "<answer></answer>", "<answer> </answer>", "no tags at all"])
        elif r < 0.24 and kind == "judge":
            del it[rng.choice(["model_response", "answers"])]
        if kind == "judge":
            del it["prompt"]
            it.pop("supporting_ids", None)
        out.append(it)
    return out


JUDGE_WORDS = ["yes", "Yes", "YES", "yes.", "Yes, it is.", "no", "No", "NO", "No.", "no, it is not", "Nope", "nope", "not",
               "None", "none", "yesterday", "Yesterday", "know", "I don't know", "I do not know", "unknown", "maybe", "Maybe?",
               "uncertain", "correct", "incorrect", "true", "false", "1", "0", "0.5", "100", "-1", "y", "n", "yEs", "nO", "Y E S",
               "N/A", "", " ", "\n", ".", "**Yes**", "**No**", "\"yes\"", "'no'", "ＹＥＳ", "ｙｅｓ", "ＮＯ", "ｎｏ", "Ｎo", "ye s",
               "Yes\u200b", "N\u200bo", "Y\u0307es", "İyes", "İ", "ǰ", "ß", "ΣΑΣ", "😀", "日本", "は い", "はい", "いいえ", "\u00a0yes",
               "\ua7cbno", "No\u0301", "Ｙes", "noyes", "yesno", "no yes", "Yes no", "snow", "eyes", "Eyes", "Noah", "canon",
               "The answer is correct: yes", "The answer does not match.", "Not correct.", "Answer: NO", "Answer: YES",
               "constructor", "__proto__", "toString"]


def reply(rng: random.Random):
    r = rng.random()
    if r < 0.04:
        return None
    if r < 0.5:
        return rng.choice(JUDGE_WORDS)
    if r < 0.8:
        return rng.choice(["", " ", "\n", "**"]).join(rng.choice(JUDGE_WORDS) for _ in range(rng.randint(1, 4)))
    if r < 0.9:
        return "".join(rng.choice("yesnoYESNO \n.,!?İıſ\u0130\u212a😀'\"") for _ in range(rng.randint(0, 10)))
    return rng.choice(JUDGE_WORDS) * rng.randint(20, 120)


# ------------------------------------------------------------------------------------------ sets


def run_rulebase(evaluate, rows: list[dict], tmp: str):
    inp, out = os.path.join(tmp, "in.jsonl"), os.path.join(tmp, "out.json")
    with open(inp, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    if os.path.exists(out):
        os.remove(out)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            evaluate.eval_jsonl_rulebase(inp, out)
    except Exception as e:
        return error(e)
    with open(out, encoding="utf-8") as f:
        res = json.load(f)
    keys = ["em_score", "f1_score", "format_score", "accuracy_score", "relevance_score", "bonus_score"]
    return {"total": res["total"], **{k: res[k] for k in keys}, "details": [[d[k] for k in keys] for d in res["details"]]}


def run_judge(script: str, judge: Replies, rows: list[dict], replies: list, limit: int | None, tmp: str):
    name, result = "ds", "run"
    work = os.path.join(tmp, "src")
    os.makedirs(os.path.join(tmp, "results", "vllm_inference_results", name), exist_ok=True)
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(tmp, "results", "vllm_inference_results", name, f"{result}.jsonl"), "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    out = os.path.join(tmp, "results", "eval_gpt", name, f"{result}.json")
    if os.path.exists(out):
        os.remove(out)
    judge.queue, judge.calls = list(replies), 0
    argv, cwd = sys.argv, os.getcwd()
    sys.argv = ["gpt_eval.py", "--name", name, "--result-name", result] + ([] if limit is None else ["--limit", str(limit)])
    os.chdir(work)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            runpy.run_path(script, run_name="__main__")
    except Exception as e:
        return {**error(e), "calls": judge.calls}
    finally:
        sys.argv = argv
        os.chdir(cwd)
    with open(out, encoding="utf-8") as f:
        res = json.load(f)
    if judge.queue:
        raise SystemExit(f"{len(judge.queue)} judge replies left unused")
    return {"correct": res["correct"], "total": res["total"], "accuracy": res["accuracy"], "scores": res["scores"],
            "calls": judge.calls}


def write(out_dir: str, name: str, rows: list[dict]):
    write_set(out_dir, name, rows)


def main():
    a = generator_args(300)
    evaluate, gpt_eval, rewards, judge, script = load(os.path.abspath(a.repo))

    rng = random.Random(SEED)
    rows = []
    for i, c in enumerate(f1_cases(rng, a.n)):
        exp = {"em": evaluate.exact_match_score(c["prediction"], c["golds"]), "f1": evaluate.f1_score(c["prediction"], c["golds"]),
               "normalized_prediction": evaluate.normalize_answer(c["prediction"]),
               "normalized_golds": [evaluate.normalize_answer(g) for g in c["golds"]]}
        rows.append({"id": f"f1-{i:04d}", **c, "expected": exp})
    write(a.out, "arena_f1", rows)

    rng = random.Random(SEED + 1)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.n):
            if i % 2 == 0:
                k = i % 40
                n = 0 if k == 0 else rng.choice([1, 1, 2, 3, 4, 5, 6, 8, 12])
                data = items(rng, n, "rulebase")
                if k == 10:
                    data = [{**d, "model_response": None} for d in data]
                elif k == 20 and data:
                    del data[rng.randrange(len(data))]["prompt"]
                elif k == 30 and data:
                    data[rng.randrange(len(data))]["model_response"] = rng.choice([5, ["<answer>x</answer>"], {"a": 1}])
                rows.append({"id": f"avg-{i:04d}", "kind": "rulebase", "items": data, "expected": run_rulebase(evaluate, data, tmp)})
            else:
                k = i % 40
                n = 0 if k == 1 else rng.choice([1, 1, 2, 3, 4, 5, 6, 8, 12])
                data = items(rng, n, "judge")
                limit = 0 if k == 21 else rng.choice([None, None, None, None, None, 1, 3, -1])
                # Only items whose extracted answer is non-empty reach the judge; give each of them a reply.
                sent = [d for d in data[: limit if limit is not None else len(data)]
                        if isinstance(d.get("model_response"), str) and evaluate.extract_answer(d["model_response"]) != ""
                        and "answers" in d]
                replies = [reply(rng) for _ in sent]
                c = {"id": f"avg-{i:04d}", "kind": "judge", "items": data, "replies": replies}
                if limit is not None:
                    c["limit"] = limit
                c["expected"] = run_judge(script, judge, data, replies, limit, tmp)
                rows.append(c)
    write(a.out, "arena_eval_averages", rows)

    rng = random.Random(SEED + 2)
    rows = []
    for i in range(a.n):
        r = reply(rng) if i % 10 else rng.choice(JUDGE_WORDS + [None])
        exp = {}
        for key, fn in [("eval", gpt_eval.get_score), ("reward", rewards.get_score)]:
            try:
                exp[key] = fn(r)
            except Exception as e:
                exp[key] = error(e)
        rows.append({"id": f"judge-{i:04d}", "reply": r, "expected": exp})
    write(a.out, "arena_judge_parse", rows)


if __name__ == "__main__":
    main()
