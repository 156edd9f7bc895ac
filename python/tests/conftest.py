"""Shared fixtures: a small ragtrail world made by the TypeScript CLI, and a tiny model built from it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PYTHON_DIR = Path(__file__).resolve().parents[1]
REPO = PYTHON_DIR.parent
for entry in (str(PYTHON_DIR), str(Path(__file__).resolve().parent)):
    if entry not in sys.path:
        sys.path.insert(0, entry)

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
# Some tests check what the tiny model learns in a few steps, and torch's sums split by thread, so
# the weights depend on the thread count: with one thread (a one-CPU machine, or CI under taskset)
# the warm-up SFT did not teach the tool-call format and two GRPO/ProRAG tests failed. Fixed here,
# before torch loads and for every process the tests start, so any machine computes the same numbers.
os.environ["OMP_NUM_THREADS"] = "2"


def _node(*args: str) -> None:
    if shutil.which("node") is None:
        pytest.fail("node is not on PATH; the tests generate their data with ragtrail's TypeScript CLI")
    result = subprocess.run(
        ["node", "--import", "tsx", "src/cli/main.ts", *args], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    if result.returncode != 0:
        pytest.fail(f"ragtrail {' '.join(args[:2])} failed ({result.returncode}):\n{result.stderr[-2000:]}")


@pytest.fixture(scope="session")
def world(tmp_path_factory) -> dict[str, str]:
    """World, BM25 index, annotations (12 train questions, 12 MCTS simulations each) and a PRM trained on them."""
    root = tmp_path_factory.mktemp("ragtrail")
    _node("world", "--out", str(root / "world"), "--entities", "300", "--seed", "1")
    _node("index", "build", "--corpus", str(root / "world/corpus.jsonl"), "--out", str(root / "index"))
    _node(
        "annotate", "--policy", "sim", "--index", str(root / "index"),
        "--dataset", str(root / "world/questions.jsonl"), "--limit", "12", "--split", "train",
        "--out", str(root / "ann"), "--simulations", "12",
    )  # fmt: skip
    _node("prm", "train", "--pairs", str(root / "ann/prm_pairs.jsonl"), "--out", str(root / "prm.json"), "--epochs", "10")
    paths = {
        "root": str(root),
        "index": str(root / "index"),
        "prm": str(root / "prm.json"),
        "corpus": str(root / "world/corpus.jsonl"),
        "questions": str(root / "world/questions.jsonl"),
        "sft": str(root / "ann/trl_sft.jsonl"),
        "preference": str(root / "ann/trl_preference.jsonl"),
    }
    for name, path in paths.items():
        assert os.path.exists(path), f"{name}: {path} was not produced"
    return paths


@pytest.fixture(scope="session")
def tiny_dir(world, tmp_path_factory) -> str:
    """One tiny random model for the whole session; runs point tiny.dir at it."""
    from ragtrail_trl.tiny import build_tiny

    return build_tiny(tmp_path_factory.mktemp("tiny") / "model", corpus=world["corpus"], questions=world["questions"])


def train_config(config: dict, output_dir: str, world: dict, tiny_dir: str) -> dict:
    """Write a config (tiny model defaults filled in), run the trainer in-process, return summary.json."""
    from ragtrail_trl import train

    config = {
        "model": "tiny",
        "tiny": {"corpus": world["corpus"], "questions": world["questions"], "dir": tiny_dir},
        "output_dir": output_dir,
        **config,
    }
    # float32 everywhere, so the numbers do not depend on whether a GPU is present
    config["trainer"] = {"bf16": False, **config.get("trainer", {})}
    path = f"{output_dir}.json"
    with open(path, "w") as handle:
        json.dump(config, handle)
    assert train.main(["--config", path]) == 0
    with open(os.path.join(config["output_dir"], "summary.json")) as handle:
        return json.load(handle)


@pytest.fixture
def run_training(tmp_path, world, tiny_dir):
    """`run_training(config, name)`: train_config into tmp_path/name."""

    def run(config: dict, name: str = "run") -> dict:
        return train_config(config, str(tmp_path / name), world, tiny_dir)

    return run


@pytest.fixture
def env_server(world, tmp_path):
    """ragtrail's real serve-env over the world, with the PRM's step rewards and F1 as the outcome."""
    from env_server import EnvServer

    with EnvServer(world, tmp_path, prm=world["prm"]) as server:
        yield server


@pytest.fixture(scope="session")
def tool_model(world, tiny_dir, tmp_path_factory) -> str:
    """The tiny model after a short SFT that teaches it the tool-call format (for GRPO and ProRAG runs).

    The SFT conversations use the exact prompt GRPO builds (system prompt, question, the reset
    observation, and the two tool schemas): a `search` call, the passages, then an `answer` call.
    """
    from env_server import EnvServer
    from transformers.utils import get_json_schema

    from ragtrail_trl.env_client import RagtrailEnv
    from ragtrail_trl.train import grpo_rows

    root = tmp_path_factory.mktemp("tool-model")
    with open(world["questions"]) as handle:
        rows = grpo_rows([json.loads(line) for line in handle])

    def call(name, arguments):
        return {"type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}

    with EnvServer(world, root, prm=world["prm"]) as server:
        # BM25 returns the same passages for the same query, so the warm-up can
        # show the model the very tool turn it will see during GRPO.
        probe = RagtrailEnv(server.url, token=server.token)
        probe.reset(question_id=rows[0]["question_id"])
        passages = probe.search("nationality")
        tools = json.dumps([get_json_schema(probe.search), get_json_schema(probe.answer)])
        conversations = []
        for row in rows:
            # Each question's own reset text, exactly as GRPO's prompt will carry it.
            prompt = row["prompt"]
            prompt[-1]["content"] += probe.reset(question_id=row["question_id"])
            conversation = prompt + [
                {"role": "assistant", "content": "", "tool_calls": [call("search", {"query": "nationality"})]},
                {"role": "tool", "name": "search", "content": passages},
                {"role": "assistant", "content": "", "tool_calls": [call("answer", {"text": "yes"})]},
            ]
            conversations.append({"messages": conversation, "tools": tools})
    data = root / "tool_sft.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in conversations))
    warm = train_config(
        {"algo": "sft", "data": str(data),
         "trainer": {"max_steps": 100, "learning_rate": 5e-3, "lr_scheduler_type": "constant",
                     "per_device_train_batch_size": 2, "logging_steps": 10}},
        str(root / "warmup"), world, tiny_dir,
    )  # fmt: skip
    assert warm["last_loss"] < 0.05
    return warm["output_dir"]
