"""ProRAG (Li et al., 2026) on TRL: the dual-granularity advantage for GRPO and the control-token
weighted warm-up SFT. Equation numbers refer to the paper (shared/papers/prorag-process-supervised-rl.txt).

GRPO with the dual-granularity advantage (§3.4, Eq. 5-8)
    Each rollout is an episode on ragtrail's environment server. The server returns every step's
    PRM score (`reward`, or `observation.metadata.step_reward` on the final step), whether the step
    parsed (`observation.valid`), and the outcome reward on the final step. Here

      r_step = sigmoid(PRM) + (+1 if the step is valid else -2)     (Eq. 5, authors' code: "code")
             = PRM + lambda_f * 1[valid]                              (Eq. 5 as written: "spec")
      A_out  = (r_out - mean_group) / (std_group + 1e-4)              (Eq. 7, outcome part)
      A_step = (r_step(token) - mean) / (std + 1e-4), the statistics taken over every scored
               token of the group, each token carrying its step's score (Eq. 7, process part;
               the authors' code normalises over tokens, not over steps)
      A      = A_out + w * A_step                                     (Eq. 8; w = dual_weight)

    A step is one model turn of TRL's tool-calling loop (the turn whose tool call the server
    executed). Tool results are environment tokens: TRL already leaves them out of the loss
    (tool_mask) and they get advantage 0 here. A turn that led to no server step (a call TRL
    answered with an error, the closing turn after the episode ended) keeps A_out alone. When one
    turn made several calls, its score is their mean; the steps the reward function sends to close
    an open episode belong to the rollout's last turn.

    A_out is TRL's own GRPO advantage of the outcome reward function (`env_client.outcome_reward`),
    which with the default `scale_rewards="group"` is exactly Eq. 7's. TRL's loss takes a [B, T]
    advantage tensor as it is (GRPOTrainer._compute_loss unsqueezes only a [B] one).

Control-token weighted SFT (§3.1, Eq. 1)
    L = - sum_t w_t log p(y_t | y_<t, x) / sum_t w_t over the trained (unmasked) tokens, with
    w_t = lambda on tokens that are part of a control tag (<step>, </step>, <subquery>, ...) and 1
    elsewhere. lambda = 1 is plain SFT. Tags usually span several BPE tokens; every token that
    overlaps a tag's characters gets the weight.
"""

from __future__ import annotations

import bisect
import math
import re

import torch
from trl import GRPOTrainer, SFTTrainer

CONTROL_TAGS = (
    "<step>", "</step>", "<subquery>", "</subquery>", "<subanswer>", "</subanswer>",
    "<answer>", "</answer>", "<retrieval>", "</retrieval>",
)  # fmt: skip
STEP_FORMS = ("code", "spec")
DUAL_FORMS = ("ragtrail", "authors")


# ----------------------------------------------------------------------------- the advantage


def step_score(process: float, valid: bool, form: str = "code", lambda_f: float = 1.0) -> float:
    """ProRAG's step reward (Eq. 5) from the server's PRM score of the step and its validity.

    "code" (the authors' code): sigmoid(PRM logit) + 1 for a valid step, -2 for an invalid one (the
    server does not score invalid steps with the PRM). "spec": PRM + lambda_f * 1[valid].
    """
    if form == "code":
        return 1.0 / (1.0 + math.exp(-process)) + 1.0 if valid else -2.0
    return process + (lambda_f if valid else 0.0)


def turn_index(loss_mask: torch.Tensor) -> torch.Tensor:
    """[B, T] index of the model turn each generated token belongs to, -1 off the mask.

    In TRL's multi-turn completions the generated tokens (mask 1) of consecutive turns are separated
    by the tool results (mask 0), so turn k is the k-th run of ones of a row.
    """
    mask = loss_mask.bool()
    starts = mask & ~torch.nn.functional.pad(mask[:, :-1], (1, 0), value=False)
    return torch.where(mask, starts.long().cumsum(dim=1) - 1, torch.full_like(mask, -1, dtype=torch.long))


def dual_advantages(
    outcome_advantages: torch.Tensor,
    token_scores: torch.Tensor,
    step_mask: torch.Tensor,
    loss_mask: torch.Tensor,
    group_size: int,
    weight: float = 0.3,
    eps: float = 1e-4,
    form: str = "ragtrail",
) -> torch.Tensor:
    """Per-token advantages A = A_out + w * A_step (Eq. 8), [B, T]; 0 off `loss_mask`.

    outcome_advantages  [B]     A_out of each completion (Eq. 7, outcome part)
    token_scores        [B, T]  the score of the step each token belongs to (its value off step_mask is ignored)
    step_mask           [B, T]  1 on tokens that belong to a scored step (a subset of loss_mask)
    loss_mask           [B, T]  1 on model-generated tokens, 0 on environment tokens and padding
    group_size                  completions per question; rows [g*G, (g+1)*G) form group g

    A_step normalises the scores over every step-masked token of the group, with the unbiased std
    (as torch.std); a group whose pool is constant, or has fewer than two tokens, gets A_step = 0.

    form="authors" computes what ProRAG's code does (prorag/rl/trainer.py `_generate_and_score_completions`
    at c7a64110; test/fixtures/parity-rl/prorag_rl_advantage): the population mean and variance of the group's
    step-masked scores, std = sqrt(var + 1e-8) with `eps` unused (1 for a group of at most one such token),
    A_out on every token (loss_mask is not applied: the loss masks later), and with weight <= 0 A_out alone.
    """
    if form not in DUAL_FORMS:
        raise ValueError(f"form must be one of {DUAL_FORMS}, got {form!r}")
    batch, length = token_scores.shape
    if batch % group_size:
        raise ValueError(f"{batch} completions do not split into groups of {group_size}")
    if form == "authors":
        return _authors_dual_advantages(outcome_advantages, token_scores, step_mask, group_size, weight)
    scored = step_mask.bool().view(-1, group_size, length)
    scores = torch.where(scored, token_scores.float().view(-1, group_size, length), 0.0)
    count = scored.sum(dim=(1, 2)).float()
    mean = scores.sum(dim=(1, 2)) / count.clamp(min=1)
    centred = torch.where(scored, scores - mean[:, None, None], 0.0)
    std = ((centred**2).sum(dim=(1, 2)) / (count - 1).clamp(min=1)).sqrt()
    spread = (count >= 2) & ~torch.isclose(std, torch.zeros_like(std), atol=1e-8)
    step_adv = torch.where(spread[:, None, None], centred / (std[:, None, None] + eps), 0.0).view(batch, length)
    generated = loss_mask.to(step_adv.dtype)
    return (outcome_advantages.float()[:, None] + weight * step_adv) * generated


def _authors_dual_advantages(outcome_advantages, token_scores, step_mask, group_size, weight):
    batch, length = token_scores.shape
    outcome = outcome_advantages.float()[:, None]
    if weight <= 0:  # the code skips the step term (and keeps one advantage per completion)
        return outcome.expand(batch, length).clone()
    scored = step_mask.bool()
    mask = scored.float().view(-1, group_size, length)
    scores = torch.where(scored, token_scores.float(), 0.0).view(-1, group_size, length)
    count = mask.sum(dim=(1, 2), keepdim=True)
    mean = (scores * mask).sum(dim=(1, 2), keepdim=True) / count.clamp(min=1.0)
    var = ((scores - mean) ** 2 * mask).sum(dim=(1, 2), keepdim=True) / count.clamp(min=1.0)
    std = torch.where(count <= 1, torch.ones_like(var), (var + 1e-8).sqrt())
    step_adv = ((scores - mean) / std * mask).view(batch, length)  # x * 0 keeps a non-finite group mean's NaN, as the code does
    return outcome + weight * step_adv


class ProRAGGRPOTrainer(GRPOTrainer):
    """GRPOTrainer whose advantage is ProRAG's per-token dual-granularity advantage (see the module
    docstring). Needs `environment_factory` with ragtrail's env client and `outcome_reward` as the
    only reward function. `dual_form="authors"` normalises the step scores as ProRAG's code does (see
    `dual_advantages`)."""

    def __init__(self, *args, dual_weight: float = 0.3, step_form: str = "code", lambda_f: float = 1.0, dual_form: str = "ragtrail", **kwargs):
        super().__init__(*args, **kwargs)
        if self.environment_factories is None and self.rollout_func is None:
            raise ValueError("ProRAG's advantage reads the step rewards from the environments: pass environment_factory or a protocol rollout_func")
        if self.use_liger_kernel:
            raise ValueError("the Liger GRPO loss takes one advantage per completion; turn use_liger_kernel off for ProRAG")
        if step_form not in STEP_FORMS:
            raise ValueError(f"step_form must be one of {STEP_FORMS}, got {step_form!r}")
        if dual_form not in DUAL_FORMS:
            raise ValueError(f"dual_form must be one of {DUAL_FORMS}, got {dual_form!r}")
        self.dual_weight, self.step_form, self.lambda_f, self.dual_form = float(dual_weight), step_form, float(lambda_f), dual_form
        self._turns_generated = 0

    def _generate_single_turn(self, *args, **kwargs):
        # TRL generates turn 0 of every rollout, runs the tools those turns called, generates the next
        # turn of the rollouts that called one, and so on: tools run before generation k+1 were called
        # by turn k. The environments tag the steps they execute with this number.
        for env in self.environments or ():
            env._turn = self._turns_generated
        self._turns_generated += 1
        return super()._generate_single_turn(*args, **kwargs)

    def _turn_scores(self, env, turns: int) -> dict[int, float]:
        """Mean step score of each turn of one rollout; `_finish`'s steps (-1) go to its last turn."""
        by_turn: dict[int, list[float]] = {}
        for step in env.steps:
            turn = step["turn"] if 0 <= step["turn"] < turns else turns - 1
            if turn >= 0:
                by_turn.setdefault(turn, []).append(step_score(step["process"], step["valid"], self.step_form, self.lambda_f))
        return {turn: sum(scores) / len(scores) for turn, scores in by_turn.items()}

    def _generate_and_score_completions(self, inputs):
        self._turns_generated = 0
        output = super()._generate_and_score_completions(inputs)  # the reward function has closed every episode
        mode = "train" if self.model.training else "eval"
        loss_mask = output["completion_mask"] * output["tool_mask"] if "tool_mask" in output else output["completion_mask"]
        turns = turn_index(loss_mask)
        token_scores = torch.zeros(turns.shape, dtype=torch.float32, device=turns.device)
        step_mask = torch.zeros_like(loss_mask)
        for row, env in enumerate(self.environments):
            scores = self._turn_scores(env, int(turns[row].max()) + 1)
            for turn, score in scores.items():
                on = turns[row] == turn
                token_scores[row][on] = score
                step_mask[row][on] = 1
        # Groups may span processes: normalise over the whole generation batch, then keep this process's rows.
        local, length = loss_mask.shape
        gathered = [self.accelerator.gather(self.accelerator.pad_across_processes(t, dim=1)) for t in (token_scores, step_mask, loss_mask)]
        outcome = self.accelerator.gather(output["advantages"])
        group = self.num_generations if mode == "train" else self.num_generations_eval
        advantages = dual_advantages(outcome, *gathered, group_size=group, weight=self.dual_weight, form=self.dual_form)
        first = self.accelerator.process_index * local
        output["advantages"] = advantages[first : first + local, :length]
        scored = step_mask.bool()
        if scored.any():
            self._metrics[mode]["prorag/step_score_mean"].append(token_scores[scored].mean().item())
        self._metrics[mode]["prorag/scored_token_fraction"].append((scored.sum() / loss_mask.sum().clamp(min=1)).item())
        return output

    def _compute_loss(self, model, inputs):
        # What the loss receives: the share of completions whose tokens carry different advantages.
        advantages, mask = inputs["advantages"], inputs["completion_mask"] * inputs.get("tool_mask", 1)
        if advantages.dim() == 2:
            high = torch.where(mask.bool(), advantages, -torch.inf).amax(dim=1)
            low = torch.where(mask.bool(), advantages, torch.inf).amin(dim=1)
            varying = (mask.sum(dim=1) > 0) & (high - low > 1e-6)
            mode = "train" if self.model.training else "eval"
            self._metrics[mode]["prorag/varying_advantage_rows"].append(varying.float().mean().item())
        return super()._compute_loss(model, inputs)


# ----------------------------------------------------------------------------- weighted SFT


class ControlWeightedSFTTrainer(SFTTrainer):
    """SFTTrainer with ProRAG's format-aware loss (Eq. 1): control-tag tokens weigh `control_token_weight`.

    The loss goes through transformers' `compute_loss_func` hook, so SFTTrainer's metrics stay as
    they are; the normaliser (`num_items_in_batch`, which the plain loss sets to the number of
    trained tokens of the whole accumulated batch) becomes the sum of their weights. With weight 1
    this is exactly the plain loss.
    """

    def __init__(self, *args, control_token_weight: float = 1.0, control_tags=CONTROL_TAGS, **kwargs):
        if kwargs.get("compute_loss_func") is not None:
            raise ValueError("ControlWeightedSFTTrainer brings its own loss function")
        kwargs["compute_loss_func"] = self._weighted_nll
        self.control_token_weight = float(control_token_weight)
        self._tag_pattern = re.compile("|".join(re.escape(tag) for tag in control_tags))
        self._pieces: dict[int, str] = {}
        self._weights: torch.Tensor | None = None
        config = kwargs.get("args")
        if config is not None and config.loss_type == "chunked_nll":
            # TRL's default computes the same plain NLL in chunks inside the model's forward, without
            # returning the logits; the weighted loss needs them.
            config.loss_type = "nll"
        super().__init__(*args, **kwargs)
        if self.args.use_liger_kernel or self.args.loss_type != "nll":
            raise ValueError("the control-token weighted loss replaces the plain NLL: use loss_type 'nll' without Liger")

    def _piece(self, token_id: int) -> str:
        piece = self._pieces.get(token_id)
        if piece is None:
            tokenizer = getattr(self.processing_class, "tokenizer", self.processing_class)
            piece = self._pieces[token_id] = tokenizer.decode([token_id], skip_special_tokens=False, clean_up_tokenization_spaces=False)
        return piece

    def token_weights(self, input_ids: torch.Tensor) -> torch.Tensor:
        """[B, T] weights: control_token_weight on tokens overlapping a control tag, 1 elsewhere."""
        weights = torch.ones(input_ids.shape, dtype=torch.float32)
        for row, ids in enumerate(input_ids.tolist()):
            starts, text = [], []
            offset = 0
            for token_id in ids:
                piece = self._piece(token_id)
                starts.append(offset)
                text.append(piece)
                offset += len(piece)
            for match in self._tag_pattern.finditer("".join(text)):
                first = bisect.bisect_right(starts, match.start()) - 1
                last = bisect.bisect_right(starts, match.end() - 1) - 1
                weights[row, first : last + 1] = self.control_token_weight
        return weights.to(input_ids.device)

    def _get_num_items_in_batch(self, batch_samples, device):
        if super()._get_num_items_in_batch(batch_samples, device) is None or "shift_labels" in batch_samples[0]:
            return None  # the trainer does not normalise over the accumulated batch; the loss uses its own weights
        # The plain count of trained tokens becomes the sum of their weights, reduced across devices as the plain count is.
        total = sum(
            (self.token_weights(b["input_ids"])[..., 1:].to(b["labels"].device) * (b["labels"][..., 1:] != -100)).sum()
            for b in batch_samples
        ).to(device)
        if self.args.average_tokens_across_devices and self.args.world_size > 1:
            total = self.accelerator.gather(total).sum()
        elif self.args.n_gpu > 1:
            total = total / self.args.n_gpu
        return total

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        if "shift_labels" in inputs:
            raise ValueError("the control-token weighted loss does not support pre-shifted labels (context or sequence parallelism)")
        self._weights = self.token_weights(inputs["input_ids"])
        return super().compute_loss(model, inputs, return_outputs=return_outputs, num_items_in_batch=num_items_in_batch)

    def _weighted_nll(self, outputs, labels, num_items_in_batch=None):
        logits = outputs.logits[..., :-1, :].float()
        targets = labels[..., 1:]
        nll = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1), ignore_index=-100, reduction="none")
        weights = (self._weights[..., 1:] * (targets != -100)).reshape(-1)
        total = (nll * weights).sum()
        return total / (weights.sum() if num_items_in_batch is None else num_items_in_batch)
