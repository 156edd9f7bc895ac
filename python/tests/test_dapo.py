"""DAPO on TRL (dapo.py): the group filter, the batch fill, the plateau rule, the KL estimators and the
loss, on tiny tensors with hand-computed numbers; then a short DAPO run against the real serve-env."""

import math
from types import SimpleNamespace

import pytest
import torch
from trl import GRPOTrainer

from ragtrail_trl.dapo import (
    DAPOTrainer,
    KLGRPOTrainer,
    concat_rows,
    fill_batch,
    informative_groups,
    kl_per_token,
    plateau_reached,
    reduce_like_trl,
    select_rows,
)


# ----------------------------------------------------------------------------- dynamic sampling


def test_groups_with_equal_rewards_are_dropped():
    # G = 3: [1,1,1] all equal, [0,1,0] differs, [0.5,0.5,0.5] equal, [2,2,nan] has a NaN (np.std -> nan)
    rewards = torch.tensor([1, 1, 1, 0, 1, 0, 0.5, 0.5, 0.5, 2, 2, float("nan")])
    assert informative_groups(rewards, 3).tolist() == [False, True, False, False]
    # any difference counts (std > 0, as np.std(...) > 0 in DAPO's code), however small
    assert informative_groups(torch.tensor([1.0, 1.000001]), 2).tolist() == [True]
    # groups of one completion are always kept (DAPO's code: `or len(vals) == 1`)
    assert informative_groups(torch.tensor([3.0, 3.0]), 1).tolist() == [True, True]
    with pytest.raises(ValueError):
        informative_groups(torch.zeros(5), 2)


def test_fill_batch_accumulates_rounds_then_truncates():
    # needed 4 groups: round 0 keeps groups 1 and 3, round 1 keeps group 0, round 2 keeps 0, 2 and 3
    chosen = fill_batch([[1, 3], [0], [0, 2, 3]], 4)
    assert chosen == [(0, 1), (0, 3), (1, 0), (2, 0)]
    assert fill_batch([[0, 1, 2, 3]], 2) == [(0, 0), (0, 1)]


def test_rows_from_rounds_of_different_lengths_merge_with_trl_padding():
    # round A: prompts of length 2, completions of length 3; round B: 3 and 1 (pad id 9)
    a = {"prompt_ids": torch.tensor([[1, 2], [3, 4]]), "prompt_mask": torch.ones(2, 2, dtype=torch.long),
         "completion_ids": torch.tensor([[5, 6, 7], [8, 9, 9]]), "completion_mask": torch.tensor([[1, 1, 1], [1, 0, 0]]),
         "advantages": torch.tensor([0.5, -0.5]), "num_items_in_batch": torch.tensor(4)}  # fmt: skip
    b = {"prompt_ids": torch.tensor([[1, 2, 3], [4, 5, 6]]), "prompt_mask": torch.ones(2, 3, dtype=torch.long),
         "completion_ids": torch.tensor([[7], [8]]), "completion_mask": torch.tensor([[1], [1]]),
         "advantages": torch.tensor([1.0, -1.0]), "num_items_in_batch": torch.tensor(2)}  # fmt: skip
    merged = concat_rows([select_rows(a, torch.tensor([1])), select_rows(b, torch.tensor([0, 1]))], pad_token_id=9)
    assert merged["prompt_ids"].tolist() == [[9, 3, 4], [1, 2, 3], [4, 5, 6]]  # left-padded
    assert merged["prompt_mask"].tolist() == [[0, 1, 1], [1, 1, 1], [1, 1, 1]]
    assert merged["completion_ids"].tolist() == [[8, 9, 9], [7, 9, 9], [8, 9, 9]]  # right-padded
    assert merged["completion_mask"].tolist() == [[1, 0, 0], [1, 0, 0], [1, 0, 0]]
    assert merged["advantages"].tolist() == [-0.5, 1.0, -1.0]
    with pytest.raises(ValueError, match="pixel_values"):
        select_rows({**a, "pixel_values": torch.zeros(2, 1)}, torch.tensor([0]))


class _Rounds(DAPOTrainer):
    """DAPOTrainer whose generation is scripted: each round returns the next rewards (no model)."""

    def __init__(self, rounds, group, dataset_size=5, max_rounds=10):
        self.rounds, self.calls = list(rounds), []
        self.num_generations, self.dynamic_sampling, self.max_rounds = group, True, max_rounds
        self.model = SimpleNamespace(training=True)
        self.processing_class = SimpleNamespace(pad_token_id=0)
        self.accelerator = SimpleNamespace(gather=lambda t: t)
        self.train_dataset = [{"question_id": str(i)} for i in range(dataset_size)]
        self.args = SimpleNamespace(seed=0)
        self._metrics = {"train": __import__("collections").defaultdict(list)}
        import random

        self._refill_rng, self._refill_order = random.Random(1), []


def _scripted(self, inputs):
    rewards = torch.tensor(self.rounds.pop(0), dtype=torch.float32)
    self.calls.append([row["question_id"] for row in inputs])
    self._last_rewards = rewards
    n = len(inputs)
    return {"prompt_ids": torch.arange(n)[:, None], "prompt_mask": torch.ones(n, 1, dtype=torch.long),
            "completion_ids": torch.arange(n)[:, None] + 100 * len(self.calls), "completion_mask": torch.ones(n, 1, dtype=torch.long),
            "advantages": rewards - rewards.view(-1, self.num_generations).mean(1).repeat_interleave(self.num_generations)}  # fmt: skip


def test_dynamic_sampling_refills_the_batch_with_informative_groups(monkeypatch):
    monkeypatch.setattr(GRPOTrainer, "_generate_and_score_completions", _scripted)
    # 2 prompts x G 2. Round 1: group 0 all 1 (dropped), group 1 [0, 1] kept. Round 2 (refill): group 0
    # [1, 0] kept, group 1 [2, 0] kept but not needed: the batch is round 1's group 1 and round 2's group 0.
    trainer = _Rounds([[1, 1, 0, 1], [1, 0, 2, 0]], group=2)
    batch = trainer._generate_and_score_completions([{"question_id": "a"}] * 2 + [{"question_id": "b"}] * 2)
    assert len(trainer.calls) == 2
    assert trainer.calls[1][0] == trainer.calls[1][1] and trainer.calls[1][2] == trainer.calls[1][3]  # G copies each
    assert batch["completion_ids"].flatten().tolist() == [102, 103, 200, 201]
    assert batch["advantages"].tolist() == [-0.5, 0.5, 0.5, -0.5]
    assert int(batch["num_items_in_batch"]) == 4
    assert trainer._metrics["train"]["dapo/generation_rounds"] == [2.0]
    assert trainer._metrics["train"]["dapo/kept_group_fraction"] == [0.75]  # 3 kept of 2 rounds x 2 groups


def test_dynamic_sampling_stops_after_max_rounds(monkeypatch):
    monkeypatch.setattr(GRPOTrainer, "_generate_and_score_completions", _scripted)
    trainer = _Rounds([[0, 0, 1, 1]] * 3, group=2, max_rounds=3)
    with pytest.raises(ValueError, match="0 of the 2 groups needed .* after 3 generation rounds"):
        trainer._generate_and_score_completions([{"question_id": "a"}] * 4)


def test_plateau_rule():
    # window 2: means of the last two windows 0.5 -> 0.55: a gain of 0.05
    rewards = [0.1, 0.3, 0.5, 0.5, 0.5, 0.6]
    assert plateau_reached(rewards, 2, 0.06)
    assert not plateau_reached(rewards, 2, 0.04)
    assert not plateau_reached(rewards[:3], 2, 1.0)  # fewer than 2 * window rewards
    assert plateau_reached([0.4, 0.4, 0.2, 0.2], 2, 0.0)  # a fall is a plateau too


# ----------------------------------------------------------------------------- KL and the loss


def test_kl_estimators_by_hand():
    logp, ref = torch.tensor([math.log(0.5)]), torch.tensor([math.log(0.25)])  # d = log 2
    d = math.log(2)
    assert kl_per_token(logp, ref, "k1").item() == pytest.approx(d)
    assert kl_per_token(logp, ref, "k2").item() == pytest.approx(0.5 * d * d)  # 0.2402265
    assert kl_per_token(logp, ref, "k3").item() == pytest.approx(0.5 + d - 1)  # exp(-d) = 0.5
    with pytest.raises(ValueError):
        kl_per_token(logp, ref, "k4")


def test_reductions_match_trl_loss_types():
    x = torch.tensor([[1.0, 2.0, 9.0], [3.0, 4.0, 5.0]])
    mask = torch.tensor([[1, 1, 0], [1, 1, 1]])
    assert reduce_like_trl(x, mask, "grpo").item() == pytest.approx((1.5 + 4.0) / 2)
    assert reduce_like_trl(x, mask, "grpo", grad_accum=2).item() == pytest.approx(2.75 / 2)
    assert reduce_like_trl(x, mask, "bnpo").item() == pytest.approx(15 / 5)
    assert reduce_like_trl(x, mask, "dr_grpo", max_completion_length=4).item() == pytest.approx(15 / 8)
    # dapo: token sum over the generation batch's token count, rescaled to one accumulation window
    assert reduce_like_trl(x, mask, "dapo", num_items_in_batch=torch.tensor(10), grad_accum=2, steps_per_generation=4).item() == pytest.approx(15 / (10 * 2 / 4))
    assert reduce_like_trl(x, mask, "dapo", num_items_in_batch=torch.tensor(5), training=False, grad_accum=2).item() == pytest.approx(3.0)


def _loss_stub(cls, logps, beta, estimator, loss_type="dapo", eps_low=0.2, eps_high=0.28):
    """An instance of `cls` with just what TRL 1.13's `_compute_loss` reads; the model's log-probs are `logps`."""
    trainer = object.__new__(cls)
    reduce = lambda t, reduction="sum": t  # noqa: E731 (one process)
    trainer.__dict__.update(
        kl_estimator=estimator, beta=beta, loss_type=loss_type, epsilon_low=eps_low, epsilon_high=eps_high,
        top_entropy_quantile=1.0, off_policy_mask_threshold=None, importance_sampling_level="token",
        use_vllm=False, vllm_importance_sampling_correction=False, aux_loss_enabled=False, _entropy_bonus_enabled=False,
        max_completion_length=3, model=SimpleNamespace(training=True), current_gradient_accumulation_steps=1,
        args=SimpleNamespace(use_bias_correction_kl=False, delta=None, steps_per_generation=1),
        accelerator=SimpleNamespace(num_processes=1, reduce=reduce, gather=lambda t: t, gather_for_metrics=lambda t: t),
        _metrics={"train": __import__("collections").defaultdict(list)},
    )  # fmt: skip
    trainer._get_per_token_logps_and_entropies = lambda *a, **k: (logps, torch.zeros_like(logps), None)
    return trainer


def test_clip_higher_token_level_loss_and_k2_by_hand():
    """Two completions of one group, masks [1,1,0] and [1,1,1], advantages +1 and -1.

    ratios r = pi/pi_old: row 0 (A=+1): 1.5, 0.5; row 1 (A=-1): 1.5, 0.5, 1.0.
    clip to [0.8, 1.28]: A>0 takes min(r, clip r): 1.28, 0.5 -> token losses -1.28, -0.5;
    A<0 takes min(-r, -clip r): -1.5, -0.8, -1.0 -> token losses 1.5, 0.8, 1.0.
    Token-level mean (DAPO §3.3) over the 5 tokens: (-1.28 - 0.5 + 1.5 + 0.8 + 1.0) / 5 = 0.304.
    k2 KL with log pi - log pi_ref = log 2 on every token: 0.5 (log 2)^2 = 0.2402265; beta 0.1 adds 0.02402265.
    """
    old = torch.log(torch.tensor([[0.2, 0.4, 0.3], [0.2, 0.4, 0.3]]))
    logps = torch.log(torch.tensor([[0.3, 0.2, 0.3], [0.3, 0.2, 0.3]])).requires_grad_()
    inputs = {
        "prompt_ids": torch.zeros(2, 1, dtype=torch.long), "prompt_mask": torch.ones(2, 1, dtype=torch.long),
        "completion_ids": torch.zeros(2, 3, dtype=torch.long), "completion_mask": torch.tensor([[1, 1, 0], [1, 1, 1]]),
        "advantages": torch.tensor([1.0, -1.0]), "old_per_token_logps": old,
        "ref_per_token_logps": logps.detach() - math.log(2), "num_items_in_batch": torch.tensor(5),
    }  # fmt: skip
    policy = _loss_stub(DAPOTrainer, logps, beta=0.1, estimator="k2")
    loss = policy._compute_loss(None, inputs)
    assert loss.item() == pytest.approx(0.304 + 0.1 * 0.5 * math.log(2) ** 2, abs=1e-6)
    assert policy.beta == 0.1 and "_get_per_token_logps_and_entropies" in policy.__dict__  # restored
    assert policy._metrics["train"]["kl"][-1] == pytest.approx(0.5 * math.log(2) ** 2)
    # k3 is TRL's own term: exp(-log 2) + log 2 - 1 = 0.1931472 per token
    k3 = _loss_stub(DAPOTrainer, logps, beta=0.1, estimator="k3")._compute_loss(None, inputs)
    assert k3.item() == pytest.approx(0.304 + 0.1 * (0.5 + math.log(2) - 1), abs=1e-6)
    # GRPO's per-sequence mean with k2 (ARENA): row 0 (-1.28 - 0.5) / 2 = -0.89, row 1 3.3 / 3 = 1.1, mean 0.105
    grpo = _loss_stub(KLGRPOTrainer, logps, beta=0.04, estimator="k2", loss_type="grpo", eps_high=0.28)._compute_loss(None, inputs)
    assert grpo.item() == pytest.approx(0.105 + 0.04 * 0.5 * math.log(2) ** 2, abs=1e-6)
    # TRL's use_bias_correction_kl: the KL term times pi/pi_old per token (1.5, 0.5 | 1.5, 0.5, 1.0):
    # sum over the 5 tokens of r * k2 = 5.0 * 0.2402265, over 5 tokens (these ratios average 1, so the
    # value equals the uncorrected one: this checks the corrected path runs and reduces the same way)
    corrected = _loss_stub(DAPOTrainer, logps, beta=0.1, estimator="k2")
    corrected.args.use_bias_correction_kl = True
    assert corrected._compute_loss(None, inputs).item() == pytest.approx(0.304 + 0.1 * 0.5 * math.log(2) ** 2 * 5.0 / 5, abs=1e-6)


# ----------------------------------------------------------------------------- a run


def test_dapo_run_with_dynamic_sampling(run_training, world, env_server, tool_model):
    """DAPO through TRL against the real serve-env, the tool-call model from conftest: every step's batch
    holds only groups whose rewards differ, with k2 KL."""
    summary = run_training(
        {"algo": "dapo", "model": tool_model, "data": world["questions"], "env": {"url": env_server.url, "token": "tok"},
         "kl_estimator": "k2", "dynamic_sampling": {"max_rounds": 6},
         "trainer": {"num_generations": 4, "per_device_train_batch_size": 4, "learning_rate": 1e-3, "max_steps": 2,
                     "max_completion_length": 640, "temperature": 1.0, "max_tool_calling_iterations": 3, "beta": 0.01}},
        name="dapo",
    )  # fmt: skip
    assert summary["steps"] == 2
    assert summary["trainer"]["loss_type"] == "dapo" and summary["trainer"]["epsilon_high"] == 0.28
    assert summary["kl_estimator"] == "k2"
    rounds = summary["generation_rounds"]
    assert len(rounds) == 2 and all(r >= 1 for r in rounds)
    # every episode the server ran belongs to a generation round: 4 completions per round
    assert len(env_server.episodes()) == 4 * sum(rounds)
    assert all(k is not None and math.isfinite(k) for k in summary["kl"])


def test_config_fields_are_used_or_refused(tmp_path):
    """No top-level field is dropped: unknown ones, and ones of another algo, are refused in one line."""
    from ragtrail_trl.train import ConfigError, validate_config

    data = tmp_path / "q.jsonl"
    data.write_text('{"id": "q1", "question": "x"}\n')
    base = {"data": str(data), "output_dir": str(tmp_path / "o"), "model": "m", "env": {"url": "http://127.0.0.1:1"}}
    with pytest.raises(ConfigError, match="unknown config field.s. kl_estimatr"):
        validate_config({**base, "algo": "grpo", "kl_estimatr": "k2"})
    with pytest.raises(ConfigError, match='"kl_estimator" is a setting of grpo, prorag, dapo, lws, not sft'):
        validate_config({**base, "algo": "sft", "kl_estimator": "k2"})
    with pytest.raises(ConfigError, match='"dynamic_sampling" is a setting of dapo and lws, not grpo'):
        validate_config({**base, "algo": "grpo", "dynamic_sampling": True})
    with pytest.raises(ConfigError, match="lws needs a second environment server"):
        validate_config({**base, "algo": "lws", "stage_switch": {"share": 0.5}})
    with pytest.raises(ConfigError, match='"stage_switch" must name a rule'):
        validate_config({**base, "algo": "lws", "env_stage2": {"url": "http://127.0.0.1:2"}, "stage_switch": {"plateau_tolerance": 0.1}})
    config = validate_config({**base, "algo": "dapo", "kl_estimator": "k2"})
    assert config["dynamic_sampling"] == {"enabled": True, "max_rounds": 10} and config["soft_overlong_cache"] == 0
    assert validate_config({**base, "algo": "grpo", "kl_estimator": "k2"})["kl_estimator"] == "k2"
