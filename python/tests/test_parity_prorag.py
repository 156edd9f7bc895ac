"""ProRAG parity on the TRL path: `dual_advantages(..., form="authors")` against what the authors' trainer
(prorag/rl/trainer.py `_generate_and_score_completions` at c7a64110) returned on seeded inputs
(test/fixtures/parity-rl/prorag_rl_advantage, the file the TypeScript test reads; its SOURCE.md says how it was made).

A_out is computed here as TRL's GRPOTrainer computes it with scale_rewards="group" (the advantage
ProRAGGRPOTrainer receives): float32, (r - mean) / (unbiased std + 1e-4) over each block of num_generations.
"""

import json
import math
from pathlib import Path

import pytest
import torch

from ragtrail_trl.prorag import dual_advantages

FIXTURE = Path(__file__).resolve().parents[2] / "test" / "fixtures" / "parity-rl" / "prorag_rl_advantage" / "dev.jsonl"
CASES = [json.loads(line) for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line]


def value(x):
    return float(x) if not isinstance(x, str) else {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}[x]


def inputs(case):
    width = max([len(m) for m in case["mask"]] + [0])
    pad = lambda row, v: row + [v] * (width - len(row))  # noqa: E731
    scores = torch.tensor([pad([value(x) for x in r], 0.0) for r in case["scores"]], dtype=torch.float32).reshape(len(case["mask"]), width)
    mask = torch.tensor([pad(m, 0) for m in case["mask"]], dtype=torch.long).reshape(len(case["mask"]), width)
    g = case["num_generations"]
    rewards = torch.tensor(case["outcome"], dtype=torch.float32).view(-1, g)
    with pytest.warns(UserWarning) if g == 1 else _nothing():
        outcome = ((rewards - rewards.mean(dim=1, keepdim=True)) / (rewards.std(dim=1, keepdim=True) + 1e-4)).view(-1)
    return outcome, scores, mask


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_parity_set_size():
    assert len(CASES) >= 200


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_dual_advantages_authors_form(case):
    outcome, scores, mask = inputs(case)
    if "error" in case["expected"]:  # every completion empty: the code's view(-1, G, 0) raises
        assert scores.shape[1] == 0 and case["prm_beta"] > 0
        return
    ours = dual_advantages(outcome, scores, mask, mask, case["num_generations"], weight=case["prm_beta"], form="authors")
    theirs = torch.tensor([[value(x) for x in r] for r in case["expected"]["advantages"]], dtype=torch.float32)
    if case["prm_beta"] == 0:  # the code keeps one advantage per completion, [B, 1]
        ours = ours[:, :1] if ours.shape[1] else outcome[:, None]
    assert ours.shape == theirs.shape
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5, equal_nan=True)
