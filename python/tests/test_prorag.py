"""ProRAG on TRL: the dual-granularity advantage (hand-computed), the control-token weighted SFT loss
(against a hand computation and the plain loss), and a short prorag run against ragtrail's serve-env."""

import math
import re

import pytest
import torch

from ragtrail_trl.prorag import CONTROL_TAGS, dual_advantages, step_score, turn_index

# ----------------------------------------------------------------------------- the advantage


def test_step_score_forms():
    assert step_score(0.0, True) == pytest.approx(1.5)  # sigmoid(0) + 1
    assert step_score(2.0, True) == pytest.approx(1 / (1 + math.exp(-2)) + 1)
    assert step_score(2.0, False) == -2.0  # the server does not PRM-score an invalid step
    assert step_score(0.7, True, "spec", lambda_f=0.5) == pytest.approx(1.2)
    assert step_score(0.7, False, "spec", lambda_f=0.5) == pytest.approx(0.7)


def test_turn_index():
    mask = torch.tensor([[1, 1, 0, 0, 1, 1, 0, 1], [1, 1, 1, 1, 0, 0, 0, 0]])
    assert turn_index(mask).tolist() == [[0, 0, -1, -1, 1, 1, -1, 2], [0, 0, 0, 0, -1, -1, -1, -1]]


def test_dual_advantages_by_hand():
    """Two completions of one question (G = 2), six token positions each.

    completion 0: turn 0 (2 tokens, step score 1.5), a tool result (1 token), turn 1 (2 tokens,
                  score 1.0), padding; outcome reward 1.
    completion 1: turn 0 (3 tokens, score -2, an invalid step), a tool result (2 tokens), turn 1
                  (1 token) that led to no server step; outcome reward 0.
    """
    loss_mask = torch.tensor([[1, 1, 0, 1, 1, 0], [1, 1, 1, 0, 0, 1]])
    step_mask = torch.tensor([[1, 1, 0, 1, 1, 0], [1, 1, 1, 0, 0, 0]])
    scores = torch.tensor([[1.5, 1.5, 9.0, 1.0, 1.0, 9.0], [-2.0, -2.0, -2.0, 9.0, 9.0, 9.0]])  # 9: never read
    # A_out: rewards 1 and 0, mean 0.5, unbiased std sqrt(0.5) -> +-0.5 / (0.70711 + 1e-4)
    a_out = 0.5 / (math.sqrt(0.5) + 1e-4)
    outcome = torch.tensor([a_out, -a_out])
    # A_step over the 7 scored tokens: 1.5 1.5 1.0 1.0 -2 -2 -2; mean -1/7,
    # sum of squared deviations 2(23/14)^2 + 2(16/14)^2 + 3(26/14)^2 = 3598/196, std sqrt(3598/196/6)
    mean = -1 / 7
    std = math.sqrt(3598 / 196 / 6)
    assert std == pytest.approx(1.749150, abs=1e-6)
    a = {s: (s - mean) / (std + 1e-4) for s in (1.5, 1.0, -2.0)}
    assert a[1.5] == pytest.approx(0.939178, abs=1e-6) and a[-2.0] == pytest.approx(-1.061680, abs=1e-6)
    w = 0.3
    expected = [
        [a_out + w * a[1.5]] * 2 + [0.0] + [a_out + w * a[1.0]] * 2 + [0.0],
        [-a_out + w * a[-2.0]] * 3 + [0.0, 0.0] + [-a_out],
    ]
    got = dual_advantages(outcome, scores, step_mask, loss_mask, group_size=2, weight=w)
    assert got.shape == (2, 6)
    for row in range(2):
        assert got[row].tolist() == pytest.approx(expected[row], abs=1e-6)
    # the same, in numbers: A_out 0.707007, A_step of the first step 0.939178
    assert got[0, 0].item() == pytest.approx(0.988760, abs=1e-6)
    # w = 0 is plain GRPO: one advantage per completion on its generated tokens
    plain = dual_advantages(outcome, scores, step_mask, loss_mask, group_size=2, weight=0.0)
    assert torch.allclose(plain, outcome[:, None] * loss_mask)


def test_dual_advantages_groups_are_separate():
    """Each group normalises its own steps; a group whose scored tokens all agree gets no step term."""
    loss_mask = torch.ones(4, 3, dtype=torch.long)
    step_mask = torch.ones(4, 3, dtype=torch.long)
    scores = torch.tensor([[1.0, 1.0, 2.0], [2.0, 2.0, 1.0], [5.0, 5.0, 5.0], [5.0, 5.0, 5.0]])
    outcome = torch.tensor([0.5, -0.5, 0.0, 0.0])
    got = dual_advantages(outcome, scores, step_mask, loss_mask, group_size=2, weight=1.0)
    pool = torch.tensor([1.0, 1.0, 2.0, 2.0, 2.0, 1.0])
    z = (scores[:2] - pool.mean()) / (pool.std() + 1e-4)
    assert torch.allclose(got[:2], outcome[:2, None] + z, atol=1e-6)
    assert got[2:].abs().max().item() == 0.0
    with pytest.raises(ValueError, match="groups of 3"):
        dual_advantages(outcome, scores, step_mask, loss_mask, group_size=3)


# ----------------------------------------------------------------------------- weighted SFT

TAGGED = [
    ("Question: who wrote the book?", "<step>find the author</step>\n<subquery>book author</subquery>"),
    ("Question: where was she born?", "<step>I know the city</step>\n<subanswer>Paris</subanswer>\n<answer>Paris</answer>"),
]


def weighted_trainer(tiny_dir, tmp_path, weight):
    from datasets import Dataset
    from trl import SFTConfig

    from ragtrail_trl.prorag import ControlWeightedSFTTrainer
    from ragtrail_trl.tiny import load_tokenizer

    rows = [{"messages": [{"role": "user", "content": q}, {"role": "assistant", "content": a}]} for q, a in TAGGED]
    args = SFTConfig(output_dir=str(tmp_path / f"w{weight}"), assistant_only_loss=True, report_to="none", bf16=False, per_device_train_batch_size=2)
    return ControlWeightedSFTTrainer(
        model=tiny_dir, args=args, train_dataset=Dataset.from_list(rows), processing_class=load_tokenizer(tiny_dir), control_token_weight=weight
    )


def hand_weights(tokenizer, ids: list[int], weight: float) -> list[float]:
    """Weights from the tokenizer's character offsets (not from the trainer's per-token decoding)."""
    text = tokenizer.decode(ids, skip_special_tokens=False)
    encoded = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    assert encoded["input_ids"] == ids  # the text gives back the same tokens, so the offsets are theirs
    spans = [m.span() for m in re.finditer("|".join(map(re.escape, CONTROL_TAGS)), text)]
    return [weight if any(s < e2 and s2 < e for s2, e2 in spans) else 1.0 for s, e in encoded["offset_mapping"]]


def test_weighted_sft_loss_by_hand(world, tiny_dir, tmp_path):
    weight = 3.0
    trainer = weighted_trainer(tiny_dir, tmp_path, weight)
    batch = trainer.data_collator([trainer.train_dataset[i] for i in range(2)])
    ids, labels = batch["input_ids"], batch["labels"]
    weights = torch.tensor([hand_weights(trainer.processing_class, row, weight) for row in ids.tolist()])
    assert torch.equal(trainer.token_weights(ids), weights)
    trained = labels[:, 1:] != -100
    tagged = (weights[:, 1:] == weight) & trained
    assert tagged.sum() >= 10 and (trained & ~tagged).sum() >= 5  # both kinds of trained tokens are there

    model = trainer.model.eval()
    with torch.no_grad():
        logits = model(input_ids=ids, attention_mask=batch["attention_mask"]).logits[:, :-1].float()
        logp = torch.log_softmax(logits, dim=-1).gather(-1, ids[:, 1:, None]).squeeze(-1)
        plain = model(input_ids=ids, attention_mask=batch["attention_mask"], labels=labels).loss.item()
        # Eq. 1: sum_t w_t * (-log p_t) / sum_t w_t over the trained tokens
        w = weights[:, 1:] * trained
        expected = (-(logp * w).sum() / w.sum()).item()
        count = trainer._get_num_items_in_batch([batch], torch.device("cpu"))
        got = trainer.compute_loss(model, dict(batch), num_items_in_batch=count).item()
        assert count.item() == pytest.approx(w.sum().item())
        assert got == pytest.approx(expected, rel=1e-5)
        assert abs(got - plain) > 1e-3  # the weights do change the loss
        # lambda = 1 is the plain SFT loss (transformers' own causal-LM loss on the same batch)
        same = weighted_trainer(tiny_dir, tmp_path, 1.0)
        count = same._get_num_items_in_batch([batch], torch.device("cpu"))
        assert count.item() == trained.sum().item()
        assert same.compute_loss(model, dict(batch), num_items_in_batch=count).item() == pytest.approx(plain, rel=1e-5)


def test_weighted_sft_at_one_trains_like_plain_sft(run_training, world):
    """Through train.py, with gradient accumulation: control_token_weight 1 reproduces plain SFT's losses
    step by step (the weighted path computes its own loss and normaliser; TRL's default computes the NLL
    in chunks)."""
    trainer = {"per_device_train_batch_size": 2, "gradient_accumulation_steps": 2, "learning_rate": 3e-3, "max_steps": 3}
    plain = run_training({"algo": "sft", "data": world["sft"], "max_examples": 8, "trainer": trainer}, name="plain")
    weighted = run_training({"algo": "sft", "data": world["sft"], "max_examples": 8, "control_token_weight": 1, "trainer": trainer}, name="weighted")
    assert weighted["control_token_weight"] == 1
    assert weighted["losses"] == pytest.approx(plain["losses"], rel=1e-5)


# ----------------------------------------------------------------------------- a prorag run


def test_prorag_run_against_serve_env(run_training, world, env_server, tool_model):
    """Two optimiser steps of algo prorag from the tool-call warm-up model: the rollouts search and
    answer through serve-env (PRM step rewards), the reward TRL normalises is the outcome alone, and
    the loss receives per-token advantages that differ inside a completion (its turns score differently)."""
    summary = run_training(
        {"algo": "prorag", "model": tool_model, "data": world["questions"], "dual_weight": 0.5,
         "env": {"url": env_server.url, "token": "tok"},
         # 300 tokens hold a search turn, its passage, an answer turn and part of the closing turn the
         # warm-up model rambles in (it never saw one): enough for three turns, and quick.
         "trainer": {"num_generations": 4, "per_device_train_batch_size": 4, "learning_rate": 1e-4, "seed": 0,
                     "max_steps": 2, "max_completion_length": 300, "temperature": 0.1, "max_tool_calling_iterations": 3}},
        name="prorag",
    )  # fmt: skip
    assert summary["steps"] == 2 and summary["dual_weight"] == 0.5 and summary["step_form"] == "code"
    episodes = env_server.episodes()
    assert len(episodes) == 8  # 2 steps x 4 completions, every one scored by the server
    assert any(e["steps"][0]["action"] == {"type": "search", "query": "nationality"} for e in episodes)
    assert all(len(e["meta"]["stepRewards"]) >= 1 for e in episodes)
    # TRL's reward is the outcome reward only (the step rewards go into the advantage instead)
    outcomes = [e["meta"]["outcomeReward"] for e in episodes]
    assert summary["rewards"][0] == pytest.approx(sum(outcomes[:4]) / 4, abs=1e-4)
    assert summary["rewards"][1] == pytest.approx(sum(outcomes[4:]) / 4, abs=1e-4)
    # the [B, T] advantages reached the loss, and in some completions they vary from token to token
    assert len(summary["varying_advantage_rows"]) == 2
    assert max(summary["varying_advantage_rows"]) > 0


def test_prorag_config_fields(world):
    from ragtrail_trl.train import ConfigError, validate_config

    base = {"output_dir": "out", "tiny": {"corpus": world["corpus"]}, "env": {"url": "http://127.0.0.1:1"}}
    config = validate_config({**base, "algo": "prorag", "data": world["questions"]})
    assert (config["dual_weight"], config["step_form"], config["lambda_f"]) == (0.3, "code", 1.0)
    assert validate_config({**base, "algo": "sft", "data": world["sft"], "control_token_weight": 2})["control_token_weight"] == 2
    bad = [
        ({"algo": "dpo", "data": world["preference"], "control_token_weight": 2}, "setting of sft, not dpo"),
        ({"algo": "sft", "data": world["sft"], "control_token_weight": -1}, "must be a number >= 0"),
        ({"algo": "sft", "data": world["sft"], "control_token_weight": 2, "trainer": {"loss_type": "dft"}}, "plain NLL"),
        ({"algo": "grpo", "data": world["questions"], "dual_weight": 0.3}, "dual_weight: settings of prorag, not grpo"),
        ({"algo": "prorag", "data": world["questions"], "step_form": "paper"}, "unknown step_form 'paper'"),
        ({"algo": "prorag", "data": world["questions"], "dual_weight": "high"}, "\"dual_weight\" must be a number"),
        ({"algo": "prorag", "data": world["questions"], "env": None}, "prorag needs the environment server"),
    ]
    for fields, message in bad:
        with pytest.raises(ConfigError, match=re.escape(message)):
            validate_config({**base, **fields})
