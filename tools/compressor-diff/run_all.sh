#!/bin/bash
# The whole differential: the tiny model, the references, ragtrail (library calls and CLI runs), the
# comparison. Servers on 18111 (servers/server.py) and 18112 (serve_lm) are started and stopped here.
# RAGTRAIL=<checkout> tests another ragtrail tree (default: this one).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
RAGTRAIL=${RAGTRAIL:-$(cd "$HERE/../.." && pwd)}
cd "$HERE"
. venv/bin/activate
mkdir -p logs out
T0=$(date +%s); TL=$T0
lap() { local now; now=$(date +%s); echo "$1: $((now - TL))s"; TL=$now; }
python make_model.py
lap "tiny model"
# The references are fed exactly ragtrail's document lines (docLines of the tree under test).
(cd "$RAGTRAIL" && RAGTRAIL="$RAGTRAIL" npx tsx "$HERE/doc_lines.ts")
python run_reference.py 2> logs/run_reference.err
lap "document lines and references"
python servers/server.py 18111 > logs/server.out 2>&1 & SERVER=$!
PYTHONPATH="$RAGTRAIL/python" python -m ragtrail_trl.serve_lm --model "$HERE/model" --port 18112 > logs/serve_lm.out 2>&1 & SCORER=$!
trap 'kill $SERVER $SCORER 2>/dev/null' EXIT
for i in $(seq 60); do curl -sf http://127.0.0.1:18112/health >/dev/null && curl -sf http://127.0.0.1:18111/ >/dev/null && break; sleep 1; done
lap "servers up"
(cd "$RAGTRAIL" && RAGTRAIL="$RAGTRAIL" npx tsx "$HERE/ragtrail_side.ts")
lap "ragtrail, library calls"
python run_reference_fine.py 2> logs/run_reference_fine.err
lap "LongLLMLingua fine step"
# The agents end to end through the CLI, their defaults (the answer prompt is logged by the server).
python - > out/data.jsonl <<'PY'
import json; from fixtures import QUESTIONS
for q in QUESTIONS: print(json.dumps(q))
PY
cli() { # agent aux-spec
  curl -s -XPOST http://127.0.0.1:18111/reset -d "{\"tag\":\"cli-$1\"}" >/dev/null
  rm -rf "out/cli/$1"
  (cd "$RAGTRAIL" && npx tsx src/cli/main.ts run --agent "$1" --llm "openai:http://127.0.0.1:18111/v1#scripted" ${2:+--aux-llm "$2"} \
     --index http://127.0.0.1:18111 --dataset "$HERE/out/data.jsonl" --out "$HERE/out/cli/$1" --no-cache --concurrency 1 > "$HERE/logs/cli-$1.txt" 2>&1)
  echo "cli $1 rc=$?"
}
cli selective-context "openai:http://127.0.0.1:18112/v1#tiny"
cli longllmlingua "openai:http://127.0.0.1:18112/v1#tiny"
cli recomp "openai:http://127.0.0.1:18111/v1#recomp-t5 (completion)"
cli recomp-extractive ""
lap "CLI runs (4)"
python compare.py > out/comparison.md
lap "comparison"
echo "done in $(( $(date +%s) - T0 ))s; tables in out/comparison.md"
