"""An LLM PRM through TRL from the annotation's pairs (`ragtrail train --engine trl --algo prm`): trained on
the texts the remote PRM sends at inference, then served (serve_prm.py) and scored on the held-out pairs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from conftest import REPO


def test_prm_from_prm_pairs_is_served_and_scored_on_held_out_pairs(world, tmp_path):
    ann = os.path.dirname(world["sft"])
    out = tmp_path / "prm"
    args = ["node", "--import", "tsx", "src/cli/main.ts", "train", "--engine", "trl", "--algo", "prm", "--data", ann,
            "--out", str(out), "--max-steps", "4", "--venv", sys.prefix, "--trainer", "bf16=false",
            "--index", world["index"], "--dataset", world["questions"]]  # fmt: skip (the tiny model learns its tokenizer from them)
    result = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    pairs = [json.loads(line) for line in open(os.path.join(ann, "prm_pairs.jsonl"))]
    train = [json.loads(line) for line in open(out / "prm_text.jsonl")]
    held = [json.loads(line) for line in open(out / "heldout.jsonl")]
    assert len(train) + len(held) == len(pairs) and held
    # The remote PRM's join: the state's text, then the step's raw text after the separator.
    first = train[0]
    assert first["chosen"].startswith("Question: ") and "\n\nNext step:\n" in first["chosen"] and first["chosen"] != first["rejected"]
    match = re.search(r"held-out pair accuracy (\d\.\d+) on (\d+) pairs", result.stdout)
    assert match and int(match.group(2)) == len(held), result.stdout
    assert 0.0 <= float(match.group(1)) <= 1.0
