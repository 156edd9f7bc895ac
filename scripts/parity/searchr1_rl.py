"""Regenerate the Search-R1 RL parity sets (test/fixtures/parity-rl/searchr1_*/dev.jsonl).

Drives three functions of Search-R1's verl fork, `verl/trainer/ppo/core_algos.py`, with seeded inputs of
our own and writes each input with the value the authors' function returned:
  searchr1_grpo_outcome   compute_grpo_outcome_advantage(token_level_rewards, eos_mask, index)
  searchr1_gae            compute_gae_advantage_return(token_level_rewards, values, eos_mask, gamma, lam)
  searchr1_kl_penalty     kl_penalty(logprob, ref_logprob, kl_penalty=kind)

Nothing of the authors' code is copied here: the module is loaded at run time from a checkout.

    git clone https://github.com/PeterGriffinJin/Search-R1 && git -C Search-R1 checkout a14dc3a4ffc6fe88c1e95038d9738e21ba3f7a06
    python -m venv /tmp/venv && /tmp/venv/bin/pip install torch numpy
    /tmp/venv/bin/python scripts/parity/searchr1_rl.py --repo Search-R1 --out test/fixtures/parity-rl

core_algos.py imports verl.utils.torch_functional (for masked_whiten), which imports tensordict and
transformers at module level for functions these sets never call; where those packages are missing, empty
stand-ins are registered so that only torch and numpy are needed. verl/__init__.py is not run.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import sys
import types

import numpy as np
import torch

from parity_io import num, stub_missing, write_jsonl

SEED = 45


def load_core_algos(repo: str):
    """Import core_algos.py and torch_functional.py from the checkout without running verl/__init__.py."""
    stub_missing({
        "tensordict": {"TensorDict": type("TensorDict", (), {})},
        "transformers": {"PreTrainedTokenizer": type("PreTrainedTokenizer", (), {})},
        "transformers.generation": {},
        "transformers.generation.logits_process": {
            n: type(n, (), {}) for n in ("TemperatureLogitsWarper", "TopKLogitsWarper", "TopPLogitsWarper")
        },
    })
    for pkg in ("verl", "verl.utils", "verl.trainer", "verl.trainer.ppo"):
        mod = types.ModuleType(pkg)
        mod.__path__ = [os.path.join(repo, *pkg.split("."))]
        sys.modules[pkg] = mod

    def load(dotted: str, rel: str):
        spec = importlib.util.spec_from_file_location(dotted, os.path.join(repo, rel))
        mod = importlib.util.module_from_spec(spec)
        sys.modules[dotted] = mod
        spec.loader.exec_module(mod)
        parent, _, leaf = dotted.rpartition(".")
        setattr(sys.modules[parent], leaf, mod)
        return mod

    load("verl.utils.torch_functional", "verl/utils/torch_functional.py")
    return load("verl.trainer.ppo.core_algos", "verl/trainer/ppo/core_algos.py")




def nums(t: torch.Tensor):
    return [[num(v) for v in row] for row in t.tolist()]


DTYPES = {"float32": torch.float32, "float64": torch.float64}


def as_stored(values, dtype: str):
    """The values as the tensor holds them (float32 rounds), so the vector records the exact input."""
    return torch.tensor(values, dtype=DTYPES[dtype])


# ---------------------------------------------------------------------------------------- value pools


def reward_value(rng: random.Random, style: str) -> float:
    if style == "em":
        return float(rng.choice([0, 1]))
    if style == "format":  # Search-R1's qa_em_format weights: 0, 0.1, 0.2, 0.8, 1 and the like
        return rng.choice([0.0, 0.1, 0.2, 0.8, 1.0, -0.1])
    if style == "ties":
        return rng.choice([0.3, 0.7])
    if style == "large":
        return rng.choice([1e6, -1e6, 3.5e5, 123456.789, 1e7])
    if style == "tiny":
        return rng.choice([1e-8, 2e-8, -1e-8, 3e-7, 1e-9])
    if style == "near":
        return 0.5 + rng.choice([0, 1, 2, -1]) * 1e-7
    return round(rng.uniform(-3, 3), rng.choice([1, 2, 6]))


STYLES = ["em", "format", "ties", "large", "tiny", "near", "mixed"]


def mask_row(rng: random.Random, length: int, kind: str):
    if kind == "full":
        return [1] * length
    if kind == "zeros":
        return [0] * length
    if kind == "prefix":  # a response that ended early: padding after EOS
        k = rng.randint(1, length)
        return [1] * k + [0] * (length - k)
    # gaps: retrieved passages inside the response (Search-R1's info_mask)
    return [rng.choice([0, 1, 1]) for _ in range(length)]


MASKS = ["full", "prefix", "gaps", "gaps", "zeros"]


# ---------------------------------------------------------------------------------------- GRPO outcome


def grpo_cases(ca, rng: random.Random, n: int):
    out = []
    for k in range(n):
        dtype = "float64" if k % 3 else "float32"
        style = STYLES[k % len(STYLES)]
        length = rng.randint(1, 6)
        groups = rng.randint(1, 4)
        sizes = [rng.choice([1, 1, 2, 3, 4, 5, 8]) for _ in range(groups)]
        uids = [f"q{rng.randint(0, 999)}-{g}" for g in range(groups)]
        if k % 11 == 0:  # uids that look alike, and a built-in name
            uids = ["constructor", "0", "00", "__proto__"][:groups]
        rows = [u for u, s in zip(uids, sizes) for _ in range(s)]
        if k % 2:
            rng.shuffle(rows)  # the group's rows need not be adjacent: grouping is by uid
        rewards, masks = [], []
        for _ in rows:
            m = mask_row(rng, length, rng.choice(MASKS))
            r = [0.0] * length
            placement = rng.choice(["last", "last", "last", "two", "masked", "none"])
            valid = [j for j, v in enumerate(m) if v] or [length - 1]
            if placement == "last":  # Search-R1 puts the outcome on the last valid token
                r[valid[-1]] = reward_value(rng, style)
            elif placement == "two":  # the authors sum every non-zero token, masked or not
                r[valid[0]] = reward_value(rng, style)
                r[length - 1] += reward_value(rng, style)
            elif placement == "masked":
                r[rng.randrange(length)] = reward_value(rng, style)
            rewards.append(r)
            masks.append(m)
        if k % 13 == 5:  # every reward of every group equal
            same = reward_value(rng, style)
            rewards = [[0.0] * (length - 1) + [same] for _ in rows]
        tr = as_stored(rewards, dtype)
        em = torch.tensor(masks, dtype=DTYPES[dtype])
        index = np.array(rows, dtype=object)
        adv, ret = ca.compute_grpo_outcome_advantage(token_level_rewards=tr, eos_mask=em, index=index)
        assert torch.equal(adv, ret)
        out.append({
            "id": f"grpo-{k:04d}",
            "dtype": dtype,
            "token_level_rewards": nums(tr),
            "eos_mask": masks,
            "index": rows,
            "expected": {"advantages": nums(adv)},
        })
    return out


# ---------------------------------------------------------------------------------------------- GAE


def gae_cases(ca, rng: random.Random, n: int):
    out = []
    params = [(1.0, 1.0), (1.0, 1.0), (0.99, 0.95), (0.5, 0.5), (0.0, 1.0), (1.0, 0.0), (0.9, 1.0)]
    for k in range(n):
        dtype = "float64" if k % 3 else "float32"
        gamma, lam = params[k % len(params)]
        batch = rng.randint(1, 4)
        length = rng.randint(1, 7)
        masks = [mask_row(rng, length, rng.choice(MASKS if k % 5 == 0 else MASKS[:-1])) for _ in range(batch)]
        if k % 17 == 3:  # a single valid token in the batch: masked_var refuses it
            masks = [[0] * length for _ in range(batch)]
            masks[0][0] = 1
        scale = rng.choice([1.0, 1.0, 1e-6, 1e4])
        rewards = [[0.0] * length for _ in range(batch)]
        for i, m in enumerate(masks):
            valid = [j for j, v in enumerate(m) if v] or [length - 1]
            rewards[i][valid[-1]] = reward_value(rng, STYLES[k % len(STYLES)])
            if k % 4 == 1:  # a per-token KL penalty on every token, as apply_kl_penalty leaves it
                for j in range(length):
                    rewards[i][j] -= round(rng.uniform(0, 0.01), 5)
        values = [[round(rng.uniform(-1, 1) * scale, 6) for _ in range(length)] for _ in range(batch)]
        if k % 9 == 2:
            values = [[0.0] * length for _ in range(batch)]
        tr, vv = as_stored(rewards, dtype), as_stored(values, dtype)
        em = torch.tensor(masks, dtype=DTYPES[dtype])
        case = {
            "id": f"gae-{k:04d}",
            "dtype": dtype,
            "token_level_rewards": nums(tr),
            "values": nums(vv),
            "eos_mask": masks,
            "gamma": gamma,
            "lam": lam,
        }
        try:
            adv, ret = ca.compute_gae_advantage_return(token_level_rewards=tr, values=vv, eos_mask=em, gamma=gamma, lam=lam)
            case["expected"] = {"advantages": nums(adv), "returns": nums(ret)}
        except Exception as e:  # masked_var raises on a batch with 0 or 1 valid tokens
            case["expected"] = {"error": type(e).__name__, "message": str(e)}
        out.append(case)
    return out


# ----------------------------------------------------------------------------------------- KL penalty


def logprob_pair(rng: random.Random, style: str):
    lp = -rng.expovariate(0.7)
    if style == "equal":
        return lp, lp
    if style == "tiny":
        return lp, lp + rng.choice([1e-9, -1e-9, 1e-6, -3e-7])
    if style == "clamp":  # ref far above: the ratio explodes and low_var_kl is clamped at 10
        return lp - rng.uniform(3, 40), lp
    if style == "below":  # ref far below the policy
        return lp, lp - rng.uniform(3, 40)
    if style == "zero":
        return 0.0, -rng.uniform(0, 5)
    if style == "edge":
        return rng.choice([(float("-inf"), -1.0), (-1.0, float("-inf")), (-700.0, -1e-3), (-1e-3, -750.0), (-20.0, 0.0)])
    return lp, -rng.expovariate(0.7)


KL_STYLES = ["equal", "tiny", "clamp", "below", "zero", "edge", "random", "random"]


def kl_cases(ca, rng: random.Random, n: int):
    out = []
    kinds = ["kl", "abs", "mse", "low_var_kl"]
    for k in range(n):
        dtype = "float64" if k % 3 else "float32"
        kind = kinds[k % 4] if k % 29 != 7 else rng.choice(["full", "k3", "KL"])
        batch, length = rng.randint(1, 3), rng.randint(1, 6)
        pairs = [[logprob_pair(rng, rng.choice(KL_STYLES)) for _ in range(length)] for _ in range(batch)]
        if dtype == "float32":  # float32 holds no -inf from a softmax over finite logits; keep its cases finite
            pairs = [[(max(a, -80.0), max(b, -80.0)) for a, b in row] for row in pairs]
        lp = as_stored([[a for a, _ in row] for row in pairs], dtype)
        ref = as_stored([[b for _, b in row] for row in pairs], dtype)
        case = {"id": f"kl-{k:04d}", "dtype": dtype, "kind": kind, "logprob": nums(lp), "ref_logprob": nums(ref)}
        try:
            case["expected"] = {"kl": nums(ca.kl_penalty(lp, ref, kl_penalty=kind))}
        except Exception as e:
            case["expected"] = {"error": type(e).__name__, "message": str(e)}
        out.append(case)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", required=True, help="a checkout of PeterGriffinJin/Search-R1 at a14dc3a4")
    ap.add_argument("--out", default="test/fixtures/parity-rl")
    ap.add_argument("--n", type=int, default=240, help="cases per set")
    args = ap.parse_args()
    torch.set_num_threads(1)
    ca = load_core_algos(os.path.abspath(args.repo))
    sets = {
        "searchr1_grpo_outcome": grpo_cases(ca, random.Random(SEED), args.n),
        "searchr1_gae": gae_cases(ca, random.Random(SEED + 1), args.n),
        "searchr1_kl_penalty": kl_cases(ca, random.Random(SEED + 2), args.n),
    }
    for name, cases in sets.items():
        write_jsonl(os.path.join(args.out, name, "dev.jsonl"), cases, ensure_ascii=False, allow_nan=False)
        errors = sum("error" in c["expected"] for c in cases)
        print(f"{name}: {len(cases)} cases ({errors} where the authors' code raises)")
    print(f"python {sys.version.split()[0]}, torch {torch.__version__}, numpy {np.__version__}")


if __name__ == "__main__":
    main()
