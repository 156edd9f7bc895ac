#!/usr/bin/env bash
# node-llama-cpp with its CPU build only (~85 MB instead of ~725 MB with every GPU build), in a folder
# of its own where ragtrail's `llama:` backends look for it: $RAGTRAIL_NODE_LLAMA_CPP, or
# ~/.cache/ragtrail/node-llama-cpp. A folder of its own because --omit=optional inside the project
# would also remove the project's other optional packages. Linux x64 only; elsewhere run
# `npm install node-llama-cpp` in the project.
set -euo pipefail
VERSION=3.22.1
DIR="${1:-${RAGTRAIL_NODE_LLAMA_CPP:-$HOME/.cache/ragtrail/node-llama-cpp}}"
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "this script installs the linux-x64 build; on $(uname -s) $(uname -m) run: npm install node-llama-cpp" >&2
  exit 2
fi
mkdir -p "$DIR"
# The package's postinstall step (which may try to build llama.cpp) is not needed: the prebuilt
# binary in @node-llama-cpp/linux-x64 is loaded as it is.
npm install --prefix "$DIR" --no-audit --no-fund --omit=optional --ignore-scripts \
  "node-llama-cpp@$VERSION" "@node-llama-cpp/linux-x64@$VERSION"
echo "node-llama-cpp $VERSION (CPU) in $DIR"
