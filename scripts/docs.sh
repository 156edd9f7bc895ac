#!/usr/bin/env bash
# `npm run docs`: API reference of every entry point (TypeDoc) into docs/api/. TypeDoc reads the
# sources with the TypeScript 6 compiler API, which the project's TypeScript 7 does not provide, so it
# has its own small tooling folder (tools/docs, installed on first use from its lockfile).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x tools/docs/node_modules/.bin/typedoc ]; then
  npm --prefix tools/docs ci --no-audit --no-fund --loglevel=error
fi
tools/docs/node_modules/.bin/typedoc --options typedoc.json "$@"
echo "API docs: docs/api/index.html"
