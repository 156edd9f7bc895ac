#!/usr/bin/env bash
# Resume demonstration: a 300-question run against a slow (fake) model server is killed with
# kill -9 half-way, then the same command is run again. Prints line counts and checks that no
# question id is missing or duplicated. Usage: scripts/resume-demo.sh [workdir]
set -euo pipefail
cd "$(dirname "$0")/.."
work=${1:-$(mktemp -d)}
rt() { node --import tsx src/cli/main.ts "$@"; }

rt world --seed 5 --entities 1500 --out "$work/world" > /dev/null
rt index build --corpus "$work/world/corpus.jsonl" --out "$work/index" > /dev/null 2>&1
node --import tsx test/fixtures/serve-fake-openai.ts --delay 25 > "$work/server.url" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
while [ ! -s "$work/server.url" ]; do sleep 0.1; done
url=$(cat "$work/server.url")

cmd=(run --agent search-r1 --llm "openai:${url}#fake" --index "$work/index" --dataset "$work/world/questions.jsonl"
     --limit 300 --concurrency 4 --out "$work/run" --cache-dir "$work/cache" --quiet)
# node itself in the background (not a shell function), so that kill -9 hits the run, not a wrapper.
node --import tsx src/cli/main.ts "${cmd[@]}" > "$work/first.log" 2>&1 &
runner=$!
sleep 2.5
kill -9 $runner
wait $runner 2>/dev/null || true
echo "after kill -9: $(wc -l < "$work/run/trajectories.jsonl") lines in trajectories.jsonl"
rt "${cmd[@]}" | head -1   # the run's first output line
node -e '
  const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n");
  const ids = lines.map((l) => JSON.parse(l).id);
  const want = new Set(require("fs").readFileSync(process.argv[2], "utf8").trim().split("\n").slice(0, 300).map((l) => JSON.parse(l).id));
  const missing = [...want].filter((id) => !ids.includes(id));
  console.log(`after re-run: ${lines.length} lines, ${new Set(ids).size} distinct ids, ${missing.length} missing, ${ids.length - new Set(ids).size} duplicated`);
  process.exit(missing.length || ids.length !== new Set(ids).size || lines.length !== 300 ? 1 : 0);
' "$work/run/trajectories.jsonl" "$work/world/questions.jsonl"
