"""GRPO through TRL's environment_factory against ragtrail's real serve-env (PRM step rewards, F1 outcome)."""

import json
import math

import pytest

GRPO = {"num_generations": 4, "per_device_train_batch_size": 4, "learning_rate": 1e-3, "seed": 0}


def train_ids(world):
    with open(world["questions"]) as handle:
        return {row["id"] for row in map(json.loads, handle) if row["metadata"].get("split") == "train"}


def test_grpo_loop_with_random_model(run_training, world, env_server):
    """A random model almost never writes a valid tool call, but the whole loop must still run."""
    summary = run_training(
        {"algo": "grpo", "data": world["questions"], "env": {"url": env_server.url, "token": "tok"},
         "trainer": {**GRPO, "max_steps": 3, "max_completion_length": 24}}
    )  # fmt: skip
    assert summary["steps"] == 3 and len(summary["losses"]) == 3
    assert len(summary["rewards"]) == 3 and all(math.isfinite(r) for r in summary["rewards"])
    # one environment episode per generated completion (3 steps x 4 completions), each finished before scoring
    episodes = env_server.episodes()
    assert len(episodes) == 12
    assert {e["id"] for e in episodes} <= train_ids(world)
    assert summary["n_examples"] == len(train_ids(world))


def test_grpo_tool_calls_after_warmup(run_training, world, env_server, tool_model):
    """After a short SFT that teaches the tiny model the tool-call format (conftest's tool_model),
    GRPO's rollouts call the tools and the server executes them."""
    summary = run_training(
        {"algo": "grpo", "model": tool_model, "data": world["questions"],
         "env": {"url": env_server.url, "token": "tok"},
         "trainer": {**GRPO, "max_steps": 2, "max_completion_length": 640, "temperature": 0.1,
                     "max_tool_calling_iterations": 3}},
        name="grpo",
    )  # fmt: skip
    assert summary["steps"] == 2
    episodes = env_server.episodes()
    assert len(episodes) == 8  # 2 steps x 4 completions
    first_steps = [e["steps"][0]["action"] for e in episodes]
    assert {"type": "search", "query": "nationality"} in first_steps
    # Whatever the tiny model writes next (its `answer` call is often malformed JSON after so short a
    # warm-up), every episode ends on the server with an answer and an outcome reward.
    assert all(e["steps"][-1]["action"]["type"] == "answer" for e in episodes)
    assert max(summary["tool_call_frequency"]) > 0
    returns = [sum(e["meta"]["stepRewards"]) + e["meta"]["outcomeReward"] for e in episodes]
    assert summary["rewards"][0] == pytest.approx(sum(returns[:4]) / 4, abs=1e-4)
    assert summary["rewards"][1] == pytest.approx(sum(returns[4:]) / 4, abs=1e-4)


def test_grpo_rows_follow_the_split_the_server_serves():
    # The prompts must be the questions `serve-env` serves for the same --split (src/cli/serve-env.ts).
    from ragtrail_trl.train import grpo_rows

    split_rows = [{"id": str(i), "question": f"q{i}", "metadata": {"split": s}} for i, s in enumerate(["train", "dev", "train", "test"])]
    ids = lambda rows: [r["question_id"] for r in rows]  # noqa: E731
    assert ids(grpo_rows(split_rows)) == ["0", "2"]  # no --split: train
    assert ids(grpo_rows(split_rows, "dev")) == ["1"]
    assert ids(grpo_rows(split_rows, "")) == ["0", "1", "2", "3"]  # --split "": every question
    plain = [{"id": "a", "question": "x"}, {"id": "b", "question": "y"}]
    assert ids(grpo_rows(plain)) == ["a", "b"]  # no split metadata: every question
    assert grpo_rows(plain, "train") == []
