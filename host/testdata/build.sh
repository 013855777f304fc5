#!/usr/bin/env bash
# Rebuilds the test plugins in this folder from their sources:
#   *.wat        with wabt's wat2wasm (apt-get install wabt), then the metadata
#                section from the ";; meta:" line through abi/cmd/wasmmeta
#                (";; meta: none" leaves it out);
#   goguest/     with the pinned Go toolchain (GOOS=wasip1, c-shared, -trimpath).
# The outputs are committed, so `go test` needs neither tool. The build is
# reproducible: running it again gives the same bytes.
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd ../.. && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && GOTOOLCHAIN=local go build -trimpath -o "$tmp/wasmmeta" ./abi/cmd/wasmmeta)
for src in *.wat; do
  name=${src%.wat}
  meta=$(sed -n 's/^;; meta: //p' "$src" | head -1)
  wat2wasm -o "$tmp/$name.wasm" "$src"
  if [ "$meta" = none ]; then
    cp "$tmp/$name.wasm" "$name.wasm"
  else
    eval "set -- $meta"
    "$tmp/wasmmeta" "$@" "$tmp/$name.wasm" "$name.wasm"
  fi
done
(cd goguest && GOTOOLCHAIN=local GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w -buildid=" -o "$tmp/greedy_go.wasm" .)
"$tmp/wasmmeta" -kind sampler -name greedy-go -version 1.0.0 \
  -description "argmax over the full logits, in Go" "$tmp/greedy_go.wasm" greedy_go.wasm
