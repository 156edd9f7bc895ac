"""Starts ragtrail's real environment server (`ragtrail serve-env`) for a test, on a free loopback port."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


class EnvServer:
    """`with EnvServer(world, tmp) as server:` gives server.url, server.token and the finished episodes."""

    def __init__(self, world: dict, tmp: Path, token: str = "tok", prm: str | None = None, reward: str = "f1", agent: str = "search-r1"):
        self.token = token
        self.trajectories = tmp / "episodes.jsonl"
        self.args = [
            "node", "--import", "tsx", "src/cli/main.ts", "serve-env",
            "--index", world["index"], "--dataset", world["questions"], "--split", "",
            "--agent", agent, "--reward", reward, "--port", "0", "--token", token,
            "--trajectories", str(self.trajectories), "--quiet",
            # One passage per search keeps the tiny model's contexts short.
            "--top-k", "1",
        ]  # fmt: skip
        if prm:
            self.args += ["--prm", prm]

    def __enter__(self) -> "EnvServer":
        self.proc = subprocess.Popen(self.args, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        match = re.search(r"at (http://127\.0\.0\.1:\d+)", line)
        if not match:
            self.proc.kill()
            raise RuntimeError(f"serve-env did not start: {line}{self.proc.stderr.read()[-2000:]}")
        self.url = match.group(1)
        return self

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)

    def episodes(self) -> list[dict]:
        """Finished episodes (trajectories with meta.stepRewards / meta.outcomeReward), in finishing order."""
        if not self.trajectories.exists():
            return []
        return [json.loads(line) for line in self.trajectories.read_text().splitlines() if line.strip()]
