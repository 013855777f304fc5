#!/usr/bin/env bash
# Installs the official API clients the server's real-client tests run
# (internal/server/sdk_test.go, cmd/realizar-host/sdk_test.go), idempotently: npm
# @anthropic-ai/sdk, openai, ai with @ai-sdk/anthropic and
# @ai-sdk/openai-compatible, @langchain/openai with @langchain/core (and zod),
# pinned by internal/server/testdata/sdk/package-lock.json, into <repo>/.cache/sdk
# with `npm ci` (npm's cache in <repo>/.cache/npm; nothing in /tmp or $HOME).
# A second run with the same lock file returns at once.
#
# Needs: node >= 20 and npm.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
src=$root/internal/server/testdata/sdk
dest=$root/.cache/sdk
stamp=$dest/.installed
want=$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -d "$dest/node_modules" ]; then
  exit 0
fi
command -v npm >/dev/null || { echo "sdk-install: npm is required (apt-get install nodejs npm)" >&2; exit 1; }
rm -rf "$dest"
mkdir -p "$dest" "$root/.cache/npm"
cp "$src/package.json" "$src/package-lock.json" "$dest/"
(cd "$dest" && npm ci --cache "$root/.cache/npm" --ignore-scripts --no-audit --no-fund --loglevel=error)
echo "$want" >"$stamp"
echo "sdk-install: $(cd "$dest" && npm ls --depth=0 --parseable=false 2>/dev/null | tail -n +2 | tr '\n' ' ') in $dest"
