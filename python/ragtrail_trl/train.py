"""Train a policy or a process reward model with TRL from a ragtrail config file.

    python -m ragtrail_trl.train --config CONFIG.json

CONFIG.json (written by ragtrail's TypeScript CLI):

    algo        "sft" | "dpo" | "prm" | "grpo" | "prorag" | "dapo" | "lws"
    model       "tiny" (random model built here), a local checkpoint directory, or a hub id
    tiny        for model "tiny": {corpus, questions, hidden_size, layers, heads, vocab_size, seed, dir?}
    data        sft: trl_sft.jsonl; dpo and prm: trl_preference.jsonl; grpo, prorag, dapo, lws: questions.jsonl
    output_dir  where the trained model, log_history.jsonl and summary.json go
    lora        null, or {r, alpha, dropout, target_modules}
    trainer     fields of the TRL config class (SFTConfig, DPOConfig, RewardConfig, GRPOConfig)
    env         grpo, prorag, dapo, lws: {url, token, protocol?} of ragtrail's environment server
    kl_estimator  grpo, prorag, dapo, lws: "k1", "k2" (ARENA) or "k3" (TRL's, the default) for the KL term
    dynamic_sampling  dapo, lws: false, true, or {"max_rounds": N} (DAPO's dynamic sampling; default
                true with 10 rounds, DAPO's run script; 0 = no limit)
    soft_overlong_cache  dapo, lws: L_cache of DAPO's soft overlong punishment (Eq. 13), added as a
                reward; 0 or absent: off
    env_stage2  lws: {url, token} of a second server scoring with LWS's stage-2 reward
    stage_switch  lws: when the stage-2 reward replaces stage 1: {"at_step": N}, {"share": x} (of
                max_steps) and/or {"plateau_window": W, "plateau_tolerance": t} (the first to fire)
    max_examples  optional: keep only the first N rows of the data (smoke runs)
    control_token_weight  sft, optional: ProRAG's weight of the control-tag tokens (1 = plain SFT)
    dual_weight, step_form, lambda_f  prorag, optional: w of A_out + w * A_step (0.3), the step
                reward's form ("code" or "spec") and the spec form's format weight (1)

Each algorithm runs the matching TRL trainer unchanged: SFTTrainer, DPOTrainer (with a thin
subclass that records the log-probabilities behind the loss of some batches), RewardTrainer
on a one-output sequence classifier (the PRM of RAG-Gym and ProRAG: Bradley-Terry on the
preference pairs), and GRPOTrainer with `environment_factory` talking to the environment server.
ProRAG's two changes live in prorag.py: algo "prorag" is GRPO with the dual-granularity per-token
advantage, and sft with `control_token_weight` weighs the control tags in the loss. dapo.py holds
DAPO (algo "dapo": clip-higher, token-level loss, overlong filtering, dynamic sampling), LWS
(algo "lws": DAPO whose environment server changes from the stage-1 to the stage-2 reward when
`stage_switch` fires) and the KL estimators (`kl_estimator`).

Every top-level field and every trainer field is either used or refused with a one-line message:
nothing in a config is dropped.

Problems with the config or the data end the run with exit code 2 and a one-line message. A DAPO or
LWS run whose dynamic sampling finds no group with differing rewards for max_rounds rounds ends with
exit code 3 (no learning signal). With LoRA, OUT holds the merged checkpoint and OUT/adapter the adapter.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import sys
import time

from . import jsonl

ALGOS = ("sft", "dpo", "prm", "grpo", "prorag", "dapo", "lws")
ONLINE = ("grpo", "prorag", "dapo", "lws")  # GRPOTrainer rollouts in the environment server
DAPO_LIKE = ("dapo", "lws")
# The top-level fields a config may have; any other is refused (validate_config), never ignored.
KNOWN_FIELDS = {
    "algo", "model", "tiny", "data", "output_dir", "lora", "trainer", "env", "max_examples", "split",
    "control_token_weight", "dual_weight", "step_form", "lambda_f",
    "kl_estimator", "dynamic_sampling", "soft_overlong_cache", "env_stage2", "stage_switch",
}  # fmt: skip
EXIT_CONFIG = 2
EXIT_NO_SIGNAL = 3  # dapo/lws: every group's rewards were equal for max_rounds rounds (dapo.NoSignalError)

GRPO_SYSTEM_PROMPT = (
    "You answer questions about a knowledge base you cannot see directly. Call the search tool "
    "with a short query whenever you lack a fact, read what comes back, and when you are sure, "
    "call the answer tool with a short answer."
)


class ConfigError(Exception):
    """A problem the user can fix in the config or the data; `fix` says how."""

    def __init__(self, problem: str, fix: str):
        super().__init__(f"{problem}. Fix: {fix}")


# ----------------------------------------------------------------------------- config and data


def load_config(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as handle:
            config = json.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist", "pass the path of the JSON file the CLI wrote") from None
    except json.JSONDecodeError as err:
        raise ConfigError(
            f"config file {path} is not valid JSON (line {err.lineno}: {err.msg})", "rewrite it as one JSON object"
        ) from None
    if not isinstance(config, dict):
        raise ConfigError(f"config file {path} holds a {type(config).__name__}, not an object", "wrap the settings in {}")
    return validate_config(config, base=os.path.dirname(os.path.abspath(path)))


def validate_config(config: dict, base: str = ".") -> dict:
    config = dict(config)
    algo = config.get("algo")
    if algo not in ALGOS:
        raise ConfigError(f"unknown algo {algo!r}", f"set \"algo\" to one of {', '.join(ALGOS)}")
    unknown = sorted(set(config) - KNOWN_FIELDS)
    if unknown:
        raise ConfigError(f"unknown config field(s) {', '.join(unknown)}: ragtrail_trl would not use them", f"remove them; the fields are {', '.join(sorted(KNOWN_FIELDS))}")
    for key in ("data", "output_dir"):
        if not isinstance(config.get(key), str) or not config[key]:
            raise ConfigError(f"missing \"{key}\"", f"add \"{key}\": \"path\" to the config")
    config["data"] = _resolve(config["data"], base)
    config["output_dir"] = _resolve(config["output_dir"], base)
    if not os.path.isfile(config["data"]):
        hint = {
            "sft": "trl_sft.jsonl from `ragtrail annotate`",
            "dpo": "trl_preference.jsonl from `ragtrail annotate`",
            "prm": "trl_preference.jsonl from `ragtrail annotate`",
            "grpo": "questions.jsonl of the world or dataset",
            "prorag": "questions.jsonl of the world or dataset",
            "dapo": "questions.jsonl of the world or dataset",
            "lws": "questions.jsonl of the world or dataset",
        }[algo]
        raise ConfigError(f"data file {config['data']} does not exist", f"point \"data\" at {hint}")
    config.setdefault("model", "tiny")
    if not isinstance(config["model"], str) or not config["model"]:
        raise ConfigError("\"model\" must be a string", "use \"tiny\", a checkpoint directory, or a hub id")
    if config["model"] == "tiny":
        tiny = dict(config.get("tiny") or {})
        for key in ("corpus", "questions"):
            if tiny.get(key):
                tiny[key] = _resolve(tiny[key], base)
                if not os.path.isfile(tiny[key]):
                    raise ConfigError(f"tiny.{key} file {tiny[key]} does not exist", f"point tiny.{key} at the world's {key}.jsonl")
        if not tiny.get("corpus") and not tiny.get("questions"):
            raise ConfigError(
                "model \"tiny\" needs text to learn its tokenizer from", "set tiny.corpus (and tiny.questions) to the world's jsonl files"
            )
        if tiny.get("dir"):
            tiny["dir"] = _resolve(tiny["dir"], base)
        extra = tiny.get("extra_texts") or []
        if not isinstance(extra, list) or not all(isinstance(p, str) for p in extra):
            raise ConfigError("tiny.extra_texts must be a list of jsonl paths", "e.g. [\"sft.jsonl\"], or leave it out")
        tiny["extra_texts"] = [_resolve(p, base) for p in extra]
        for path in tiny["extra_texts"]:
            if not os.path.isfile(path):
                raise ConfigError(f"tiny.extra_texts file {path} does not exist", "point it at an existing jsonl file")
        if tiny.get("template", "tools") not in ("tools", "search-r1"):
            raise ConfigError(f"unknown tiny.template {tiny.get('template')!r}", "use \"tools\" (tool calls) or \"search-r1\" (the tag protocol)")
        config["tiny"] = tiny
    lora = config.get("lora")
    if lora is not None and not isinstance(lora, dict):
        raise ConfigError("\"lora\" must be null or an object", "use {\"r\": 8, \"alpha\": 16, \"dropout\": 0.05, \"target_modules\": \"all-linear\"}")
    trainer = config.get("trainer") or {}
    if not isinstance(trainer, dict):
        raise ConfigError("\"trainer\" must be an object of TRL config fields", "use e.g. {\"max_steps\": 6}")
    config["trainer"] = trainer
    if algo in ONLINE:
        env = config.get("env") or {}
        if not isinstance(env, dict) or not env.get("url"):
            raise ConfigError(f"{algo} needs the environment server", "add \"env\": {\"url\": \"http://127.0.0.1:PORT\", \"token\": null}")
        if not isinstance(env.get("protocol", "tools"), str) or not env.get("protocol", "tools"):
            raise ConfigError(f"env.protocol must be a protocol name, got {env.get('protocol')!r}", "use \"tools\" (search/answer tool calls) or the --agent the server runs (search-r1, prorag, arena, ...)")
        config["env"] = env
    _validate_prorag_fields(config)
    _validate_dapo_fields(config)
    max_examples = config.get("max_examples")
    if max_examples is not None and (not isinstance(max_examples, int) or max_examples < 1):
        raise ConfigError("\"max_examples\" must be a positive integer", "remove it or set e.g. 8")
    return config


def _validate_prorag_fields(config: dict) -> None:
    """ProRAG's fields: control_token_weight (sft), dual_weight / step_form / lambda_f (prorag)."""
    algo = config["algo"]

    def number(key: str, low: float, fix: str) -> None:
        value = config[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < low:
            raise ConfigError(f"\"{key}\" must be a number >= {low:g}, got {value!r}", fix)

    if "control_token_weight" in config:
        if algo != "sft":
            raise ConfigError(f"\"control_token_weight\" is a setting of sft, not {algo}", "remove it or use algo \"sft\"")
        number("control_token_weight", 0, "e.g. 2 (1 is plain SFT)")
        if config["trainer"].get("loss_type", "nll") not in ("nll", "chunked_nll") or config["trainer"].get("use_liger_kernel"):
            raise ConfigError("\"control_token_weight\" weighs the plain NLL loss", "leave trainer.loss_type at \"nll\" and use_liger_kernel off")
    prorag_keys = [k for k in ("dual_weight", "step_form", "lambda_f") if k in config]
    if prorag_keys and algo != "prorag":
        raise ConfigError(f"{', '.join(prorag_keys)}: settings of prorag, not {algo}", "remove them or use algo \"prorag\"")
    if algo == "prorag":
        config.setdefault("dual_weight", 0.3)
        config.setdefault("step_form", "code")
        config.setdefault("lambda_f", 1.0)
        number("dual_weight", 0, "use ProRAG's 0.3 (its run script) or 0.5 (its code's default)")
        number("lambda_f", 0, "e.g. 1")
        if config["step_form"] not in ("code", "spec"):
            raise ConfigError(f"unknown step_form {config['step_form']!r}", "use \"code\" (sigmoid(PRM) + 1 / -2, the authors' code) or \"spec\" (PRM + lambda_f * 1[valid])")
        if config["trainer"].get("use_liger_kernel"):
            raise ConfigError("prorag's per-token advantage does not go through the Liger GRPO loss", "remove trainer.use_liger_kernel")


def _validate_dapo_fields(config: dict) -> None:
    """kl_estimator (online algos), dynamic_sampling / soft_overlong_cache (dapo, lws), env_stage2 / stage_switch (lws)."""
    algo = config["algo"]
    if "kl_estimator" in config:
        if algo not in ONLINE:
            raise ConfigError(f"\"kl_estimator\" is a setting of {', '.join(ONLINE)}, not {algo}", "remove it")
        if config["kl_estimator"] not in ("k1", "k2", "k3"):
            raise ConfigError(f"unknown kl_estimator {config['kl_estimator']!r}", "use \"k1\", \"k2\" (ARENA) or \"k3\" (TRL's, GRPO's)")
        if config["kl_estimator"] != "k3" and config["trainer"].get("use_liger_kernel"):
            raise ConfigError(f"kl_estimator {config['kl_estimator']} replaces TRL's k3 term, which the Liger loss computes inline", "remove trainer.use_liger_kernel or use k3")
    for key in ("dynamic_sampling", "soft_overlong_cache"):
        if key in config and algo not in DAPO_LIKE:
            raise ConfigError(f"\"{key}\" is a setting of dapo and lws, not {algo}", "remove it or use algo \"dapo\"")
    for key in ("env_stage2", "stage_switch"):
        if key in config and algo != "lws":
            raise ConfigError(f"\"{key}\" is a setting of lws, not {algo}", "remove it or use algo \"lws\"")
    if algo not in DAPO_LIKE:
        return
    sampling = config.get("dynamic_sampling", True)
    if isinstance(sampling, bool):
        sampling = {"enabled": sampling}
    if not isinstance(sampling, dict) or set(sampling) - {"enabled", "max_rounds"}:
        raise ConfigError(f"\"dynamic_sampling\" must be true, false or {{\"max_rounds\": N}}, got {config.get('dynamic_sampling')!r}", "e.g. {\"max_rounds\": 10} (DAPO's run script)")
    rounds = sampling.get("max_rounds", 10)
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 0:
        raise ConfigError(f"dynamic_sampling.max_rounds must be an integer >= 0, got {rounds!r}", "e.g. 10; 0 = no limit")
    config["dynamic_sampling"] = {"enabled": bool(sampling.get("enabled", True)), "max_rounds": rounds}
    cache = config.setdefault("soft_overlong_cache", 0)
    if isinstance(cache, bool) or not isinstance(cache, int) or cache < 0:
        raise ConfigError(f"\"soft_overlong_cache\" must be an integer >= 0, got {cache!r}", "e.g. 64 tokens; 0 = off")
    if algo == "lws":
        stage2 = config.get("env_stage2") or {}
        if not isinstance(stage2, dict) or not stage2.get("url"):
            raise ConfigError("lws needs a second environment server scoring with LWS's stage-2 reward", "add \"env_stage2\": {\"url\": \"http://127.0.0.1:PORT\", \"token\": null}")
        switch = config.get("stage_switch")
        rules = {"at_step", "share", "plateau_window", "plateau_tolerance"}
        if not isinstance(switch, dict) or not switch or set(switch) - rules or not (set(switch) & {"at_step", "share", "plateau_window"}):
            raise ConfigError(f"\"stage_switch\" must name a rule, got {switch!r}", "use {\"at_step\": N}, {\"share\": 0.5} and/or {\"plateau_window\": W, \"plateau_tolerance\": t}")
        if "share" in switch and not (isinstance(switch["share"], (int, float)) and 0 <= switch["share"] <= 1):
            raise ConfigError(f"stage_switch.share must be in [0, 1], got {switch['share']!r}", "e.g. 0.5 (LWS's halves)")
        for key in ("at_step", "plateau_window"):
            if key in switch and (isinstance(switch[key], bool) or not isinstance(switch[key], int) or switch[key] < 0):
                raise ConfigError(f"stage_switch.{key} must be an integer >= 0, got {switch[key]!r}", "e.g. 20")


def _resolve(path: str, base: str) -> str:
    return path if os.path.isabs(path) else os.path.normpath(os.path.join(base, path))


def read_jsonl(path: str) -> list[dict]:
    try:
        rows = list(jsonl.read_jsonl(path))
    except jsonl.JsonlError as err:
        raise ConfigError(err.problem, err.fix) from None
    if not rows:
        raise ConfigError(f"{path} has no examples", "regenerate it (the annotate step produced nothing?)")
    return rows


def _is_messages(value) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(m, dict) and "role" in m for m in value)


def check_rows(algo: str, rows: list[dict], path: str) -> None:
    """Fail early, naming the line, when rows do not have the shape the trainer needs."""
    for number, row in enumerate(rows, 1):
        if algo == "sft":
            if not (_is_messages(row.get("messages")) or isinstance(row.get("text"), str) or "completion" in row):
                raise ConfigError(
                    f"{path} example {number} has no \"messages\" list", "use trl_sft.jsonl ({\"messages\": [...]}) for sft"
                )
        elif algo in ("dpo", "prm"):
            missing = [k for k in ("chosen", "rejected") if k not in row]
            if algo == "dpo" and "prompt" not in row:
                missing.insert(0, "prompt")
            if missing:
                raise ConfigError(
                    f"{path} example {number} lacks {', '.join(missing)}",
                    f"use trl_preference.jsonl ({{\"prompt\", \"chosen\", \"rejected\"}}) for {algo}",
                )
        elif algo in ONLINE:
            if _is_messages(row.get("prompt")) and row.get("question_id"):
                continue  # a prompt already rendered (by the agent protocol) for its question
            if not row.get("id") or not isinstance(row.get("question"), str):
                raise ConfigError(
                    f"{path} example {number} lacks \"id\" or \"question\"", f"use a questions.jsonl ({{\"id\", \"question\", ...}}) for {algo}"
                )


def grpo_rows(rows: list[dict], split: str | None = None) -> list[dict]:
    """Question rows -> GRPO prompts. `split` is the command's --split: a name keeps that split, ""
    keeps every row, None keeps the train split when the rows carry splits (else every row) -- the
    rule the environment server applies, so prompts and served questions agree. Rows that already
    hold a rendered {"prompt": messages, "question_id"} pass through unchanged."""
    if all(_is_messages(r.get("prompt")) for r in rows):
        return [{"prompt": r["prompt"], "question_id": str(r["question_id"])} for r in rows]
    if split is None and any(isinstance(r.get("metadata"), dict) and "split" in r["metadata"] for r in rows):
        split = "train"
    if split:
        rows = [r for r in rows if (r.get("metadata") or {}).get("split") == split]
    return [
        {
            "prompt": [
                {"role": "system", "content": GRPO_SYSTEM_PROMPT},
                {"role": "user", "content": f"Question: {r['question']}"},
            ],
            "question_id": str(r["id"]),
        }
        for r in rows
    ]


# ----------------------------------------------------------------------------- trainer pieces


def log_writer(path: str):
    """Trainer callback that appends every log record to `path` (jsonl) as it happens."""
    from transformers import TrainerCallback

    class LogWriter(TrainerCallback):
        def __init__(self):
            self.records: list[dict] = []
            open(path, "w").close()

        def on_log(self, args, state, control, logs=None, **kwargs):
            record = {"step": state.global_step, **{k: _plain(v) for k, v in (logs or {}).items()}}
            self.records.append(record)
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(record) + "\n")

    return LogWriter()


def _plain(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item"):
        return value.item()
    return value


def recording_dpo_trainer():
    """DPOTrainer that keeps, for the first and the latest training batch, the summed log-probs behind its loss.

    TRL computes per-token log-probs with `selective_log_softmax`, masks the prompt tokens in
    place, and sums per sequence. For the recorded batches we wrap that one function while
    `_compute_loss` runs, keep the tensors it returns (policy first, then reference unless the
    reference log-probs were precomputed), and sum them after TRL has masked them: the numbers
    are TRL's own, not a re-computation.
    """
    from trl import DPOTrainer
    from trl.trainer import dpo_trainer as dpo_module

    class RecordingDPOTrainer(DPOTrainer):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.batch_records: dict[str, dict] = {}

        def _compute_loss(self, model, inputs, return_outputs):
            if not self.model.training:
                return super()._compute_loss(model, inputs, return_outputs)
            captured = []
            original = dpo_module.selective_log_softmax

            def spy(logits, index):
                out = original(logits, index)
                captured.append(out)
                return out

            dpo_module.selective_log_softmax = spy
            try:
                result = super()._compute_loss(model, inputs, return_outputs)
            finally:
                dpo_module.selective_log_softmax = original
            loss = result[0] if return_outputs else result
            record = self._record(captured, inputs, loss)
            if record is not None:
                self.batch_records.setdefault("first_batch", record)
                self.batch_records["last_batch"] = record
            return result

        def _record(self, captured, inputs, loss):
            if not captured or self.ld_alpha is not None:
                return None
            policy = captured[0].detach().float().sum(dim=1)
            chosen, rejected = policy.chunk(2, dim=0)
            if self.precompute_ref_logps:
                ref_chosen, ref_rejected = inputs["ref_chosen_logps"], inputs["ref_rejected_logps"]
            elif len(captured) > 1:
                ref_chosen, ref_rejected = captured[1].detach().float().sum(dim=1).chunk(2, dim=0)
            else:
                return None
            return {
                "step": self.state.global_step + 1,
                "chosen_logps": chosen.tolist(),
                "rejected_logps": rejected.tolist(),
                "ref_chosen_logps": [float(x) for x in ref_chosen.tolist()],
                "ref_rejected_logps": [float(x) for x in ref_rejected.tolist()],
                "beta": float(self.beta),
                "loss_type": list(self.loss_types),
                "loss": float(loss.detach().item()),
            }

    return RecordingDPOTrainer


def _config_class(algo: str):
    import trl

    return {"sft": trl.SFTConfig, "dpo": trl.DPOConfig, "prm": trl.RewardConfig}.get(algo, trl.GRPOConfig)


def trainer_args(config: dict, tiny: bool):
    """TRL config object: quiet CPU-friendly defaults, then the config's `trainer` fields on top."""
    import dataclasses

    import torch

    algo = config["algo"]
    cls = _config_class(algo)
    defaults = {
        "report_to": "none",
        "logging_steps": 1,
        "save_strategy": "no",
        "disable_tqdm": True,
        "seed": 0,
    }
    if not torch.cuda.is_available():
        defaults["bf16"] = False  # TRL turns bf16 on by default; CPU runs stay in float32
    if tiny:
        defaults["gradient_checkpointing"] = False
    if algo == "sft":
        defaults["assistant_only_loss"] = True  # loss on the chosen action, not on the state
    if algo in ONLINE:
        generations = int(config["trainer"].get("num_generations", 4))
        defaults.update(
            num_generations=generations,
            per_device_train_batch_size=generations,
            max_completion_length=64,
            max_tool_calling_iterations=4,
        )
    if algo in DAPO_LIKE:
        # DAPO's settings (its paper §3 and run script): clip-higher 0.2 / 0.28, token-level loss,
        # overlong filtering, no KL; LWS keeps verl's KL loss at 1e-4 (its released setup).
        defaults.update(loss_type="dapo", epsilon=0.2, epsilon_high=0.28, mask_truncated_completions=True, beta=0.0 if algo == "dapo" else 1e-4)
    fields = {f.name for f in dataclasses.fields(cls)}
    overrides = {k: v for k, v in config["trainer"].items() if k != "output_dir"}
    unknown = sorted(set(overrides) - fields)
    if unknown:
        raise ConfigError(
            f"unknown {cls.__name__} field(s) in \"trainer\": {', '.join(unknown)}",
            f"remove them or check the spelling against trl.{cls.__name__} (TRL 1.13)",
        )
    kwargs = {**defaults, **overrides, "output_dir": config["output_dir"]}
    try:
        return cls(**kwargs), kwargs
    except (TypeError, ValueError) as err:
        raise ConfigError(f"TRL rejected the trainer settings: {err}", f"adjust \"trainer\" for {cls.__name__}") from None


def peft_config(lora: dict | None, algo: str):
    if not lora:
        return None
    from peft import LoraConfig

    known = {"r", "alpha", "dropout", "target_modules", "bias", "modules_to_save"}
    unknown = sorted(set(lora) - known)
    if unknown:
        raise ConfigError(f"unknown lora field(s): {', '.join(unknown)}", f"use only {', '.join(sorted(known))}")
    return LoraConfig(
        r=int(lora.get("r", 8)),
        lora_alpha=int(lora.get("alpha", 2 * int(lora.get("r", 8)))),
        lora_dropout=float(lora.get("dropout", 0.0)),
        target_modules=lora.get("target_modules", "all-linear"),
        bias=lora.get("bias", "none"),
        modules_to_save=lora.get("modules_to_save"),
        task_type="SEQ_CLS" if algo == "prm" else "CAUSAL_LM",
    )


def resolve_model(config: dict) -> str:
    """Path or hub id of the starting checkpoint; builds the tiny random model when asked."""
    if config["model"] != "tiny":
        return config["model"]
    from .tiny import build_tiny

    tiny = config["tiny"]
    return build_tiny(
        tiny.get("dir") or os.path.join(config["output_dir"], "tiny-init"),
        corpus=tiny.get("corpus"),
        questions=tiny.get("questions"),
        hidden_size=int(tiny.get("hidden_size", 64)),
        layers=int(tiny.get("layers", 2)),
        heads=int(tiny.get("heads", 4)),
        vocab_size=int(tiny.get("vocab_size", 2000)),
        seed=int(tiny.get("seed", 0)),
        template=str(tiny.get("template", "tools")),
        extra_texts=tiny.get("extra_texts") or (),
    )


# ----------------------------------------------------------------------------- run


def run(config: dict) -> dict:
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    started = time.time()
    algo = config["algo"]
    rows = read_jsonl(config["data"])
    check_rows(algo, rows, config["data"])
    if algo in ONLINE:
        rows = grpo_rows(rows, config.get("split"))
        if not rows:
            raise ConfigError(f"{config['data']} has no questions in split {config.get('split') or 'train'!r}", "pick a split the file has with --split NAME, or use every question with --split \"\"")
    if config.get("max_examples"):
        rows = rows[: config["max_examples"]]
    if algo in ONLINE:
        from .env_client import EnvError, check_server

        try:
            check_server(config["env"]["url"], config["env"].get("token"))
        except EnvError as err:
            raise ConfigError(str(err), "start ragtrail's environment server and put its address in env.url") from None

    os.makedirs(config["output_dir"], exist_ok=True)
    args, effective = trainer_args(config, tiny=config["model"] == "tiny")
    peft = peft_config(config.get("lora"), algo)

    from datasets import Dataset
    from transformers import set_seed

    from .tiny import load_tokenizer

    set_seed(args.seed)
    model_path = resolve_model(config)
    try:
        tokenizer = load_tokenizer(model_path)
    except OSError as err:
        raise ConfigError(f"cannot load a tokenizer for model {model_path!r} ({err})", "use \"tiny\" or a checkpoint directory with tokenizer files") from None
    dataset = Dataset.from_list(rows)
    writer = log_writer(os.path.join(config["output_dir"], "log_history.jsonl"))
    common = dict(args=args, train_dataset=dataset, processing_class=tokenizer, callbacks=[writer], peft_config=peft)

    import trl

    if algo == "sft" and "control_token_weight" in config:
        from .prorag import ControlWeightedSFTTrainer

        trainer = ControlWeightedSFTTrainer(model=model_path, control_token_weight=config["control_token_weight"], **common)
    elif algo == "sft":
        trainer = trl.SFTTrainer(model=model_path, **common)
    elif algo == "dpo":
        trainer = recording_dpo_trainer()(model=model_path, **common)
    elif algo == "prm":
        trainer = trl.RewardTrainer(model=model_path, **common)
    else:
        from .env_client import RagtrailEnv, episode_reward, outcome_reward

        env = config["env"]
        where = {"url": env["url"], "token": env.get("token")}
        protocol = env.get("protocol", "tools")
        if protocol == "tools":
            # TRL's own tool loop: the env client's search/answer methods are the tools.
            factory = lambda: RagtrailEnv(url=where["url"], token=where["token"], timeout=float(env.get("timeout", 60)))  # noqa: E731
            generation = {"environment_factory": factory}
            rollout = None
        else:
            # Any other protocol: the server renders and parses its text; rollout.py generates the turns.
            from .rollout import ProtocolRollout

            rollout = ProtocolRollout({**env, **where}, rows, max_turns=args.max_tool_calling_iterations or 16, log_path=os.path.join(config["output_dir"], "rollouts.jsonl"))
            served = rollout.served_protocol()
            if served != protocol:
                raise ConfigError(
                    f"env.protocol is {protocol!r} but the environment server at {env['url']} runs {served!r}",
                    f"start serve-env with --agent {protocol}, or set env.protocol to {served!r}",
                )
            generation = {"rollout_func": rollout}
            # Completions are the protocol's text, not tool calls: decode them as plain text.
            tokenizer.response_template = None
        from .dapo import DAPOTrainer, KLEstimatorMixin, KLGRPOTrainer, StageSwitch

        kl = {"kl_estimator": config.get("kl_estimator", "k3")}
        if algo == "prorag":
            from .prorag import ProRAGGRPOTrainer

            class ProRAGTrainer(KLEstimatorMixin, ProRAGGRPOTrainer):
                pass

            # The reward TRL normalises is the outcome alone; the step rewards enter per token (prorag.py).
            trainer = ProRAGTrainer(
                model=model_path, reward_funcs=[outcome_reward], **generation,
                dual_weight=config["dual_weight"], step_form=config["step_form"], lambda_f=config["lambda_f"], **kl, **common,
            )  # fmt: skip
        elif algo in DAPO_LIKE:
            rewards = [episode_reward]
            if config["soft_overlong_cache"]:
                from trl.rewards import get_soft_overlong_punishment

                rewards.append(get_soft_overlong_punishment(args.max_completion_length, config["soft_overlong_cache"]))
            switch = None
            if algo == "lws":
                # One run: the rollouts move to the stage-2 server when the rule fires (dapo.StageSwitch).
                def to_stage2():
                    where.update(url=config["env_stage2"]["url"], token=config["env_stage2"].get("token"))
                    if rollout is not None:
                        rollout.url, rollout.token = where["url"], where["token"]
                    for pool in (getattr(trainer, "_environment_pool", None) or {}).values():
                        for instance in pool:
                            instance._url, instance._token = where["url"], where["token"]

                switch = StageSwitch(to_stage2, **config["stage_switch"])
                common["callbacks"] = [*common["callbacks"], switch]
            sampling = config["dynamic_sampling"]
            trainer = DAPOTrainer(
                model=model_path, reward_funcs=rewards, **generation,
                dynamic_sampling=sampling["enabled"], max_rounds=sampling["max_rounds"], **kl, **common,
            )  # fmt: skip
            trainer.stage_switch = switch
        else:
            trainer = KLGRPOTrainer(model=model_path, reward_funcs=[episode_reward], **generation, **kl, **common)
        if rollout is not None:
            trainer.protocol_rollout = rollout

    trainer.train()
    trainer.save_model(config["output_dir"])
    if peft is not None:
        # The output folder is a whole checkpoint that servers and later stages load like any model:
        # the adapter merged into the base weights. The adapter alone stays in OUT/adapter.
        trainer.model.save_pretrained(os.path.join(config["output_dir"], "adapter"))
        trainer.model.merge_and_unload().save_pretrained(config["output_dir"])
        for name in ("adapter_config.json", "adapter_model.safetensors"):
            if os.path.exists(os.path.join(config["output_dir"], name)):
                os.remove(os.path.join(config["output_dir"], name))

    summary = summarize(config, writer.records, model_path, len(rows), time.time() - started, effective)
    if algo == "dpo":
        summary.update(trainer.batch_records)
    if algo == "lws":
        switch = trainer.stage_switch
        summary.update(stage_switch=config["stage_switch"], stage_switch_step=switch.switched_at, stage_switch_reason=switch.reason)
    with open(os.path.join(config["output_dir"], "summary.json"), "w", encoding="utf-8") as handle:
        json.dump(summary, handle, indent=2)
    return summary


def summarize(config: dict, records: list[dict], model_path: str, n_examples: int, seconds: float, effective: dict) -> dict:
    steps = [r for r in records if "loss" in r]
    losses = [r["loss"] for r in steps]
    summary = {
        "algo": config["algo"],
        "model": config["model"],
        "model_path": model_path,
        "data": config["data"],
        "output_dir": config["output_dir"],
        "n_examples": n_examples,
        # The last record (the trainer's run summary) carries the final step even when the run was
        # shorter than logging_steps and no loss was logged.
        "steps": max((r.get("step", 0) for r in records), default=0),
        "train_loss": next((r["train_loss"] for r in reversed(records) if "train_loss" in r), None),
        "first_loss": losses[0] if losses else None,
        "last_loss": losses[-1] if losses else None,
        "losses": losses,
        "seconds": round(seconds, 2),
        "lora": config.get("lora"),
        "trainer": {k: v for k, v in effective.items() if k != "output_dir"},
    }
    if config["algo"] in ONLINE:
        rewards = [r.get("reward") for r in steps]
        summary["rewards"] = rewards
        summary["first_reward"] = rewards[0] if rewards else None
        summary["last_reward"] = rewards[-1] if rewards else None
        summary["tool_call_frequency"] = [r.get("tools/call_frequency") for r in steps]
    if config["algo"] in ONLINE:
        summary["kl_estimator"] = config.get("kl_estimator", "k3")
        summary["kl"] = [r.get("kl") for r in steps]
    if config["algo"] in DAPO_LIKE:
        summary["dynamic_sampling"] = config["dynamic_sampling"]
        summary["soft_overlong_cache"] = config["soft_overlong_cache"]
        summary["generation_rounds"] = [r.get("dapo/generation_rounds") for r in steps]
    if config["algo"] == "prorag":
        summary.update({k: config[k] for k in ("dual_weight", "step_form", "lambda_f")})
        summary["varying_advantage_rows"] = [r.get("prorag/varying_advantage_rows") for r in steps]
        summary["process_reward"] = [r.get("env/process_reward") for r in steps]
    if "control_token_weight" in config:
        summary["control_token_weight"] = config["control_token_weight"]
    return summary


def describe(summary: dict) -> str:
    def num(x):
        return "n/a" if x is None else f"{x:.4f}"

    line = (
        f"{summary['algo']}: {summary['steps']} steps on {summary['n_examples']} examples in {summary['seconds']}s, "
        f"loss {num(summary['first_loss'])} -> {num(summary['last_loss'])}"
    )
    if summary["algo"] in ONLINE:
        line += f", mean reward {num(summary['first_reward'])} -> {num(summary['last_reward'])}"
    if "first_batch" in summary:
        line += f", first-batch DPO loss {summary['first_batch']['loss']:.4f}"
    return line + f"\nmodel and logs in {summary['output_dir']}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ragtrail_trl.train", description="Train with TRL from a ragtrail config.")
    parser.add_argument("--config", required=True, help="JSON config written by ragtrail's CLI")
    options = parser.parse_args(argv)
    from .env_client import EnvError

    try:
        config = load_config(options.config)
        summary = run(config)
    except ConfigError as err:
        print(f"ragtrail_trl: {err}", file=sys.stderr)
        return EXIT_CONFIG
    except EnvError as err:
        print(f"ragtrail_trl: environment server failed during training: {err}. Fix: check the server's log and env.url", file=sys.stderr)
        return EXIT_CONFIG
    except Exception as err:
        from .dapo import NoSignalError

        if not isinstance(err, NoSignalError):
            raise
        print(f"ragtrail_trl: {err}", file=sys.stderr)
        return EXIT_NO_SIGNAL
    print(describe(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
