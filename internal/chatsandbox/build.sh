#!/usr/bin/env bash
# Rebuilds internal/chatsandbox/wasm/render.wasm.gz, the chat template guest, from
# internal/chatsandbox/guest with the pinned Go toolchain (GOTOOLCHAIN=local,
# GOOS=wasip1, a WASI command, -trimpath, no VCS stamp, no build id), then
# gzip -9 -n (no name or time stamp: the same wasm gives the same bytes).
# The compressed guest is committed (2.7 MB; the wasm is 11.7 MB) and
# embedded; CI rebuilds it and runs git diff --exit-code (make
# test-guests), so the same sources give the same bytes.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
GOTOOLCHAIN=local GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 go build -trimpath -buildvcs=false \
  -ldflags="-s -w -buildid=" -o "$tmp/render.wasm" ./internal/chatsandbox/guest
gzip -9 -n -c "$tmp/render.wasm" >internal/chatsandbox/wasm/render.wasm.gz
