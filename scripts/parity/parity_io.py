"""What the parity generators share: writing a set's cases as JSON Lines, and floats JSON cannot hold."""
from __future__ import annotations

import json
import math
import os


def write_jsonl(path: str, rows, *, ensure_ascii: bool, allow_nan: bool = True) -> None:
    """One case per line; the folder is made if needed. Each script keeps the JSON options its files were written with."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=ensure_ascii, allow_nan=allow_nan) + "\n")


def num(x: float):
    """A float for JSON: non-finite values as strings, which standard JSON cannot hold."""
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return x
