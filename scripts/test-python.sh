#!/usr/bin/env bash
# The Python side's tests (`npm run test:python`): creates the TRL virtual environment on first use
# (through `ragtrail train --setup-only`, which installs python/requirements.txt), then runs pytest.
# Offline or behind a mirror, give pip its index in RAGTRAIL_PIP_ARGS.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=$(node --import tsx src/cli/main.ts train --setup-only | sed -n 's/^python: //p')
"$PY" -m pytest python/tests -q "$@"
