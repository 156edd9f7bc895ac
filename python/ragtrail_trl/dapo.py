"""DAPO (Yu et al., 2025) and LWS's staged reward on TRL, and the KL estimator a recipe names.

DAPO's four changes to GRPO (DAPO paper §3; LWS trains with DAPO, shared/papers/learning-when-to-search-multistage-reward.txt):

  clip-higher (Eq. 10, §3.1)   ratio clipped to [1 - eps_low, 1 + eps_high] with eps_high > eps_low:
                               TRL's own `epsilon` / `epsilon_high` (GRPOConfig), unchanged here.
  token-level loss (§3.3)      sum over every generated token of the batch / number of those tokens:
                               TRL's `loss_type="dapo"`, unchanged here (its normaliser is the token count
                               of the whole generation batch, rescaled to one accumulation window).
  dynamic sampling (Eq. 11)    0 < |{o_i : o_i correct}| < G: a group whose rewards are all equal has zero
                               advantage and is dropped; prompts are generated again until the batch holds
                               as many informative groups as it has prompts. TRL 1.13 has no such step;
                               `DAPOTrainer._generate_and_score_completions` adds it (see there).
  overlong shaping (§3.4)      overlong filtering: TRL's `mask_truncated_completions`; the soft overlong
                               punishment (Eq. 13): TRL's `get_soft_overlong_punishment` added as a reward
                               function by train.py (`soft_overlong_cache`).

The dynamic-sampling loop follows DAPO's released code (verl, recipe/dapo `RayDAPOTrainer.fit`): each
round generates a full generation batch, keeps the groups whose reward std is > 0 (np.std, so a group
holding a NaN reward is dropped too), appends them to the groups kept so far, and stops once there
are at least as many as the batch needs, keeping the first that many (`batch[:traj_bsz]`); after
`max_rounds` rounds without enough (the code's `max_num_gen_batches`, 10 in its run script; 0 = no
limit) it raises. One difference, because TRL owns its data loader: the refill prompts are drawn
from a second shuffled pass over the training set (seed `args.seed + 1`, reshuffled each pass)
instead of the loader's next batches; the loader's own epoch is not shortened.

KL estimators (`kl_estimator`), with d = log pi_theta - log pi_ref per token (Schulman 2020):
  k1 = d;  k2 = d^2 / 2 (ARENA §3.2, Eq. 3; its code: 0.5 * (ref - logp) ** 2);
  k3 = exp(-d) + d - 1 (TRL's and GRPO's). TRL 1.13 computes k3 inline, so for k1/k2
`KLEstimatorMixin` runs TRL's loss with beta = 0 and adds beta * KL reduced exactly as TRL reduces
that `loss_type` (the loss is linear in the per-token term, so this is the same loss as TRL's code
with the estimator swapped), times the importance ratio when `use_bias_correction_kl` (TRL's default;
ARENA's code predates it: set it false for ARENA's exact term).

LWS stage switch (LWS §3.3, Eq. 10 → Eq. 11): training starts on the stage-1 reward and moves to the
stage-2 reward once a rule fires: at a fixed step, at a share of the run, or when the logged mean
reward plateaus (`plateau_reached`). The reward is computed by the environment server, so the switch
points every environment at a second server that scores with the stage-2 reward; the optimiser, the
schedule and the step count run on.
"""

from __future__ import annotations

import math
import random

import torch
from transformers import TrainerCallback
from trl import GRPOTrainer

KL_ESTIMATORS = ("k1", "k2", "k3")
LOSS_TYPES_WITH_KL = ("grpo", "sapo", "bnpo", "dr_grpo", "dapo", "cispo", "vespo", "luspo")


# ----------------------------------------------------------------------------- the math


def kl_per_token(logps: torch.Tensor, ref_logps: torch.Tensor, estimator: str) -> torch.Tensor:
    """Per-token KL estimate of pi_theta against pi_ref from the two log-probabilities (see the module docstring)."""
    d = logps - ref_logps
    if estimator == "k1":
        return d
    if estimator == "k2":
        return 0.5 * d**2
    if estimator == "k3":
        return torch.exp(-d) + d - 1
    raise ValueError(f"kl_estimator must be one of {KL_ESTIMATORS}, got {estimator!r}")


def reduce_like_trl(
    per_token: torch.Tensor,
    mask: torch.Tensor,
    loss_type: str,
    *,
    training: bool = True,
    grad_accum: int = 1,
    num_items_in_batch: torch.Tensor | float | None = None,
    num_processes: int = 1,
    steps_per_generation: int = 1,
    max_completion_length: int | None = None,
) -> torch.Tensor:
    """A [B, T] per-token term reduced to the loss exactly as TRL 1.13's GRPOTrainer._compute_loss reduces
    `per_token_loss` for `loss_type` (so adding it equals adding the term before TRL's reduction)."""
    mask = mask.to(per_token.dtype)
    gas = grad_accum if training else 1
    if loss_type in ("grpo", "sapo"):
        return ((per_token * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).mean() / gas
    if loss_type == "bnpo":
        return (per_token * mask).sum() / mask.sum().clamp(min=1.0) / gas
    if loss_type == "dr_grpo":
        return (per_token * mask).sum() / (per_token.size(0) * max_completion_length) / gas
    if loss_type in ("dapo", "cispo", "vespo"):
        normaliser = torch.as_tensor(num_items_in_batch, dtype=per_token.dtype).clamp(min=1.0) / num_processes
        if training:
            normaliser = normaliser * grad_accum / steps_per_generation
        return (per_token * mask).sum() / normaliser
    if loss_type == "luspo":
        return (per_token * mask).sum(-1).mean() / gas
    raise ValueError(f"unknown loss_type {loss_type!r}")


def informative_groups(rewards: torch.Tensor, group_size: int) -> torch.Tensor:
    """[n_groups] bool: the groups DAPO's dynamic sampling keeps (Eq. 11), rows [g*G, (g+1)*G) being group g.

    A group is kept when the population std of its rewards is > 0 (DAPO's code: np.std(...) > 0, or a
    group of one completion); a group with a NaN reward has a NaN std and is dropped, as there.
    """
    if rewards.numel() % group_size:
        raise ValueError(f"{rewards.numel()} rewards do not split into groups of {group_size}")
    if group_size == 1:
        return torch.ones(rewards.numel() // group_size, dtype=torch.bool)
    grouped = rewards.double().view(-1, group_size)
    std = grouped.std(dim=1, unbiased=False)
    return std > 0  # NaN > 0 is False


def fill_batch(kept_per_round: list[list[int]], needed: int) -> list[tuple[int, int]]:
    """(round, group) pairs of the groups that make the batch: the kept groups of each round in order,
    accumulated until there are at least `needed`, then the first `needed` of them (DAPO's code:
    concatenate the kept trajectories round after round, then `batch[:train_batch_size * n]`)."""
    chosen: list[tuple[int, int]] = []
    for round_index, groups in enumerate(kept_per_round):
        for group in groups:
            if len(chosen) < needed:
                chosen.append((round_index, group))
    return chosen


def plateau_reached(rewards: list[float], window: int, tolerance: float) -> bool:
    """LWS's switch on convergence: the mean of the last `window` logged rewards is no more than
    `tolerance` above the mean of the `window` before them (False until 2 * window rewards are logged)."""
    values = [r for r in rewards if r is not None and math.isfinite(r)]
    if window < 1 or len(values) < 2 * window:
        return False
    recent = sum(values[-window:]) / window
    before = sum(values[-2 * window : -window]) / window
    return recent - before <= tolerance


# ----------------------------------------------------------------------------- rows of a generation batch

# How each tensor of TRL's generation output is padded when batches of different lengths are merged:
# prompts are left-padded, completions right-padded (TRL's own `pad` sides and values).
_LEFT = {"prompt_ids": "pad", "prompt_mask": 0}
_RIGHT = {"completion_ids": "pad", "completion_mask": 0, "old_per_token_logps": 0.0, "ref_per_token_logps": 0.0,
          "sampling_per_token_logps": 0.0, "tool_mask": 1, "importance_sampling_ratio": 1.0}  # fmt: skip


def select_rows(output: dict, rows: torch.Tensor) -> dict:
    """The rows `rows` of every per-row tensor of a generation output (num_items_in_batch is recomputed later)."""
    picked = {}
    for key, value in output.items():
        if key == "num_items_in_batch":
            continue
        if key not in _LEFT and key not in _RIGHT and key != "advantages":
            raise ValueError(f"dynamic sampling cannot merge the generation output {key!r} (multimodal inputs are not supported)")
        picked[key] = value.index_select(0, rows.to(value.device))
    return picked


def concat_rows(parts: list[dict], pad_token_id: int) -> dict:
    """Concatenate selected outputs along the batch, padding each tensor on its own side to the longest."""
    merged = {}
    for key in parts[0]:
        tensors = [p[key] for p in parts]
        if key == "advantages" and tensors[0].dim() == 1:
            merged[key] = torch.cat(tensors)
            continue
        left = key in _LEFT
        fill = (_LEFT if left else _RIGHT).get(key, 0.0)
        fill = pad_token_id if fill == "pad" else fill
        width = max(t.size(1) for t in tensors)
        padded = []
        for t in tensors:
            extra = width - t.size(1)
            if extra:
                block = torch.full((t.size(0), extra), fill, dtype=t.dtype, device=t.device)
                t = torch.cat([block, t] if left else [t, block], dim=1)
            padded.append(t)
        merged[key] = torch.cat(padded)
    return merged


# ----------------------------------------------------------------------------- trainers


class KLEstimatorMixin:
    """GRPOTrainer mixin: the KL penalty uses `kl_estimator` (k1, k2 or k3; k3 is TRL's own and runs unchanged)."""

    def __init__(self, *args, kl_estimator: str = "k3", **kwargs):
        if kl_estimator not in KL_ESTIMATORS:
            raise ValueError(f"kl_estimator must be one of {KL_ESTIMATORS}, got {kl_estimator!r}")
        super().__init__(*args, **kwargs)
        self.kl_estimator = kl_estimator
        if kl_estimator != "k3" and self.beta != 0.0:
            if self.use_liger_kernel:
                raise ValueError(f"the Liger GRPO loss computes k3 itself; turn use_liger_kernel off for the {kl_estimator} KL estimator")
            if self.loss_type not in LOSS_TYPES_WITH_KL:
                raise ValueError(f"the {kl_estimator} KL estimator is not wired for loss_type {self.loss_type!r}")

    def _compute_loss(self, model, inputs):
        if self.kl_estimator == "k3" or self.beta == 0.0:
            return super()._compute_loss(model, inputs)
        captured = []
        original = self._get_per_token_logps_and_entropies

        def spy(*args, **kwargs):
            result = original(*args, **kwargs)
            captured.append(result[0])
            return result

        beta, own = self.beta, "_get_per_token_logps_and_entropies" in self.__dict__
        self.beta, self._get_per_token_logps_and_entropies = 0.0, spy
        try:
            loss = super()._compute_loss(model, inputs)  # TRL's loss without its k3 term
        finally:
            self.beta = beta
            if own:
                self._get_per_token_logps_and_entropies = original
            else:
                del self._get_per_token_logps_and_entropies
        mask = inputs["completion_mask"] * inputs["tool_mask"] if "tool_mask" in inputs else inputs["completion_mask"]
        logps = captured[0]
        per_token_kl = kl_per_token(logps, inputs["ref_per_token_logps"], self.kl_estimator)
        if self.args.use_bias_correction_kl:
            # TRL's correction (its default), applied to this estimator as TRL applies it to k3: times the
            # importance ratio pi_theta / pi_old, per token or per sequence as importance_sampling_level says.
            old = inputs.get("old_per_token_logps")
            log_ratio = logps - (logps.detach() if old is None else old)
            if self.importance_sampling_level == "sequence":
                log_ratio = ((log_ratio * mask).sum(-1) / mask.sum(-1).clamp(min=1.0)).unsqueeze(-1)
            per_token_kl = per_token_kl * torch.exp(log_ratio)
        training = self.model.training
        loss = loss + beta * reduce_like_trl(
            per_token_kl, mask, self.loss_type, training=training,
            grad_accum=self.current_gradient_accumulation_steps, num_items_in_batch=inputs.get("num_items_in_batch"),
            num_processes=self.accelerator.num_processes, steps_per_generation=self.args.steps_per_generation,
            max_completion_length=self.max_completion_length,
        )  # fmt: skip
        mode = "train" if training else "eval"
        totals = self.accelerator.reduce(torch.stack([(per_token_kl.detach() * mask).sum(), mask.sum().float()]), reduction="sum")
        self._metrics[mode]["kl"].append((totals[0] / totals[1].clamp(min=1.0)).item())
        return loss


class KLGRPOTrainer(KLEstimatorMixin, GRPOTrainer):
    """TRL's GRPOTrainer with the KL estimator a config names (ARENA's k2)."""


class NoSignalError(ValueError):
    """Dynamic sampling found too few groups whose rewards differ: the batch carries no learning signal
    (DAPO's code stops the same way). train.py exits with EXIT_NO_SIGNAL, which a pipeline reports as a
    stage skipped for lack of signal."""


class DAPOTrainer(KLEstimatorMixin, GRPOTrainer):
    """GRPOTrainer with DAPO's dynamic sampling (see the module docstring); clip-higher, the token-level
    loss and overlong filtering are TRL's own settings (epsilon_high, loss_type="dapo",
    mask_truncated_completions), which train.py sets for algo dapo and lws unless the config says otherwise."""

    def __init__(self, *args, dynamic_sampling: bool = True, max_rounds: int = 10, **kwargs):
        super().__init__(*args, **kwargs)
        self.dynamic_sampling = bool(dynamic_sampling)
        self.max_rounds = int(max_rounds)
        if self.dynamic_sampling and self.accelerator.num_processes > 1:
            raise ValueError("dynamic sampling here runs on one process; set dynamic_sampling false or train on one device")
        self._refill_rng = random.Random(self.args.seed + 1)
        self._refill_order: list[int] = []
        self._last_rewards: torch.Tensor | None = None

    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        rewards_per_func = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        # The reward TRL normalises (GRPOTrainer._generate_and_score_completions: weighted nansum per row).
        rewards = (rewards_per_func * self.reward_weights.to(rewards_per_func.device).unsqueeze(0)).nansum(dim=1)
        rewards[torch.isnan(rewards_per_func).all(dim=1)] = torch.nan
        self._last_rewards = rewards.detach().cpu()
        return rewards_per_func

    def _refill_prompts(self, n_groups: int) -> list[dict]:
        """The next `n_groups` prompts of the refill stream, each repeated num_generations times (TRL's layout)."""
        rows = []
        for _ in range(n_groups):
            if not self._refill_order:
                self._refill_order = list(range(len(self.train_dataset)))
                self._refill_rng.shuffle(self._refill_order)
            rows.append(self.train_dataset[self._refill_order.pop()])
        return [dict(row) for row in rows for _ in range(self.num_generations)]

    def _generate_and_score_completions(self, inputs):
        if not self.model.training or not self.dynamic_sampling:
            return super()._generate_and_score_completions(inputs)
        group = self.num_generations
        needed = len(inputs) // group
        outputs, kept_per_round = [], []
        batch = inputs
        while True:
            output = super()._generate_and_score_completions(batch)
            kept = torch.nonzero(informative_groups(self._last_rewards, group)).flatten().tolist()
            outputs.append(output)
            kept_per_round.append(kept)
            if sum(len(k) for k in kept_per_round) >= needed:
                break
            if self.max_rounds > 0 and len(outputs) >= self.max_rounds:
                raise NoSignalError(
                    f"dynamic sampling: {sum(len(k) for k in kept_per_round)} of the {needed} groups needed had rewards that differ "
                    f"after {len(outputs)} generation rounds (max_rounds); the questions are too hard or too easy for the "
                    "policy. Raise dynamic_sampling.max_rounds (0 = no limit) or turn dynamic sampling off"
                )
            batch = self._refill_prompts(needed)
        chosen = fill_batch(kept_per_round, needed)
        parts = []
        for round_index, output in enumerate(outputs):
            groups = [g for r, g in chosen if r == round_index]
            if groups:
                rows = torch.tensor([g * group + i for g in groups for i in range(group)])
                parts.append(select_rows(output, rows))
        tokenizer = getattr(self.processing_class, "tokenizer", self.processing_class)
        merged = concat_rows(parts, tokenizer.pad_token_id)
        mask = merged["completion_mask"] * merged["tool_mask"] if "tool_mask" in merged else merged["completion_mask"]
        merged["num_items_in_batch"] = self.accelerator.gather(mask.sum()).sum()
        self._metrics["train"]["dapo/generation_rounds"].append(float(len(outputs)))
        self._metrics["train"]["dapo/kept_group_fraction"].append(sum(len(k) for k in kept_per_round) / (len(outputs) * needed))
        return merged


class StageSwitch(TrainerCallback):
    """LWS's switch from the stage-1 to the stage-2 reward (see the module docstring).

    `at_step`: switch after that optimiser step; `share`: after that share of max_steps; `plateau_window` /
    `plateau_tolerance`: when `plateau_reached` holds on the logged mean rewards. The first rule that fires
    switches; `switch(trainer)` points every environment at the stage-2 server.
    """

    def __init__(self, switch, at_step: int | None = None, share: float | None = None, plateau_window: int | None = None, plateau_tolerance: float = 0.0):
        self.switch, self.at_step, self.share = switch, at_step, share
        self.plateau_window, self.plateau_tolerance = plateau_window, plateau_tolerance
        self.rewards: list[float] = []
        self.switched_at: int | None = None
        self.reason: str | None = None

    def _fire(self, step: int, reason: str) -> None:
        if self.switched_at is None:
            self.switched_at, self.reason = step, reason
            self.switch()

    def on_step_end(self, args, state, control, **kwargs):
        if self.at_step is not None and state.global_step >= self.at_step:
            self._fire(state.global_step, f"step {self.at_step}")
        if self.share is not None and state.global_step >= round(self.share * state.max_steps):
            self._fire(state.global_step, f"share {self.share:g} of {state.max_steps} steps")

    def on_train_begin(self, args, state, control, **kwargs):
        if self.at_step == 0 or self.share == 0:
            self._fire(0, "from the start")

    def on_log(self, args, state, control, logs=None, **kwargs):
        if logs and "reward" in logs and self.switched_at is None:
            self.rewards.append(float(logs["reward"]))
            if self.plateau_window and plateau_reached(self.rewards, self.plateau_window, self.plateau_tolerance):
                self._fire(state.global_step, f"plateau (window {self.plateau_window}, tolerance {self.plateau_tolerance:g})")
