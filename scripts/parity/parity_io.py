"""What the parity generators share: their command line, stand-ins for modules a checkout imports but the
sets never use, writing a set's cases as JSON Lines, and floats JSON cannot hold."""
from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import sys
import types


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


def write_set(out_dir: str, name: str, rows, *, ensure_ascii: bool = True, allow_nan: bool = True, raising: int | None = None) -> None:
    """A set's cases as out_dir/name/dev.jsonl, and one line saying how many (and how many raised, if counted)."""
    write_jsonl(os.path.join(out_dir, name, "dev.jsonl"), rows, ensure_ascii=ensure_ascii, allow_nan=allow_nan)
    print(f"{name}: {len(rows)} cases" + ("" if raising is None else f", {raising} raising"))


def generator_args(n: int | None = None) -> argparse.Namespace:
    """The generators' command line: --repo CHECKOUT, --out FOLDER (the fixtures by default), -n CASES when a set has a size."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    ap.add_argument("--out", default="test/fixtures/parity-rl")
    if n is not None:
        ap.add_argument("-n", type=int, default=n)
    return ap.parse_args()


def stub_missing(stubs: dict) -> None:
    """For each module name that does not import here, an empty stand-in with the given attributes: the
    authors' files import packages (clients, progress bars) that the functions under test never call."""
    for name, attrs in stubs.items():
        try:
            importlib.import_module(name)
        except ImportError:
            stub = types.ModuleType(name)
            stub.__dict__.update(attrs)
            sys.modules[name] = stub
