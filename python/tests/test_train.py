"""SFT, DPO and PRM runs of a few steps on the tiny model, the DPO loss cross-check, and config errors."""

import json
import math
import os
import subprocess
import sys

import pytest
from conftest import PYTHON_DIR, REPO

# Small fixed batches seen again every step, with a learning rate high enough for a tiny
# random model: the loss then has to go down within a handful of steps.
FAST = {"per_device_train_batch_size": 4, "learning_rate": 3e-3, "logging_steps": 1, "seed": 0, "report_to": "none"}


def read_log(summary):
    with open(os.path.join(summary["output_dir"], "log_history.jsonl")) as handle:
        return [json.loads(line) for line in handle]


def test_sft(run_training, world):
    summary = run_training({"algo": "sft", "data": world["sft"], "max_examples": 4, "trainer": {**FAST, "max_steps": 6}})
    assert summary["steps"] == 6 and len(summary["losses"]) == 6
    assert summary["n_examples"] == 4
    assert summary["last_loss"] < summary["first_loss"] - 0.5
    assert [r["loss"] for r in read_log(summary) if "loss" in r] == summary["losses"]
    assert os.path.exists(os.path.join(summary["output_dir"], "model.safetensors"))


def ts_dpo_loss(batch: dict) -> float:
    """Mean of ragtrail's TypeScript `dpoLoss` over the pairs of a recorded batch."""
    script = (
        "import { dpoLoss } from './src/rewards/rl.ts';"
        "const b = JSON.parse(process.env.RAGTRAIL_BATCH);"
        "const losses = b.chosen_logps.map((c, i) => dpoLoss({ chosen: c, rejected: b.rejected_logps[i],"
        " refChosen: b.ref_chosen_logps[i], refRejected: b.ref_rejected_logps[i] }, b.beta));"
        "console.log(JSON.stringify(losses.reduce((a, x) => a + x, 0) / losses.length));"
    )
    result = subprocess.run(
        ["node", "--import", "tsx", "--input-type=module", "-e", script],
        cwd=REPO, capture_output=True, text=True, timeout=120, env={**os.environ, "RAGTRAIL_BATCH": json.dumps(batch)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return float(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("lora", [None, {"r": 8, "alpha": 16, "dropout": 0.0, "target_modules": "all-linear"}], ids=["full", "lora"])
def test_dpo_and_cross_check(run_training, world, lora):
    trainer = {**FAST, "max_steps": 5, "beta": 0.1}
    if lora:
        trainer["learning_rate"] = 1e-2
    summary = run_training({"algo": "dpo", "data": world["preference"], "max_examples": 4, "lora": lora, "trainer": trainer})
    first, last = summary["first_batch"], summary["last_batch"]
    # A fresh reference equals the policy (LoRA starts as a no-op), so the first loss is ln 2.
    assert first["chosen_logps"] == pytest.approx(first["ref_chosen_logps"], abs=1e-4)
    assert first["rejected_logps"] == pytest.approx(first["ref_rejected_logps"], abs=1e-4)
    assert first["loss"] == pytest.approx(math.log(2), abs=1e-5)
    assert summary["first_loss"] == pytest.approx(first["loss"], abs=1e-6)
    assert summary["last_loss"] < summary["first_loss"] - 0.1
    assert len(first["chosen_logps"]) == 4 and first["beta"] == 0.1 and first["loss_type"] == ["sigmoid"]
    assert all(x < 0 for x in first["chosen_logps"] + first["rejected_logps"])
    # TRL's loss on a recorded batch equals ragtrail's reference dpoLoss on the same log-probs;
    # the last batch has a non-zero margin, so this is not just ln 2 = ln 2.
    assert last["step"] == 5 and last["loss"] < 0.6
    for batch in (first, last):
        assert ts_dpo_loss(batch) == pytest.approx(batch["loss"], abs=1e-4)


def test_prm_with_lora(run_training, world):
    """RAG-Gym / ProRAG style PRM: one-output sequence classifier, Bradley-Terry on the pairs, LoRA."""
    lora = {"r": 8, "alpha": 16, "dropout": 0.0, "target_modules": "all-linear"}
    summary = run_training(
        {"algo": "prm", "data": world["preference"], "max_examples": 4, "lora": lora,
         "trainer": {**FAST, "max_steps": 6, "learning_rate": 5e-3}}
    )  # fmt: skip
    assert summary["steps"] == 6
    assert summary["first_loss"] == pytest.approx(math.log(2), abs=0.05)  # untrained head: scores nearly equal
    assert summary["last_loss"] < summary["first_loss"] - 0.1
    # The adapter in OUT/adapter; OUT itself the merged checkpoint, loadable as a plain classifier.
    assert os.path.exists(os.path.join(summary["output_dir"], "adapter", "adapter_model.safetensors"))
    config = json.load(open(os.path.join(summary["output_dir"], "adapter", "adapter_config.json")))
    assert config["task_type"] == "SEQ_CLS" and config["r"] == 8
    assert not os.path.exists(os.path.join(summary["output_dir"], "adapter_config.json"))
    from transformers import AutoModelForSequenceClassification

    merged = AutoModelForSequenceClassification.from_pretrained(summary["output_dir"])
    assert merged.config.num_labels == 1


# ----------------------------------------------------------------------------- errors


def cli(config: dict, tmp_path) -> subprocess.CompletedProcess:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    return subprocess.run(
        [sys.executable, "-m", "ragtrail_trl.train", "--config", str(path)],
        cwd=PYTHON_DIR, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def assert_clean_error(result, *fragments):
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    message = result.stderr.strip()
    assert message.startswith("ragtrail_trl: ") and "Fix:" in message and len(message.splitlines()) == 1, message
    for fragment in fragments:
        assert fragment in message


def test_bad_configs(tmp_path, world):
    base = {"algo": "sft", "data": world["sft"], "output_dir": str(tmp_path / "out"), "tiny": {"corpus": world["corpus"]}}
    assert_clean_error(cli({**base, "algo": "ppo"}, tmp_path), "unknown algo 'ppo'", "sft, dpo, prm, grpo")
    assert_clean_error(cli({**base, "data": str(tmp_path / "missing.jsonl")}, tmp_path), "missing.jsonl", "does not exist")
    broken = tmp_path / "broken.jsonl"
    broken.write_text(open(world["sft"]).readline() + '{"messages": [oops\n')
    assert_clean_error(cli({**base, "data": str(broken)}, tmp_path), "broken.jsonl line 2 is not valid JSON")
    assert_clean_error(cli({**base, "algo": "dpo"}, tmp_path), "lacks prompt, chosen, rejected", "trl_preference.jsonl")
    assert_clean_error(cli({**base, "algo": "grpo", "data": world["questions"]}, tmp_path), "environment server", "env")
    (tmp_path / "not-json.json").write_text("{algo: sft")
    result = subprocess.run(
        [sys.executable, "-m", "ragtrail_trl.train", "--config", str(tmp_path / "not-json.json")],
        cwd=PYTHON_DIR, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert_clean_error(result, "not valid JSON")


def test_unknown_trainer_field(tmp_path, world, tiny_dir, capsys):
    from ragtrail_trl import train

    config = {
        "algo": "sft", "data": world["sft"], "output_dir": str(tmp_path / "out"),
        "tiny": {"corpus": world["corpus"], "dir": tiny_dir}, "trainer": {"max_stpes": 3},
    }  # fmt: skip
    (tmp_path / "c.json").write_text(json.dumps(config))
    assert train.main(["--config", str(tmp_path / "c.json")]) == 2
    err = capsys.readouterr().err
    assert "unknown SFTConfig field(s) in \"trainer\": max_stpes" in err and "Fix:" in err
