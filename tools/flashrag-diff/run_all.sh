#!/bin/bash
# Runs every configuration against the shared servers (servers/servers.py, by default on 18001/18002;
# LLM_PORT / RET_PORT to use others). ONLY=flare,self-rag (a comma-separated list of sections: core,
# probes, sure, flare, self-rag) runs some of them.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
RAGTRAIL=${RAGTRAIL:-$(cd "$HERE/../.." && pwd)}
cd "$HERE"
mkdir -p logs
. venv/bin/activate
LLM=http://127.0.0.1:${LLM_PORT:-18001}
RET=http://127.0.0.1:${RET_PORT:-18002}
ONLY=${ONLY:-core,probes,sure,flare,self-rag}
on() { [[ ",$ONLY," == *",$1,"* ]]; }
rt() { # tag agent reset-json [extra CLI flags...]
  local tag=$1 agent=$2 reset=$3; shift 3
  curl -s -XPOST $LLM/reset -d "$reset" >/dev/null
  rm -rf "$HERE/rt-out/$tag"
  (cd "$RAGTRAIL" && npx tsx src/cli/main.ts run --agent $agent --llm "openai:$LLM/v1#scripted" --index $RET \
     --dataset "$HERE/fixtures/data.jsonl" --out "$HERE/rt-out/$tag" --no-cache --concurrency 1 "$@" > "$HERE/logs/$tag.cli.txt" 2>&1)
  echo "$tag rc=$?"
}
rtd() { # tag config: ragtrail through rt_driver.ts (settings the CLI has no flags for)
  curl -s -XPOST $LLM/reset -d "{\"tag\":\"$1\"}" >/dev/null
  rm -rf "$HERE/rt-out/$1"
  (cd "$RAGTRAIL" && RAGTRAIL="$RAGTRAIL" npx tsx "$HERE/rt_driver.ts" $2 --llm $LLM/v1 --index $RET \
     --dataset "$HERE/fixtures/data.jsonl" --out "$HERE/rt-out/$1" > "$HERE/logs/$1.cli.txt" 2>&1)
  echo "$1 rc=$?"
}
fr() { # tag method extra-args...
  local tag=$1 m=$2; shift 2
  python run_flashrag.py $m --tag $tag --llm $LLM --ret $RET "$@" > logs/$tag.cli.txt 2>&1; echo "$tag rc=$?"
}
mkdir -p rt-out
if on core; then # primary: OpenAI-standard server (stop strings cut and not returned)
fr fr-ircot ircot;              rt rt-ircot ircot '{"tag":"rt-ircot"}'
fr fr-iter-retgen iter-retgen;  rt rt-iter-retgen iter-retgen '{"tag":"rt-iter-retgen"}'
fr fr-self-ask self-ask;        rt rt-self-ask self-ask '{"tag":"rt-self-ask"}'
fi
if on probes; then
fr fr-ircot-verbose ircot --ircot-style verbose;   rt rt-ircot-verbose ircot '{"tag":"rt-ircot-verbose","ircot_style":"verbose"}'
fr fr-self-ask-eos self-ask --selfask-end eos;     rt rt-self-ask-eos self-ask '{"tag":"rt-self-ask-eos","selfask_end":"eos"}'
fr fr-ircot-vllm ircot --include-stop
fr fr-self-ask-vllm self-ask --include-stop;       rt rt-self-ask-vllm self-ask '{"tag":"rt-self-ask-vllm","include_stop":true}'
fi
if on sure; then # SuRe, Adaptive-RAG, SKR (FlashRAG's judgers stubbed with the decisions ragtrail's router is scripted to take)
fr fr-sure sure;                 rt rt-sure sure '{"tag":"rt-sure"}'
fr fr-adaptive-rag adaptive-rag; rt rt-adaptive-rag adaptive-rag '{"tag":"rt-adaptive-rag"}'
fr fr-skr skr;                   rt rt-skr skr '{"tag":"rt-skr"}'
# probes: candidates written "(a) X, (b) Y" on one line / as a bare answer to both systems' prompts
fr fr-sure-inline sure --sure-format inline;  rt rt-sure-inline sure '{"tag":"rt-sure-inline","sure_format":"inline"}'
fr fr-sure-bare sure --sure-format bare;      rt rt-sure-bare sure '{"tag":"rt-sure-bare","sure_format":"bare"}'
# FlashRAG-only SKR probes: one run() per question (rc=1 expected), the same pipeline run() twice
fr fr-skr-per-item skr --skr-per-item
fr fr-skr-rerun skr --skr-runs 2
python probe_str_prompt.py 2>/dev/null | tail -1 > logs/probe-str.result.json
fi
if on flare; then # FLARE: FlashRAG's FLAREPipeline; ragtrail's defaults (CLI) and FlashRAG's settings (rt_driver.ts)
fr fr-flare flare;  rt rt-flare flare '{"tag":"rt-flare"}';  rtd rt-flare-fr flare-flashrag
fi
if on self-rag; then # Self-RAG: FlashRAG's SelfRAGPipeline and the authors' scoring (vLLM stubbed in-process); ragtrail in completion mode
fr fr-self-rag self-rag;  fr au-self-rag self-rag-authors
rt rt-self-rag self-rag '{"tag":"rt-self-rag"}' --llm-mode completion --llm-body '{"skip_special_tokens": false}'
rtd rt-self-rag-scores self-rag   # the same run through the driver, for every score at full precision
rtd rt-self-rag-logratio self-rag-logprob-ratio;  rtd rt-self-rag-top5 self-rag-top5
fi
