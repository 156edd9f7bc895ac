"""Regenerate the Search-R1 token-layout parity sets (test/fixtures/parity-rl/searchr1_{reward_placement,info_mask}/dev.jsonl).

Drives, with seeded inputs of our own, the code that decides which response tokens carry Search-R1's
sequence reward and which carry loss, and writes each input with what the authors' code returned:
  searchr1_reward_placement  verl/trainer/main_ppo.py: RewardManager(tokenizer, num_examine=0)(data), the
                             reward manager that writes each response's score on one token of a zero tensor
                             (with `_select_rm_score_fn`, which picks the score function by data source)
  searchr1_info_mask         search_r1/llm_agent/generation.py: LLMGenerationManager's
                             `_info_masked_concatenate_with_padding` (one call), and whole rollouts: the
                             right side built turn by turn with `_update_right_side`, `_compose_final_output`
                             (attention_mask, info_mask), then verl/trainer/ppo/ray_trainer.py
                             RayPPOTrainer._create_loss_mask (the loss mask the actor uses with state_masking)

Nothing of the authors' code is copied here; it is loaded at run time from a checkout:
- main_ppo.py and ray_trainer.py import ray, hydra and the whole trainer at module level, so the class
  `RewardManager`, the function `_select_rm_score_fn` and the method `RayPPOTrainer._create_loss_mask` are
  taken out of the files with Python's `ast` module and compiled as they are. The score function the
  reward manager selects (qa_em.compute_score_em) is replaced by a stand-in that returns the case's score
  and records the text it was given; the tokenizer's `decode` writes the token ids as text.
- generation.py is imported from the checkout as a module of a stand-in `search_r1.llm_agent` package
  (its own relative import of tensor_helper.py is real); `verl` (DataProto), `verl.utils.tracking` and
  `requests` are stand-ins, since these sets call nothing of them but `DataProto.from_dict`, here a plain
  holder of the dict. LLMGenerationManager is built with its real __init__ from a stand-in tokenizer
  (pad_token_id) and a GenerationConfig.
- DataProto (verl/protocol.py) needs tensordict, which is not installed; the reward manager gets a
  stand-in batch with what it reads: `batch` (a dict of tensors), `non_tensor_batch`, `len` and row `[i]`.
- A rollout case replaces the model and the search engine by given token-id tensors: each turn's response
  ids and observation ids go to `_update_right_side` in the order `run_llm_loop` calls it (with
  observations every turn, then once without for the final answer turn, when there is one).

    git clone https://github.com/PeterGriffinJin/Search-R1 && git -C Search-R1 checkout a14dc3a4ffc6fe88c1e95038d9738e21ba3f7a06
    python -m venv /tmp/venv && /tmp/venv/bin/pip install torch numpy
    /tmp/venv/bin/python scripts/parity/searchr1_masks.py --repo Search-R1 --out test/fixtures/parity-rl
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import random
import sys
import types

import torch

from parity_io import num, write_jsonl

SEED = 4501


# ---------------------------------------------------------------------------------------- loading


def from_ast(repo: str, rel: str, names: list[str], scope: dict) -> dict:
    """Compile the named top-level classes/functions (or Class.method) of a file, as they are, into scope."""
    with open(os.path.join(repo, rel), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    nodes = []
    for name in names:
        cls, _, meth = name.partition(".")
        found = None
        for node in tree.body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name == cls:
                found = node
                if meth:
                    found = next((m for m in node.body if isinstance(m, ast.FunctionDef) and m.name == meth), None)
        if found is None:
            raise SystemExit(f"{rel} has no {name}: is --repo a checkout of Search-R1 at a14dc3a4?")
        nodes.append(found)
    exec(compile(ast.Module(body=nodes, type_ignores=[]), os.path.join(repo, rel), "exec"), scope)
    return scope


class Holder:
    """Stand-in for verl's DataProto where only its dict of tensors is read."""

    def __init__(self, batch: dict):
        self.batch = batch
        self.meta_info = {}

    @classmethod
    def from_dict(cls, tensors: dict):
        return cls(dict(tensors))


class Rows:
    """Stand-in for a DataProto batch given to the reward manager: batch, non_tensor_batch, len, [i]."""

    def __init__(self, batch: dict, non_tensor: dict):
        self.batch = batch
        self.non_tensor_batch = non_tensor

    def __len__(self):
        return len(next(iter(self.batch.values())))

    def __getitem__(self, i: int):
        return Rows({k: v[i] for k, v in self.batch.items()}, {k: v[i] for k, v in self.non_tensor_batch.items()})


def load(repo: str):
    calls: list[str] = []

    def score_stub(solution_str, ground_truth, format_score=0.0, **_):
        calls.append(solution_str)
        return ground_truth["score"]

    rm_scope = from_ast(
        repo, "verl/trainer/main_ppo.py", ["_select_rm_score_fn", "RewardManager"],
        {"torch": torch, "DataProto": Rows, "qa_em": types.SimpleNamespace(compute_score_em=score_stub)},
    )
    loss_scope = from_ast(repo, "verl/trainer/ppo/ray_trainer.py", ["RayPPOTrainer._create_loss_mask"], {"torch": torch})

    verl = types.ModuleType("verl")
    verl.DataProto = Holder
    verl.__path__ = []
    tracking = types.ModuleType("verl.utils.tracking")
    tracking.Tracking = type("Tracking", (), {})
    utils = types.ModuleType("verl.utils")
    utils.__path__ = []
    sys.modules.update({"verl": verl, "verl.utils": utils, "verl.utils.tracking": tracking})
    if importlib.util.find_spec("requests") is None:
        sys.modules["requests"] = types.ModuleType("requests")
    for pkg in ("search_r1", "search_r1.llm_agent"):
        mod = types.ModuleType(pkg)
        mod.__path__ = [os.path.join(repo, *pkg.split("."))]
        sys.modules[pkg] = mod
    spec = importlib.util.spec_from_file_location(
        "search_r1.llm_agent.generation", os.path.join(repo, "search_r1", "llm_agent", "generation.py")
    )
    gen = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = gen
    spec.loader.exec_module(gen)
    return rm_scope["RewardManager"], calls, loss_scope["_create_loss_mask"], gen


def error(e: Exception) -> dict:
    return {"error": type(e).__name__, "message": str(e)}


# ---------------------------------------------------------------------------------------- reward placement

SOURCES = ["nq", "triviaqa", "popqa", "hotpotqa", "2wikimultihopqa", "musique", "bamboogle"]
SCORES = [0, 1, 0.0, 1.0, 0.2, 0.1, 0.8, -1.0, 0.5, 1e-8, 123456.789, 3.4028234663852886e38, 1e-40, 1e-46,
          float("nan"), float("inf"), float("-inf"), True, False]
# Finite scores beyond float32's range: torch refuses to write them into the float32 reward tensor.
OVERFLOW = [3.4028235e38, 1e39, -1e39]


class DecodeTokenizer:
    """decode() writes the ids as text, so the ids the reward manager scores can be read back."""

    pad_token_id = 0

    def decode(self, ids):
        return " ".join(str(int(x)) for x in ids.tolist())


def mask_part(rng: random.Random, width: int, kind: str) -> list[int]:
    if width == 0:
        return []
    if kind == "full":
        return [1] * width
    if kind == "none":
        return [0] * width
    if kind == "left":  # left padding: zeros, then the tokens
        k = rng.randint(0, width)
        return [0] * (width - k) + [1] * k
    if kind == "right":  # right padding: the tokens, then zeros
        k = rng.randint(0, width)
        return [1] * k + [0] * (width - k)
    return [rng.choice([0, 1]) for _ in range(width)]  # gaps


def placement_cases(RewardManager, calls, rng: random.Random, n: int) -> list[dict]:
    out = []
    for k in range(n):
        rows = rng.randint(1, 4)
        p = rng.choice([0, 1, 2, 3, 4, 5, 6])
        r = 0 if k % 97 == 13 else rng.randint(1, 7)
        pad = rng.choice([0, 0, 151643, 2])
        prompts, responses, masks, sources, scores = [], [], [], [], []
        for _ in range(rows):
            pm = mask_part(rng, p, rng.choice(["left", "left", "full", "none", "gaps"]))
            rm = mask_part(rng, r, rng.choice(["right", "right", "right", "full", "none", "gaps", "left"]))
            tok = lambda m: [rng.randint(3, 60) if v else pad for v in m]
            prompts.append(tok(pm))
            responses.append(tok(rm))
            masks.append(pm + rm)
            sources.append("gsm8k" if k % 41 == 7 else rng.choice(SOURCES))
            scores.append(rng.choice(OVERFLOW if rng.random() < 0.02 else SCORES))
        batch = {
            "prompts": torch.tensor(prompts, dtype=torch.long).reshape(rows, p),
            "responses": torch.tensor(responses, dtype=torch.long).reshape(rows, r),
            "attention_mask": torch.tensor(masks, dtype=torch.long).reshape(rows, p + r),
        }
        non_tensor = {
            "data_source": sources,
            "reward_model": [{"ground_truth": {"target": ["x"], "score": s}} for s in scores],
        }
        calls.clear()
        try:
            rewards = RewardManager(tokenizer=DecodeTokenizer(), num_examine=0)(Rows(batch, non_tensor))
            expected = {
                "token_level_rewards": [[num(v) for v in row] for row in rewards.tolist()],
                "dtype": str(rewards.dtype).replace("torch.", ""),
                "scored_ids": [[int(t) for t in c.split()] for c in calls],
            }
        except Exception as e:  # noqa: BLE001 - the authors' exception is the expected value
            expected = error(e)
            expected["scored_ids"] = [[int(t) for t in c.split()] for c in calls]
        out.append({
            "id": f"placement-{k:03d}",
            "prompts": prompts if p else [[] for _ in range(rows)],
            "responses": responses if r else [[] for _ in range(rows)],
            "attention_mask": masks,
            "data_source": sources,
            "scores": [s if isinstance(s, bool) else num(s) if isinstance(s, float) else s for s in scores],
            "expected": expected,
        })
    return out


# ---------------------------------------------------------------------------------------- info mask


def manager(gen, pad: int, max_prompt_length: int, max_start_length: int):
    tokenizer = types.SimpleNamespace(pad_token_id=pad, pad_token="<pad>")
    config = gen.GenerationConfig(
        max_turns=4, max_start_length=max_start_length, max_prompt_length=max_prompt_length,
        max_response_length=8, max_obs_length=8, num_gpus=1,
    )
    return gen.LLMGenerationManager(tokenizer=tokenizer, actor_rollout_wg=None, config=config)


def ids_row(rng: random.Random, width: int, pad: int, layout: str, pad_inside: float = 0.0) -> list[int]:
    """A row of token ids: `layout` right/left padded, all pad, or full; some tokens may equal the pad id."""
    if width == 0:
        return []
    k = {"right": rng.randint(0, width), "left": rng.randint(0, width), "none": 0, "full": width}[layout]
    toks = [pad if rng.random() < pad_inside else rng.randint(3, 40) for _ in range(k)]
    return toks + [pad] * (width - k) if layout != "left" else [pad] * (width - k) + toks


def tensor(rows: list[list[int]], width: int) -> torch.Tensor:
    return torch.tensor(rows, dtype=torch.long).reshape(len(rows), width)


def matrix(rng: random.Random, rows: int, width: int, pad: int, layouts: list[str], pad_inside: float) -> list[list[int]]:
    return [ids_row(rng, width, pad, rng.choice(layouts), pad_inside) for _ in range(rows)]


def concat_cases(gen, rng: random.Random, n: int) -> list[dict]:
    out = []
    for k in range(n):
        pad = rng.choice([0, 1, 151643])
        rows = rng.randint(1, 3)
        wp, wr = rng.randint(0, 5), rng.randint(0, 5)
        wi = None if k % 4 == 0 else rng.randint(0, 5)
        pad_inside = rng.choice([0.0, 0.0, 0.2])
        prompt = matrix(rng, rows, wp, pad, ["right", "left", "full", "none"], pad_inside)
        # The copy with earlier information blocks masked: the same ids, some replaced by the pad id.
        masked = [[pad if rng.random() < 0.3 else t for t in row] for row in prompt]
        response = matrix(rng, rows, wr, pad, ["right", "left", "full", "none"], pad_inside)
        info = None if wi is None else matrix(rng, rows, wi, pad, ["right", "full", "none"], pad_inside)
        pad_to_left = bool(k % 2)
        m = manager(gen, pad, 100, 100)
        args = [tensor(prompt, wp), tensor(masked, wp), tensor(response, wr)]
        if info is not None:
            args.append(tensor(info, wi))
        try:
            ids, with_mask = m._info_masked_concatenate_with_padding(*args, pad_to_left=pad_to_left)
            expected = {"ids": ids.tolist(), "with_info_mask": with_mask.tolist()}
        except Exception as e:  # noqa: BLE001
            expected = error(e)
        out.append({
            "id": f"concat-{k:03d}", "kind": "concat", "pad_id": pad, "pad_to_left": pad_to_left,
            "prompt": prompt, "prompt_with_mask": masked, "response": response, "info": info, "expected": expected,
        })
    return out


def rollout_cases(gen, create_loss_mask, rng: random.Random, n: int) -> list[dict]:
    out = []
    for k in range(n):
        pad = rng.choice([0, 151643, 151643, 2])
        rows = rng.randint(1, 4)
        wp = rng.randint(1, 6)
        max_start = rng.choice([2, 4, 6, 100])
        max_prompt = rng.choice([3, 6, 10, 100, 100])
        pad_inside = rng.choice([0.0, 0.0, 0.1, 0.3])
        prompt = matrix(rng, rows, wp, pad, ["left", "left", "full", "none"], 0.0)
        turns = []
        for t in range(rng.randint(0, 3)):
            wr, wo = rng.randint(0, 5), rng.choice([0, 0, 1, 2, 3, 4, 5, 6])
            turns.append({
                "responses": matrix(rng, rows, wr, pad, ["right", "right", "full", "none", "left"], pad_inside),
                "obs": matrix(rng, rows, wo, pad, ["right", "right", "full", "none"], pad_inside),
            })
        if not turns or rng.random() < 0.7:  # the final answer turn (run_llm_loop: when a row is still active)
            wr = rng.randint(0, 5)
            turns.append({"responses": matrix(rng, rows, wr, pad, ["right", "right", "full", "none", "left"], pad_inside), "obs": None})
        m = manager(gen, pad, max_prompt, max_start)
        try:
            initial = tensor(prompt, wp)
            left = {"input_ids": initial[:, -max_start:]}
            right = {"responses": initial[:, []], "responses_with_info_mask": initial[:, []]}
            for turn in turns:
                resp = tensor(turn["responses"], len(turn["responses"][0]))
                if turn["obs"] is None:
                    right = m._update_right_side(right, resp)
                else:
                    right = m._update_right_side(right, resp, tensor(turn["obs"], len(turn["obs"][0])))
            final = m._compose_final_output(left, right, {})
            batch, _ = create_loss_mask(None, final, {})
            b = batch.batch
            expected = {key: b[key].tolist() for key in ("prompts", "responses", "responses_with_info_mask", "attention_mask", "info_mask", "loss_mask")}
        except Exception as e:  # noqa: BLE001
            expected = error(e)
        out.append({
            "id": f"rollout-{k:03d}", "kind": "rollout", "pad_id": pad, "max_start_length": max_start,
            "max_prompt_length": max_prompt, "prompt": prompt, "turns": turns, "expected": expected,
        })
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", required=True, help="a checkout of PeterGriffinJin/Search-R1 at a14dc3a4")
    ap.add_argument("--out", default="test/fixtures/parity-rl")
    args = ap.parse_args()
    torch.set_num_threads(1)
    RewardManager, calls, create_loss_mask, gen = load(os.path.abspath(args.repo))
    sets = {
        "searchr1_reward_placement": placement_cases(RewardManager, calls, random.Random(SEED), 300),
        "searchr1_info_mask": concat_cases(gen, random.Random(SEED + 1), 100) + rollout_cases(gen, create_loss_mask, random.Random(SEED + 2), 200),
    }
    for name, cases in sets.items():
        write_jsonl(os.path.join(args.out, name, "dev.jsonl"), cases, ensure_ascii=False, allow_nan=False)
        errors = sum("error" in c["expected"] for c in cases)
        print(f"{name}: {len(cases)} cases ({errors} where the authors' code raises)")
    print(f"python {sys.version.split()[0]}, torch {torch.__version__}")


if __name__ == "__main__":
    main()
