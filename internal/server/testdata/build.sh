#!/usr/bin/env bash
# Rebuilds the server's test plugins from their WAT sources with wabt's
# wat2wasm (apt-get install wabt) and the metadata section from the
# ";; meta:" line through abi/cmd/wasmmeta. The outputs are committed, so
# `go test` needs neither tool; the build is reproducible.
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
  eval "set -- $meta"
  "$tmp/wasmmeta" "$@" "$tmp/$name.wasm" "$name.wasm"
done
