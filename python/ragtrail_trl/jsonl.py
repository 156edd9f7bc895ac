"""The package's one JSONL reader: one JSON object per line, blank lines skipped, and an error that
names the file, the line and the fix."""

from __future__ import annotations

import json
import os
from typing import Iterator


class JsonlError(ValueError):
    """A line that is not a JSON object; `fix` says what to do about it."""

    def __init__(self, problem: str, fix: str):
        super().__init__(f"{problem}. Fix: {fix}")
        self.problem = problem
        self.fix = fix


def read_jsonl(path: str | os.PathLike) -> Iterator[dict]:
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                raise JsonlError(
                    f"{path} line {number} is not valid JSON ({err.msg})", "regenerate the file or delete that line"
                ) from None
            if not isinstance(row, dict):
                raise JsonlError(f"{path} line {number} is not a JSON object", "each line must be one object")
            yield row
