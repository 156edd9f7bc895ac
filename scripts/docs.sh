#!/usr/bin/env bash
# `npm run docs`: the documentation site. VitePress renders docs/ (its own dead-link check fails the
# build on a broken page link), TypeDoc writes the API reference of every entry point into the built
# site's api/, and linkinator then crawls the whole site from disk and fails on any broken link or
# anchor-free asset. Arguments go to TypeDoc (CI: --treatValidationWarningsAsErrors).
# The tooling has its own folder (tools/docs, installed on first use from its lockfile): TypeDoc needs
# the TypeScript 6 compiler API, the project builds with TypeScript 7.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x tools/docs/node_modules/.bin/vitepress ]; then
  npm --prefix tools/docs ci --no-audit --no-fund --loglevel=error
fi
bin=tools/docs/node_modules/.bin
site=docs/.vitepress/dist
"$bin/vitepress" build docs
"$bin/typedoc" --options typedoc.json --out "$site/api" "$@"
# Every internal link of every page, the API reference included; external links are not fetched here.
base="${RAGTRAIL_DOCS_BASE:-/}"
check=(--recurse --skip '^https?://(?!localhost:[0-9]+/)' --verbosity error)
if [ "$base" = "/" ]; then
  "$bin/linkinator" "$site" "${check[@]}"
else
  # A site built for a sub-path (GitHub Pages: /<repository>/) is served at that path for the check.
  root="$(mktemp -d)"
  trap 'rm -rf "$root"' EXIT
  mkdir -p "$root$(dirname "${base%/}")"
  ln -s "$PWD/$site" "$root${base%/}"
  "$bin/linkinator" "${base#/}" --server-root "$root" "${check[@]}"
fi
echo "docs site: $site/index.html ($(find "$site" -name '*.html' | wc -l) pages; API reference in $site/api/)"
