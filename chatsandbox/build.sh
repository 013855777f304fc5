#!/usr/bin/env bash
# Rebuilds chatsandbox/wasm/render.wasm, the chat template guest, from
# chatsandbox/guest with the pinned Go toolchain (GOTOOLCHAIN=local,
# GOOS=wasip1, a WASI command, -trimpath, no VCS stamp, no build id). The output is
# committed and embedded; CI rebuilds it and runs git diff --exit-code
# (make test-guests), so the same sources give the same bytes.
set -euo pipefail
cd "$(dirname "$0")/.."
GOTOOLCHAIN=local GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 go build -trimpath -buildvcs=false \
  -ldflags="-s -w -buildid=" -o chatsandbox/wasm/render.wasm ./chatsandbox/guest
