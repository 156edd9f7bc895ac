"""Regenerate the ARENA GRPO parity sets (test/fixtures/parity-rl/arena_*/dev.jsonl).

ARENA trains with its own copy of TRL's GRPOTrainer (`trl/trl/trainer/grpo_trainer.py`, TRL 0.16.0.dev0),
whose RL math is written inline in two methods rather than as functions:
  arena_grpo_advantage   `_generate_and_score_completions`: the statements from the weighted sum of the reward
                         functions (`rewards = (rewards_per_func * self.reward_weights ...).sum(dim=1)`) to the
                         normalisation (`advantages = (rewards - mean) / (std + 1e-4)`), groups of
                         `num_generations` consecutive completions
  arena_grpo_loss        `compute_loss`: the clipped surrogate plus beta times the k2 KL estimate, summed over
                         the completion mask of the whole batch and divided by its token count
Both are taken from the checkout at run time through Python's `ast` module and run on our own inputs: the
statements of the advantage are executed as they are, in a namespace holding the reward matrix and a
stand-in `self` (reward weights, num_generations); `compute_loss` is compiled without its profiling
decorator and called with a stand-in trainer whose `_get_per_token_logps` returns the given log-probabilities
(the model's forward pass is the only part replaced). Nothing of the authors' code is copied here. Only torch
is needed: the TRL package itself (transformers, accelerate, datasets) is not imported.

    git clone https://github.com/ren258/ARENA && git -C ARENA checkout 53f9569e1aff70b8bc307b2f7bdee6feee317cd8
    python -m venv /tmp/venv && /tmp/venv/bin/pip install torch
    /tmp/venv/bin/python scripts/parity/arena_grpo.py --repo ARENA --out test/fixtures/parity-rl
"""

from __future__ import annotations

import argparse
import ast
import collections
import os
import random
import sys
import types
import warnings

import torch

from parity_io import num, write_jsonl

SEED = 4545
TRAINER = "trl/trl/trainer/grpo_trainer.py"


def method(tree: ast.Module, name: str) -> ast.FunctionDef:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "GRPOTrainer":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    return item
    raise SystemExit(f"{TRAINER} has no GRPOTrainer.{name}: is --repo a checkout of ARENA at 53f9569e?")


def load(repo: str):
    with open(os.path.join(repo, TRAINER), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    # The advantage: from the weighted reward sum to the normalisation, as the method body has them.
    body = method(tree, "_generate_and_score_completions").body
    assigned = lambda s, n: isinstance(s, ast.Assign) and any(isinstance(t, ast.Name) and t.id == n for t in s.targets)
    start = next(i for i, s in enumerate(body) if assigned(s, "rewards") and "reward_weights" in ast.unparse(s))
    end = next(i for i, s in enumerate(body) if assigned(s, "advantages") and "std_grouped_rewards" in ast.unparse(s))
    advantage = compile(ast.Module(body=body[start : end + 1], type_ignores=[]), TRAINER, "exec")
    # The loss: the whole method, without the profiling decorator (it only times the call).
    fn = method(tree, "compute_loss")
    fn.decorator_list = []
    scope = {"torch": torch}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), TRAINER, "exec"), scope)
    return advantage, scope["compute_loss"]




# ---------------------------------------------------------------------------------------- advantage


def component(rng: random.Random, k: int, style: str) -> float:
    """ARENA's four reward functions: format, accuracy, relevance, bonus (see src/rewards.py)."""
    if style == "ties":
        return [1.0, 1.0, 0.5, 0.0][k]
    if style == "odd":
        return rng.choice([0.0, 1e-8, -1e-8, 1e6, 0.3333333, 2.5, -1.0])
    if k == 0:
        return rng.choice([0.0, 1.0])
    if k == 1:
        return rng.choice([0.0, 1.0, round(rng.random(), rng.choice([2, 6]))])
    if k == 2:
        return rng.choice([0.0, 0.5, 1.0, round(rng.random(), 3)])
    return rng.choice([0.0, 0.0, 0.5])


def advantage_cases(code, rng: random.Random, n: int):
    out = []
    for k in range(n):
        g = [7, 7, 7, 2, 3, 4, 5, 8, 1][k % 9]  # ARENA's runs: num_generations 7
        groups = rng.randint(1, 4)
        weights = [1.0, 1.0, 1.0, 1.0] if k % 5 else [round(rng.uniform(0, 2), 2) for _ in range(4)]
        style = ["normal", "normal", "ties", "odd"][k % 4]
        rows = [[component(rng, j, style if rng.random() < 0.7 else "normal") for j in range(4)] for _ in range(groups * g)]
        if k % 6 == 1:  # a group that all score alike
            rows[:g] = [list(rows[0]) for _ in range(g)]
        rpf = torch.tensor(rows, dtype=torch.float32)
        ns = {"torch": torch, "rewards_per_func": rpf, "device": "cpu",
              "self": types.SimpleNamespace(reward_weights=torch.tensor(weights, dtype=torch.float32), num_generations=g)}
        exec(code, ns)
        out.append({
            "id": f"arena-adv-{k:04d}",
            "num_generations": g,
            "reward_weights": [float(w) for w in torch.tensor(weights, dtype=torch.float32).tolist()],
            "rewards_per_func": [[float(v) for v in r] for r in rpf.tolist()],
            "expected": {"rewards": [num(v) for v in ns["rewards"].tolist()], "advantages": [num(v) for v in ns["advantages"].tolist()]},
        })
    return out


# --------------------------------------------------------------------------------------------- loss


class Trainer(types.SimpleNamespace):
    """The attributes compute_loss reads; the forward pass returns the case's log-probabilities."""

    def _get_per_token_logps(self, model, input_ids, attention_mask, logits_to_keep):
        assert logits_to_keep == self.logps.shape[1]
        return self.logps


def loss_cases(compute_loss, rng: random.Random, n: int):
    out = []
    for k in range(n):
        batch, length = rng.randint(1, 6), rng.randint(1, 8)
        beta = [0.04, 0.04, 0.001, 1.0, 0.5][k % 5]
        iterations = 1 if k % 3 == 0 else 2  # 1: old log-probs are the current ones (ratio 1)
        eps = 0.2 if k % 4 else rng.choice([0.1, 0.28])
        mask = [[1] * (c := rng.randint(1, length)) + [0] * (length - c) for _ in range(batch)]
        if k % 2:  # gaps as well as padding
            mask = [[v if rng.random() < 0.8 else 0 for v in m] for m in mask]
            if not any(map(any, mask)):
                mask[0][0] = 1
        logp = [[-rng.expovariate(rng.choice([0.5, 2, 20])) for _ in range(length)] for _ in range(batch)]
        spread = rng.choice([0.0, 1e-4, 0.05, 0.5, 3.0])
        old = [[x + rng.gauss(0, spread) for x in r] for r in logp]
        ref = [[x + rng.gauss(0, rng.choice([0.0, 1e-3, 0.3, 2.0])) for x in r] for r in logp]
        adv = [rng.choice([0.0, 1.2, -0.8, round(rng.gauss(0, 1), 4), 1e4, -1e-6]) for _ in range(batch)]
        t = lambda v: torch.tensor(v, dtype=torch.float32)
        lp, old_t, ref_t, adv_t = t(logp), t(old), t(ref), t(adv)
        trainer = Trainer(
            logps=lp, beta=beta, epsilon=eps, num_iterations=iterations,
            control=types.SimpleNamespace(should_evaluate=False),
            _metrics={"train": collections.defaultdict(list), "eval": collections.defaultdict(list)},
            accelerator=types.SimpleNamespace(gather_for_metrics=lambda x: x),
        )
        inputs = {
            "prompt_ids": torch.zeros((batch, 2), dtype=torch.long), "prompt_mask": torch.ones((batch, 2), dtype=torch.long),
            "completion_ids": torch.zeros((batch, length), dtype=torch.long), "completion_mask": torch.tensor(mask, dtype=torch.long),
            "ref_per_token_logps": ref_t, "old_per_token_logps": old_t, "advantages": adv_t,
        }
        loss = compute_loss(trainer, None, inputs)
        case = {
            "id": f"arena-loss-{k:04d}", "beta": beta, "epsilon": eps, "num_iterations": iterations,
            "per_token_logps": lp.tolist(), "old_per_token_logps": old_t.tolist() if iterations > 1 else None,
            "ref_per_token_logps": ref_t.tolist(), "advantages": adv_t.tolist(), "completion_mask": mask,
            "expected": {"loss": num(loss.item())},
        }
        out.append(case)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", required=True, help="a checkout of ren258/ARENA at 53f9569e")
    ap.add_argument("--out", default="test/fixtures/parity-rl")
    ap.add_argument("--n", type=int, default=240, help="cases per set")
    args = ap.parse_args()
    torch.set_num_threads(1)
    advantage, compute_loss = load(os.path.abspath(args.repo))
    warnings.filterwarnings("ignore", message="std\\(\\): degrees of freedom")  # a group of one: NaN, recorded as such
    sets = {
        "arena_grpo_advantage": advantage_cases(advantage, random.Random(SEED), args.n),
        "arena_grpo_loss": loss_cases(compute_loss, random.Random(SEED + 1), args.n),
    }
    for name, cases in sets.items():
        write_jsonl(os.path.join(args.out, name, "dev.jsonl"), cases, ensure_ascii=False, allow_nan=False)
        print(f"{name}: {len(cases)} cases")
    print(f"python {sys.version.split()[0]}, torch {torch.__version__}")


if __name__ == "__main__":
    main()
