#!/usr/bin/env bash
# Every paper recipe end to end on a served language model, at smoke size, offline on a CPU:
# a tiny random transformer (python/ragtrail_trl/tiny.py) behind `transformers serve` is the policy
# (--llm), and every training stage runs through TRL from the same checkpoint (--trl-model). Each call
# of the served model is capped at 48 tokens (--max-tokens): a random model never stops on its own.
# The numbers mean nothing about the papers; the run shows every stage of every recipe working.
#
#   bash scripts/llm-recipes.sh [OUT] [RECIPES...]      (needs the TRL venv: ragtrail train --setup-only)
set -euo pipefail
OUT=${1:-runs/llm-recipes}; shift || true
RECIPES=${*:-reasonrag rag-gym lws prorag arena}
VENV=${RAGTRAIL_VENV:-$HOME/.cache/ragtrail/trl-venv}
PY=$VENV/bin/python
CLI=(node --import tsx src/cli/main.ts)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
[ -f "$OUT/world/corpus.jsonl" ] || "${CLI[@]}" world --out "$OUT/world" --entities 300 --seed 1 >/dev/null
# The plain-text chat template (no tool-call parsing): the protocols' text reaches ragtrail as written.
[ -f "$OUT/tiny/config.json" ] || PYTHONPATH=python "$PY" -c "
from ragtrail_trl.tiny import build_tiny
build_tiny('$OUT/tiny', corpus='$OUT/world/corpus.jsonl', questions='$OUT/world/questions.jsonl', template='search-r1')"
PORT=${PORT:-8765}
"$VENV/bin/transformers" serve "$OUT/tiny" --host 127.0.0.1 --port "$PORT" --device cpu >"$OUT/serve.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 120); do curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break; sleep 1; done
for recipe in $RECIPES; do
  start=$(date +%s)
  RAGTRAIL_VENV=$VENV "${CLI[@]}" pipeline --recipe "$recipe" --seeds 0 --entities 300 --train-questions 6 --test-questions 4 \
    --llm "openai:http://127.0.0.1:$PORT/v1#$OUT/tiny" --trl-model "$OUT/tiny" --trl-max-steps 2 --max-tokens 48 --jobs 1 \
    --out "$OUT/$recipe" >"$OUT/$recipe.log" 2>&1 && status=ok || status="failed ($?)"
  echo "$recipe: $status in $(( $(date +%s) - start )) s (log $OUT/$recipe.log)"
done
