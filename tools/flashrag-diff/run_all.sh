#!/bin/bash
# Runs every configuration against the shared servers (servers/servers.py on 18001/18002).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
RAGTRAIL=${RAGTRAIL:-$(cd "$HERE/../.." && pwd)}
cd "$HERE"
mkdir -p logs
. venv/bin/activate
LLM=http://127.0.0.1:18001
rt() { # tag agent reset-json
  curl -s -XPOST $LLM/reset -d "$3" >/dev/null
  rm -rf "$HERE/rt-out/$1"
  (cd "$RAGTRAIL" && npx tsx src/cli/main.ts run --agent $2 --llm "openai:$LLM/v1#scripted" --index http://127.0.0.1:18002 \
     --dataset "$HERE/fixtures/data.jsonl" --out "$HERE/rt-out/$1" --no-cache --concurrency 1 > "$HERE/logs/$1.cli.txt" 2>&1)
  echo "$1 rc=$?"
}
fr() { # tag method extra-args...
  local tag=$1 m=$2; shift 2
  python run_flashrag.py $m --tag $tag "$@" > logs/$tag.cli.txt 2>&1; echo "$tag rc=$?"
}
mkdir -p rt-out
# primary: OpenAI-standard server (stop strings cut and not returned)
fr fr-ircot ircot;              rt rt-ircot ircot '{"tag":"rt-ircot"}'
fr fr-iter-retgen iter-retgen;  rt rt-iter-retgen iter-retgen '{"tag":"rt-iter-retgen"}'
fr fr-self-ask self-ask;        rt rt-self-ask self-ask '{"tag":"rt-self-ask"}'
# probes
fr fr-ircot-verbose ircot --ircot-style verbose;   rt rt-ircot-verbose ircot '{"tag":"rt-ircot-verbose","ircot_style":"verbose"}'
fr fr-self-ask-eos self-ask --selfask-end eos;     rt rt-self-ask-eos self-ask '{"tag":"rt-self-ask-eos","selfask_end":"eos"}'
fr fr-ircot-vllm ircot --include-stop
fr fr-self-ask-vllm self-ask --include-stop;       rt rt-self-ask-vllm self-ask '{"tag":"rt-self-ask-vllm","include_stop":true}'
# SuRe, Adaptive-RAG, SKR (FlashRAG's judgers stubbed with the decisions ragtrail's router is scripted to take)
fr fr-sure sure;                 rt rt-sure sure '{"tag":"rt-sure"}'
fr fr-adaptive-rag adaptive-rag; rt rt-adaptive-rag adaptive-rag '{"tag":"rt-adaptive-rag"}'
fr fr-skr skr;                   rt rt-skr skr '{"tag":"rt-skr"}'
# probes: candidates written "(a) X, (b) Y" on one line / as a bare answer to both systems' prompts
fr fr-sure-inline sure --sure-format inline;  rt rt-sure-inline sure '{"tag":"rt-sure-inline","sure_format":"inline"}'
fr fr-sure-bare sure --sure-format bare;      rt rt-sure-bare sure '{"tag":"rt-sure-bare","sure_format":"bare"}'
# FlashRAG-only SKR probes: one run() per question (rc=1 expected), the same pipeline run() twice
fr fr-skr-per-item skr --skr-per-item
fr fr-skr-rerun skr --skr-runs 2
. venv/bin/activate; python probe_str_prompt.py 2>/dev/null | tail -1 > logs/probe-str.result.json
